"""Evaluating a run held in a Spark DataFrame (needs the spark extra): each partition is
evaluated by fastir's kernels in an executor's Python worker from its Arrow batches, and the
per-query values are gathered into one :class:`~fastir.Results`, bit-identical to
:func:`fastir.evaluate`.

As in :mod:`fastir.scale.dask`, a partition's queries but its first and last are evaluated in
its task; the rows of those two (which a file's split may cut) come back to the driver, which
joins each query's pieces in partition order and evaluates them there. Only a run not grouped
by query is shuffled on the query id, a partition of complete queries per task: at once when
its first rows (read on the driver to compile) show a query's rows apart, else after the
tasks found it (a query's rows apart within a partition, or in the middle of two). The qrels
are read on the driver (the means need every judged query, in trec_eval order) and travel
with the task (Spark broadcasts a large one); each task gives back its queries' values,
pickled: a row per partition. Under ``ties="input"`` rows keep their place in the run
(partitions in order, and after a shuffle a row number taken before it orders each partition
again); no other value depends on the rows' order (a doc ranked twice in a query is an
error).
Kernels are compiled once on the driver first (numba caches them on disk, and Python workers
on the same machine load them from there); inside a task numba runs on one thread: Spark's
task slots are the parallelism.
"""

import functools
import pickle

import numpy as np

from fastir import _jit
from fastir._optional import require
from fastir.engine import Plan
from fastir.io.inputs import LABEL_COLUMNS, QUERY_COLUMNS, as_qrels
from fastir.model.data import Run
from fastir.model.errors import InputError
from fastir.options import Options
from fastir.scale import dask as _tasks
from fastir.scale.streaming import Combined, evaluate_part

__all__ = ["compare", "evaluate"]

_ROW = "__fastir_row__"  # the run's row number, taken before the shuffle
_HEAD = 10_000  # the run's first rows read on the driver: compiling, and a first look at
# whether the run is grouped by query (a query's rows apart there: shuffled at once)
_ID_TYPES = ("string", "bigint", "int", "smallint", "tinyint")
_SCORE_TYPES = ("double", "float", "bigint", "int", "smallint", "tinyint")


def evaluate(qrels, run, measures, *, per_query=False, relevance_level=1, missing="zero",
             max_docs=None, judged_only=False, num_docs=0, compat=None, ties="trec_eval",
             unjudged="nonrelevant", labels="int", samples=1000, label_seed=0):
    """Evaluate a Spark DataFrame run against qrels, exactly as :func:`fastir.evaluate`.

    Parameters
    ----------
    qrels : pyspark DataFrame or str, or any form fastir.evaluate takes
        A Spark DataFrame (columns ``query_id`` or ``q_id``, ``doc_id``, ``relevance`` or
        ``score``, as a pandas one), the name of a Spark SQL table of them (a ``str`` is a
        table name here, not a path: pass a file as a ``pathlib.Path``), or a Qrels, a dict,
        a pandas DataFrame or a path. Read whole on the driver and sent to every task.
    run : pyspark DataFrame or str
        Columns ``query_id`` or ``q_id``, ``doc_id`` (text or integers) and ``score``
        (numbers), or the name of a Spark SQL table of them; other columns are ignored.
    measures
        As in :func:`fastir.evaluate` (user measures too: their function is pickled, by
        value when defined in ``__main__``, else imported where it lands).
    relevance_level, missing, max_docs, judged_only, num_docs, compat, ties, unjudged
        As in :func:`fastir.evaluate`.
    labels, samples, label_seed
        As in :func:`fastir.evaluate` (``labels="probability"``: a Spark qrels' label column
        holds probabilities of relevance).
    per_query : bool, default False
        Return the :class:`~fastir.Results` (per-query values), not only the means.

    Returns
    -------
    dict or Results
        ``{measure: mean}``, or with ``per_query`` the :class:`~fastir.Results` (queries in
        trec_eval order), exactly as :func:`fastir.evaluate` on the run collected. (A Spark
        DataFrame of the per-query values: ``spark.createDataFrame(results.to_pandas())``.)
    """
    options = Options(relevance_level=relevance_level, missing=missing, max_docs=max_docs,
                      judged_only=judged_only, num_docs=num_docs, compat=compat, ties=ties,
                      unjudged=unjudged, labels=labels, samples=samples, label_seed=label_seed)
    plan = Plan.of(measures, options)
    run = _table(run, "run", None)
    qrels = _qrels(qrels, run.sparkSession, labels)
    columns = _tasks.Columns(*_run_columns(run), options)
    run = run.select(*columns[:3])
    head = _head(run)
    _compile(qrels, plan, head, columns)
    grouped = _grouped(head.to_batches(), columns.query) is not None
    combined = Combined(qrels, plan, options.missing)
    for part in _parts(run, qrels, plan, columns, grouped):
        combined.add(part)
    results = combined.results("Spark DataFrame")
    return results if per_query else results.mean


def compare(qrels, runs, measures, *, baseline=None, test="randomization",
            n_resamples=10_000, correction="holm", alpha=0.05, seed=0, missing="zero",
            **options):
    """Compare systems whose runs are Spark DataFrames, exactly as :func:`fastir.compare`.

    Each run of ``runs`` (``{name: Spark DataFrame or table name}``, at least two) is
    evaluated by :func:`evaluate` (``missing`` and ``**options``: its options, e.g.
    ``ties``, ``relevance_level``, ``labels``); the per-query values are gathered on the
    driver and compared there by :func:`fastir.compare` (``baseline``, ``test``,
    ``n_resamples``, ``correction``, ``alpha``, ``seed``: its arguments). ``qrels`` is
    read once, in any form :func:`evaluate` takes.

    Returns
    -------
    Comparison
        What :func:`fastir.compare` gives on the runs collected, bit for bit.
    """
    from fastir.analysis.stats import compare as compare_results

    if not isinstance(runs, dict):
        raise ValueError("runs must be a dict {name: Spark DataFrame}, got "
                         f"{type(runs).__name__}")
    tables = {name: _table(run, f"run {name!r}", None) for name, run in runs.items()}
    spark = next(iter(tables.values())).sparkSession if tables else None
    qrels = _qrels(qrels, spark, options.get("labels", "int"))
    results = {name: evaluate(qrels, run, measures, per_query=True, missing=missing, **options)
               for name, run in tables.items()}
    return compare_results(None, results, measures, baseline=baseline, test=test,
                           n_resamples=n_resamples, correction=correction, alpha=alpha,
                           seed=seed, missing=missing)


def _table(value, argument, spark):
    """A Spark DataFrame: ``value`` itself, or the table it names (a str), in ``spark`` (or
    the active session); an InputError naming ``argument`` for anything else."""
    if isinstance(value, str):
        sql = require("pyspark.sql", "fastir.spark")
        spark = spark or sql.SparkSession.getActiveSession()
        if spark is None:
            raise InputError(f"fastir.spark.evaluate: {argument} {value!r} is a table name, "
                             "and no Spark session is active")
        return spark.table(value)
    if not _is_spark_frame(value):
        raise InputError(f"fastir.spark.evaluate: {argument} must be a Spark DataFrame or a "
                         f"table name, got {type(value).__name__}")
    return value


def _is_spark_frame(value):
    return hasattr(value, "sparkSession") and hasattr(value, "mapInArrow")


def _qrels(qrels, spark, labels):
    """The :class:`~fastir.Qrels` of a Spark DataFrame or table name (collected to the
    driver), or of any form :func:`fastir.evaluate` takes."""
    if isinstance(qrels, str) or _is_spark_frame(qrels):
        frame = _table(qrels, "qrels", spark)
        _check_types(frame, "qrels", [(QUERY_COLUMNS, _ID_TYPES), (("doc_id",), _ID_TYPES),
                                      (LABEL_COLUMNS, _SCORE_TYPES)])
        qrels = _collect(frame)
    return as_qrels(qrels, labels=labels)


def _run_columns(run):
    """(query, doc, score) column names of the run, its types checked."""
    return _check_types(run, "run", [(QUERY_COLUMNS, _ID_TYPES), (("doc_id",), _ID_TYPES),
                                     (("score",), _SCORE_TYPES)])


def _check_types(frame, argument, wanted):
    """The column of each (candidate names, allowed Spark types) of ``wanted`` a Spark
    DataFrame has; an InputError naming ``argument`` when one is absent or of another
    type."""
    types = dict(frame.dtypes)
    found = []
    for names, allowed in wanted:
        present = [n for n in names if n in types]
        if len(present) != 1:
            raise InputError(f"fastir.spark.evaluate: {argument} needs one column of "
                             f"{list(names)} (its columns: {list(types)})")
        if types[present[0]] not in allowed:
            raise InputError(f"fastir.spark.evaluate: {argument} column {present[0]!r} is "
                             f"{types[present[0]]}, not one of {', '.join(allowed)}")
        found.append(present[0])
    return found


def _collect(frame):
    """A Spark DataFrame on the driver: an Arrow table (pyspark 4), else a pandas frame."""
    return frame.toArrow() if hasattr(frame, "toArrow") else frame.toPandas()


def _head(run):
    """The run's first rows (at most ``_HEAD``) as an Arrow table."""
    pa = require("pyarrow", "fastir.spark")
    head = _collect(run.limit(_HEAD))
    return head if isinstance(head, pa.Table) else pa.Table.from_pandas(head,
                                                                        preserve_index=False)


def _compile(qrels, plan, head, columns):
    """Evaluate the run's first row with compiled kernels, so that numba's disk cache holds
    the kernels of its kind of ids before the Python workers start."""
    if _jit._forced_mode() != "python" and head.num_rows:
        _evaluate_table(head.slice(0, 1), qrels, plan, columns)


def _parts(run, qrels, plan, columns, grouped):
    """The :class:`~fastir.scale.streaming.Part` of each partition's queries and of the
    queries cut at partitions' edges (evaluated here), or, when the run is not grouped by
    query (``grouped`` False: its first rows showed it), of each partition of the run
    shuffled on the query id; an error a task met (a bad id, a bad score) raised here."""
    pieces = _pieces(run, qrels, plan, columns, whole=False) if grouped else None
    if pieces is None or not _tasks._queries_complete(pieces):
        if columns.options.ties == "input":  # (the only order a value depends on: the run's)
            sql = require("pyspark.sql", "fastir.spark")
            run = run.withColumn(_ROW, sql.functions.monotonically_increasing_id())
        pieces = _pieces(run.repartition(columns.query), qrels, plan, columns, whole=True)
    parts = [piece.part for piece in pieces if piece.part is not None]
    edges = [piece.edges for piece in pieces if piece.edges.num_rows]
    if edges:
        pa = require("pyarrow", "fastir.spark")
        parts.append(_evaluate_table(pa.concat_tables(edges), qrels, plan, columns)[0])
    return parts


def _pieces(run, qrels, plan, columns, whole):
    """The :class:`~fastir.scale.dask.Piece` (its edges an Arrow table) of each non-empty
    partition, in partition order; None when a partition's queries are not grouped (unless
    ``whole``: partitions of complete queries)."""
    task = functools.partial(_evaluate_batches, qrels, plan, columns, whole)
    pieces = [pickle.loads(row.piece) for row in run.mapInArrow(task, "piece binary").collect()]
    for piece in pieces:
        if isinstance(piece, Exception):
            raise piece
    return None if any(piece is None for piece in pieces) else pieces


def _evaluate_batches(qrels, plan, columns, whole, batches):
    """A partition's task: its Arrow batches (in the run's row order under
    ``ties="input"``) evaluated by :func:`_piece`, giving one batch of one row, the pickled
    Piece (or None, or the InputError or ValueError met); nothing for an empty partition.
    Unless ``whole``, the batches are read only while the queries stay grouped: a query's
    rows apart are None at once (the driver shuffles the run)."""
    pa = require("pyarrow", "fastir.spark")
    batches = [batch for batch in batches if batch.num_rows] if whole else \
        _grouped(batches, columns.query)
    if batches is None:
        piece = None
    elif not batches:
        return
    else:
        table = pa.Table.from_batches(batches)
        if _ROW in table.column_names:
            table = table.take(table.column(_ROW).to_numpy().argsort(kind="stable"))
        try:
            piece = _piece(table, qrels, plan, columns, whole)
        except (InputError, ValueError) as exc:
            piece = exc
    yield pa.RecordBatch.from_pydict({"piece": [pickle.dumps(piece)]},
                                     schema=pa.schema([("piece", pa.binary())]))


def _grouped(batches, query):
    """The non-empty batches of a partition, or None as soon as one shows a query's rows
    apart (its id met again after another's)."""
    kept, seen, last = [], set(), None
    for batch in batches:
        if not batch.num_rows:
            continue
        ids = batch.column(query)
        firsts = ids.take(np.r_[0, _query_starts(ids)]).to_pylist()  # (each run's id)
        new = firsts[1:] if firsts[0] == last and kept else firsts
        if len(set(firsts)) < len(firsts) or not seen.isdisjoint(new):
            return None
        seen.update(firsts)
        last = firsts[-1]
        kept.append(batch)
    return kept


def _piece(table, qrels, plan, columns, whole):
    """The Piece of a partition's Arrow table: all its queries evaluated (``whole``: it
    holds complete queries), or (its queries grouped) all but its first and last, whose rows
    (copied out) are left to the driver."""
    if whole:
        inner, edges, edge_ids = table, table.slice(0, 0), []
    else:
        queries = table.column(columns.query)
        cuts = _query_starts(queries)
        n = table.num_rows
        head, tail = (n, n) if not len(cuts) else (cuts[0], cuts[-1])
        inner, edges = table.slice(head, tail - head), table.take(np.r_[0:head, tail:n])
        ends = [queries[0].as_py()] + ([queries[n - 1].as_py()] if len(cuts) else [])
        edge_ids = _tasks._ids_of(ends)
    if not inner.num_rows:
        return _tasks.Piece(None, [], edges, edge_ids)
    return _tasks.Piece(*_evaluate_table(inner, qrels, plan, columns), edges, edge_ids)


def _query_starts(queries):
    """The rows of an Arrow id column (an array or a chunked one) whose id differs from the
    row before (a null: from every row)."""
    pc = require("pyarrow.compute", "fastir.spark")
    n = len(queries)
    differs = pc.fill_null(pc.not_equal(queries.slice(1), queries.slice(0, max(n - 1, 0))),
                           True)
    return np.flatnonzero(differs.to_numpy(zero_copy_only=False)) + 1


def _evaluate_table(table, qrels, plan, columns):
    """(Part, query ids) of an Arrow table of complete queries, by compiled kernels (unless
    ``FASTIR_JIT=python``), however few its rows: the driver compiled them."""
    with _tasks._numba_section(), _jit.tier(1 << 40):
        run = Run.from_arrow(table, columns.query, columns.doc, columns.score,
                             source="Spark partition")
        if columns.options.compat == "9.0.8":
            run = run.in_float32()
        return evaluate_part(qrels, plan, run, columns.options), run.query_ids.tolist()
