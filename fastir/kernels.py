"""The fused measure kernel: every requested measure, for every query, in one parallel pass.

The kernel sees only arrays. Per query ``e`` it reads the ranked label codes
``labels[indptr[e]:indptr[e + 1]]`` (see :mod:`fastir.join`) and the query's judged labels
sorted in descending order (the ideal ranking), and evaluates each measure row of the spec:

- ``kind``: which measure (the constants below);
- ``cutoff``: rank cutoff k (0: the whole ranking);
- ``level``: relevance level (relevant means label >= level);
- ``gain``: nDCG gain (``GAIN_LINEAR``: the label; ``GAIN_EXP``: 2**label - 1);
- ``param``: a float parameter (IPrec recall level, SetF beta).

Floating-point operations follow trec_eval's order (sequential sums in rank order, the same
divisions, the C library's ``log2`` through a precomputed table), so values are
bit-identical to trec_eval 10.0. A query with an empty ranking scores 0 everywhere except
``NUM_REL`` and ``NUM_Q``.
"""

import math

import numpy as np

from fastir._jit import jit, pjit, prange

NUM_Q = 0
NUM_RET = 1
NUM_REL = 2
NUM_REL_RET = 3
NUM_NONREL_JUDGED_RET = 4
AP = 5
RPREC = 6
BPREF = 7
RR = 8
IPREC = 9
P = 10
RECALL = 11
NDCG = 12
SUCCESS = 13
SET_P = 14
SET_R = 15
SET_F = 16
DCG = 17

GAIN_LINEAR = 0
GAIN_EXP = 1

_LOG2 = np.zeros(0)


def log2_table(n):
    """``table[i] == log2(i + 2)`` from the C library (as trec_eval), for ranks 1..n."""
    global _LOG2
    if len(_LOG2) < n:
        size = max(n, 2 * len(_LOG2), 1024)
        _LOG2 = np.array([math.log2(i + 2) for i in range(size)])
    return _LOG2


@jit
def _lround(x):
    """C ``lround``: nearest integer, halfway cases away from zero."""
    if x >= 0:
        return np.int64(math.floor(x + 0.5))
    return -np.int64(math.floor(-x + 0.5))


@jit
def _gain(label, level, gain_kind):
    if label < level or label <= 0:
        return 0.0
    if gain_kind == GAIN_EXP:
        return 2.0 ** label - 1.0
    return np.float64(label)


@jit
def _dcg(ranked, cutoff, level, gain_kind, log2):
    n = len(ranked) if cutoff == 0 else min(cutoff, len(ranked))
    dcg = 0.0
    for i in range(n):
        g = _gain(ranked[i], level, gain_kind)
        if g != 0.0:
            dcg += g / log2[i]
    return dcg


@jit
def _ndcg(ranked, ideal, cutoff, level, gain_kind, log2):
    dcg = _dcg(ranked, cutoff, level, gain_kind, log2)
    m = len(ideal) if cutoff == 0 else min(cutoff, len(ideal))
    idcg = 0.0
    for i in range(m):
        g = _gain(ideal[i], level, gain_kind)
        if g <= 0.0:
            break
        idcg += g / log2[i]
    return dcg / idcg if idcg > 0.0 else 0.0


@jit
def _iprec(ranked, n_rel, n_rel_ret, level, recall):
    """trec_eval 10.0 m_iprec_at_recall.c for one recall level."""
    n = len(ranked)
    cut = _lround(recall * n_rel)
    if cut > n_rel_ret:
        return 0.0
    int_precis = n_rel_ret / n
    rel_so_far = n_rel_ret
    i = n
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if ranked[i - 1] >= level:
            if rel_so_far == cut:
                return int_precis
            rel_so_far -= 1
        i -= 1
    return int_precis


@jit
def _bpref(ranked, n_rel, n_nonrel, level):
    nonrel_so_far = 0
    total = 0.0
    for i in range(len(ranked)):
        code = ranked[i]
        if code < 0:
            continue
        if code < level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            total += 1.0 - min(nonrel_so_far, n_rel) / min(n_nonrel, n_rel)
        else:
            total += 1.0
    return total / n_rel if n_rel > 0 else total


@jit
def query_value(kind, cutoff, level, gain_kind, param, ranked, ideal, log2):
    """One measure for one query (``ranked``: label codes; ``ideal``: labels, descending)."""
    n_rel = 0
    n_nonrel = 0
    for label in ideal:
        if label >= level:
            n_rel += 1
        elif label >= 0:
            n_nonrel += 1
    if kind == NUM_Q:
        return 1.0
    if kind == NUM_REL:
        return np.float64(n_rel)
    n = len(ranked)
    if n == 0:
        return 0.0
    if kind == NUM_RET:
        return np.float64(n)
    if kind == NDCG:
        return _ndcg(ranked, ideal, cutoff, level, gain_kind, log2)
    if kind == DCG:
        return _dcg(ranked, cutoff, level, gain_kind, log2)
    if kind == BPREF:
        return _bpref(ranked, n_rel, n_nonrel, level)
    top = n if cutoff == 0 else min(cutoff, n)
    if kind == RPREC:
        top = min(n, n_rel)
        if top == 0:
            return 0.0
    # One scan of the top ranks serves the counting measures.
    rel_ret = 0
    nonrel_ret = 0
    ap_sum = 0.0
    first = -1
    for i in range(top):
        code = ranked[i]
        if code >= level:
            rel_ret += 1
            ap_sum += rel_ret / (i + 1)
            if first < 0:
                first = i
        elif code >= 0:
            nonrel_ret += 1
    if kind == NUM_REL_RET:
        return np.float64(rel_ret)
    if kind == NUM_NONREL_JUDGED_RET:
        return np.float64(nonrel_ret)
    if kind == AP:
        return ap_sum / n_rel if rel_ret > 0 else 0.0
    if kind == RR:
        return 1.0 / (first + 1) if first >= 0 else 0.0
    if kind == RPREC:
        return rel_ret / n_rel
    if kind == P:
        return rel_ret / cutoff
    if kind == RECALL:
        return rel_ret / n_rel if n_rel > 0 else 0.0
    if kind == SUCCESS:
        return 1.0 if rel_ret > 0 else 0.0
    if kind == IPREC:
        return _iprec(ranked, n_rel, rel_ret, level, param)
    if kind == SET_P:
        return rel_ret / n
    if kind == SET_R:
        return rel_ret / n_rel if n_rel > 0 else 0.0
    if kind == SET_F:
        if rel_ret == 0:
            return 0.0
        precision = rel_ret / n
        recall = rel_ret / n_rel
        return (param + 1.0) * precision * recall / (param * precision + recall)
    return np.nan


@jit
def _evaluate_query(e, indptr, labels, ideal_indptr, ideal_labels, qrels_query, kind, cutoff,
                    level, gain_kind, param, log2, out):
    ranked = labels[indptr[e]:indptr[e + 1]]
    q = qrels_query[e]
    ideal = ideal_labels[ideal_indptr[q]:ideal_indptr[q + 1]]
    for m in range(len(kind)):
        out[e, m] = query_value(kind[m], cutoff[m], level[m], gain_kind[m], param[m], ranked,
                                ideal, log2)


@pjit
def evaluate_queries(bounds, indptr, labels, ideal_indptr, ideal_labels, qrels_query, kind,
                     cutoff, level, gain_kind, param, log2, out):
    """Fill ``out[e, m]`` for all queries (parallel over chunks ``bounds``) and measures."""
    for c in prange(len(bounds) - 1):
        for e in range(bounds[c], bounds[c + 1]):
            _evaluate_query(e, indptr, labels, ideal_indptr, ideal_labels, qrels_query, kind,
                            cutoff, level, gain_kind, param, log2, out)


@jit
def column_sums(values):
    """Sequential (row order) sums of each column, as trec_eval accumulates."""
    sums = np.zeros(values.shape[1])
    for e in range(values.shape[0]):
        for m in range(values.shape[1]):
            sums[m] += values[e, m]
    return sums


@jit
def column_log_sums(values, floor):
    """Sequential sums of log(max(v, floor)) per column (trec_eval's gm_* measures)."""
    sums = np.zeros(values.shape[1])
    for e in range(values.shape[0]):
        for m in range(values.shape[1]):
            sums[m] += math.log(max(values[e, m], floor))
    return sums
