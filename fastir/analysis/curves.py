"""The data behind the pictures: interpolated precision-recall curves (:func:`pr_curve`)
and measures by cutoff (:func:`cutoff_curve`), computed by the kernels (a curve's point at
recall r is ``IPrec@r``, trec_eval's ``iprec_at_recall``)."""

import os

import numpy as np

from fastir.engine import Plan
from fastir.io.inputs import as_qrels, as_run
from fastir.measures.registry import RANK, families, make
from fastir.options import Options
from fastir.output.plots import eleven_points, plot_cutoffs, plot_pr


def _evaluate(qrels, run, measures, options):
    """(Results, the join, the qrels) of one evaluation (what fastir.evaluate does, without
    its warning when the run and the qrels share no query)."""
    plan = Plan.of(measures, options)
    qrels = as_qrels(qrels, labels=options.labels)
    results, joined = plan.evaluate(qrels, as_run(run, options.compat), options, check=None)
    return results, joined, qrels


def _name(run, name):
    if name is not None:
        return name
    if isinstance(run, (str, os.PathLike)):
        return os.path.basename(os.fspath(run))
    return getattr(run, "name", None) or "run"


def pr_curve(qrels, run, *, levels=101, name=None, **options):
    """Interpolated precision at ``levels`` evenly spaced recall levels (0 to 1) per query
    and averaged, and the raw (recall, precision) point of every relevant document
    retrieved.

    ``options``: ``relevance_level``, ``missing``, ``max_docs``, ``judged_only``,
    ``num_docs``, ``compat`` (as for :func:`fastir.evaluate`). With ``levels - 1`` a
    multiple of 10 the curve holds the eleven standard points.
    """
    if not isinstance(levels, int) or not 2 <= levels <= 1001:
        raise ValueError(f"levels must be an integer from 2 to 1001, got {levels!r}")
    options = Options(**options)
    if options.labels == "probability":
        raise ValueError("pr_curve takes no probabilistic labels (labels='probability'): its "
                         "raw points are those of one labelling; evaluate 'iprec_at_recall' "
                         "with fastir.evaluate, or use cutoff_curve")
    recall = np.array([i / (levels - 1) for i in range(levels)])
    measures = [make("IPrec", float(r)) for r in recall]
    res, joined, qrels = _evaluate(qrels, run, measures, options)
    level = options.relevance_level
    relevant = _relevant_per_query(qrels, level)
    raw = {}
    for e, qid in enumerate(res.query_ids):
        codes = joined.labels[joined.indptr[e]:joined.indptr[e + 1]]
        hits = np.flatnonzero(codes >= level)
        n_rel = relevant[joined.qrels_query[e]]
        found = np.arange(1, len(hits) + 1)
        raw[qid] = (found / n_rel if n_rel else np.zeros(0), found / (hits + 1.0))
    return PRCurve(_name(run, name), recall, res.values, res.query_ids, raw)


def _relevant_per_query(qrels, level):
    query = np.repeat(np.arange(qrels.n_queries), np.diff(qrels.indptr))
    return np.bincount(query[qrels.labels >= level], minlength=qrels.n_queries)


class PRCurve:
    """Interpolated precision-recall of one run (see :func:`pr_curve`).

    Attributes
    ----------
    name : str
    recall : ndarray (levels,)
    precision : ndarray (n_queries, levels)
        Interpolated precision of each query at each recall level (``IPrec@r``).
    mean : ndarray (levels,)
        The mean over queries (trec_eval's ``iprec_at_recall`` summary at those levels).
    query_ids : list
    raw : dict
        ``{query: (recall, precision)}`` at each relevant document retrieved.
    """

    def __init__(self, name, recall, precision, query_ids, raw):
        self.name, self.recall, self.precision = name, recall, precision
        self.query_ids, self.raw = query_ids, raw
        self.mean = precision.mean(axis=0) if len(precision) else np.zeros(len(recall))

    def eleven_point(self):
        """``{recall: mean interpolated precision}`` at 0.0, 0.1, ..., 1.0 (when on the
        curve's levels)."""
        return eleven_points(self.recall, self.mean)

    def plot(self, ax=None, **style):
        """Draw the mean curve (the eleven points as markers) on ``ax``; returns ax."""
        return plot_pr([self], ax=ax, **style)

    def __repr__(self):
        points = ", ".join(f"{r:g}: {p:.3f}" for r, p in self.eleven_point().items())
        return f"PRCurve({self.name!r}, {len(self.query_ids)} queries; {points})"


def cutoff_curve(qrels, run, *, measures=("P", "R", "nDCG"), k=100, name=None, **options):
    """Mean ``P@k``, ``R@k``, ``nDCG@k`` (or other families taking a rank cutoff) for
    k = 1..``k``: a :class:`CutoffCurve` (``options`` as for :func:`pr_curve`)."""
    if not isinstance(k, int) or not 1 <= k <= 10_000:
        raise ValueError(f"k must be an integer from 1 to 10000, got {k!r}")
    names = [measures] if isinstance(measures, str) else list(measures)
    known = families()
    for name in names:
        if name not in known or known[name].cutoff is not RANK:
            raise ValueError(f"{name!r} is not a measure family with a rank cutoff (e.g. "
                             "P, R, nDCG, AP, RR, Success)")
    parsed = [make(f, c) for f in names for c in range(1, k + 1)]
    res = _evaluate(qrels, run, parsed, Options(**options))[0]
    means = np.array(res.summary()).reshape(len(names), k)
    return CutoffCurve(_name(run, name), np.arange(1, k + 1), dict(zip(names, means)))


class CutoffCurve:
    """Mean measures by cutoff: ``cutoffs`` (1..k) and ``means`` ``{family: array}``."""

    def __init__(self, name, cutoffs, means):
        self.name, self.cutoffs, self.means = name, cutoffs, means

    def plot(self, ax=None):
        return plot_cutoffs([self], ax=ax)

    def __repr__(self):
        return f"CutoffCurve({self.name!r}, k = 1..{self.cutoffs[-1]}: {', '.join(self.means)})"
