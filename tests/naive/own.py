"""The measures with loops of their own: bpref, infAP, rbp and its residual, Judged, Compat."""

from __future__ import annotations

from .base import NONPOOL, UNJUDGED, _cdiv
from .dcg import _get_gain

#: trec_eval's INFAP_EPSILON (trec_eval.h).
INFAP_EPSILON = 0.00001


def _bpref(codes: list[int], R: int, num_nonrel: int, rel: int) -> float:
    """m_bpref.c, line by line: unjudged docs (-1, -2) are skipped; judged docs with
    0 <= code < rel are non-relevant; every other judged doc is relevant and adds
    1 - min(nonrel_so_far, R) / min(num_nonrel, R), or 1 when no non-relevant is above."""
    nonrel_so_far = 0
    bpref = 0.0
    for c in codes:
        if c == NONPOOL or c == UNJUDGED:
            continue
        if 0 <= c < rel:
            nonrel_so_far += 1
        else:
            if nonrel_so_far > 0:
                bpref += 1.0 - (min(nonrel_so_far, R) / min(num_nonrel, R))
            else:
                bpref += 1.0
    if R:
        bpref /= R
    return bpref


def _rbp(codes: list[int], table: list[list], p: float) -> float:
    """m_rbp.c: (1 - p) * sum of gain(rank i) * p**(i-1), p**i built by repeated products.
    Gains are first normalised to [0, 1] as (g - min) / (max - min) when some gain lies
    outside [0, 1]. trec_eval declares ``double sum, min, max;`` and never initialises min
    and max before ``if (gain < min) min = gain; if (gain > max) max = gain;`` (undefined
    behaviour); here they are the true minimum and maximum over the gain table (all levels
    0..max label plus overrides, whatever their counts)."""
    if table:
        lo = min(entry[1] for entry in table)
        hi = max(entry[1] for entry in table)
        if lo < 0 or hi > 1:
            table = [[lvl, _cdiv(g - lo, hi - lo), cnt] for lvl, g, cnt in table]
    total = 0.0
    cur_p = 1.0
    for code in codes:
        gain = _get_gain(code, table)
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


def _rbp_resid(codes: list[int], p: float) -> float:
    """m_rbp_resid.c: p**n + (1 - p) * sum of p**(i-1) over the unjudged ranks (code < 0),
    0 when no retrieved doc is unjudged."""
    unj = 0
    total = 0.0
    cur_p = 1.0
    for code in codes:
        if code < 0:
            unj += 1
            total += cur_p
        cur_p = cur_p * p
    if unj:
        return cur_p + (1 - p) * total
    return 0.0


def _infap(codes: list[int], R: int, rel: int) -> float:
    """m_infap.c: docs absent from the pool (-1) are skipped; pooled unjudged (-2) are
    counted; at each judged relevant doc of 0-based rank j add 1 if j == 0, else
    1/(j+1) + (j/(j+1)) * ((rel_above + nonrel_above + unjudged_above) / j)
    * ((rel_above + eps) / (rel_above + nonrel_above + 2 eps)); divide by R if R > 0."""
    nonrel_so_far = 0
    rel_so_far = 0
    pool_unjudged_so_far = 0
    inf_ap = 0.0
    for j, c in enumerate(codes):
        if c == NONPOOL:
            continue
        if c == UNJUDGED:
            pool_unjudged_so_far += 1
            continue
        if 0 <= c < rel:
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if j == 0:
                inf_ap += 1.0
            else:
                fj = float(j)
                inf_ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) / fj
                ) * (
                    (rel_so_far - 1 + INFAP_EPSILON)
                    / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)
                )
    if R:
        inf_ap /= R
    return inf_ap


def _judged_at(codes: list[int], k: int | None) -> float:
    """ir_measures' Judged@k: docs of the top k that have a qrels line (whatever its
    label), divided by the number of docs there, min(k, n); 0 for an empty ranking."""
    top = codes[:k]
    return sum(1 for c in top if c != NONPOOL) / len(top) if top else 0.0


def _compat(ranked: list[str], qrels_q: dict[str, int], p: float, normalize: bool) -> float:
    """ir_measures' Compat (Clarke et al. 2021): RBO of the ranking with the ideal ranking I
    (docs labelled > 0, label descending, equal labels in ranking order, unretrieved last),
    to depth D = max(n, |I|): sum_i p^(i-1) |ranking[:i] & I[:i]| / i over sum_i p^(i-1);
    normalised by the same of I with itself."""
    position = {doc: i for i, doc in enumerate(ranked)}
    ideal = sorted((doc for doc, label in qrels_q.items() if label > 0),
                   key=lambda doc: (-qrels_q[doc], position.get(doc, len(ranked))))

    def rbo(a, b, depth):
        score = norm = 0.0
        weight = 1.0
        for i in range(depth):
            overlap = len(set(a[:i + 1]) & set(b[:i + 1]))
            score += weight * overlap / (i + 1)
            norm += weight
            weight *= p
        return score / norm if norm else 0.0

    depth = max(len(ranked), len(ideal))
    if not ideal:
        return 0.0
    value = rbo(ranked, ideal, depth)
    best = rbo(ideal, ideal, depth)
    return value / best if normalize and best > 0 else value
