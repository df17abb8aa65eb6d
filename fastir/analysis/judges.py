"""Two judges compared (:func:`compare_judges`): what replacing one set of judgments (people's,
say) by another (a machine's) changes, from the labels up to the conclusions.

- The labels, on the (query, doc) pairs both judge: the confusion matrix of their labels,
  Cohen's kappa on relevant / not (``label >= relevance_level``) and the weighted kappas on
  the labels (:func:`fastir.agreement`).
- The systems' order, per measure: Kendall's tau, tau-AP (``a``'s order the truth), RBO and
  the share of the top ``k`` systems both orders hold (:mod:`fastir.analysis.meta`).
- The significance conclusions, per measure: :func:`fastir.compare` run under each judge
  (the same test, correction, resamples and seed), each pair of systems counted as
  significant under both in the same direction, under both in opposite directions, under
  ``a`` only, under ``b`` only, or neither.
- Each system's bias: its mean under ``b`` minus under ``a`` over the queries both judge,
  with the paired t interval over those queries (Student's t, ``1 - alpha``).
"""

import json
import math

import numpy as np

from fastir.analysis.meta import RBO_P, correlations, descending, qrels_names
from fastir.output.tables import latex_escape, markdown_row

#: How many of the best systems the top-k overlap reads, by default.
TOP_K = 5

#: The five outcomes of a pair of systems under two judges (:attr:`JudgeComparison.
#: significance`).
OUTCOMES = ("both", "opposite", "only_a", "only_b", "neither")


def compare_judges(qrels_a, qrels_b, runs, measures, *, names=None, relevance_level=1,
                   test="randomization", correction="holm", alpha=0.05, n_resamples=10_000,
                   seed=0, top_k=TOP_K, rbo_p=RBO_P, missing="zero", progress=False,
                   **options):
    """How far judge ``b`` changes what judge ``a`` concludes about ``runs``.

    Parameters
    ----------
    qrels_a, qrels_b : Qrels, dict or path
        The two judgments (``a`` the reference: people's, say; ``b`` a machine's).
    runs : dict
        ``{system: run}``, at least two systems (any form :func:`fastir.evaluate` takes).
    measures : str or list of str
        Numeric measures, as for :func:`fastir.evaluate`.
    names : pair of str, optional
        The judges' names (default "qrels 1", "qrels 2").
    relevance_level : int
        Relevant means label >= this: for the measures and the binary kappa.
    test, correction, alpha, n_resamples, seed, missing, progress
        As for :func:`fastir.compare`, which runs under each judge.
    top_k : int
        The top-k overlap reads the ``top_k`` best systems of each order (at most all).
    rbo_p : float
        RBO's persistence between the system orders.
    **options
        ``max_docs``, ``judged_only``, ``num_docs``, ``compat``, ``ties``, ``unjudged``: as
        for :func:`fastir.evaluate`.

    Returns
    -------
    JudgeComparison
    """
    from fastir.analysis.agreement import agreement
    from fastir.analysis.stats import compare
    from fastir.io.inputs import as_qrels

    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(f"top_k must be a positive integer, got {top_k!r}")
    if options.get("labels", "int") != "int":
        raise ValueError(f"compare_judges takes integer labels only (labels="
                         f"{options['labels']!r}): its confusion matrix and kappas count each "
                         "label as a category")
    names = qrels_names(names, 2)
    judges = [as_qrels(qrels_a), as_qrels(qrels_b)]
    runs = _read_runs(runs)
    labels = agreement(*judges, relevance_level=relevance_level, names=names)
    comparisons = [compare(judge, runs, measures, test=test, correction=correction,
                           alpha=alpha, n_resamples=n_resamples, seed=seed, missing=missing,
                           progress=progress, relevance_level=relevance_level, **options)
                   for judge in judges]
    return JudgeComparison(names, labels, _label_table(*judges), comparisons, int(top_k),
                           rbo_p)


def _read_runs(runs):
    """``runs`` each read once (a :class:`~fastir.Run`), for both judges' evaluations;
    :class:`~fastir.Results` are refused: they hold one judge's values."""
    from fastir.io.inputs import as_run
    from fastir.results import Results

    if not isinstance(runs, dict):
        return runs  # (compare names what it takes)
    for name, run in runs.items():
        if isinstance(run, Results):
            raise ValueError(f"runs[{name!r}] is a Results, computed under one judgment: "
                             "compare_judges evaluates each run under both, give the run")
    return {name: as_run(run) for name, run in runs.items()}


def _label_table(a, b):
    """The labels the two judges give the (query, doc) pairs both judge: (the labels, sorted;
    the confusion matrix, rows ``a``'s label, columns ``b``'s)."""
    from fastir.analysis.agreement import judged_labels

    first, second = judged_labels(a), judged_labels(b)
    both = [key for key in first if key in second]
    la = np.array([first[key] for key in both], dtype=np.int64)
    lb = np.array([second[key] for key in both], dtype=np.int64)
    labels = np.union1d(la, lb)
    table = np.zeros((len(labels), len(labels)), dtype=np.int64)
    np.add.at(table, (np.searchsorted(labels, la), np.searchsorted(labels, lb)), 1)
    return labels, table


def t_quantile(p, df):
    """Student's t quantile: the t with P(T <= t) = ``p`` (0.5 < p < 1), by bisection on
    :func:`fastir.analysis.stats.t_two_sided` to the last bit."""
    from fastir.analysis.stats import t_two_sided

    low, high = 0.0, 1.0
    while t_two_sided(high, df) > 2 * (1 - p):
        high *= 2
    while True:
        middle = (low + high) / 2
        if middle in (low, high):
            return high
        if t_two_sided(middle, df) > 2 * (1 - p):
            low = middle
        else:
            high = middle


def t_interval(values, alpha):
    """(mean, low, high) of per-query ``values`` (or paired differences): Student's t
    interval of their mean at ``1 - alpha``; NaN bounds with fewer than two queries, the
    mean itself when they are all equal."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(np.mean(values))
    if n < 2:
        return mean, math.nan, math.nan
    half = t_quantile(1 - alpha / 2, n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


class JudgeComparison:
    """What judge ``b`` changes of judge ``a``'s conclusions (see :func:`compare_judges`).

    Attributes
    ----------
    names : list of str
        The two judges.
    labels : Agreement
        The label agreement (kappa, weighted kappas, the relevant / not table).
    label_values : ndarray
        The labels either judge gives a (query, doc) both judge, sorted.
    confusion : ndarray of int (n_labels, n_labels)
        How many (query, doc) pairs get ``label_values[i]`` from ``a`` and ``[j]`` from ``b``.
    comparisons : pair of Comparison
        :func:`fastir.compare` under each judge.
    systems, measures : lists
    means : ndarray (2, n_systems, n_measures)
        Each system's summary under each judge.
    rankings : list of dicts, per measure
        ``tau``, ``tau_ap``, ``spearman``, ``pearson``, ``rbo``, ``top_k`` (the share of the
        top ``k`` systems both orders hold) and ``k``.
    significance : list of dicts, per measure
        How many pairs of systems fall in each of :data:`OUTCOMES`, and ``n_pairs``.
    bias, bias_low, bias_high : ndarray (n_systems, n_measures)
        Each system's summary under ``b`` minus under ``a``, over the ``n_common`` queries
        both judges evaluate, and its paired t interval (a sum's: ``n_common`` times its
        mean's; NaN for a geometric mean).
    notes : list of str
    """

    def __init__(self, names, labels, label_table, comparisons, top_k, rbo_p):
        from fastir.measures.registry import HOW

        self.names, self.labels, self.comparisons = names, labels, comparisons
        self.label_values, self.confusion = label_table
        a, b = comparisons
        self.systems, self.measures = a.systems, a.measures
        self.alpha, self.rbo_p = a.alpha, rbo_p
        self.means = np.stack([a.means, b.means])
        self.notes = list(labels.notes)
        k = min(top_k, len(self.systems))
        self.rankings = [{**correlations(a.means[:, m], b.means[:, m], rbo_p),
                          "top_k": _overlap(a.means[:, m], b.means[:, m], k), "k": k}
                         for m in range(len(self.measures))]
        self.significance = [_outcomes(a, b, m) for m in range(len(self.measures))]
        common, in_a, in_b = np.intersect1d(np.asarray(a.queries, dtype=object).astype(str),
                                            np.asarray(b.queries, dtype=object).astype(str),
                                            return_indices=True)
        self.n_common = len(common)
        if self.n_common < max(len(a.queries), len(b.queries)):
            self.notes.append(f"the bias is over the {self.n_common} queries both judges "
                              f"evaluate ({len(a.queries)} under {names[0]}, "
                              f"{len(b.queries)} under {names[1]})")
        shape = (len(self.systems), len(self.measures))
        self.bias, self.bias_low, self.bias_high = (np.full(shape, math.nan) for _ in range(3))
        for m in range(len(self.measures)):
            scale = _scale(a.summarised[m], self.n_common)
            for s in range(len(self.systems)):
                d = b.values[s][in_b, m] - a.values[s][in_a, m]
                self.bias[s, m], self.bias_low[s, m], self.bias_high[s, m] = \
                    (scale * x for x in t_interval(d, self.alpha))
        geometric = [k for m, k in enumerate(self.measures) if a.summarised[m] == HOW["gmean"]]
        if geometric:
            self.notes.append(f"no bias for geometric means: {', '.join(geometric)}")

    # -- reports ---------------------------------------------------------------------------
    def to_dict(self):
        """Everything as plain Python (the JSON of :meth:`to_json`)."""
        agreement = self.labels.pairs[0]
        return {
            "judges": list(self.names), "systems": list(self.systems),
            "measures": list(self.measures),
            "labels": {"judged_by_both": agreement["both"], "only_a": agreement["only_a"],
                       "only_b": agreement["only_b"], "kappa": agreement["kappa"],
                       "linear_kappa": agreement["linear"],
                       "quadratic_kappa": agreement["quadratic"],
                       "values": self.label_values.tolist(),
                       "confusion": self.confusion.tolist()},
            "means": {name: {s: dict(zip(self.measures, self.means[j, i].tolist()))
                             for i, s in enumerate(self.systems)}
                      for j, name in enumerate(self.names)},
            "rankings": {key: dict(r) for key, r in zip(self.measures, self.rankings)},
            "significance": {key: dict(s) for key, s in zip(self.measures,
                                                            self.significance)},
            "bias": {s: {key: {"bias": _number(self.bias[i, m]),
                               "ci": [_number(self.bias_low[i, m]),
                                      _number(self.bias_high[i, m])]}
                         for m, key in enumerate(self.measures)}
                     for i, s in enumerate(self.systems)},
            "n_common_queries": self.n_common, "alpha": self.alpha,
            "test": self.comparisons[0].test, "correction": self.comparisons[0].correction,
            "notes": list(self.notes)}

    def to_json(self, **kwargs):
        return json.dumps(self.to_dict(), **kwargs)

    def to_markdown(self, digits=4):
        """The labels' agreement and confusion matrix, then per measure the systems under
        both judges with their bias, the orders' agreement and the conclusions'."""
        a, b = self.names
        p = self.labels.pairs[0]
        lines = [f"Labels: {p['both']} (query, doc) pairs judged by both ({p['only_a']} by "
                 f"{a} only, {p['only_b']} by {b} only); Cohen's kappa {p['kappa']:.3f} "
                 f"(relevant: label >= {self.labels.relevance_level}; {p['band']}), weighted "
                 f"linear {p['linear']:.3f}, quadratic {p['quadratic']:.3f}.", "",
                 markdown_row([f"{a} \\ {b}", *self.label_values.tolist()]),
                 "|---" * (len(self.label_values) + 1) + "|"]
        for i, label in enumerate(self.label_values.tolist()):
            lines.append(markdown_row([label, *self.confusion[i].tolist()]))
        level = f"{1 - self.alpha:.0%}"
        for m, key in enumerate(self.measures):
            r, s = self.rankings[m], self.significance[m]
            lines += ["", f"{key}: Kendall's tau {r['tau']:.3f}, tau-AP {r['tau_ap']:.3f}, "
                      f"RBO (p={self.rbo_p}) {r['rbo']:.3f}, top {r['k']} overlap "
                      f"{r['top_k']:.2f}; of {s['n_pairs']} pairs, significant under both "
                      f"{s['both']}, in opposite directions {s['opposite']}, under {a} only "
                      f"{s['only_a']}, under {b} only {s['only_b']}, neither {s['neither']}.",
                      "", f"| system | {a} | {b} | bias ({b} - {a}) | {level} CI |",
                      "|---|---|---|---|---|"]
            for i in descending(self.means[0, :, m]).tolist():
                lines.append(markdown_row([
                    self.systems[i], f"{self.means[0, i, m]:.{digits}f}",
                    f"{self.means[1, i, m]:.{digits}f}", _signed(self.bias[i, m], digits),
                    f"[{_signed(self.bias_low[i, m], digits)}, "
                    f"{_signed(self.bias_high[i, m], digits)}]"]))
        lines.append(f"\nSignificance: {self.comparisons[0].caption()}, under each judge; "
                     f"bias over the {self.n_common} queries both evaluate, paired t "
                     "interval.")
        lines += [f"\n{note}" for note in self.notes]
        return "\n".join(lines)

    def to_latex(self, digits=4, label="tab:judges"):
        """A booktabs table: per measure and system, its value under each judge and its
        bias with the interval; the orders' agreement in the caption."""
        a, b = self.names
        rows = []
        for m, key in enumerate(self.measures):
            r = self.rankings[m]
            rows.append(rf"\multicolumn{{4}}{{l}}{{{latex_escape(key)}: $\tau$ "
                        rf"{r['tau']:.3f}, $\tau_{{AP}}$ {r['tau_ap']:.3f}}} \\")
            for i in descending(self.means[0, :, m]).tolist():
                rows.append(f"{latex_escape(self.systems[i])} & "
                            f"{self.means[0, i, m]:.{digits}f} & "
                            f"{self.means[1, i, m]:.{digits}f} & "
                            f"{_signed(self.bias[i, m], digits)} "
                            f"[{_signed(self.bias_low[i, m], digits)}, "
                            f"{_signed(self.bias_high[i, m], digits)}] \\\\")
        caption = latex_escape(
            f"Systems under {a} and {b}; bias: {b} minus {a} over the {self.n_common} "
            f"queries both evaluate, with its {1 - self.alpha:.0%} paired t interval; "
            f"Cohen's kappa of the labels {self.labels.pairs[0]['kappa']:.3f}.")
        return "\n".join([r"\begin{table}", r"\centering", r"\begin{tabular}{lrrr}",
                          r"\toprule", f"System & {latex_escape(a)} & {latex_escape(b)} & "
                          r"Bias \\", r"\midrule", *rows, r"\bottomrule", r"\end{tabular}",
                          rf"\caption{{{caption}}}", rf"\label{{{label}}}", r"\end{table}"])

    def plot(self, measure=None, ax=None):
        """Each system's value under both judges, with ``1 - alpha`` t intervals of its
        mean, the systems in ``a``'s order; returns the axes (needs matplotlib)."""
        from fastir.output.plots import plot_judged_systems

        m = 0 if measure is None else self.measures.index(measure)
        low, high = self._intervals(m)
        return plot_judged_systems(self.systems, self.means[:, :, m], low, high, self.names,
                                   self.measures[m], self.rankings[m], ax=ax)

    def _intervals(self, m):
        """Per judge and system, the t interval of measure ``m``'s mean over the queries."""
        low, high = np.full((2, len(self.systems)), math.nan), \
            np.full((2, len(self.systems)), math.nan)
        for j, comparison in enumerate(self.comparisons):
            scale = _scale(comparison.summarised[m], len(comparison.queries))
            for i in range(len(self.systems)):
                _, low[j, i], high[j, i] = (scale * x for x in t_interval(
                    comparison.values[i][:, m], self.alpha))
        return low, high

    def __str__(self):
        return self.to_markdown()

    def _repr_markdown_(self):
        return self.to_markdown()

    def __repr__(self):
        r = self.rankings[0]
        return (f"JudgeComparison({self.names[0]} vs {self.names[1]}, "
                f"{len(self.systems)} systems, kappa {self.labels.pairs[0]['kappa']:.3f}, "
                f"{self.measures[0]}: tau {r['tau']:.3f}, tau-AP {r['tau_ap']:.3f})")


def _overlap(a, b, k):
    """The share of the top ``k`` systems by ``a`` that are in the top ``k`` by ``b``."""
    return len(set(descending(a)[:k].tolist()) & set(descending(b)[:k].tolist())) / k


def _outcomes(a, b, m):
    """How many pairs of systems fall in each of :data:`OUTCOMES` on measure ``m``."""
    sig_a, sig_b = a.significant()[:, m], b.significant()[:, m]
    same = np.sign(a.difference[:, m]) == np.sign(b.difference[:, m])
    counts = {"both": sig_a & sig_b & same, "opposite": sig_a & sig_b & ~same,
              "only_a": sig_a & ~sig_b, "only_b": ~sig_a & sig_b,
              "neither": ~sig_a & ~sig_b}
    return {**{name: int(c.sum()) for name, c in counts.items()}, "n_pairs": len(sig_a)}


def _scale(summarised, n):
    """What turns the interval of a mean over ``n`` queries into that of a measure
    summarised so (a code of registry.HOW): 1 for a mean, ``n`` for a sum, NaN else."""
    from fastir.measures.registry import HOW

    return {HOW["mean"]: 1.0, HOW["sum"]: float(n)}.get(int(summarised), math.nan)


def _signed(x, digits):
    return "n/a" if math.isnan(x) else f"{x:+.{digits}f}"


def _number(x):
    return None if math.isnan(x) else float(x)
