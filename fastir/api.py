"""The public API: ``evaluate``, and the forms qrels and runs are accepted in."""

import os

from fastir import _jit
from fastir.data import FastirWarning, Qrels, Run
from fastir.engine import Plan
from fastir.join import join
from fastir.results import Results

__all__ = ["Results", "evaluate"]


def evaluate(qrels, run, measures, *, relevance_level=1, missing="zero", max_docs=None,
             judged_only=False, num_docs=0, compat=None, progress=False):
    """Evaluate a run against relevance judgments.

    Parameters
    ----------
    qrels : Qrels or dict or str or path
        Judgments: a :class:`Qrels`, ``{query_id: {doc_id: int label}}``, a qrels file, an
        open file, a DataFrame (``query_id`` or ``q_id``, ``doc_id``, ``relevance`` or
        ``score``: ir_measures' and ranx's columns) or a ranx Qrels.
    run : Run or dict or str or path
        Ranked results: a :class:`Run`, ``{query_id: {doc_id: score}}``, a run file, an open
        file, a DataFrame (``query_id`` or ``q_id``, ``doc_id``, ``score``) or a ranx Run.
        Several runs as ``{name: run}`` (ranx's shape) give a
        :class:`~fastir.results.ResultsByRun` (``{name: Results}`` with a table of means).
    measures : str or list of str
        Measure names in ir_measures (``nDCG@10``, or its measure objects), trec_eval
        (``ndcg_cut_10``, ``P.5,10``) or ranx (``ndcg@10``) syntax. Unknown names raise
        ``ValueError`` with suggestions. Keys: trec_eval names as trec_eval prints them
        (``P.5`` -> ``P_5``), others as written.
    relevance_level : int, default 1
        A document is relevant when its label is >= this (trec_eval ``-l``). Applies to every
        binary measure without its own ``rel=``; nDCG's gains are the raw labels regardless.
    missing : {"zero", "skip"}, default "zero"
        ``"zero"``: every judged query counts and one absent from the run scores 0
        (trec_eval ``-c``). ``"skip"``: only queries in both count (trec_eval's default).
        Run queries without judgments never count (listed in ``Results.ignored_queries``).
    max_docs : int, optional
        Evaluate only the top ``max_docs`` documents of each query (trec_eval ``-M``).
    judged_only : bool, default False
        Drop unjudged documents from the ranking first (trec_eval ``-J``).
    num_docs : int, default 0
        Number of documents in the collection (trec_eval ``-N``; ``Utility`` and
        ``Accuracy`` read it).
    compat : {None, "10.0", "9.0.8"}, default None
        ``"9.0.8"`` reproduces trec_eval 9.0.8, the version inside pytrec_eval and
        ir_measures: scores rounded to float32 before ranking (a score beyond float32's
        range, such as 1e39, becomes +inf or -inf, its ties broken by doc id), recall levels
        rounded with ``(long)(x*R + 0.9)``, and no RBP / RBPResid / Unj / DCG / IDCG measures.
    progress : bool
        Show a progress bar on standard error while long files are read.

    Returns
    -------
    Results
        Per-query values (``values``, ``query_ids``), ``mean``, ``to_dict()``,
        ``to_pandas()``.

    Notes
    -----
    Ranking is by score descending, ties broken by document id descending in byte order,
    exactly as trec_eval. Values are bit-identical to trec_eval 10.0 for its measures.
    A query with an empty ranking scores 0 on every measure but ``NumRel``/``NumQ``.

    Examples
    --------
    >>> import fastir
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}
    >>> res = fastir.evaluate(qrels, run, ["P@2", "map", "ndcg_cut_3"])
    >>> {k: round(v, 4) for k, v in res.mean.items()}
    {'P@2': 0.5, 'map': 0.8333, 'ndcg_cut_3': 0.7602}
    """
    plan = Plan.of(measures, relevance_level, num_docs, compat)
    if _is_several_runs(run):
        from fastir.results import ResultsByRun

        options = {"relevance_level": relevance_level, "missing": missing,
                   "max_docs": max_docs, "judged_only": judged_only, "num_docs": num_docs,
                   "compat": compat, "progress": progress}
        qrels = as_qrels(qrels, progress)
        return ResultsByRun((name, evaluate(qrels, r, measures, **options))
                            for name, r in run.items())
    with _jit.tier(size_hint(qrels) + size_hint(run)):
        qrels = as_qrels(qrels, progress)
        run = as_run(run, compat, progress)
        joined = join(qrels, run, max_docs=max_docs, judged_only=judged_only, missing=missing)
        warn_if_disjoint(joined, qrels, run)
        values = plan.values(joined, qrels)
    return plan.results(joined, values, missing)


def warn_if_disjoint(joined, qrels, run):
    """A :class:`FastirWarning` when no query is both in the run and judged: the means are
    then 0 (or there is no query at all), which is rarely what was meant (mismatched query
    ids, swapped files)."""
    if joined.in_run.any():
        return
    import warnings

    outcome = ("every judged query scores 0 (missing='zero')" if len(joined.in_run)
               else "nothing is evaluated and every mean is 0")
    warnings.warn(f"no query is both in the run ({run.n_queries} queries, from {run.source}) "
                  f"and judged ({qrels.n_queries} queries, from {qrels.source}): {outcome}; "
                  "check that the query ids match", FastirWarning, stacklevel=3)


def _path(value, what):
    if isinstance(value, (str, bytes, os.PathLike)) or hasattr(value, "read"):
        return value
    container = "Run" if what == "run" else "Qrels"
    raise TypeError(f"{what} must be a {container}, a dict {{query_id: {{doc_id: value}}}}, "
                    f"a file path or open file, a DataFrame or a ranx {container}, got "
                    f"{type(value).__name__}")


def _is_frame(value):
    return hasattr(value, "columns") and hasattr(value, "to_numpy")


def _is_ranx(value):
    return type(value).__module__.startswith("ranx") and hasattr(value, "to_dict")


def _column(frame, candidates, what):
    """The first of ``candidates`` the frame has (ir_measures' or ranx's column name)."""
    found = [c for c in candidates if c in frame.columns]
    if len(found) != 1:
        from fastir.data import InputError

        have = "both" if found else "none"
        raise InputError(f"DataFrame: the {what} column is one of {list(candidates)} (it has "
                         f"{have}; its columns: {list(frame.columns)}); or use "
                         "Qrels.from_pandas / Run.from_pandas with the column names")
    return found[0]


def _is_several_runs(run):
    """``{name: run}`` (ranx's several runs), not one run ``{query: {doc: score}}``: every
    value a run (a dict of dicts, a Run, a DataFrame, a ranx Run, or a file that exists)."""
    return isinstance(run, dict) and bool(run) and all(map(_is_one_run, run.values()))


def _is_one_run(value):
    if isinstance(value, dict):
        return isinstance(next(iter(value.values()), None), dict)
    if isinstance(value, (str, os.PathLike)):
        return os.path.isfile(value)
    return isinstance(value, Run) or _is_frame(value) or _is_ranx(value)


def size_hint(data):
    """Rows of a qrels or run in any accepted form (a file: its size over 32 bytes a line),
    for choosing between Python and compiled kernels (:func:`fastir._jit.tier`)."""
    if isinstance(data, (Qrels, Run)):
        return len(data)
    if isinstance(data, dict):
        return sum(len(v) for v in data.values() if isinstance(v, dict))
    if _is_frame(data):
        return len(data)
    try:
        return os.path.getsize(data) // 32
    except (OSError, TypeError, ValueError):
        return 0


QUERY_COLUMNS = ("query_id", "q_id")  # ir_measures', ranx's
LABEL_COLUMNS = ("relevance", "score")


def as_qrels(qrels, progress=False):
    """A :class:`Qrels` from any accepted form: Qrels, dict, a file path or open file, a
    DataFrame or a ranx Qrels."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, dict):
        return Qrels.from_dict(qrels)
    if _is_frame(qrels):
        return Qrels.from_pandas(qrels, _column(qrels, QUERY_COLUMNS, "query"), "doc_id",
                                 _column(qrels, LABEL_COLUMNS, "label"))
    if _is_ranx(qrels):
        return Qrels.from_dict(qrels.to_dict(), source="ranx Qrels")
    from fastir.io.trec import read_qrels

    return read_qrels(_path(qrels, "qrels"), progress=progress)


def as_run(run, compat=None, progress=False):
    """A :class:`Run` from any accepted form (scores rounded to float32 under 9.0.8)."""
    if not isinstance(run, Run):
        if isinstance(run, dict):
            run = Run.from_dict(run)
        elif _is_frame(run):
            run = Run.from_pandas(run, _column(run, QUERY_COLUMNS, "query"), "doc_id", "score")
        elif _is_ranx(run):
            run = Run.from_dict(run.to_dict(), name=run.name or "run", source="ranx Run")
        else:
            from fastir.io.trec import read_run

            run = read_run(_path(run, "run"), progress=progress)
    if compat == "9.0.8":
        run = run.in_float32()
    return run
