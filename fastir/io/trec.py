"""Reading TREC qrels and run files: plain, gzip, bz2 or xz; paths, ``-`` (standard input) or
file objects."""

import contextlib
import functools
import io
import itertools
import math
import mmap
import os
import re
import stat
import sys
import weakref

import numpy as np

from fastir import _jit
from fastir.io import _scan
from fastir.model import errors
from fastir.model.data import FastirWarning, InputError, Qrels, Run
from fastir.model.ids import Ids, canonical_text, frozen, gather_spans, intern_blocks
from fastir.model.subtopics import by_subtopic
from fastir.model.values import (
    FLOAT_HINT,
    Distributions,
    assemble,
    label_codes,
    refuse_real_subtopics,
)
from fastir.options import checked_labels

GROUP_ROOM = 1 << 16  # query blocks a chunk may hold in a single pass (else two passes)

_MESSAGES = {
    _scan.TOO_FEW_FIELDS: "malformed line: expected {needed} fields, found {found}",
    _scan.TOO_MANY_FIELDS: "malformed line: expected {needed} fields, found {found}",
    _scan.BAD_LABEL: "relevance label {token!r} is not a 32-bit integer{hint}",
    _scan.LONE_CR: ("a carriage return inside a line (old Mac line ends?): convert the line "
                    "ends to \\n, e.g. with tr '\\r' '\\n'"),
}


BOM = b"\xef\xbb\xbf"  # a UTF-8 byte order mark: an encoding marker, never content


def source_name(path):
    """How errors name an input: the path, or a file object's ``.name`` (else ``<stream>``)."""
    if hasattr(path, "read"):
        name = getattr(path, "name", None)
        return name if isinstance(name, str) else "<stream>"
    return os.fspath(path)


#: The standard inputs read to their end: ``-`` can be one input only.
_STDIN_READ = weakref.WeakSet()


def standard_input():
    """Standard input's binary stream, to read to its end: an :class:`InputError` when it
    is closed or was read to its end already (as another input of the same call or
    command: ``fastir stats - -`` would read an empty run)."""
    stream = getattr(sys.stdin, "buffer", None)
    if sys.stdin is not None and stream is None:
        raise InputError("-: standard input is no file here (a notebook's?): give the "
                         "input's path, or an open file")
    if _closed(stream):
        raise InputError("-: standard input is closed, so nothing can be read from it: give "
                         "the input's path, or pipe it in")
    if stream in _STDIN_READ:
        raise InputError("-: standard input was read already, for another input: it can "
                         "hold one input only; give the others as paths")
    _STDIN_READ.add(stream)
    return stream


def _closed(stream):
    """Whether ``stream`` is None (Python started with descriptor 0 closed) or closed."""
    if stream is None:
        return True
    try:
        os.fstat(stream.fileno())
    except io.UnsupportedOperation:  # (a stream that is no file: a notebook's, a test's)
        return stream.closed
    except (OSError, ValueError):
        return True
    return False


def read_bytes(path, progress=None):
    """The input's bytes as a read-only uint8 array: memory-mapped (no copy) for plain files,
    decompressed for gzip, bz2 and xz data (known by their first bytes; advancing
    ``progress`` by the compressed bytes read); ``-`` reads standard input, and a file
    object (text or binary) is read from where it stands. A leading UTF-8 byte order mark
    is left out (it would otherwise stick to the first query id)."""
    buf = _raw_bytes(path, progress)
    return buf[len(BOM):] if buf[:len(BOM)].tobytes() == BOM else buf


def _compression(head):
    """gzip, bz2 or xz from a file's first 10 bytes, or None."""
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if re.fullmatch(rb"BZh[1-9](\x31\x41\x59\x26\x53\x59|\x17\x72\x45\x38\x50\x90)", head):
        return "bz2"
    if head[:6] == b"\xfd7zXZ\x00":
        return "xz"
    return None


def _decompressor(kind):
    if kind == "gzip":
        import zlib

        return zlib.decompressobj(31)
    if kind == "bz2":
        import bz2

        return bz2.BZ2Decompressor()
    import lzma

    return lzma.LZMADecompressor(lzma.FORMAT_XZ)


def _decompress(read, kind, source, progress):
    """Decompress the chunks ``read()`` returns (any number of concatenated streams) in
    1 MB steps, advancing ``progress`` (if any) by the compressed bytes."""
    def steps():
        while chunk := read(1 << 20):
            if progress is not None:
                progress.advance(len(chunk))
            yield chunk

    return np.frombuffer(b"".join(decompressed(steps(), kind, source)), dtype=np.uint8)


def decompressed(chunks, kind, source):
    """The decompressed parts of the compressed ``chunks`` (any number of concatenated
    streams), one per chunk or stream; a damaged or truncated input is an InputError."""
    import lzma
    import zlib

    stream = _decompressor(kind)
    try:
        for chunk in chunks:
            while chunk:
                yield stream.decompress(chunk)
                chunk = b""
                if stream.eof and stream.unused_data:
                    chunk, stream = stream.unused_data, _decompressor(kind)
    except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
        raise InputError(f"{source}: corrupt {kind} data ({exc}): the file is damaged or "
                         "truncated") from None
    if not stream.eof:
        raise InputError(f"{source}: corrupt {kind} data (it ends early): the file is damaged "
                         "or truncated")


def _in_memory(data, source):
    """The bytes of standard input or a file object, decompressed if they are compressed."""
    kind = _compression(data[:10])
    if kind is None:
        return np.frombuffer(data, dtype=np.uint8)
    return _decompress(io.BytesIO(data).read, kind, source, None)


def _stream_bytes(f, source):
    """All that is left to read in a file object, as bytes (text is encoded back with the
    stream's encoding)."""
    try:
        data = f.read()
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: cannot read: the stream is not {exc.encoding} text; open "
                         "the file in binary mode ('rb') or pass sys.stdin.buffer") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror or exc}") from None
    if isinstance(data, str):
        return data.encode(getattr(f, "encoding", None) or "utf-8", "surrogateescape")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{source}: read() returned {type(data).__name__}, not text or bytes")
    return bytes(data)


def _raw_bytes(path, progress=None):
    if hasattr(path, "read"):
        return _in_memory(_stream_bytes(path, source_name(path)), source_name(path))
    if str(path) == "-":
        return _in_memory(standard_input().read(), "-")
    try:
        with open(path, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # a pipe, /dev/fd/N: no size
                return _in_memory(f.read(), path)
            kind = _compression(f.read(10))
            if kind is not None:
                f.seek(0)
                bar = progress if progress is not None and progress.bar is not None else None
                return _decompress(f.read, kind, path, bar)
            if os.fstat(f.fileno()).st_size == 0:
                return frozen(np.zeros(0), np.uint8)
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            return np.frombuffer(mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ),
                                 dtype=np.uint8)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


@contextlib.contextmanager
def _reading(path, progress):
    """(bar, parse step) of a read: the caller's :class:`~fastir.progress.Progress` or the
    reader's own over the file's bytes (``progress=True``); the parse step advances it by
    the file's size when no decompression did."""
    from fastir.progress import Progress, wanted

    own = not isinstance(progress, Progress)
    stream = hasattr(path, "read")
    name = os.path.basename(source_name(path))
    size = os.path.getsize(path) if not stream and str(path) != "-" and \
        os.path.isfile(path) else 0
    bar = Progress(size, f"reading {name}", wanted(progress) and size > 0, unit="B") \
        if own else progress
    try:
        compressed = False
        if bar.bar is not None and size:
            with open(path, "rb") as f:
                compressed = _compression(f.read(10)) is not None
        yield bar, functools.partial(bar.stage, f"parsing {name}", 0 if compressed else size)
    finally:
        if own:
            bar.close()


def read_qrels(path, allow_duplicates=False, subtopics=False, progress=False, labels="int"):
    """Read a TREC qrels file: ``qid iter docno rel`` per line.

    ``path`` is a file path (plain, gzip, bz2 or xz, known by the first bytes), ``-`` for
    standard input (compressed or not), or an open file object, text or binary (errors
    then name its ``.name``, or ``<stream>``).

    Fields are separated by any whitespace, ``#`` starts a comment line, labels are integers
    (negative: in the pool but unjudged). A doc judged twice for one query is an error,
    unless ``allow_duplicates`` (trec_eval's mode, which stops at such a query instead).
    With ``subtopics``, the second column is the subtopic (ndeval's ``qid subtopic docno
    rel``, the diversity measures' qrels): a doc is judged once per subtopic, and its label
    for the other measures is its largest. ``progress=True`` shows a bar on standard error
    while a long read goes on. ``labels="float"`` reads real-valued labels (the fourth
    column as strtod reads it: ``0.7``, ``1e-3``), each finite and >= 0, else an error
    naming the line (:attr:`Qrels.label_values`); ``labels="probability"``, probabilities
    of relevance, each in [0, 1] (:attr:`Qrels.label_probs`; a file holds no
    distribution over several labels: give those in a dict).

    Returns
    -------
    Qrels
    """
    name = source_name(path)
    real = checked_labels(labels) != "int"  # (probabilities: reals, checked by as_qrels)
    with _reading(path, progress) as (bar, parsing), parsing():
        buf = read_bytes(path, bar)
        if subtopics:
            refuse_real_subtopics(labels, name)
            return Qrels.from_dict(by_subtopic(_subtopic_rows(buf, name), name), name)
        with _jit.tier(len(buf) // 32):
            first = _content_fields(buf)
            int_guess = first is not None and len(first) > 2 and canonical_text(first[2])
            query_ids, block_code, block_first, docs, values = _scan_file(
                buf, _scan.QRELS_REAL if real else _scan.QRELS, name, int_guess)
            codes, label_values = (values.astype(np.int32), None) if not real else \
                label_codes(_non_negative(buf, values, name, labels))
            if labels == "probability":  # (checked in [0, 1] by _non_negative)
                label_values = Distributions.of_probabilities(label_values)
            qrels = assemble(Qrels, query_ids, block_code, block_first, docs, codes, name,
                             label_values=label_values)
            qrels.allow_duplicates = allow_duplicates
            qrels.docs_matching(qrels.doc_ids)  # reports duplicate judgments now
    return qrels


def _non_negative(buf, values, source, labels="float"):
    """Real labels (finite: the scanner refused the others) when none is negative (under
    ``labels="probability"``, none above 1 either), else an InputError naming the first
    bad one's line."""
    probability = labels == "probability"
    wrong = (values < 0) | (values > 1) if probability else values < 0
    if wrong.any():
        row = int(np.argmax(wrong))
        lines = buf.tobytes().split(b"\n")
        content = (n for n, line in enumerate(lines, 1) if line.split() and
                   line.split()[0][:1] != b"#")
        line = next(itertools.islice(content, row, None))
        token = lines[line - 1].split()[3].decode("utf-8", "replace")
        _fail(source, line, f"relevance label {token!r} is not " + (
            "a probability in [0, 1] (labels='probability')" if probability else
            "a finite number >= 0 (labels='float')"))
    return values


def repeat_lines(source, qid, doc):
    """(first, second): the line numbers of the first two lines of the run file ``source``
    that rank ``doc`` for ``qid`` (6 fields, or MS MARCO's 3), or None when ``source`` is no
    file to read again (standard input, a stream, arrays) or they are not found. For a
    message only: it reads the file again."""
    if not isinstance(source, str) or source == "-" or not os.path.isfile(source):
        return None
    try:
        buf = read_bytes(source).tobytes()
    except (OSError, InputError):
        return None
    qid, doc = (str(x).encode("utf-8", "surrogateescape") for x in (qid, doc))
    found, line, counted = [], 1, 0
    for match in re.finditer(rb"(?<=[ \t])" + re.escape(doc) + rb"(?=[ \t\r\n]|$)", buf):
        start = buf.rfind(b"\n", 0, match.start()) + 1
        end = buf.find(b"\n", match.end())
        fields = buf[start:len(buf) if end < 0 else end].split()
        if fields and fields[0] == qid and (
                (len(fields) == 6 and fields[2] == doc) or (len(fields) == 3 and
                                                            fields[1] == doc)):
            line += buf.count(b"\n", counted, start)
            counted = start
            if not found or found[-1] != line:
                found.append(line)
            if len(found) == 2:
                return tuple(found)
    return None


errors.repeat_lines = repeat_lines  # (the model names the lines of a doc ranked twice)


class NoResultLines(InputError):
    """A run file that is not empty but holds only blank or comment lines. An error like any
    empty run, but ``fastir trec_eval`` reads it as trec_eval does: a run without results."""


def _subtopic_rows(buf, path):
    """The ``(qid, subtopic, doc, label)`` rows of subtopic qrels (ndeval's ``qid subtopic
    docno label`` lines; ``#`` comment lines and blank lines skipped)."""
    rows = []
    for number, line in enumerate(buf.tobytes().split(b"\n"), 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            raise InputError(f"{path}:{number}: malformed line: expected 4 fields (qid "
                             f"subtopic docno label), found {len(fields)}")
        try:
            label = int(fields[3])
        except ValueError:
            label = None
        if label is None or b"_" in fields[3]:
            token = fields[3].decode(errors="replace")
            raise InputError(f"{path}:{number}: relevance label {token!r} is not a 32-bit "
                             "integer")
        qid, subtopic, doc = (f.decode("utf-8", "surrogateescape") for f in fields[:3])
        rows.append((qid, subtopic, doc, label))
    if not rows:
        raise InputError(f"{path}: no judgments")
    return rows


def read_run(path, name=None, third_column="auto", progress=False):
    """Read a TREC run file: ``qid iter docno rank score tag`` per line.

    ``path`` is a file path (plain, gzip, bz2 or xz, known by the first bytes), ``-`` for
    standard input (compressed or not), or an open file object, text or binary (errors
    then name its ``.name``, or ``<stream>``).

    The rank column is ignored: the join ranks by score (ties by docno, as trec_eval does).
    The run's name is the tag of the last line (trec_eval's ``runid``).

    A file of three fields per line is ``qid docno rank`` (MS MARCO) or ``qid docno score``:
    ``third_column`` says which, or ``"auto"`` decides: ranks when the column holds integers
    from 1 that increase within each query, scores otherwise (said in a ``FastirWarning``,
    since reading scores as ranks would rank every query upside down). ``progress=True``
    shows a bar on standard error while a long read goes on.

    Returns
    -------
    Run
    """
    if third_column not in ("auto", "rank", "score"):
        raise ValueError(f"third_column must be 'auto', 'rank' or 'score', got "
                         f"{third_column!r}")
    source = source_name(path)
    with _reading(path, progress) as (bar, parsing), parsing():
        return _parse_run(read_bytes(path, bar), source, name, third_column)


def _parse_run(buf, source, name, third_column):
    with _jit.tier(len(buf) // 32):
        layout, tag, int_guess = _run_layout(buf, source)
        query_ids, block_code, block_first, docs, scores = _scan_file(buf, layout, source,
                                                                      int_guess)
        if layout == _scan.RUN3 and _third_column_holds_scores(third_column, scores,
                                                               block_first, source):
            scores = -scores  # the scanner reads the third column as a rank: -rank
        return assemble(Run, query_ids, block_code, block_first, docs, scores, source,
                        name=name if name is not None else tag)


def _third_column_holds_scores(third_column, negated, block_first, source):
    if third_column != "auto":
        return third_column == "score"
    ranks = -negated
    if len(ranks) == 0 or _ranks(ranks, block_first):
        return False
    import warnings

    warnings.warn(f"{source}: three fields per line, and the third is not a rank (integers "
                  "from 1 that increase within each query, or each query's 1..n): read as "
                  "scores, higher first; say which it is with third_column='rank' or 'score' "
                  "(fastir eval: --third-column rank or score)", FastirWarning, stacklevel=5)
    return True


def _ranks(values, block_first):
    """Whether ``values`` are ranks: integers from 1 that increase within each block of lines
    of one query, or that are the block's 1..n in any order."""
    if values.min() < 1 or not np.all(values == np.floor(values)):
        return False
    increasing = np.diff(values) > 0
    increasing[block_first[1:] - 1] = True  # a new block starts again from its first rank
    if increasing.all():
        return True
    lengths = np.diff(np.append(block_first, len(values)))
    block = np.repeat(np.arange(len(lengths)), lengths)
    in_order = values[np.lexsort((values, block))]
    return bool(np.all(in_order == np.arange(len(values)) - np.repeat(block_first, lengths) + 1))


def _content_fields(buf, from_end=False):
    """Fields of the first (or last) content line, looking at a window of the file first."""
    window = 1 << 16
    while True:
        whole = window >= len(buf)
        part = buf[max(0, len(buf) - window):] if from_end else buf[:window]
        lines = part.tobytes().split(b"\n")
        if from_end:
            lines = lines[::-1] if whole else lines[:0:-1]  # drop the cut first line
        elif not whole:
            lines = lines[:-1]
        for line in lines:
            fields = line.split()
            if fields and not fields[0].startswith(b"#"):
                return fields
        if whole:
            return None
        window *= 16


def _run_layout(buf, source):
    """(layout, run tag, whether the first doc id is canonical decimal)."""
    first = _content_fields(buf)
    if first is None:
        raise (NoResultLines if len(buf) else InputError)(f"{source}: empty run file (no "
                                                           "result lines)")
    layout = _scan.RUN3 if len(first) == 3 else _scan.RUN6
    last = _content_fields(buf, from_end=True)
    tag = last[5] if layout == _scan.RUN6 and len(last) > 5 else b""
    tag = tag.decode("utf-8", "surrogateescape")
    doc = first[1] if layout == _scan.RUN3 else first[2] if len(first) > 2 else b""
    return layout, tag, canonical_text(doc)


def _chunks(buf, n_chunks):
    """(starts, ends) of about ``n_chunks`` line-aligned chunks of ``buf``."""
    n = len(buf)
    starts = [0]
    for c in range(1, n_chunks):
        cut = _next_line_start(buf, (n * c) // n_chunks)
        if cut > starts[-1] and cut < n:
            starts.append(cut)
    ends = starts[1:] + [n]
    return np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64)


def _next_line_start(buf, p):
    """The position after the first newline at or after ``p`` (``len(buf)``: none), read in
    growing windows (a line is short: the first window of 256 bytes holds its end)."""
    window = 256
    while p < len(buf):
        newlines = np.flatnonzero(buf[p:p + window] == 10)
        if len(newlines):
            return p + int(newlines[0]) + 1
        p += window
        window *= 4
    return len(buf)


def _scan_file(buf, layout, source, int_guess=False):
    """Parse a whole file: (query ids, block codes, block first rows, doc ids, values).

    With ``int_guess`` (the first line's doc id is canonical decimal) one pass does it all,
    writing at upper-bound offsets from a newline count, then closing the gaps; if a doc id
    turns out to be text (or a chunk holds too many queries) it starts again with two
    passes: one counting, one writing at exact offsets. Small files are read by Python
    (:func:`_scan_python`).
    """
    if _jit.python_mode():
        return _scan_python(buf, layout, source)
    n_chunks = max(1, min(len(buf) // (1 << 16), 8 * _jit.n_threads()))
    starts, ends = _chunks(buf, n_chunks)
    if int_guess:
        parsed = _scan_single_pass(buf, starts, ends, layout, source)
        if parsed is not None:
            return parsed
    none = np.zeros(n_chunks + 1, dtype=np.int64)
    counts = _scan_launch((0.0, 0.45), buf, starts, ends, layout, False, False, none, none,
                          none, _scan_outputs(0, 0, 0, False))
    _check_errors(buf, layout, counts[:, 3], counts[:, 4], source)
    row0 = np.concatenate(([0], np.cumsum(counts[:, 0])))
    byte0 = np.concatenate(([0], np.cumsum(counts[:, 1])))
    group0 = np.concatenate(([0], np.cumsum(counts[:, 2])))
    n_rows = _check_rows(int(row0[-1]), layout, source)
    int_docs = bool(counts[:, 5].all())  # every doc id canonical decimal: keep integers
    outputs = _scan_outputs(n_rows, int(byte0[-1]), int(group0[-1]), int_docs)
    result = _scan_launch((0.45, 0.9), buf, starts, ends, layout, True, int_docs, row0,
                          byte0, group0, outputs)
    _check_errors(buf, layout, result[:, 3], result[:, 4], source)
    doc_data, doc_offsets, doc_values, values, groups = outputs
    docs = Ids(values=doc_values, text=True) if int_docs else Ids(doc_data, doc_offsets)
    return _finish(buf, starts, ends, layout, row0, groups, docs, values, source)


def _scan_launch(window, buf, starts, ends, layout, write, int_docs, row0, byte0, group0,
                 outputs):
    """:func:`_scan.scan_chunks` over every chunk: in one launch, or, when a progress bar
    shows the parse (:func:`fastir.progress.reporter`), a thread's worth of chunks per
    launch, reporting the bytes scanned as the part ``window`` of the parse (the chunks
    are independent, each writing at its own offsets: the same result)."""
    from fastir.progress import reporter

    report = reporter()
    if report is None or len(starts) == 1:
        return _jit.launch(_scan.scan_chunks, buf, starts, ends, layout, write, int_docs,
                           row0, byte0, group0, outputs)
    step = max(1, _jit.n_threads())
    total, lo, hi = max(int(ends[-1] - starts[0]), 1), *window
    parts = []
    for a in range(0, len(starts), step):
        b = min(a + step, len(starts))
        parts.append(_jit.launch(_scan.scan_chunks, buf, starts[a:b], ends[a:b], layout,
                                 write, int_docs, row0[a:b + 1], byte0[a:b + 1],
                                 group0[a:b + 1], outputs))
        report(lo + (hi - lo) * int(ends[b - 1] - starts[0]) / total)
    return np.concatenate(parts)


def _scan_outputs(n_rows, n_bytes, n_groups, int_docs):
    """The arrays :func:`_scan.scan_chunks` writes (a :data:`_scan.ScanOutput`)."""
    return _scan.ScanOutput(np.empty(0 if int_docs else n_bytes, dtype=np.uint8),
                            np.zeros(1 if int_docs else n_rows + 1, dtype=np.int64),
                            np.empty(n_rows if int_docs else 0, dtype=np.int64),
                            np.empty(n_rows, dtype=np.float64),
                            np.empty((n_groups, 3), dtype=np.int64))


def _scan_single_pass(buf, starts, ends, layout, source):
    """One writing pass assuming integer doc ids; None when that assumption fails."""
    upper = _jit.launch(_scan.count_lines, buf, starts, ends)  # exact unless comments
    row0 = np.concatenate(([0], np.cumsum(upper)))
    group0 = np.concatenate(([0], np.cumsum(np.minimum(upper, GROUP_ROOM))))
    outputs = _scan_outputs(int(row0[-1]), 0, int(group0[-1]), True)
    doc_values, values, groups = outputs.doc_values, outputs.values, outputs.groups
    result = _scan_launch((0.0, 0.9), buf, starts, ends, layout, True, True, row0,
                          np.zeros_like(row0), group0, outputs)
    if np.any((result[:, 3] == _scan.NOT_INT) | (result[:, 3] == _scan.GROUPS_FULL)):
        return None
    _check_errors(buf, layout, result[:, 3], result[:, 4], source)
    rows, n_groups = result[:, 0], result[:, 2]
    # close the gaps between chunks (each wrote at an upper bound of its first row)
    real_row0 = np.concatenate(([0], np.cumsum(rows)))
    real_group0 = np.concatenate(([0], np.cumsum(n_groups)))
    for c in range(len(rows)):
        a, r, n = int(row0[c]), int(real_row0[c]), int(rows[c])
        if a != r:
            doc_values[r:r + n] = doc_values[a:a + n]
            values[r:r + n] = values[a:a + n]
        g, k = int(real_group0[c]), int(n_groups[c])
        groups[g:g + k] = groups[int(group0[c]):int(group0[c]) + k]
        groups[g:g + k, 2] -= a - r
    n_rows = _check_rows(int(real_row0[-1]), layout, source)
    docs = Ids(values=doc_values[:n_rows], text=True)
    return _finish(buf, starts, ends, layout, real_row0, groups[:int(real_group0[-1])], docs,
                   values[:n_rows], source)


def _finish(buf, starts, ends, layout, row0, groups, docs, values, source):
    if not _scan.integer_values(layout):
        _convert_slow_numbers(buf, starts, ends, layout, row0, values, source)
    # Intern the query ids of the groups (blocks of lines with one query id).
    group_ids = _gather_tokens(buf, groups[:, :2])
    block_first, block_code, first = intern_blocks(group_ids.args())
    return group_ids.take(first), block_code, groups[block_first, 2], docs, values


def _check_errors(buf, layout, codes, offsets, source):
    bad = np.flatnonzero(codes)
    if len(bad):
        _raise_line_error(buf, layout, int(codes[bad[0]]), int(offsets[bad[0]]), source)


def _check_rows(n_rows, layout, source):
    if n_rows == 0:
        kind = {_scan.QRELS: "qrels", _scan.PREFS: "preferences", _scan.QRELS_PREFS: "qrels",
                _scan.QRELS_JG: "qrels", _scan.QRELS_REAL: "qrels"}.get(layout, "run")
        raise InputError(f"{source}: empty {kind} file (no content lines)")
    return n_rows


def _gather_tokens(buf, bounds):
    return Ids(*gather_spans(buf, bounds[:, 0], bounds[:, 1] - bounds[:, 0]))


def _convert_slow_numbers(buf, starts, ends, layout, row0, values, source):
    slow = np.flatnonzero(np.isnan(values))
    if len(slow) == 0:
        return
    spans = _jit.compiled(_scan.slow_tokens)(buf, starts, ends, layout, slow, row0)
    raw = buf.tobytes() if len(slow) > 64 else None
    for k, (a, b) in enumerate(spans.tolist()):
        token = raw[a:b] if raw is not None else buf[a:b].tobytes()
        values[slow[k]] = _score(token, layout, lambda message, a=a: _raise_at(buf, a, source,
                                                                                message))


def _score(token, layout, fail):
    """The score (or preference level) of a token the scanner left to Python (``-rank`` for
    MS MARCO files); ``fail(message)`` raises. Python's ``float`` is strtod's value, but it
    also reads ``1_000``, which strtod (trec_eval) reads as 1: that is refused."""
    try:
        value = None if b"_" in token else float(token)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value):
        what = "is not a number" if value is None else "is not a finite number"
        name = "score" if layout in (_scan.RUN6, _scan.RUN3) else \
            "relevance label" if layout == _scan.QRELS_REAL else "relevance level"
        fail(f"{name} {token.decode('utf-8', 'replace')!r} {what}")
    return -value if layout == _scan.RUN3 else value


def _scan_python(buf, layout, source):
    """What :func:`_scan_file` returns, computed by Python for small files: a split per
    line, Python's number parsing (the scanner's fast path gives the same doubles), and a
    second look at the lines only to name a bad one."""
    needed, exact, _, f_doc, f_value = _scan._line_fields(layout)
    data = buf.tobytes()
    lone_cr = _LONE_CR.search(data) if b"\r" in data else None
    if lone_cr:
        _raise_line_error(buf, layout, _scan.LONE_CR, data.rfind(b"\n", 0, lone_cr.start()) + 1,
                          source)
    lines = data.split(b"\n")
    rows = [fields for fields in map(bytes.split, lines) if fields and fields[0][0] != 35]
    lengths = set(map(len, rows))
    if lengths and (min(lengths) < needed or (exact and max(lengths) > needed)):
        _python_line_error(buf, lines, layout, source)
    _check_rows(len(rows), layout, source)
    values = _python_values([fields[f_value] for fields in rows], layout)
    if values is None:  # a bad number: find its line
        _python_line_error(buf, lines, layout, source)
    qids = [fields[0] for fields in rows]
    block_first = [i for i in range(len(qids)) if i == 0 or qids[i] != qids[i - 1]]
    codes = {}
    block_code = [codes.setdefault(qids[i], len(codes)) for i in block_first]
    return (Ids.from_strings(list(codes)), np.array(block_code, dtype=np.int64),
            np.array(block_first, dtype=np.int64),
            _python_doc_ids([fields[f_doc] for fields in rows]), values)


def _python_values(tokens, layout):
    """The numbers of the value tokens as :func:`_scan_python` reads them, or None when one
    is bad."""
    try:
        if _scan.integer_values(layout):
            labels = [_label(t) for t in tokens]
            return None if None in labels else np.array(labels, dtype=np.float64)
        values = np.array(list(map(float, tokens)))
    except (ValueError, TypeError):
        return None
    if layout == _scan.RUN3:
        values = -values
    if not np.isfinite(values).all() or b"_" in b"".join(tokens):
        return None
    return values


def _python_doc_ids(docs):
    """The doc id tokens as Ids: integers when every one is canonical decimal."""
    if _CANONICAL_INTS.fullmatch(b" ".join(docs)):
        return Ids(values=np.array(list(map(int, docs)), dtype=np.int64), text=True)
    return Ids.from_strings(docs)


_LONE_CR = re.compile(rb"\r(?=[^\n])")

#: Space-separated canonical decimal ids (see :func:`fastir.model.ids.canonical_text`).
_CANONICAL_INTS = re.compile(rb"(?:0|[1-9][0-9]{0,17})(?: (?:0|[1-9][0-9]{0,17}))*")


def _python_line_error(buf, lines, layout, source):
    """Raise the error of the first bad line, as the scanner words it."""
    needed, exact, _, _, f_value = _scan._line_fields(layout)
    offset = 0
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if fields and fields[0][0] != 35:
            if len(fields) < needed or (exact and len(fields) > needed):
                code = _scan.TOO_FEW_FIELDS if len(fields) < needed else _scan.TOO_MANY_FIELDS
                _raise_line_error(buf, layout, code, offset, source)
            integer = _scan.integer_values(layout)
            if integer and _label(fields[f_value]) is None:
                _raise_line_error(buf, layout, _scan.BAD_LABEL, offset, source)
            if not integer:
                _score(fields[f_value], layout, lambda message, n=number: _fail(source, n,
                                                                                  message))
        offset += len(line) + 1
    raise InputError(f"{source}: malformed file")  # (not reached: a line above is bad)


def _label(token):
    """A qrels label as the scanner reads it: sign and digits, 32 bits; None otherwise."""
    digits = token[1:] if token[:1] in (b"+", b"-") else token
    if not digits.isdigit():
        return None
    value = int(token)
    return value if -(2**31) <= value < 2**31 else None


def _real(token):
    """Whether a label token is a finite real >= 0 (that ``labels='float'`` would read)."""
    try:
        value = float(token)
    except ValueError:
        return False
    return "_" not in token and math.isfinite(value) and value >= 0


def _fail(source, line, message):
    raise InputError(f"{source}:{line}: {message}")


def _raise_line_error(buf, layout, code, offset, source):
    needed, _, _, _, f_value = _scan._line_fields(layout)
    window = buf[offset:offset + 4096].tobytes()  # enough of a line to quote from
    fields = window.split(b"\n", 1)[0].split()
    token = fields[f_value].decode("utf-8", "replace") if len(fields) > f_value else ""
    if len(token) > 40:
        token = token[:40] + "..."
    hint = FLOAT_HINT if layout == _scan.QRELS and _real(token) else ""
    message = _MESSAGES[code].format(needed=needed, token=token, found=len(fields), hint=hint)
    if layout == _scan.RUN3 and code == _scan.TOO_MANY_FIELDS:
        message += " (the first line has 3 fields, qid docno rank, so every line must)"
    if layout == _scan.RUN6 and code == _scan.TOO_FEW_FIELDS:
        message += (" (a run line is 'qid Q0 docno rank score tag', or 'qid docno score' in "
                    "MS MARCO's 3 columns)")
    if layout == _scan.QRELS and code == _scan.TOO_FEW_FIELDS and len(fields) == 3:
        message += (" (a qrels line is 'qid iter docno label': the iteration column, which "
                    "is not read, is missing; add one, e.g. awk '{print $1, 0, $2, $3}')")
    other = {_scan.QRELS: (6, "a run"), _scan.RUN6: (4, "a qrels")}.get(layout)
    if other and code in (_scan.TOO_FEW_FIELDS, _scan.TOO_MANY_FIELDS) and \
            len(_content_fields(buf) or ()) == other[0]:
        message += (f" ({other[0]} fields, as in {other[1]} file: are the qrels and the run "
                    "swapped?)")
    _raise_at(buf, offset, source, message)


def _raise_at(buf, offset, source, message):
    _fail(source, int(np.count_nonzero(buf[:offset] == 10)) + 1, message)


def read_zscores(path):
    """``{(qid, measure): (mean, stddev)}`` from a trec_eval ``-Z`` file."""
    table = {}
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the -Z file: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if len(fields) != 4:
            raise InputError(f"{path}:{number}: malformed line: expected 4 fields "
                             "(qid measure mean stddev)")
        mean, stddev = (_number(token) for token in fields[2:])
        if mean is None or stddev is None:
            raise InputError(f"{path}:{number}: mean and stddev must be numbers")
        key = (fields[0].decode("utf-8", "surrogateescape"),
               fields[1].decode("utf-8", "surrogateescape"))
        table[key] = (mean, stddev)
    return table


def _number(token):
    """A number as strtod reads a whole token (``nan`` too, as in trec_eval's own -Z files;
    not Python's ``1_0``), or None."""
    try:
        return float(token) if b"_" not in token else None
    except ValueError:
        return None
