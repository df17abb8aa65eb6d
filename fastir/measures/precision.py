"""The measures of relevant counts: those read in the rank prefix rows (relevant docs, AP
sums and unjudged docs in the top i, interpolated precision) at the cutoff (path "ranks":
P, R, RelP, AP, RR, Success, Unj, Hits, F1, FallOut, Accuracy) or anywhere down to the end
of the ranking (path "set": the set measures, R-precision, interpolated precision), and
the interpolated precision average (path "own"). P, R and RelP of the top k and their set
forms (k = n) are one formula each (:func:`relevant_share`).
"""

import math

import numpy as np

from fastir._jit import helper
from fastir.measures.common import BEST_PREC, CUM_AP, CUM_REL, CUM_UNJ, REL_RANK, recall_count
from fastir.measures.registry import (
    ACCURACY,
    AP,
    F1,
    FALLOUT,
    HITS,
    IPREC,
    NUM_NONREL_JUDGED_RET,
    NUM_REL_RET,
    RECALL_AT,
    REL_P,
    RPREC,
    RPREC_MULT,
    RR,
    SET_AP,
    SET_F,
    SET_P,
    SET_R,
    SET_REL_P,
    SUCCESS,
    UNJ,
    UTILITY,
    YAAP,
    P,
)


@helper
def relevant_share(kind, hits, k, n_rel):
    """P, R and RelP of the top k with ``hits`` relevant documents (their set forms SetP,
    SetR and SetRelP: k = n): hits / k, hits / R, hits / min(k, R); NaN for another kind."""
    if kind == P or kind == SET_P:
        return hits / k
    if kind == RECALL_AT or kind == SET_R:
        return hits / n_rel if n_rel > 0 else 0.0
    if kind == REL_P or kind == SET_REL_P:
        denominator = min(k, n_rel)
        return hits / denominator if denominator > 0 else 0.0
    return np.nan


@helper
def cutoff_value(kind, cutoff, params, n, n_rel, n_nonrel, rows):
    """The "ranks" path: measures of the top k (``cutoff``; the whole ranking without one),
    which read the rows at rank min(k, n) only."""
    top = n if cutoff == 0 else min(cutoff, n)
    hits = rows[CUM_REL, top]
    if kind == AP:
        return rows[CUM_AP, top] / n_rel if hits > 0 else 0.0
    if kind == RR:
        return 1.0 / rows[REL_RANK, 1] if hits > 0 else 0.0
    if kind == UNJ:
        return rows[CUM_UNJ, top] / cutoff
    if kind == SUCCESS:
        return 1.0 if hits > 0 else 0.0
    if kind == HITS:
        return hits
    if kind == F1:
        return _f1(hits, cutoff if cutoff > 0 else n, n_rel)
    if kind == FALLOUT:  # judged non-relevant in the top k over all judged non-relevant
        return (top - hits - rows[CUM_UNJ, top]) / n_nonrel if n_nonrel > 0 else 0.0
    if kind == ACCURACY:
        return _accuracy(hits, top, n_rel, params[0])
    return relevant_share(kind, hits, cutoff, n_rel)


@helper
def _f1(hits, k, n_rel):
    """ranx's F1: P = hits / k (k as given, else n), R = hits / R."""
    if n_rel == 0:
        return 0.0
    precision = hits / k
    recall = hits / n_rel
    if precision + recall == 0.0:
        return 0.0
    return 2.0 * ((precision * recall) / (precision + recall))


@helper
def _accuracy(hits, top, n_rel, n_docs):
    """(TP + TN) / N of the top k as the retrieved set, N the collection size; NaN when N
    is smaller than the documents retrieved and relevant."""
    fp = top - hits
    fn = n_rel - hits
    tn = n_docs - hits - fp - fn
    return (hits + tn) / n_docs if tn >= 0 else np.nan


@helper
def set_value(kind, compat, params, n, n_rel, rows):
    """The "set" path: measures of the whole ranking, which read the rows at any rank up to
    n (the plan then builds them down to n)."""
    hits = rows[CUM_REL, n]
    rel_ret = np.int64(hits)
    if kind == NUM_REL_RET:
        return np.float64(rel_ret)
    if kind == NUM_NONREL_JUDGED_RET:
        return np.float64(n - rel_ret - rows[CUM_UNJ, n])
    if kind == YAAP:
        ap_sum = rows[CUM_AP, n]
        return math.log((1.0 + ap_sum) / (1.0 + np.float64(n_rel) - ap_sum))
    if kind == RPREC:
        k = min(n, n_rel)
        return rows[CUM_REL, k] / n_rel if k > 0 else 0.0
    if kind == RPREC_MULT:  # precision at rank (long)(mult * R + 0.9)
        k = np.int64(params[0] * n_rel + 0.9)
        return rows[CUM_REL, min(k, n)] / k if k > 0 else 0.0
    if kind == IPREC:
        c = recall_count(params[0], n_rel, compat)
        if c > rel_ret:
            return 0.0
        if rel_ret == 0:
            return rows[BEST_PREC, n]  # 0: no relevant doc retrieved
        return rows[BEST_PREC, np.int64(rows[REL_RANK, max(c, 1)])]
    return _set_ratio(kind, params, n, n_rel, rel_ret, hits)


@helper
def _set_ratio(kind, params, n, n_rel, rel_ret, hits):
    """The measures of the retrieved set as a whole: counts only."""
    if kind == UTILITY:
        return (params[0] * rel_ret + params[1] * (n - rel_ret) + params[2] * (n_rel - rel_ret)
                + params[3] * (np.int64(params[4]) + rel_ret - n - n_rel))
    if kind == SET_AP:
        return (np.float64(rel_ret) * np.float64(rel_ret)) / (np.float64(n) * np.float64(n_rel)) \
            if n_rel > 0 else 0.0
    if kind == SET_F:
        if rel_ret == 0:
            return 0.0
        precision = rel_ret / n
        recall = rel_ret / n_rel
        beta = params[0]
        return (beta + 1.0) * precision * recall / (beta * precision + recall)
    return relevant_share(kind, hits, n, n_rel)


@helper
def iprec_avg(ranked, n_rel, level, recalls, compat):
    """m_11pt_avg.c: the C loop as is (it assumes ascending levels; given ones are not
    sorted), summing from the highest level down."""
    n = len(ranked)
    n_rel_ret = 0
    for i in range(n):
        if ranked[i] >= level:
            n_rel_ret += 1
    k = len(recalls)
    current = k - 1
    while current >= 0 and recall_count(recalls[current], n_rel, compat) > n_rel_ret:
        current -= 1
    total = 0.0
    int_precis = n_rel_ret / n
    rel_so_far = n_rel_ret
    i = n
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if ranked[i - 1] >= level:
            while current >= 0 and rel_so_far == recall_count(recalls[current], n_rel,
                                                                 compat):
                total += int_precis
                current -= 1
            rel_so_far -= 1
        i -= 1
    while current >= 0:
        total += int_precis
        current -= 1
    return total / np.float64(k)
