"""The measures of relevant counts: AP, R-precision, RR, P, R, interpolated precision and
its average, RelP, Unj, YAAP, Accuracy, the set measures' F and utility."""

from __future__ import annotations

import math

from .base import NONPOOL, UNJUDGED, _is_rel, _recall_count


def _ap(codes: list[int], R: int, rel: int, k: int | None) -> float:
    """m_map.c / m_map_cut.c: sum of precision at each relevant rank (top k only if a
    cutoff is given), divided by R; 0 when nothing relevant was counted."""
    depth = len(codes) if k is None else min(k, len(codes))
    rel_so_far = 0
    total = 0.0
    for i in range(depth):
        if _is_rel(codes[i], rel):
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    if rel_so_far == 0 or R == 0:
        return 0.0
    return total / R


def _rprec(codes: list[int], R: int, rel: int) -> float:
    """m_Rprec.c: relevant in the top min(n, R), divided by R."""
    look = min(len(codes), R)
    if look == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:look] if _is_rel(c, rel))
    return rel_so_far / R


def _rr(codes: list[int], rel: int, k: int | None) -> float:
    """m_recip_rank.c: 1 / rank of the first relevant doc (within the top k if given)."""
    depth = len(codes) if k is None else min(k, len(codes))
    for i in range(depth):
        if _is_rel(codes[i], rel):
            return 1.0 / (i + 1)
    return 0.0


def _iprec(codes: list[int], R: int, rel: int, recall: float, compat: str = "10.0") -> float:
    """m_iprec_at_recall.c (10.0): c = lround(recall * R) (9.0.8: see _recall_count);
    0 if c > num_rel_ret;
    otherwise the largest precision at any rank at or after the c-th relevant doc
    (c == 0: at or after the first relevant doc, or the precision at n if none).

    An empty ranking scores 0 (trec_eval's formula would give 0/0 there; its 10.0
    output for a -c topic missing from the run prints 0.0000)."""
    n = len(codes)
    if n == 0:
        return 0.0
    cut = _recall_count(recall, R, compat)
    num_rel_ret = sum(1 for c in codes if _is_rel(c, rel))
    if cut > num_rel_ret:
        return 0.0
    # Precision at each rank i (1-based), computed exactly as trec_eval does:
    # (double) rel_so_far / (double) i with rel_so_far = relevant docs in the top i.
    precisions = []
    rel_so_far = 0
    rank_of = {}  # j -> rank of the j-th relevant doc
    for i in range(1, n + 1):
        if _is_rel(codes[i - 1], rel):
            rel_so_far += 1
            rank_of[rel_so_far] = i
        precisions.append(rel_so_far / i)
    if num_rel_ret == 0:
        # Nothing relevant (then cut == 0): trec_eval returns num_rel_ret / num_ret.
        return num_rel_ret / n
    start = rank_of[max(cut, 1)]
    return max(precisions[start - 1 :])


def _precision_at(codes: list[int], rel: int, k: int) -> float:
    """m_P.c: relevant in the top k divided by k (missing ranks are non-relevant)."""
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / k


def _recall_at(codes: list[int], R: int, rel: int, k: int) -> float:
    """m_recall.c: relevant in the top k divided by R (0 when R == 0)."""
    if R == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / R


def _success(codes: list[int], rel: int, k: int) -> float:
    """m_success.c: 1 if a relevant doc is in the top k."""
    return 1.0 if any(_is_rel(c, rel) for c in codes[:k]) else 0.0


def _set_f(num_rel_ret: int, n: int, R: int, beta: float) -> float:
    """m_set_F.c: (x + 1) * P * R / (x * P + R) with x = beta; 0 when num_rel_ret == 0
    (which covers n == 0 and R == 0)."""
    if num_rel_ret == 0:
        return 0.0
    P = num_rel_ret / n
    Rc = num_rel_ret / R
    x = beta
    return (x + 1.0) * P * Rc / (x * P + Rc)


def _rprec_mult(codes: list[int], rel: int, R: int, mult: float) -> float:
    """m_Rprec_mult.c: precision at rank c = (long) (mult * R + 0.9) (truncation, in 10.0
    as in 9.0.8); beyond the ranking num_rel_ret / c; 0 when c == 0."""
    n = len(codes)
    c = int(mult * R + 0.9)
    num_rel_ret = sum(1 for code in codes if _is_rel(code, rel))
    if c > n:
        return num_rel_ret / c
    # Reverse loop of the C: stops once no relevant doc is left above rank i.
    rel_so_far = num_rel_ret
    for i in range(n, 0, -1):
        if rel_so_far <= 0:
            break
        if i == c:
            return rel_so_far / i
        if codes[i - 1] >= rel:
            rel_so_far -= 1
    return 0.0


def _iprec_avg(codes: list[int], R: int, rel: int, recalls, compat: str) -> float:
    """m_11pt_avg.c: the interpolated precisions at the recall levels, summed in the C's
    order (its loop assumes the levels ascending, as trec_eval's defaults are; user levels
    are not sorted by trec_eval and are taken as given), divided by their number.
    An empty ranking scores 0 (see _iprec)."""
    n = len(codes)
    if n == 0:
        return 0.0
    cutoffs = [_recall_count(x, R, compat) for x in recalls]
    num_rel_ret = sum(1 for c in codes if c >= rel)
    current_cut = len(cutoffs) - 1
    while current_cut >= 0 and cutoffs[current_cut] > num_rel_ret:
        current_cut -= 1
    total = 0.0
    int_precis = num_rel_ret / n
    rel_so_far = num_rel_ret
    i = n
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if codes[i - 1] >= rel:
            while current_cut >= 0 and rel_so_far == cutoffs[current_cut]:
                total += int_precis
                current_cut -= 1
            rel_so_far -= 1
        i -= 1
    while current_cut >= 0:
        total += int_precis
        current_cut -= 1
    return total / len(recalls)


def _relative_p(codes: list[int], R: int, rel: int, k: int) -> float:
    """m_rel_P.c: relevant in the top k divided by min(k, R); 0 when R == 0."""
    if R == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / min(k, R)


def _unjudged_at(codes: list[int], k: int) -> float:
    """m_unjudged.c (unj): docs with code -1 or -2 in the top k, divided by k."""
    return sum(1 for c in codes[:k] if c in (NONPOOL, UNJUDGED)) / k


def _hole_at(docs: list[str], judged_anywhere: set, k: int) -> float:
    """BEIR's hole@k (beir.retrieval.custom_metrics.hole): the docs of the top k that no
    query of the qrels judges (any label), divided by k."""
    return sum(1 for doc in docs[:k] if doc not in judged_anywhere) / k


def _yaap(codes: list[int], R: int, rel: int) -> float:
    """m_yaap.c: log((1 + s) / (1 + R - s)), s = sum of precisions at the relevant docs."""
    rel_so_far = 0
    total = 0.0
    for i, c in enumerate(codes):
        if c >= rel:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    return math.log((1.0 + total) / (1.0 + R - total))


def _accuracy(codes: list[int], R: int, rel: int, k: int | None, num_docs: int) -> float:
    """Boolean accuracy of the top k as the retrieved set: (TP + TN) / N, N the collection
    size; TP relevant retrieved, FP the other retrieved, FN relevant not retrieved,
    TN = N - TP - FP - FN."""
    retrieved = codes[:k]
    tp = sum(1 for c in retrieved if c >= rel)
    fp = len(retrieved) - tp
    fn = R - tp
    tn = num_docs - tp - fp - fn
    if num_docs <= 0 or tn < 0:
        raise ValueError(f"Accuracy: num_docs={num_docs} is smaller than TP + FP + FN")
    return (tp + tn) / num_docs


def _utility(num_ret: int, num_rel: int, num_rel_ret: int, coeffs, num_docs: int) -> float:
    """m_utility.c: p1*a + p2*b + p3*c + p4*d over the contingency table (a relevant
    retrieved, b nonrelevant retrieved, c relevant not retrieved, d = N - a - b - c)."""
    p1, p2, p3, p4 = (float(x) for x in coeffs)
    return (
        p1 * num_rel_ret
        + p2 * (num_ret - num_rel_ret)
        + p3 * (num_rel - num_rel_ret)
        + p4 * (num_docs + num_rel_ret - num_ret - num_rel)
    )
