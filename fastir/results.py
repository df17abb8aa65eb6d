"""What an evaluation gives back: per-query values of several measures, and summaries."""

import functools
import itertools

import numpy as np

from fastir import _jit
from fastir._optional import require
from fastir.measures import kernels
from fastir.measures.registry import how
from fastir.output.plots import Curve, plot_pr
from fastir.output.tables import format_rows


class Results:
    """Per-query values of several measures, and their summaries.

    Attributes
    ----------
    query_ids : list
        The evaluated queries, in trec_eval order (``strcmp`` of the ids); built on first
        use (the summaries never need it).
    measures : list of str
        Measure keys: trec_eval names as trec_eval prints them (``P.5,10`` gives ``P_5``,
        ``P_10``), any other name as the caller wrote it.
    values : ndarray of float64, shape (n_queries, n_measures)
        ``values[i, j]``: measure ``j`` on query ``i``.
    ignored_queries : list
        Run queries without judgments: never scored.
    missing_queries : list
        Judged queries absent from the run: scored 0 (``missing="zero"``) or left out
        (``missing="skip"``).
    strings : dict
        Text measures (RelString): ``{key: [text per query]}``.
    standard_errors : ndarray of float64 or None
        With ``labels="probability"`` (:mod:`fastir.worlds`): the standard error of each
        value, as ``values`` (0 where it is exact: a query of at most 1,024 label
        assignments; else that of its Monte Carlo estimate); None otherwise.
    """

    standard_errors = None

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
        return _jit.select(kernels.summaries, self.values.size)(self.values[None],
                                                                how(self.parsed))[0]

    def to_dict(self):
        """``{query_id: {measure: value}}`` (the pytrec_eval shape), built by C-level calls
        (one ``dict`` a query)."""
        rows = map(zip, itertools.repeat(self.measures), self.values.tolist())
        out = dict(zip(self.query_ids, map(dict, rows)))
        for key, texts in self.strings.items():
            for q, text in zip(self.query_ids, texts):
                out[q][key] = text
        return out

    def to_pandas(self):
        """A DataFrame indexed by query id, one column per measure (needs pandas)."""
        pd = require("pandas", "Results.to_pandas")

        return pd.DataFrame(self.values, index=pd.Index(self.query_ids, name="query_id"),
                            columns=self.measures)

    def plot_pr(self, ax=None, name="run"):
        """The interpolated precision-recall curve of the ``IPrec@r`` measures evaluated
        (e.g. ``iprec_at_recall``); :func:`fastir.pr_curve` draws a finer one."""
        columns = [(m.cutoff, j) for j, m in enumerate(self.parsed) if m.family == "IPrec"]
        if not columns:
            raise ValueError("plot_pr needs IPrec@r measures in the results (evaluate "
                             "'iprec_at_recall', or use fastir.pr_curve(qrels, run))")
        columns.sort()
        recall = np.array([r for r, _ in columns])
        precision = self.values[:, [j for _, j in columns]]
        mean = precision.mean(axis=0) if len(precision) else np.zeros(len(recall))
        return plot_pr([Curve(name, recall, mean)], ax=ax)

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


class ResultsByRun(dict):
    """Several runs evaluated on the same qrels and measures: ``{run name: Results}`` (the
    shape of ``fastir.evaluate(qrels, {name: run, ...}, ...)``), with a table of means."""

    @property
    def mean(self):
        """``{run name: {measure: mean}}``."""
        return {name: res.mean for name, res in self.items()}

    def to_pandas(self):
        """A DataFrame of the means: one row per run, one column per measure (needs pandas)."""
        pd = require("pandas", "ResultsByRun.to_pandas")

        return pd.DataFrame.from_dict(self.mean, orient="index").rename_axis("run")

    def format(self, fmt="table", digits=4):
        """The means as text: ``fmt`` one of ``fastir.output.tables.FORMATS`` (as
        ``fastir eval``)."""
        return self._format(fmt, digits)

    def to_markdown(self, digits=4):
        """The means as a markdown table, one row per run (:meth:`format`)."""
        return self.format("markdown", digits)

    def to_latex(self, digits=4):
        """The means as a booktabs table, one row per run, the best of each measure in bold
        (:meth:`format`)."""
        return self.format("latex", digits)

    def _format(self, fmt, digits, after=(), **labels):
        """:meth:`format`'s text, with the rows ``after`` ((name, values) pairs) below the
        runs' (``labels``: :func:`~fastir.output.tables.format_rows`' own)."""
        first = next(iter(self.values()), None)
        if first is None:
            return ""
        keys = list(first.mean)
        integers = [m.spec.integer for m in first.parsed if m.spec.aggregate != "none"]
        rows = [(name, None, list(res.mean.values())) for name, res in self.items()]
        rows += [(name, None, list(values)) for name, values in after]
        return format_rows(rows, keys, integers, fmt, digits, False, **labels)

    def __str__(self):
        return self.format()

    def __repr__(self):
        return f"ResultsByRun({len(self)} runs)\n{self.format()}"
