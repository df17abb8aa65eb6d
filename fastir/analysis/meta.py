"""Judging the judges: how far the ranking of systems changes when other judgments score
them (human against LLM assessors, a pool against full judgments, one assessor against
another), as the meta-evaluation literature measures it (:func:`meta_evaluate`).

Between the systems' means under a reference qrels ``a`` and another ``b``:

- Kendall's tau (tau-b, ties counted as scipy's ``kendalltau``), Spearman's rho (Pearson's
  r of the ranks, ties averaged, as scipy's ``spearmanr``) and Pearson's r of the means;
- tau-AP (Yilmaz, Aslam & Robertson, SIGIR 2008): Kendall's tau weighted to the top, with
  ``a``'s order as the truth and ``b``'s as the ranking judged (as trectools'
  ``get_correlation(..., "tauap")``): ``2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1``, C(i)
  the systems above the i-th of ``b``'s order that ``a`` ranks above it too;
- rank-biased overlap of the two orders (Webber, Moffat & Zobel 2010, extrapolated: both
  orders hold every system), persistence ``p``;
- swaps: pairs of systems the two order the other way round; and, with the paired t-test
  over the queries at level ``alpha``, the pairs ``a`` finds significantly different
  (``significant``), those of them ``b`` orders the other way (``significant_swaps``), and
  those ``b`` finds significantly different the other way (``significant_conflicts``).

Systems with equal means keep the order they are given in (``runs``' order) in the orders
that tau-AP and RBO read.
"""

import math

import numpy as np

from fastir._optional import require
from fastir.measures import registry
from fastir.options import checked_level

#: The persistence of RBO between system orders by default: the top ten weigh 0.65.
RBO_P = 0.9
#: The significance level of the swapped pairs by default.
ALPHA = 0.05


def meta_evaluate(*qrels, runs, measure="AP", names=None, relevance_level=1, missing="zero",
                  alpha=ALPHA, rbo_p=RBO_P):
    """Rank the systems ``runs`` by ``measure`` under each qrels and compare the rankings.

    Parameters
    ----------
    *qrels : Qrels, dict or path
        Two or more judgments of the same queries; the first is the reference (``a``) of
        each pair it is in.
    runs : dict
        ``{system: run}``, at least two systems (any form :func:`fastir.evaluate` takes).
    measure : str
        One numeric measure.
    names : list of str, optional
        A name per qrels (default "qrels 1", "qrels 2", ...).
    relevance_level, missing
        As for :func:`fastir.evaluate`.
    alpha : float
        The paired t-test's significance level.
    rbo_p : float
        RBO's persistence (0 < p < 1).

    Returns
    -------
    MetaEvaluation
    """
    from fastir.io.inputs import as_qrels
    from fastir.loops.evaluator import Evaluator

    if len(qrels) < 2:
        raise ValueError(f"meta_evaluate needs at least two qrels, got {len(qrels)}")
    names = qrels_names(names, len(qrels))
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {system: run} of at least two systems")
    if not (0 < alpha < 1):
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    check_persistence(rbo_p)
    keys, parsed = registry.parse_all([measure])
    if len(parsed) != 1 or parsed[0].spec.aggregate == "none":
        raise ValueError(f"measure must be one numeric measure (its means rank the systems), "
                         f"got {measure!r}")
    level = checked_level(relevance_level)
    values = []
    for q in qrels:
        evaluator = Evaluator(as_qrels(q), parsed, relevance_level=level, missing=missing)
        per_system = [evaluator.evaluate(run).values[:, 0] for run in runs.values()]
        values.append(np.column_stack(per_system) if per_system[0].size else
                      np.zeros((0, len(runs))))
    return MetaEvaluation(names, [str(s) for s in runs], keys[0], values, alpha, rbo_p)


def qrels_names(names, n):
    """The names of ``n`` qrels: those given (one each), else "qrels 1", "qrels 2", ..."""
    if names is None:
        return [f"qrels {i + 1}" for i in range(n)]
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__") or len(names) != n:
        raise ValueError(f"names must be a list of one name per qrels ({n}), got {names!r}")
    return [str(name) for name in names]


def check_persistence(p):
    if not (isinstance(p, (int, float)) and not isinstance(p, bool) and 0 < p < 1):
        raise ValueError(f"rbo_p must be a number between 0 and 1 (RBO's persistence), got "
                         f"{p!r}")


# -- correlations between two lists of system means -----------------------------------------
def kendall_tau(x, y):
    """Kendall's tau-b of two score lists (ties counted as scipy's ``kendalltau``; NaN when
    either list is constant)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    i, j = np.triu_indices(len(x), 1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    both = (dx != 0) & (dy != 0)
    concordant = int((both & (dx == dy)).sum())
    discordant = int((both & (dx != dy)).sum())
    ties_x = int(((dx == 0) & (dy != 0)).sum())
    ties_y = int(((dy == 0) & (dx != 0)).sum())
    denominator = math.sqrt((concordant + discordant + ties_x) *
                            (concordant + discordant + ties_y))
    return (concordant - discordant) / denominator if denominator else math.nan


def pearson(x, y):
    """Pearson's r (NaN when either list is constant, as scipy's ``pearsonr``: checked as
    such, since a constant list's mean may be an ulp off its value, and r then the rounding
    noise divided by itself)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) == 0 or (x == x[0]).all() or (y == y[0]).all():
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float((dx * dx).sum()) * float((dy * dy).sum()))
    if denominator == 0:
        return math.nan
    return max(-1.0, min(1.0, float((dx * dy).sum()) / denominator))


def average_ranks(x):
    """Ranks from 1, ties given their average rank (scipy's ``rankdata``)."""
    x = np.asarray(x, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], len(x)]
    ranks = np.empty(len(x))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(x, y):
    """Spearman's rho: Pearson's r of the average ranks."""
    return pearson(average_ranks(x), average_ranks(y))


def descending(values):
    """Indices from the highest value to the lowest, equal values in their given order."""
    return np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")


def tau_ap(reference, other):
    """Yilmaz et al.'s tau-AP of the order of ``other`` against the order of ``reference``
    (the truth); NaN for fewer than two systems."""
    n = len(reference)
    if n < 2:
        return math.nan
    place = np.empty(n, dtype=np.int64)
    place[descending(reference)] = np.arange(n)
    judged = place[descending(other)]  # reference places, in other's order
    above = (judged[None, :] < judged[:, None]) & np.tri(n, k=-1, dtype=bool)
    correct = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * (correct / np.arange(1, n)).sum() - 1.0)


def rbo(order_a, order_b, p=RBO_P):
    """Extrapolated rank-biased overlap of two orders of the same items (Webber et al.'s
    RBO_ext at their full depth k): ``(1 - p) / p * sum_{d=1..k} X_d / d * p^d + X_k / k *
    p^k``, X_d the items both top-d share."""
    order_a, order_b = np.asarray(order_a), np.asarray(order_b)
    k = len(order_a)
    if k == 0:
        return math.nan
    place_b = np.empty(k, dtype=np.int64)
    place_b[order_b] = np.arange(k)
    joins = np.maximum(np.arange(k), place_b[order_a])  # the depth (from 0) each is shared
    overlap = np.cumsum(np.bincount(joins, minlength=k))
    depth = np.arange(1, k + 1)
    weights = p ** depth
    return float((1 - p) / p * (overlap / depth * weights).sum() + overlap[-1] / k * p ** k)


def correlations(a, b, p=RBO_P):
    """``{tau, tau_ap, spearman, pearson, rbo}`` of two lists of system means (``a``: the
    reference)."""
    return {"tau": kendall_tau(a, b), "tau_ap": tau_ap(a, b), "spearman": spearman(a, b),
            "pearson": pearson(a, b), "rbo": rbo(descending(a), descending(b), p)}


# -- the comparison ---------------------------------------------------------------------------
class MetaEvaluation:
    """Systems ranked under several qrels, and how far the rankings agree (see
    :func:`meta_evaluate`).

    Attributes
    ----------
    names : list of str
        The qrels.
    systems : list of str
    measure : str
    values : list of ndarray
        Per qrels, the per-query values ``(n_queries, n_systems)``.
    means : ndarray, shape (n_qrels, n_systems)
    pairs : list of dict
        Per pair of qrels (``a`` the reference, ``b``): ``tau``, ``tau_ap``, ``spearman``,
        ``pearson``, ``rbo``, ``swaps``, ``significant``, ``significant_swaps``,
        ``significant_conflicts``, ``n_pairs``.
    """

    def __init__(self, names, systems, measure, values, alpha=ALPHA, rbo_p=RBO_P):
        self.names, self.systems, self.measure = names, systems, measure
        self.values, self.alpha, self.rbo_p = values, alpha, rbo_p
        self.means = np.array([v.mean(axis=0) if len(v) else np.zeros(len(systems))
                               for v in values])
        self.pairs = [self._pair(i, j) for i in range(len(names))
                      for j in range(i + 1, len(names))]

    def _pair(self, i, j):
        a, b = self.means[i], self.means[j]
        first, second = np.triu_indices(len(self.systems), 1)
        order_a, order_b = np.sign(a[first] - a[second]), np.sign(b[first] - b[second])
        swapped = order_a * order_b < 0
        significant_a = self._significant(self.values[i], first, second)
        significant_b = self._significant(self.values[j], first, second)
        return {"a": self.names[i], "b": self.names[j], **correlations(a, b, self.rbo_p),
                "swaps": int(swapped.sum()), "significant": int(significant_a.sum()),
                "significant_swaps": int((significant_a & swapped).sum()),
                "significant_conflicts": int((significant_a & significant_b & swapped).sum()),
                "n_pairs": len(first)}

    def _significant(self, values, first, second):
        """Per pair of systems, whether the paired t-test over the queries rejects equal
        means at ``alpha``."""
        from fastir.analysis.reproducibility import t_test

        if len(values) < 2:
            return np.zeros(len(first), dtype=bool)
        p = t_test(values[:, first], values[:, second], paired=True)
        return p < self.alpha  # (NaN: no difference at all, never significant)

    def to_pandas(self):
        """The systems' means, one row per system, one column per qrels (needs pandas)."""
        pd = require("pandas", "MetaEvaluation.to_pandas")

        return pd.DataFrame(self.means.T, index=pd.Index(self.systems, name="system"),
                            columns=self.names)

    def to_markdown(self, digits=4):
        order = descending(self.means[0])
        lines = [f"Systems by {self.measure} under each qrels (ordered by {self.names[0]}):",
                 "", "| system | " + " | ".join(self.names) + " |",
                 "|---" * (len(self.names) + 1) + "|"]
        for s in order.tolist():
            lines.append(f"| {self.systems[s]} | " +
                         " | ".join(f"{m:.{digits}f}" for m in self.means[:, s]) + " |")
        lines += ["", "| qrels | vs | Kendall's tau | tau-AP | Spearman | Pearson | "
                  f"RBO (p={self.rbo_p}) | swaps | significant (a) | significant swaps | "
                  "conflicts |",
                  "|---" * 11 + "|"]
        for p in self.pairs:
            lines.append(f"| {p['a']} | {p['b']} | {p['tau']:.3f} | {p['tau_ap']:.3f} | "
                         f"{p['spearman']:.3f} | {p['pearson']:.3f} | {p['rbo']:.3f} | "
                         f"{p['swaps']} / {p['n_pairs']} | {p['significant']} | "
                         f"{p['significant_swaps']} | {p['significant_conflicts']} |")
        lines.append(f"\nSignificant: paired t-test over the queries, p < {self.alpha}, under "
                     "the first qrels of the pair; a significant swap is such a pair the "
                     "second qrels orders the other way, a conflict one it finds "
                     "significantly different the other way.")
        return "\n".join(lines)

    def plot(self, pair=0, ax=None):
        """The systems' means under the two qrels of ``pair`` (an index of :attr:`pairs`),
        one point per system, with the diagonal; returns the axes (needs matplotlib)."""
        from fastir.output.plots import plot_system_means

        p = self.pairs[pair]
        i, j = self.names.index(p["a"]), self.names.index(p["b"])
        return plot_system_means(self.systems, self.means[i], self.means[j], p["a"], p["b"],
                                 self.measure, p, ax=ax)

    def __str__(self):
        return self.to_markdown()

    def _repr_markdown_(self):
        return self.to_markdown()

    def __repr__(self):
        p = self.pairs[0]
        return (f"MetaEvaluation({len(self.systems)} systems by {self.measure}, "
                f"{p['a']} vs {p['b']}: tau {p['tau']:.3f}, tau-AP {p['tau_ap']:.3f}, "
                f"{p['swaps']} swaps)")
