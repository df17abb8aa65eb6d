"""The public API: ``evaluate`` and its ``Results``."""

import functools
import os

import numpy as np

from fastir import _jit, kernels
from fastir._jit import chunk_bounds
from fastir.data import FastirWarning, Qrels, Run
from fastir.join import join
from fastir.measures import GAINS, STRING, parse_all


class Results:
    """Per-query values of several measures, and their summaries.

    Attributes
    ----------
    query_ids : list
        The evaluated queries, in trec_eval order (``strcmp`` of the ids); built on first
        use (the summaries never need it).
    measures : list of str
        Measure keys, as the caller wrote them (trec_eval lists such as ``P.5,10`` give one
        key per member, e.g. ``P_5``, ``P_10``).
    values : ndarray of float64, shape (n_queries, n_measures)
        ``values[i, j]``: measure ``j`` on query ``i``.
    ignored_queries : list
        Run queries without judgments: never scored.
    missing_queries : list
        Judged queries absent from the run: scored 0 (``missing="zero"``) or left out
        (``missing="skip"``).
    """

    def __init__(self, ids, measures, parsed, values, ignored_queries, missing_queries,
                 missing, in_run, strings=None):
        self.ids = ids
        self.measures = measures
        self.parsed = parsed
        self.values = values
        self.ignored_queries = ignored_queries
        self.missing_queries = missing_queries
        self.missing = missing
        self.in_run = in_run
        self.strings = strings or {}

    @functools.cached_property
    def query_ids(self):
        return self.ids.tolist()

    @property
    def n_queries(self):
        return len(self.values)

    @property
    def mean(self):
        """``{measure: summary}``: the mean over queries, as trec_eval's ``all`` line.

        Counts (``NumRet``, ``NumRel``, ``NumRelRet``, ``NumQ``...) are summed and ``GMAP`` is
        a geometric mean (values floored at 1e-5). Sums run in query order, as trec_eval's.
        With no query, every summary is 0.
        """
        return {key: value for key, value, m in zip(self.measures, self.summary().tolist(),
                                                    self.parsed)
                if m.spec.aggregate != "none"}

    def summary(self):
        """The summaries as an array, in the order of ``measures`` (NaN for text)."""
        how = np.array([kernels.HOW[m.spec.aggregate] for m in self.parsed], dtype=np.int64)
        return _jit.select(kernels.summaries, self.values.size)(self.values[None], how)[0]

    def to_dict(self):
        """``{query_id: {measure: value}}`` (the pytrec_eval shape)."""
        rows = self.values.tolist()
        out = {q: dict(zip(self.measures, row)) for q, row in zip(self.query_ids, rows)}
        for key, texts in self.strings.items():
            for q, text in zip(self.query_ids, texts):
                out[q][key] = text
        return out

    def to_pandas(self):
        """A DataFrame indexed by query id, one column per measure (needs pandas)."""
        import pandas as pd

        return pd.DataFrame(self.values, index=pd.Index(self.query_ids, name="query_id"),
                            columns=self.measures)

    def __repr__(self):
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean.items())
        notes = []
        if self.ignored_queries:
            notes.append(f"{len(self.ignored_queries)} run queries without judgments ignored")
        if self.missing_queries:
            verb = "scored 0" if self.missing == "zero" else "skipped"
            notes.append(f"{len(self.missing_queries)} judged queries absent from the run "
                         f"{verb}")
        note = f"; {'; '.join(notes)}" if notes else ""
        return f"Results({self.n_queries} queries: {means}{note})"


def evaluate(qrels, run, measures, *, relevance_level=1, missing="zero", max_docs=None,
             judged_only=False, num_docs=0, compat=None):
    """Evaluate a run against relevance judgments.

    Parameters
    ----------
    qrels : Qrels or dict or str or path
        Judgments: a :class:`Qrels`, ``{query_id: {doc_id: int label}}``, or a qrels file.
    run : Run or dict or str or path
        Ranked results: a :class:`Run`, ``{query_id: {doc_id: score}}``, or a run file.
    measures : str or list of str
        Measure names in ir_measures (``nDCG@10``), trec_eval (``ndcg_cut_10``,
        ``P.5,10``) or ranx (``ndcg@10``) syntax. Unknown names raise ``ValueError`` with
        suggestions.
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
        Number of documents in the collection (trec_eval ``-N``; only ``Utility`` uses it).
    compat : {None, "10.0", "9.0.8"}, default None
        ``"9.0.8"`` reproduces trec_eval 9.0.8, the version inside pytrec_eval and
        ir_measures: scores rounded to float32 before ranking, recall levels rounded with
        ``(long)(x*R + 0.9)``, and no RBP / RBPResid / Unj measures.

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
    keys, parsed = parse_all(measures)
    check_options(parsed, relevance_level, compat)
    with _jit.tier(size_hint(qrels) + size_hint(run)):
        qrels = as_qrels(qrels)
        run = as_run(run, compat)
        joined = join(qrels, run, max_docs=max_docs, judged_only=judged_only, missing=missing)
        warn_if_disjoint(joined, qrels, run)
        values = compute(joined, qrels, parsed, int(relevance_level), num_docs=int(num_docs),
                         compat=compat)
    strings = {key: relstrings(joined, 10 if m.cutoff is None else m.cutoff)
               for key, m in zip(keys, parsed) if m.spec.kind == STRING}
    return Results(joined.query_ids, keys, parsed, values, joined.ignored_run_queries,
                   joined.missing_queries, missing, joined.in_run, strings)


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
    if isinstance(value, (str, bytes, os.PathLike)):
        return value
    container = "Run" if what == "run" else "Qrels"
    raise TypeError(f"{what} must be a {container}, a dict {{query_id: {{doc_id: value}}}} or "
                    f"a file path, got {type(value).__name__}")


def size_hint(data):
    """Rows of a qrels or run in any accepted form (a file: its size over 32 bytes a line),
    for choosing between Python and compiled kernels (:func:`fastir._jit.tier`)."""
    if isinstance(data, (Qrels, Run)):
        return len(data)
    if isinstance(data, dict):
        return sum(len(v) for v in data.values() if isinstance(v, dict))
    try:
        return os.path.getsize(data) // 32
    except (OSError, TypeError, ValueError):
        return 0


def check_options(parsed, relevance_level, compat):
    if int(relevance_level) != relevance_level or relevance_level < 0:
        raise ValueError(f"relevance_level must be a non-negative integer, "
                         f"got {relevance_level!r}")
    if compat not in (None, "10.0", "9.0.8"):
        raise ValueError(f"compat must be None, '10.0' or '9.0.8', got {compat!r}")
    if compat == "9.0.8":
        newer = [str(m) for m in parsed if m.spec.since_10]
        if newer:
            raise ValueError(f"{', '.join(newer)}: not in trec_eval 9.0.8 (compat='9.0.8')")


def as_qrels(qrels):
    """A :class:`Qrels` from any accepted form: Qrels, dict, or a file path."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, dict):
        return Qrels.from_dict(qrels)
    from fastir.io.trec import read_qrels

    return read_qrels(_path(qrels, "qrels"))


def as_run(run, compat=None):
    """A :class:`Run` from any accepted form (scores rounded to float32 under 9.0.8)."""
    if not isinstance(run, Run):
        if isinstance(run, dict):
            run = Run.from_dict(run)
        else:
            from fastir.io.trec import read_run

            run = read_run(_path(run, "run"))
    if compat == "9.0.8":
        run = run.with_scores(run.scores.astype(np.float32).astype(np.float64))
    return run


CUTOFF_KINDS = {kernels.AP, kernels.RR, kernels.P, kernels.RECALL, kernels.REL_P,
                 kernels.UNJ, kernels.SUCCESS, kernels.NDCG, kernels.DCG, kernels.IDEAL_DCG}
PREFIX_KINDS = CUTOFF_KINDS | {
    kernels.NUM_REL_RET, kernels.NUM_NONREL_JUDGED_RET, kernels.YAAP, kernels.RPREC,
    kernels.RPREC_MULT, kernels.IPREC, kernels.UTILITY, kernels.SET_P, kernels.SET_R,
    kernels.SET_REL_P, kernels.SET_AP, kernels.SET_F}


def measure_spec(parsed, relevance_level, *, num_docs=0, compat=None):
    """The kernel's measure arrays (kind, cutoff, level, gain, params, compat) and the rank
    depth its prefix rows need. A gain table row reaches the largest label it lists (other
    labels are their own gain)."""
    n = len(parsed)
    listed = [label for m in parsed for label, _ in (m.gains or ())]
    width = max([5, max(listed, default=0) + 1] + [len(m.recalls) for m in parsed])
    kind = np.empty(n, dtype=np.int64)
    cutoff = np.zeros(n, dtype=np.int64)
    level = np.empty(n, dtype=np.int64)
    gain = np.zeros(n, dtype=np.int64)
    params = np.zeros((n, width), dtype=np.float64)
    old_rounding = np.zeros(n, dtype=np.int64)
    for j, m in enumerate(parsed):
        spec = m.spec
        kind[j] = spec.kind if spec.kind != STRING else kernels.NUM_Q
        if spec.cutoff in ("recall", "mult"):
            params[j, 0] = m.cutoff
        elif m.cutoff is not None:
            cutoff[j] = m.cutoff
        level[j] = relevance_level if m.rel is None else m.rel
        if spec.level_free:  # gains are raw labels: the relevance level does not apply
            level[j] = 1 if m.rel is None else m.rel
            gain[j] = GAINS[m.dcg]
        if m.gains is not None or spec.kind in (kernels.NDCG_REL, kernels.RNDCG, kernels.G):
            gain[j] = kernels.GAIN_TABLE
            params[j, :] = np.nan
            for label, value in m.gains or ():
                params[j, label] = value
        if spec.kind == kernels.SET_F:
            params[j, 0] = m.beta
        elif spec.kind == kernels.RBP:
            params[j, 0] = m.p
        elif spec.kind == kernels.UTILITY:
            params[j, :5] = (m.a, m.b, m.c, m.d, num_docs)
        elif spec.kind == kernels.IPREC_AVG:
            cutoff[j] = len(m.recalls)
            params[j, :len(m.recalls)] = m.recalls
        old_rounding[j] = compat == "9.0.8"
    # Prefix rows are needed down to the largest cutoff when every measure reading them
    # has a cutoff (P@10 on a 1000-doc ranking reads 10 ranks), else to the end (0).
    uses_prefixes = [m for m in parsed if m.spec.kind in PREFIX_KINDS and m.gains is None]
    depth = 0
    if all(m.cutoff is not None and m.spec.kind in CUTOFF_KINDS for m in uses_prefixes):
        depth = max((m.cutoff for m in uses_prefixes), default=0)
    return kind, cutoff, level, gain, params, old_rounding, np.int64(depth)


def compute(joined, qrels, parsed, relevance_level, *, num_docs=0, compat=None, spec=None):
    """Per-query values (n_queries, n_measures) of ``parsed`` measures on a join.

    Text measures (RelString) get NaN here; see :func:`relstrings`. ``spec`` is a
    precomputed :func:`measure_spec` (an :class:`~fastir.Evaluator`'s).
    """
    if spec is None:
        spec = measure_spec(parsed, relevance_level, num_docs=num_docs, compat=compat)
    n_queries = len(joined.indptr) - 1
    out = np.zeros((n_queries, len(parsed)))
    if n_queries:
        ideal = qrels.ideal_labels()
        lengths = np.diff(joined.indptr)
        ideal_lengths = np.diff(qrels.indptr)
        longest = max(int(lengths.max()), int(ideal_lengths.max()) if len(ideal_lengths) else 0)
        log2 = kernels.log2_table(longest + 2)
        bounds = chunk_bounds(lengths, _jit.n_threads())
        n_chunks = len(bounds) - 1
        scratch = np.empty((n_chunks, kernels.N_ROWS, longest + 2))
        state = np.full((n_chunks, 8), -1, dtype=np.int64)
        _jit.launch(kernels.evaluate_queries, bounds, joined.indptr, joined.labels,
                    qrels.indptr, ideal, joined.qrels_query, *spec, log2, scratch, state, out)
    for j, m in enumerate(parsed):
        if m.spec.kind == STRING:
            out[:, j] = np.nan
        elif compat == "9.0.8" and m.spec.kind not in (kernels.NUM_Q, kernels.NUM_REL):
            out[~joined.in_run, j] = 0.0  # 9.0.8 does not evaluate missing queries at all
    return out


def relstrings(joined, k):
    """trec_eval's relstring of every evaluated query: the top ``k`` label codes as text."""
    chars = np.frombuffer(b"<.-0123456789>", dtype=np.uint8)  # codes -3 .. 10
    out = []
    for e in range(len(joined.indptr) - 1):
        codes = joined.labels[joined.indptr[e]:joined.indptr[e + 1]][:k].astype(np.int64)
        out.append(chars[np.clip(codes, -3, 10) + 3].tobytes().decode("ascii"))
    return out
