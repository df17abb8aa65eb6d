"""How much tied scores move a run's values (:func:`tie_report`): each value at the best and
the worst placement of the relevant documents inside each group of tied documents, the
queries where they differ, and the same for the summaries.

The best placement orders each tie group by label, highest first; the worst, lowest first
(documents without a judgment count as below every label). The report's range is the
values at those two orders; for the measures that reward relevant documents higher up
(all of fastir's but FallOut, Unj and Judged, which count other documents) it is the
range over every order.
"""

import numpy as np

from fastir.engine import Plan
from fastir.io.inputs import as_qrels, as_run, records_read
from fastir.model.join import MIXED, join, only_judged
from fastir.options import Options

__all__ = ["TieReport", "tie_report"]


class TieReport:
    """The values of a run under its tie order and at the best and worst placement of the
    relevant documents inside each tie group (:func:`tie_report`).

    Attributes
    ----------
    value, low, high : Results
        The values under the options' ``ties`` (as :func:`fastir.evaluate`), and the lower
        and upper end of each value's range over the tie orders.
    n_tied : int
        The queries with at least one tie group of two documents or more.
    """

    def __init__(self, value, low, high, n_tied):
        self.value, self.low, self.high, self.n_tied = value, low, high, n_tied

    @property
    def measures(self):
        return self.value.measures

    def spread(self):
        """``{measure: high mean - low mean}``: how far the ties can move each summary."""
        low, high = self.low.mean, self.high.mean
        return {k: high[k] - low[k] for k in self.measures
                if isinstance(high[k], (int, float))}

    def moved(self):
        """The values the ties move: ``[(query, measure, value, low, high)]``, queries in
        trec_eval order: the queries whose ties straddle a cutoff (or a relevant document's
        rank) that the measure reads."""
        out = []
        ids = self.value.query_ids
        rows, columns = np.nonzero(self.high.values != self.low.values)
        for i, j in zip(rows.tolist(), columns.tolist()):
            out.append((ids[i], self.measures[j], float(self.value.values[i, j]),
                        float(self.low.values[i, j]), float(self.high.values[i, j])))
        return out

    def to_dict(self):
        """``{"measures": {measure: {"value", "low", "high"}}, "moved": [...]}``."""
        means = (self.value.mean, self.low.mean, self.high.mean)
        return {"n_tied_queries": self.n_tied,
                "measures": {k: dict(zip(("value", "low", "high"), (m[k] for m in means)))
                             for k in self.measures},
                "moved": [dict(zip(("query", "measure", "value", "low", "high"), row))
                          for row in self.moved()]}

    def __repr__(self):
        spread = ", ".join(f"{k}: {v:.4g}" for k, v in self.spread().items())
        return (f"TieReport({self.value.n_queries} queries, {self.n_tied} with ties, "
                f"{len(self.moved())} values moved; summaries move by {spread})")


def tie_report(qrels, run, measures, **options):
    """The values of ``run`` and the range over tie orders of each of them.

    Parameters
    ----------
    qrels, run, measures
        As for :func:`fastir.evaluate` (one run).
    **options
        As for :func:`fastir.evaluate`; ``ties`` gives :attr:`TieReport.value` (the range
        does not depend on it).

    Returns
    -------
    TieReport
    """
    options = Options(**options)
    plan = Plan.of(measures, options)
    qrels = as_qrels(records_read(qrels, "qrels"))
    run = as_run(records_read(run, "run"), options.compat)
    return TieReport(*evaluate_with_range(plan, qrels, run, options))


def evaluate_with_range(plan, qrels, run, options):
    """``plan``'s values of ``run`` (a Run; ``qrels`` a Qrels) under ``options``, and their
    range over tie orders: (value, low, high) :class:`~fastir.results.Results` and the
    number of queries with ties. One join serves both when the rankings are whole (no
    ``max_docs``, no ``judged_only``); the ends are evaluated on the queries whose tie
    groups mix labels only (the others have one value under every order)."""
    if options.unjudged_label is not None and options.max_docs is not None:
        raise ValueError(f"tie ranges: unjudged={options.unjudged!r} with max_docs is not "
                         "available (which documents are retrieved depends on the tie "
                         "order)")
    whole = options.max_docs is None and not options.judged_only
    value, joined = plan.evaluate(qrels, run, options, groups=whole)
    if not whole:
        joined = join(qrels, run, options.replace(ties="trec_eval", max_docs=None,
                                                  judged_only=False), groups=True,
                      anywhere=plan.anywhere)
    tied, mixed = tied_queries(joined)
    if not len(mixed):
        return value, value, value, len(tied)
    part = joined.of_queries(mixed)
    ends = [_values_in_order(plan, placed_join(part, best, options), qrels)
            for best in (False, True)]
    low, high = value.values.copy(), value.values.copy()
    low[mixed], high[mixed] = np.fmin(*ends), np.fmax(*ends)
    return (value, plan.results(joined, low, options.missing),
            plan.results(joined, high, options.missing), len(tied))


def _values_in_order(plan, joined, qrels):
    """``plan``'s values on a join of one order (a plan of ``ties="expected"`` would read
    its tie groups: its measures are evaluated as ranked)."""
    if plan.options.ties != "expected":
        return plan.values(joined, qrels)
    unique = list(dict.fromkeys(plan.parsed))  # (two keys of one measure: computed once)
    ranked = Plan(unique, plan.options.replace(ties="trec_eval"))
    return ranked.values(joined, qrels)[:, [unique.index(m) for m in plan.parsed]]


def placed_join(joined, best, options):
    """``joined`` (whole rankings, with their tie groups) with each tie group ordered by
    label, highest first when ``best``, then cut to ``options.max_docs`` and, with
    ``judged_only``, without its unjudged documents."""
    lengths = np.diff(joined.indptr)
    query = np.repeat(np.arange(len(lengths)), lengths)
    labels = joined.labels.astype(np.int64)
    order = np.lexsort((-labels if best else labels, joined.groups, query))
    indptr = joined.indptr
    if options.max_docs is not None:
        position = np.arange(len(query)) - joined.indptr[query]
        order = order[position < options.max_docs]  # (positions stay in their queries)
        indptr = np.concatenate(([0], np.cumsum(position < options.max_docs,
                                                dtype=np.int64)))[joined.indptr]
    placed = joined.at_positions(order, indptr)
    return only_judged(placed) if options.judged_only else placed


def tied_queries(joined):
    """The evaluated queries of a join (with its tie groups, whole rankings) that have two
    documents of equal score, and those of them with a tie group of two codes (whose order
    can move a value): two arrays of their positions."""
    return np.flatnonzero(joined.tied > 0), np.flatnonzero(joined.tied == MIXED)
