"""Evaluating a run held in a dask DataFrame (needs the dask extra): each partition is
evaluated by fastir's kernels where it lives, and the per-query values are gathered into one
:class:`~fastir.Results`, bit-identical to :func:`fastir.evaluate`.

A partition's queries but its first and last are evaluated in its task; the rows of those two
(which a block of a file may cut) come back to the caller, which joins each query's pieces in
partition order and evaluates them there. Only a query split elsewhere (a run not grouped by
query) makes the run be shuffled on the query id.

Kernels are compiled once in the calling process before any task runs (numba caches them on
disk, and workers load them from there instead of compiling side by side). Inside a task,
numba runs on one thread and one task at a time per process parses or evaluates: give
workers one thread each and as many processes as cores.
"""

import collections
import contextlib
import os
import threading

import numpy as np

from fastir import _jit
from fastir._optional import require
from fastir.engine import Plan
from fastir.io import _scan, trec
from fastir.io.inputs import as_qrels
from fastir.model.arrow import ids_to_arrow
from fastir.model.data import Run
from fastir.model.errors import InputError
from fastir.model.ids import Ids, canonical_text
from fastir.options import Options
from fastir.scale.streaming import Combined, _shifted, count_newlines, evaluate_part

__all__ = ["evaluate", "read_trec_run"]

_LOCK = threading.Lock()  # one numba section at a time per worker process

Columns = collections.namedtuple("Columns", "query doc score options")
Columns.__doc__ = """What every task reads besides its partition: the run's column names and
the evaluation's :class:`~fastir.options.Options`."""

Piece = collections.namedtuple("Piece", "part ids edges edge_ids")
Piece.__doc__ = """What one partition's task gives: the :class:`~fastir.scale.streaming.Part`
of the queries it evaluated (None: none), their ids, the rows of its first and last queries
left to the caller (a pandas frame, empty when it evaluated them all) and their ids."""


def evaluate(run, qrels, measures, *, per_query=False, query_col="query_id", doc_col="doc_id",
             score_col="score", relevance_level=1, missing="zero", max_docs=None,
             judged_only=False, num_docs=0, compat=None, ties="trec_eval",
             unjudged="nonrelevant", labels="int", samples=1000, label_seed=0):
    """Evaluate a dask DataFrame run (columns ``query_col``, ``doc_col``, ``score_col``).

    ``qrels`` is any form :func:`fastir.evaluate` takes (it is sent to every task); the
    options are :func:`fastir.evaluate`'s. A query may be cut at a partition's start or end
    (a file read in blocks): those rows are evaluated together by the caller. A query split
    otherwise (a run not grouped by query) makes the run be shuffled on ``query_col`` and
    evaluated again. Computes with dask's current scheduler.

    Returns
    -------
    dict or Results
        ``{measure: mean}``, or with ``per_query`` the :class:`~fastir.Results` (queries in
        trec_eval order), exactly as :func:`fastir.evaluate` on the whole run.
    """
    options = Options(relevance_level=relevance_level, missing=missing, max_docs=max_docs,
                      judged_only=judged_only, num_docs=num_docs, compat=compat, ties=ties,
                      unjudged=unjudged, labels=labels, samples=samples, label_seed=label_seed)
    plan = Plan.of(measures, options)
    qrels = as_qrels(qrels, labels=labels)
    absent = [c for c in (query_col, doc_col, score_col) if c not in run.columns]
    if absent:
        raise InputError(f"dask DataFrame: no column {absent[0]!r} (columns: "
                         f"{list(run.columns)}); pass query_col=, doc_col=, score_col=")
    run = run[[query_col, doc_col, score_col]]
    columns = Columns(query_col, doc_col, score_col, options)
    _compile(qrels, plan, run._meta, columns)
    pieces = _pieces(run, qrels, plan, columns, whole=False)
    if not _queries_complete(pieces):
        pieces = _pieces(run.shuffle(on=query_col), qrels, plan, columns, whole=True)
    combined = Combined(qrels, plan, options.missing)
    for piece in pieces:
        if piece.part is not None:
            combined.add(piece.part)
    edges = [piece.edges for piece in pieces if len(piece.edges)]
    if edges:
        pd = require("pandas", "fastir.dask")

        combined.add(_evaluate_rows(pd.concat(edges), qrels, plan, columns)[0])
    results = combined.results("dask DataFrame")
    return results if per_query else results.mean


def _pieces(run, qrels, plan, columns, whole):
    """The :class:`Piece` of every partition, computed with dask's current scheduler (the
    partition is made and evaluated in one task: only its piece comes back). Tasks go to
    local worker processes one at a time unless ``chunksize`` is configured (each is a
    partition's worth of work; dask's default batches of 6 would leave workers idle)."""
    dask = require("dask", "fastir.dask")
    tasks = run.map_partitions(_evaluate_partition, dask.delayed(qrels), dask.delayed(plan),
                               columns, whole, meta=(None, object), enforce_metadata=False)
    with dask.config.set(chunksize=dask.config.get("chunksize", 1)):
        return dask.compute(*tasks.to_delayed())


def _queries_complete(pieces):
    """Whether no query evaluated in a partition's task is in another partition, or among
    the rows left to the caller."""
    seen, total = set(), 0
    for piece in pieces:
        seen.update(piece.ids)
        total += len(piece.ids)
    return len(seen) == total and seen.isdisjoint(
        [q for piece in pieces for q in piece.edge_ids])


def _evaluate_partition(frame, qrels, plan, columns, whole):
    """The :class:`Piece` of one pandas partition: all its queries evaluated (``whole``:
    the partition holds complete queries), or all but its first and last, whose rows are
    left to the caller."""
    if whole:
        inner, edges, edge_ids = frame, frame.iloc[:0], []
    else:
        inner, edges, edge_ids = _split_edges(frame, frame[columns.query])
    if not len(inner):
        return Piece(None, [], edges, edge_ids)
    return Piece(*_evaluate_rows(inner, qrels, plan, columns), edges, edge_ids)


def _split_edges(frame, queries):
    """(the rows between the first and the last query's, the rows of those two at the
    frame's start and end, their ids) of a frame and its query id column."""
    n = len(frame)
    head = _run_length(queries)
    if head == n:
        return frame.iloc[:0], frame, _ids_of([queries.iat[0]]) if n else []
    tail = n - _run_length(queries, from_end=True)
    return (frame.iloc[head:tail], frame.iloc[np.r_[0:head, tail:n]],
            _ids_of([queries.iat[0], queries.iat[-1]]))


def _run_length(column, from_end=False):
    """How many rows at the start (or end) of ``column`` (a pandas Series) hold the id of its
    first (last) row: read in growing slices, so the cost is that of the query's rows."""
    n, done, step = len(column), 0, 1024
    if n == 0:
        return 0
    first = column.iat[-1 if from_end else 0]
    while done < n:
        stop = min(n, done + step)
        part = column.iloc[n - stop:n - done] if from_end else column.iloc[done:stop]
        other = np.flatnonzero(part.to_numpy() != first)
        if len(other):
            return (stop - 1 - int(other[-1])) if from_end else done + int(other[0])
        done, step = stop, 2 * step
    return n


def _ids_of(values):
    """Python ids as a run lists them (bytes as text)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return Ids.from_array(array).tolist()


def _evaluate_rows(frame, qrels, plan, columns):
    """(:class:`~fastir.scale.streaming.Part`, query ids) of a pandas frame of complete
    queries."""
    options = columns.options
    with _numba_section():
        run = Run.from_pandas(frame, columns.query, columns.doc, columns.score,
                              source="dask partition")
        if options.compat == "9.0.8":
            run = run.in_float32()
        return evaluate_part(qrels, plan, run, options), run.query_ids.tolist()


@contextlib.contextmanager
def _numba_section():
    """One numba section at a time in this process, and on one thread (the worker's
    processes are the parallelism)."""
    import numba

    with _LOCK:
        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            yield
        finally:
            numba.set_num_threads(before)


def _compile(qrels, plan, meta, columns):
    """Evaluate a one-row frame of the run's dtypes with compiled kernels, so that numba's
    disk cache holds them before workers start."""
    pd = require("pandas", "fastir.dask")

    if _jit._forced_mode() == "python":
        return
    query_col, doc_col, score_col = columns[:3]
    row = {}
    for col, value in ((query_col, qrels.query_ids[0] if qrels.n_queries else "q"),
                       (doc_col, "d"), (score_col, 1.0)):
        kind = meta[col].dtype.kind
        row[col] = pd.Series([1 if kind in "iu" else value], dtype=meta[col].dtype)
    with _jit.tier(1 << 40):
        _evaluate_rows(pd.DataFrame(row), qrels, plan, columns)


# -- reading TREC run files --------------------------------------------------------------
def read_trec_run(paths, blocksize="64MB"):
    """A dask DataFrame (``query_id``, ``doc_id``, ``score``) of TREC run files: a glob or a
    list of shards, ``qid iter docno rank score tag`` per line, read in ``blocksize`` blocks
    (``None``: a partition per file; a compressed file is always one).

    Each block is parsed by fastir's run scanner (the lines starting in it); ids stay text
    (pandas' Arrow-backed ``string`` dtype) and scores are parsed round-trip exact, so
    :func:`evaluate` on it gives :func:`fastir.evaluate`'s values on the same files. A
    malformed line is an :class:`~fastir.InputError` naming the file and line (when its
    partition is computed). A glob matching no file is one at once. (Parquet datasets:
    dask's own ``dask.dataframe.read_parquet``.)
    """
    dd = require("dask.dataframe", "fastir.dask.read_trec_run")
    from dask.utils import parse_bytes

    size = None if blocksize is None else parse_bytes(blocksize)
    blocks = [block for path in _run_files(paths) for block in _file_blocks(path, size)]
    return dd.from_map(_read_block, blocks, meta=_run_frame([], [], np.zeros(0)),
                       enforce_metadata=False)


def _run_files(paths):
    """The files of a glob or a list of paths; an InputError when there are none."""
    import glob

    listed = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike))
                                     else paths)]
    files = [f for p in listed for f in (sorted(glob.glob(p)) if glob.has_magic(p) else [p])]
    if not files:
        raise InputError(f"{', '.join(listed) or 'paths'}: no run file matches")
    absent = [f for f in files if not os.path.isfile(f)]
    if absent:
        raise InputError(f"{absent[0]}: no such run file")
    return files


def _file_blocks(path, size):
    """(path, start, stop) of each block of a file: byte ranges of ``size``, or (path, 0,
    None), the whole file, when ``size`` is None or the file is compressed."""
    with open(path, "rb") as f:
        compressed = trec._compression(f.read(10)) is not None
    length = os.path.getsize(path)
    if size is None or compressed or length == 0:
        return [(path, 0, None)]
    return [(path, start, min(start + size, length)) for start in range(0, length, size)]


def _read_block(block):
    """The pandas frame of a block's lines (those that start in it)."""
    path, start, stop = block
    data = trec.read_bytes(path) if stop is None else _block_lines(path, start, stop)
    try:
        with _numba_section():
            return _parse_block(np.frombuffer(data, dtype=np.uint8), path)
    except InputError as exc:
        raise _shifted(exc, path, _lines_before(path, start, stop)) from None


def _block_lines(path, start, stop):
    """The bytes of the lines starting at ``start`` up to ``stop`` (the last one read to its
    end), without the file's leading byte order mark."""
    with open(path, "rb") as f:
        f.seek(max(start - 1, 0))
        data = f.read(stop - max(start - 1, 0))
        if start > 0:  # (the byte before the block says whether a line starts with it)
            data = data[data.find(b"\n") + 1:] if b"\n" in data else b""
        elif data.startswith(trec.BOM):
            data = data[len(trec.BOM):]
        if not data or data.endswith(b"\n"):
            return data
        rest = [data]
        while True:
            more = f.read(1 << 16)
            end = more.find(b"\n")
            rest.append(more if end < 0 else more[:end + 1])
            if end >= 0 or not more:
                return b"".join(rest)


def _lines_before(path, start, stop):
    """How many lines of the file come before a block's lines (on an error only)."""
    if stop is None or start == 0:
        return 0
    with open(path, "rb") as f:
        f.seek(start - 1)
        first = f.read(stop - start + 1).find(b"\n") + start  # (the block's lines start after)
        f.seek(0)
        return count_newlines(f, first)


def _parse_block(buf, source):
    """The frame of whole ``qid iter docno rank score tag`` lines."""
    first = trec._content_fields(buf)
    if first is None:
        return _run_frame([], [], np.zeros(0))
    int_guess = len(first) > 2 and canonical_text(first[2])
    with _jit.tier(len(buf) // 32):
        query_ids, block_code, block_first, docs, scores = trec._scan_file(
            buf, _scan.RUN6, source, int_guess)
        lengths = np.diff(np.append(block_first, len(scores)))
        return _run_frame(query_ids.take(np.repeat(block_code, lengths)), docs, scores)


def _run_frame(query_ids, doc_ids, scores):
    """A pandas frame of Ids (or lists of str) columns and scores, ids as Arrow-backed
    strings."""
    pd = require("pandas", "fastir.dask")

    def text(ids):
        ids = ids if isinstance(ids, Ids) else Ids.from_strings(ids)
        return pd.arrays.ArrowStringArray(ids_to_arrow(ids))

    return pd.DataFrame({"query_id": text(query_ids), "doc_id": text(doc_ids),
                         "score": np.asarray(scores, dtype=np.float64)})
