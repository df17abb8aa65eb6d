"""How far assessors agree (:func:`agreement`): Cohen's kappa on the documents two qrels
both judge, weighted kappas for graded labels, Fleiss' kappa and the average pairwise kappa
for three or more, and how far their disagreement moves a ranking of systems
(:mod:`fastir.analysis.meta`: Kendall's tau, tau-AP, Spearman, Pearson, RBO, swapped and
significantly swapped pairs).
"""

import math

import numpy as np

from fastir.analysis.meta import ALPHA, RBO_P, meta_evaluate, qrels_names
from fastir.options import checked_level
from fastir.output.tables import markdown_row

#: Reading kappa as Manning, Raghavan & Schuetze (IIR 8.5) do: above 0.8, from 0.67 to
#: 0.8, below 0.67.
BANDS = ("good agreement", "fair agreement: tentative conclusions only",
         "dubious: do not trust these judgments alone")


def agreement(*qrels, relevance_level=1, names=None, runs=None, measure="AP", alpha=ALPHA,
              rbo_p=RBO_P):
    """Agreement between two or more sets of judgments of the same queries.

    Parameters
    ----------
    *qrels : Qrels, dict or path
        Two or more judgments. A (query, doc) counts when every compared set judges it
        with a label >= 0 (negative labels mean "pooled, not judged").
    relevance_level : int
        Relevant means label >= this (the binary kappas).
    names : list of str, optional
        A name per qrels (default: "qrels 1", "qrels 2", ...).
    runs : dict, optional
        ``{system: run}``: the systems are also ranked by ``measure`` under each qrels and
        the rankings compared (:func:`fastir.meta_evaluate`: Kendall's tau, tau-AP,
        Spearman, Pearson, RBO, swapped pairs).
    measure : str
        The measure of that ranking.
    alpha, rbo_p
        The significance level of the swapped pairs and RBO's persistence.

    Returns
    -------
    Agreement
    """
    from fastir.io.inputs import as_qrels

    if len(qrels) < 2:
        raise ValueError(f"agreement needs at least two qrels, got {len(qrels)}")
    level = checked_level(relevance_level)
    names = qrels_names(names, len(qrels))
    loaded = [as_qrels(q) for q in qrels]
    judged = [judged_labels(q) for q in loaded]
    rankings = None if runs is None else meta_evaluate(
        *loaded, runs=runs, measure=measure, names=names, relevance_level=level, alpha=alpha,
        rbo_p=rbo_p)
    return Agreement(names, judged, level, rankings, measure)


def judged_labels(qrels):
    """{(query, doc): label} of the labels >= 0, ids as text (integer ids match the same
    ids written as text, as they do in an evaluation)."""
    out = {}
    for qid, docs in qrels.to_dict().items():
        for doc, label in docs.items():
            if label >= 0:
                out[(str(qid), str(doc))] = label
    return out


def cohen(a, b, weights=None):
    """Cohen's kappa of two equal-length label lists: (observed, chance, kappa); with
    ``weights`` "linear" or "quadratic", the weighted kappa over the categories (the sorted
    labels either side uses: distances count categories, as sklearn's)."""
    a, b = np.asarray(a), np.asarray(b)
    categories = np.union1d(a, b)
    k = len(categories)
    table = np.zeros((k, k))
    np.add.at(table, (np.searchsorted(categories, a), np.searchsorted(categories, b)), 1)
    total = table.sum()
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / total
    if weights is None:
        observed = np.trace(table) / total
        chance = np.trace(expected) / total
    else:
        distance = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(np.float64)
        w = distance if weights == "linear" else distance ** 2
        observed = 1 - (w * table).sum() / total
        chance = 1 - (w * expected).sum() / total
    kappa = (observed - chance) / (1 - chance) if chance < 1 else math.nan
    return float(observed), float(chance), float(kappa)


def fleiss(counts):
    """Fleiss' kappa of an (items, categories) table of how many raters chose each."""
    counts = np.asarray(counts, dtype=np.float64)
    raters = counts.sum(axis=1)[0]
    share = counts.sum(axis=0) / counts.sum()
    per_item = ((counts * counts).sum(axis=1) - raters) / (raters * (raters - 1))
    observed, chance = per_item.mean(), float((share * share).sum())
    return (observed - chance) / (1 - chance) if chance < 1 else math.nan


class Agreement:
    """The agreement between judgments (see :func:`agreement`).

    Attributes
    ----------
    names : list of str
    pairs : list of dicts, one per pair of qrels: ``a``, ``b``, ``both`` (documents both
        judge), ``only_a``, ``only_b``, ``table`` (2x2: rows a relevant / not, columns b),
        ``p_agree``, ``p_chance``, ``kappa``, ``linear``, ``quadratic`` (weighted kappas on
        the labels), ``band`` (how to read kappa).
    kappa : float
        Cohen's kappa (two qrels) or the average pairwise kappa (three or more).
    fleiss : float or None
        Fleiss' kappa over the documents every qrels judges (three or more).
    rankings : MetaEvaluation or None
        With runs: the systems' means under each qrels and how far their rankings agree.
    tau : list of dicts or None
        With runs: per pair of qrels, the rankings' correlations (``tau``, ``tau_ap``,
        ``spearman``, ``pearson``, ``rbo``) and swapped pairs (:attr:`MetaEvaluation.pairs`).
    notes : list of str
    """

    def __init__(self, names, judged, level, rankings, measure):
        self.names, self.relevance_level, self.measure = names, level, measure
        self.notes = []
        self.pairs = []
        for i in range(len(judged)):
            for j in range(i + 1, len(judged)):
                self.pairs.append(self._pair(names[i], names[j], judged[i], judged[j]))
        kappas = [p["kappa"] for p in self.pairs]
        self.kappa = kappas[0] if len(kappas) == 1 else float(np.mean(kappas))
        self.band = _band(self.kappa)
        self.fleiss = None
        if len(judged) > 2:
            common = set(judged[0]).intersection(*judged[1:])
            if not common:
                raise ValueError("no (query, doc) is judged by every qrels (Fleiss' kappa)")
            items = sorted(common, key=repr)
            counts = np.array([[sum(1 for j in judged if j[item] >= level),
                                sum(1 for j in judged if j[item] < level)] for item in items])
            self.fleiss = float(fleiss(counts))
            self.n_common = len(items)
        self.rankings, self.tau = rankings, None
        if rankings is not None:
            self.systems, self.system_means = rankings.systems, rankings.means
            self.tau = rankings.pairs

    def _pair(self, name_a, name_b, a, b):
        both = [key for key in a if key in b]
        if not both:
            raise ValueError(f"no (query, doc) is judged by both {name_a} and {name_b}: "
                             "check the query and document ids")
        labels_a = [a[key] for key in both]
        labels_b = [b[key] for key in both]
        rel_a = np.array(labels_a) >= self.relevance_level
        rel_b = np.array(labels_b) >= self.relevance_level
        table = np.array([[np.sum(rel_a & rel_b), np.sum(rel_a & ~rel_b)],
                          [np.sum(~rel_a & rel_b), np.sum(~rel_a & ~rel_b)]])
        observed, chance, kappa = cohen(rel_a, rel_b)
        if math.isnan(kappa):
            self.notes.append(f"{name_a} / {name_b}: every document in one class on both "
                              "sides: kappa is undefined (0 / 0)")
        return {"a": name_a, "b": name_b, "both": len(both), "only_a": len(a) - len(both),
                "only_b": len(b) - len(both), "table": table, "p_agree": observed,
                "p_chance": chance, "kappa": kappa,
                "linear": cohen(labels_a, labels_b, "linear")[2],
                "quadratic": cohen(labels_a, labels_b, "quadratic")[2], "band": _band(kappa)}

    def to_markdown(self):
        lines = ["| qrels | vs | judged by both | only first | only second | P(A) | P(E) | "
                 "kappa | linear | quadratic | reading |", "|---" * 11 + "|"]
        for p in self.pairs:
            lines.append(markdown_row([
                p["a"], p["b"], p["both"], p["only_a"], p["only_b"], f"{p['p_agree']:.3f}",
                f"{p['p_chance']:.3f}", f"{p['kappa']:.3f}", f"{p['linear']:.3f}",
                f"{p['quadratic']:.3f}", p["band"]]))
        lines.append(f"\nRelevant means label >= {self.relevance_level}; kappa > 0.8 good, "
                     "0.67-0.8 tentative, below dubious (Manning et al.).")
        if len(self.pairs) == 1:
            t = self.pairs[0]["table"]
            lines += ["", markdown_row(["", f"{self.pairs[0]['b']} relevant", "not relevant"]),
                      "|---|---|---|",
                      markdown_row([f"{self.pairs[0]['a']} relevant", t[0, 0], t[0, 1]]),
                      f"| not relevant | {t[1, 0]} | {t[1, 1]} |"]
        else:
            lines.append(f"\nAverage pairwise kappa {self.kappa:.3f} ({self.band}); Fleiss' "
                         f"kappa {self.fleiss:.3f} over the {self.n_common} documents every "
                         "qrels judges.")
        if self.rankings is not None:
            lines += ["", self.rankings.to_markdown()]
        lines += [f"\n{note}" for note in self.notes]
        return "\n".join(lines)

    def __str__(self):
        return self.to_markdown()

    def _repr_markdown_(self):
        return self.to_markdown()

    def __repr__(self):
        return f"Agreement({len(self.names)} qrels, kappa {self.kappa:.3f}: {self.band})"


def _band(kappa):
    if math.isnan(kappa):
        return "undefined"
    if kappa > 0.8:
        return BANDS[0]
    return BANDS[1] if kappa >= 0.67 else BANDS[2]
