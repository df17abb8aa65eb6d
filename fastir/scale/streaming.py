"""Evaluating a run file larger than memory: read in query-complete chunks, evaluate each, and
gather the per-query values into one :class:`~fastir.results.Results`.

A TREC run lists each query's lines together, so a chunk of lines ending where a query ends
holds complete rankings: the values of its queries are those of the whole file. The values
are placed in the qrels' query order (trec_eval order, as the in-memory join gives them) and
``Results.mean`` sums them in that order: means are bit-identical to :func:`fastir.evaluate`.
"""

import collections
import contextlib
import functools
import mmap
import numbers
import os
import re
import stat

import numpy as np

from fastir import _jit
from fastir.engine import STRING, Plan
from fastir.io import _scan, trec
from fastir.io.inputs import as_qrels, warn_of_queries
from fastir.model.data import InputError, Run
from fastir.model.ids import common_kind
from fastir.model.join import join
from fastir.model.values import assemble
from fastir.options import Options
from fastir.progress import Progress, wanted
from fastir.worker import library

__all__ = ["evaluate_file"]

CHUNK_BYTES = 64 << 20
MAX_CHUNK = 1 << 40  # a larger chunk_bytes reads as this: a chunk of the whole file
_READ = 1 << 20  # compressed bytes read per step


class QueriesNotTogether(InputError):
    """A run whose query's lines are not together: it cannot be streamed."""


def evaluate_file(qrels, run_path, measures, *, chunk_bytes=CHUNK_BYTES, relevance_level=1,
                  missing="zero", max_docs=None, judged_only=False, num_docs=0, compat=None,
                  ties="trec_eval", unjudged="nonrelevant", labels="int", samples=1000,
                  label_seed=0, third_column="auto", progress=False):
    """Evaluate a TREC run file chunk by chunk: memory follows ``chunk_bytes``, not the file.

    Takes the options of :func:`fastir.evaluate` and gives the same :class:`Results`,
    bit for bit. ``run_path`` is a path (plain, gzip, bz2 or xz), ``-`` or a binary file
    object. Each query's lines must be contiguous (as TREC runs are): a query id seen again
    after another query raises an :class:`~fastir.InputError` naming the line. A chunk is
    about ``chunk_bytes`` of (decompressed) text plus the query cut at its end.
    ``third_column`` is as in :func:`fastir.read_run`. ``progress``: a bar on standard
    error over the file's bytes as they are read (``True``, or a
    :class:`~fastir.progress.Progress` to advance). On files, in a process that has not
    loaded numba, the call runs in the user's warm worker as :func:`fastir.evaluate`'s
    does (``FASTIR_WORKER=off``: never).
    """
    delegated = library.call("evaluate_file", (qrels, run_path, measures), dict(
        chunk_bytes=chunk_bytes, relevance_level=relevance_level, missing=missing,
        max_docs=max_docs, judged_only=judged_only, num_docs=num_docs, compat=compat,
        ties=ties, unjudged=unjudged, labels=labels, samples=samples, label_seed=label_seed,
        third_column=third_column,
        progress=progress))
    if delegated is not None:
        return delegated
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, numbers.Real) or \
            not chunk_bytes >= 1 or int(min(chunk_bytes, MAX_CHUNK)) != min(chunk_bytes,
                                                                           MAX_CHUNK):
        raise ValueError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
    chunk_bytes = int(min(chunk_bytes, MAX_CHUNK))  # (larger chunks: the whole file)
    if third_column not in ("auto", "rank", "score"):
        raise ValueError(f"third_column must be 'auto', 'rank' or 'score', got "
                         f"{third_column!r}")
    options = Options(relevance_level=relevance_level, missing=missing, max_docs=max_docs,
                      judged_only=judged_only, num_docs=num_docs, compat=compat, ties=ties,
                      unjudged=unjudged, labels=labels, samples=samples, label_seed=label_seed)
    plan = Plan.of(measures, options)
    source = trec.source_name(run_path)
    qrels = as_qrels(qrels, labels=labels)
    state = Combined(qrels, plan, options.missing)
    reader = _ChunkReader(source, third_column)
    size = _size(run_path)
    own = not isinstance(progress, Progress)
    bar = Progress(size or None, f"evaluating {os.path.basename(source)} in chunks",
                   wanted(progress), unit="B") if own else progress
    with _jit.tier(len(qrels) + min(chunk_bytes, size or chunk_bytes) // 32), \
            contextlib.closing(bar) if own else contextlib.nullcontext():
        for chunk, lines_before in _query_chunks(run_path, source, chunk_bytes, bar):
            run = reader.parse(chunk, lines_before)
            del chunk  # (a mapped window is unmapped once nothing holds it)
            if run is None:
                continue
            if options.compat == "9.0.8":
                run = run.in_float32()
            state.add(evaluate_part(qrels, plan, run, options))
        if reader.layout is None:
            raise InputError(f"{source}: empty run file (no result lines)")
        return state.results(source)


def _size(path):
    try:
        return os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return 0


Part = collections.namedtuple("Part", "rows values strings ignored text_ids n_run_queries "
                              "errors")
Part.__doc__ = """What one part of a run (complete queries) gives: the qrels rows of its judged
queries, their values, ``{key: texts}`` of text measures, its run queries without
judgments, whether integer qrels ids matched its ids as text, its number of queries, and
its values' standard errors (``Results.standard_errors``: None but with probabilistic
labels)."""


def evaluate_part(qrels, plan, run, options):
    """The :class:`Part` of ``run``, whose queries are complete (in no other part): its
    queries in both, evaluated under ``options``."""
    results, joined = plan.evaluate(qrels, run, options.replace(missing="skip"),
                                    check=None)
    text_ids = qrels.query_ids.is_int and not common_kind(qrels.query_ids,
                                                          run.query_ids)[0].is_int
    return Part(joined.qrels_query, results.values, results.strings,
                joined.ignored_run_queries, text_ids, run.n_queries, results.standard_errors)


class Combined:
    """Per-query values of the parts evaluated so far, by qrels query; :meth:`results`
    gives what :func:`fastir.evaluate` gives on the whole run."""

    def __init__(self, qrels, plan, missing):
        self.qrels, self.plan, self.missing = qrels, plan, missing
        self.values = np.zeros((qrels.n_queries, len(plan.parsed)))
        self.errors = None if qrels.label_probs is None else np.zeros_like(self.values)
        self.in_run = np.zeros(qrels.n_queries, dtype=bool)
        self.strings = {key: [""] * qrels.n_queries
                        for key, m in zip(plan.keys, plan.parsed) if m.spec.kind == STRING}
        self.ignored = []
        self.text_ids = False  # integer qrels ids matched some part's ids as text
        self.n_run_queries = 0

    def add(self, part):
        self.values[part.rows] = part.values
        if self.errors is not None:
            self.errors[part.rows] = part.errors
        self.in_run[part.rows] = True
        for key, texts in part.strings.items():
            for row, text in zip(part.rows.tolist(), texts):
                self.strings[key][row] = text
        self.ignored += part.ignored
        self.text_ids |= part.text_ids
        self.n_run_queries += part.n_run_queries

    def results(self, source):
        qrels, plan = self.qrels, self.plan
        absent = np.flatnonzero(~self.in_run)
        if self.missing == "zero" and len(absent):  # their empty rankings, joined as any
            values, errors = plan.values_and_errors(empty_rankings(qrels, absent, plan), qrels)
            self.values[absent] = values
            if errors is not None:
                self.errors[absent] = errors
        keep = np.arange(qrels.n_queries) if self.missing == "zero" else \
            np.flatnonzero(self.in_run)
        ids = qrels.query_ids.as_text() if self.text_ids and qrels.query_ids.is_int else \
            qrels.query_ids
        ignored = [str(q) for q in self.ignored] if self.text_ids else self.ignored
        ignored.sort(key=_strcmp_key)
        in_run = self.in_run[keep]
        warn_of_queries(in_run, qrels, self.n_run_queries, source)
        strings = {key: [texts[q] for q in keep.tolist()] for key, texts in self.strings.items()}
        results = plan.results_of(ids.take(keep), self.values[keep], in_run, self.missing,
                                  ignored, ids.take(absent).tolist(), strings)
        results.standard_errors = None if self.errors is None else self.errors[keep]
        return results


def empty_rankings(qrels, rows, plan):
    """The join of the qrels queries ``rows`` with empty rankings (every field the join
    gives ``plan``'s measures: tie groups, subtopics, codes in the whole qrels), by the join
    itself, of a run with no rows."""
    nothing = Run.from_arrays(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                              source="no run")
    joined = join(qrels, nothing, plan.options.replace(missing="zero"),
                  anywhere=plan.anywhere)
    position = np.empty(len(joined.qrels_query), dtype=np.int64)
    position[joined.qrels_query] = np.arange(len(joined.qrels_query))
    return joined.of_queries(position[rows])


def _strcmp_key(query_id):
    """trec_eval's order of query ids: their bytes (integers by their decimal text)."""
    return str(query_id).encode("utf-8", "surrogateescape")


class _ChunkReader:
    """Parses query-complete chunks of one run file into Runs, checking that no query
    comes back after another, and that the file reads the same as it would whole."""

    def __init__(self, source, third_column):
        self.source, self.third_column = source, third_column
        self.layout = None  # from the first content line of the file
        self.seen = set()
        self.rank_flags = None  # (integers from 1, increasing, each query's 1..n) so far
        self.holds_scores = None

    def parse(self, chunk, lines_before):
        """The Run of a chunk (bytes, or a uint8 array), or None when it holds no result line;
        ``lines_before()`` counts the file's lines before it (asked on an error only)."""
        buf = np.frombuffer(chunk, dtype=np.uint8)
        first = trec._content_fields(buf)
        if first is None:
            return None
        if self.layout is None:
            self.layout, _, self.int_guess = trec._run_layout(buf, self.source)
        tag = trec._content_fields(buf, from_end=True)
        tag = tag[5].decode("utf-8", "surrogateescape") if self.layout == _scan.RUN6 and \
            len(tag) > 5 else ""
        try:
            query_ids, block_code, block_first, docs, scores = trec._scan_file(
                buf, self.layout, self.source, self.int_guess)
        except InputError as exc:
            raise _shifted(exc, self.source, lines_before()) from None
        self._check_contiguous(buf, query_ids, block_code, lines_before)
        if self.layout == _scan.RUN3 and self._holds_scores(scores, block_first):
            scores = -scores
        return assemble(Run, query_ids, block_code, block_first, docs, scores, self.source,
                        name=tag)

    def _check_contiguous(self, buf, query_ids, block_code, lines_before):
        keep = np.concatenate(([True], block_code[1:] != block_code[:-1]))
        ids = query_ids.tolist()
        if np.count_nonzero(keep) == len(ids) and self.seen.isdisjoint(ids):
            self.seen.update(ids)
            return
        seen, previous = set(self.seen), None
        for number, line in enumerate(buf.tobytes().split(b"\n"), lines_before() + 1):
            fields = line.split(None, 1)
            if not fields or fields[0][:1] == b"#":
                continue
            qid = fields[0].decode("utf-8", "surrogateescape")
            if qid != previous and qid in seen:
                raise QueriesNotTogether(
                    f"{self.source}:{number}: query {qid!r} comes back after other queries: "
                    "streaming needs each query's lines together (sort the run by query, e.g. "
                    "sort -s -k1,1, or use fastir.evaluate)")
            seen.add(qid)
            previous = qid
        raise AssertionError("a repeated query was not found")  # the scan found one

    def _holds_scores(self, negated, block_first):
        """Whether a three-field file's third column holds scores, decided as
        :func:`fastir.read_run` decides on the whole file; a later chunk that would change
        the decision raises."""
        if self.third_column != "auto":
            return self.third_column == "score"
        flags = _rank_flags(-negated, block_first)
        self.rank_flags = flags if self.rank_flags is None else \
            tuple(a and b for a, b in zip(self.rank_flags, flags))
        integers, increasing, permutations = self.rank_flags
        holds_scores = not (integers and (increasing or permutations))
        if self.holds_scores is None:
            self.holds_scores = trec._third_column_holds_scores("auto", negated, block_first,
                                                                self.source)
        elif holds_scores != self.holds_scores:
            raise InputError(f"{self.source}: three fields per line, and the third column "
                             "reads as ranks in the first chunk but not in the whole file: "
                             "pass third_column='rank' or 'score'")
        return self.holds_scores


def _rank_flags(values, block_first):
    """(integers from 1, increasing within each block, each block's 1..n): the tests of
    :func:`fastir.io.trec._ranks`, kept apart so that chunks combine."""
    if values.min() < 1 or not np.all(values == np.floor(values)):
        return False, False, False
    increasing = np.diff(values) > 0
    increasing[block_first[1:] - 1] = True
    lengths = np.diff(np.append(block_first, len(values)))
    block = np.repeat(np.arange(len(lengths)), lengths)
    in_order = values[np.lexsort((values, block))]
    return True, bool(increasing.all()), bool(
        np.all(in_order == np.arange(len(values)) - np.repeat(block_first, lengths) + 1))


def _shifted(exc, source, lines_before):
    """The error of a chunk with the line number in the whole file."""
    message = str(exc)
    prefix = re.match(re.escape(source) + r":(\d+):", message)
    if prefix is None:
        return exc
    line = int(prefix.group(1)) + lines_before
    return InputError(f"{source}:{line}:{message[prefix.end():]}")


def _query_chunks(path, source, chunk_bytes, progress=None):
    """(chunk, lines before it) of about ``chunk_bytes``, each ending where a query ends (but
    the last); ``lines before`` is a function (the count is asked for on an error only). A
    plain file is mapped a window at a time (:func:`_mapped_chunks`: no copy); compressed
    data, standard input and file objects are read and carried (:func:`_read_chunks`)."""
    if isinstance(path, (str, os.PathLike)) and str(path) != "-":
        try:  # (a named pipe is opened once only: read as a stream, never peeked at first)
            plain = stat.S_ISREG(os.stat(path).st_mode)
            if plain:
                with open(path, "rb") as f:
                    plain = trec._compression(f.read(10)) is None
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        if plain:
            yield from _mapped_chunks(path, chunk_bytes, progress)
            return
    yield from _read_chunks(path, source, chunk_bytes, progress)


def _mapped_chunks(path, chunk_bytes, progress):
    """The chunks of a plain file as uint8 arrays over a memory map of a window of it (page
    tables filled at once, no copy): a window of ``chunk_bytes`` from where the last chunk
    ended, cut where its last query starts (a window holding one query only grows until the
    query ends); each window is unmapped before the next is mapped (memory follows
    ``chunk_bytes``, not the file)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        start = len(trec.BOM) if f.read(len(trec.BOM)) == trec.BOM else 0
        while start < size:
            length = chunk_bytes
            while True:
                end = min(start + length, size)
                mapped, offset = _map(f, start, end)
                cut = end - start if end == size else _last_query_start_in(
                    mapped, offset, offset + end - start) - offset
                if cut > 0:
                    break
                _unmap(mapped)
                length *= 2  # (one query runs past the window: look further)
            chunk = np.frombuffer(mapped, dtype=np.uint8)[offset:offset + cut]
            yield chunk, functools.partial(_lines_before, path, start)
            del chunk
            _unmap(mapped)
            if progress is not None:
                progress.advance(cut)
            start += cut


def _map(f, start, end):
    """A read-only map of bytes ``start:end`` of ``f`` from the page boundary at or before
    ``start``, and where ``start`` is in it."""
    aligned = start - start % mmap.ALLOCATIONGRANULARITY
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(f.fileno(), end - aligned, flags=flags, prot=mmap.PROT_READ,
                     offset=aligned), start - aligned


def _unmap(mapped):
    try:
        mapped.close()
    except BufferError:  # (a view of it is still held, by an error's frames: freed later)
        pass


def _last_query_start_in(data, lo, hi):
    """Where the last query of the whole lines of ``data[lo:hi]`` starts, or ``lo`` when
    they hold one query only (or none)."""
    end = data.rfind(b"\n", lo, hi) + 1
    if end <= lo:
        return lo
    cut, _, _ = _last_query_start(data, end, lo, None)
    return cut if cut > lo else lo


def _lines_before(path, start):
    """Newlines in the first ``start`` bytes of a file (the lines before a chunk)."""
    with open(path, "rb") as f:
        return count_newlines(f, start)


def count_newlines(f, n):
    """Newlines in the next ``n`` bytes of ``f`` (read 16 MiB at a time)."""
    count = 0
    while n > 0:
        data = f.read(min(n, 1 << 24))
        if not data:
            break
        count += data.count(b"\n")
        n -= len(data)
    return count


def _read_chunks(path, source, chunk_bytes, progress=None):
    """:func:`_query_chunks` of compressed data, standard input or a file object: blocks
    read and carried to where a query ends. A query longer than a chunk is held, not
    rescanned: each block's lines are read once."""
    carry, lines_before = bytearray(), 0
    scanned, qid = 0, None  # carry[:scanned] is whole lines of query qid only
    for block, last in _blocks(path, source, chunk_bytes, progress):
        carry += block
        if last:
            cut = len(carry)
        else:
            cut, qid, scanned = _last_query_start(carry, carry.rfind(b"\n") + 1, scanned, qid)
        if cut == 0:
            continue
        chunk = bytes(carry[:cut])
        del carry[:cut]
        scanned -= cut
        yield chunk, functools.partial(int, lines_before)
        lines_before += chunk.count(b"\n")
    if carry:
        yield bytes(carry), functools.partial(int, lines_before)


def _last_query_start(data, end, scanned, qid):
    """Where the last query of ``data[:end]`` (whole lines) starts, 0 if it holds one query
    only (or none), given that ``data[:scanned]`` holds query ``qid`` only; with that
    query's id and how far ``data`` is now known to hold it only (after the cut)."""
    last, pos = None, end
    while pos > scanned:
        found = data.rfind(b"\n", scanned, pos - 1)
        start = found + 1 if found >= 0 else scanned
        fields = bytes(data[start:pos]).split(None, 1)
        if fields and fields[0][:1] != b"#":
            if last is None:
                last = fields[0]
            elif fields[0] != last:
                return pos, last, end
        pos = start
    if last is not None and qid is not None and last != qid:
        return scanned, last, end
    return 0, last if qid is None else qid, end


def _blocks(path, source, size, progress=None):
    """(bytes, whether last) of the file's (decompressed) content, about ``size`` at a time,
    without a leading UTF-8 byte order mark; ``progress`` advances by the bytes read."""
    if hasattr(path, "read"):
        f, close = path, False
    elif str(path) == "-":
        f, close = trec.standard_input(), False
    else:
        try:
            f, close = open(path, "rb"), True
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        pending = None
        for block in _decompressed(_Advancing(f, progress), source, size):
            if pending is None and block.startswith(trec.BOM):
                block = block[len(trec.BOM):]
            if pending is not None:
                yield pending, False
            pending = block
        if pending is not None:
            yield pending, True
    finally:
        if close:
            f.close()


def _decompressed(f, source, size):
    """Blocks of about ``size`` bytes of a binary file's content, decompressed if gzip, bz2
    or xz (known by the first bytes)."""
    head = _read(f, source, 10)
    kind = trec._compression(head)
    if kind is None:
        block = head + _read(f, source, max(size - len(head), 1))
        while block:
            yield block
            block = _read(f, source, size)
        return

    def chunks():
        chunk = head
        while chunk:
            yield chunk
            chunk = _read(f, source, _READ)

    parts, held = [], 0
    for part in trec.decompressed(chunks(), kind, source):
        parts.append(part)
        held += len(part)
        if held >= size:
            yield b"".join(parts)
            parts, held = [], 0
    if held:
        yield b"".join(parts)


class _Advancing:
    """A binary file whose reads advance a progress bar (None: none)."""

    def __init__(self, f, progress):
        self.f, self.progress = f, progress

    def read(self, n):
        data = self.f.read(n)
        if self.progress is not None:
            self.progress.advance(len(data))
        return data


def _read(f, source, n):
    """Up to ``n`` bytes of ``f``, read in steps of at most ``_READ`` (a huge ``n`` allocates
    what the file holds, not ``n``)."""
    parts, left = [], n
    while left > 0:
        data = f.read(min(left, _READ))
        if isinstance(data, str):
            raise InputError(f"{source}: evaluate_file reads bytes: open the file in binary "
                             "mode ('rb') or pass its path")
        if not data:
            break
        parts.append(bytes(data))
        left -= len(data)
    return b"".join(parts)
