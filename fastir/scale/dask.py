"""Evaluating a run held in a dask DataFrame (needs the dask extra): each partition of
complete queries is evaluated by fastir's kernels where it lives, and the per-query values
are gathered into one :class:`~fastir.Results`, bit-identical to :func:`fastir.evaluate`.

Kernels are compiled once in the calling process before any task runs (numba caches them on
disk, and workers load them from there instead of compiling side by side). Inside a task,
numba runs on one thread and one task at a time per process evaluates: give workers one
thread each and as many processes as cores.
"""

import threading

from fastir import _jit
from fastir.engine import Plan
from fastir.io.inputs import as_qrels
from fastir.model.data import Run
from fastir.model.errors import InputError
from fastir.scale.streaming import Combined, evaluate_part

__all__ = ["evaluate", "read_trec_run"]

_LOCK = threading.Lock()  # one evaluation at a time per worker process


def evaluate(run, qrels, measures, *, per_query=False, query_col="query_id", doc_col="doc_id",
             score_col="score", relevance_level=1, missing="zero", max_docs=None,
             judged_only=False, num_docs=0, compat=None):
    """Evaluate a dask DataFrame run (columns ``query_col``, ``doc_col``, ``score_col``).

    ``qrels`` is any form :func:`fastir.evaluate` takes (it is sent to every task); the
    options are :func:`fastir.evaluate`'s. A query split over partitions makes the run be
    shuffled on ``query_col`` and evaluated again (partition the run by query to avoid it).
    Computes with dask's current scheduler.

    Returns
    -------
    dict or Results
        ``{measure: mean}``, or with ``per_query`` the :class:`~fastir.Results` (queries in
        trec_eval order), exactly as :func:`fastir.evaluate` on the whole run.
    """
    import dask

    plan = Plan.of(measures, relevance_level, num_docs, compat)
    qrels = as_qrels(qrels)
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', got {missing!r}")
    absent = [c for c in (query_col, doc_col, score_col) if c not in run.columns]
    if absent:
        from fastir.model.data import InputError

        raise InputError(f"dask DataFrame: no column {absent[0]!r} (columns: "
                         f"{list(run.columns)}); pass query_col=, doc_col=, score_col=")
    run = run[[query_col, doc_col, score_col]]
    options = (query_col, doc_col, score_col, max_docs, judged_only, compat)
    _compile(qrels, plan, run._meta, options)
    qrels_task, plan_task = dask.delayed(qrels), dask.delayed(plan)

    def compute(run):
        return dask.compute(*[dask.delayed(_evaluate_partition)(p, qrels_task, plan_task,
                                                                options)
                              for p in run.to_delayed()])

    parts = compute(run)
    if not _queries_complete(parts):
        parts = compute(run.shuffle(on=query_col))
    combined = Combined(qrels, plan, missing)
    for part, _ in parts:
        combined.add(part)
    results = combined.results("dask DataFrame")
    return results if per_query else results.mean


def read_trec_run(paths, blocksize="64MB"):
    """A dask DataFrame (``query_id``, ``doc_id``, ``score``) of TREC run files: a glob or a
    list of shards, ``qid iter docno rank score tag`` per line, read in ``blocksize`` blocks.

    Ids stay text and scores are parsed round-trip exact, so :func:`evaluate` on it gives
    :func:`fastir.evaluate`'s values on the same files; a line without a doc id or a finite
    score is an :class:`~fastir.InputError` naming the file and line (when the partition is
    computed). A glob matching no file is one at once. (Parquet datasets: dask's own
    ``dask.dataframe.read_parquet``.)
    """
    import dask.dataframe as dd
    import pandas as pd

    frame = dd.read_csv(_run_files(paths), sep=r"\s+", header=None, usecols=[0, 2, 4],
                        names=["query_id", "iter", "doc_id", "rank", "score", "tag"],
                        dtype={"query_id": str, "doc_id": str, "score": str}, comment="#",
                        blocksize=blocksize, include_path_column="path")
    meta = pd.DataFrame({"query_id": pd.Series(dtype=object),
                         "doc_id": pd.Series(dtype=object), "score": pd.Series(dtype="float64")})
    return frame.map_partitions(_checked_rows, meta=meta)


def _run_files(paths):
    """The files of a glob or a list of paths; an InputError when there are none."""
    import glob
    import os

    listed = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike))
                                     else paths)]
    files = [f for p in listed for f in (sorted(glob.glob(p)) if glob.has_magic(p) else [p])]
    if not files:
        raise InputError(f"{', '.join(listed) or 'paths'}: no run file matches")
    absent = [f for f in files if not os.path.isfile(f)]
    if absent:
        raise InputError(f"{absent[0]}: no such run file")
    return files


def _checked_rows(frame):
    """A partition's rows with their scores as doubles (pandas' parse is round-trip exact),
    or an InputError naming the file and line of the first row without a doc id or a
    finite score."""
    import numpy as np
    import pandas as pd

    scores = pd.to_numeric(frame["score"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(scores) | frame["doc_id"].isna().to_numpy()
    if bad.any():
        row = frame.iloc[int(np.argmax(bad))]
        raise InputError(f"{row['path']}:{_line_number(row)}: expected 'qid iter docno rank "
                         f"score tag' with a finite score, found doc {row['doc_id']!r} and "
                         f"score {row['score']!r}")
    return pd.DataFrame({"query_id": frame["query_id"].to_numpy(dtype=object),
                         "doc_id": frame["doc_id"].to_numpy(dtype=object), "score": scores},
                        index=frame.index)


def _line_number(row):
    """The first line of ``row``'s file holding its query and doc ids (on an error only)."""
    with open(row["path"], encoding="utf-8", errors="surrogateescape") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if fields[:1] == [row["query_id"]] and (len(fields) < 3 or fields[2] ==
                                                    row["doc_id"]):
                return number
    return "?"


def _queries_complete(parts):
    """Whether no query id is in two partitions."""
    seen, total = set(), 0
    for _, ids in parts:
        seen.update(ids)
        total += len(ids)
    return len(seen) == total


def _evaluate_partition(frame, qrels, plan, options):
    """(:class:`~fastir.scale.streaming.Part`, query ids) of one pandas partition."""
    query_col, doc_col, score_col, max_docs, judged_only, compat = options
    with _LOCK, _one_thread():
        run = Run.from_pandas(frame, query_col, doc_col, score_col, source="dask partition")
        if compat == "9.0.8":
            run = run.in_float32()
        return evaluate_part(qrels, plan, run, max_docs, judged_only), run.query_ids.tolist()


class _one_thread:
    """numba's parallel kernels on one thread here (the worker's processes are the
    parallelism)."""

    def __enter__(self):
        import numba

        self.before = numba.get_num_threads()
        numba.set_num_threads(1)

    def __exit__(self, *exc):
        import numba

        numba.set_num_threads(self.before)


def _compile(qrels, plan, meta, options):
    """Evaluate a one-row frame of the run's dtypes with compiled kernels, so that numba's
    disk cache holds them before workers start."""
    import pandas as pd

    if _jit._forced_mode() == "python":
        return
    query_col, doc_col, score_col = options[:3]
    row = {}
    for col, value in ((query_col, qrels.query_ids[0] if qrels.n_queries else "q"),
                       (doc_col, "d"), (score_col, 1.0)):
        kind = meta[col].dtype.kind
        row[col] = pd.Series([1 if kind in "iu" else value], dtype=meta[col].dtype)
    with _jit.tier(1 << 40):
        _evaluate_partition(pd.DataFrame(row), qrels, plan, options)
