"""What the measure kernels share: the gain codes, the chunk's scratch rows, gains and
searches in a query's ideal (judged labels, descending), trec_eval's rounding and its
``log2`` table. Every module of a measure family (:mod:`fastir.measures.precision`,
:mod:`~fastir.measures.dcg`, :mod:`~fastir.measures.own`, :mod:`~fastir.measures.err`,
:mod:`~fastir.measures.cwl`) and the fused driver (:mod:`fastir.measures.kernels`) read it.
"""

import math

import numpy as np

from fastir._jit import helper, jit

GAIN_LINEAR = 0  # the label (labels below the level count 0)
GAIN_EXP = 1  # 2**label - 1
GAIN_TABLE = 2  # params[m, label] where not NaN, else the label (trec_eval "ndcg.1=3,2=9")
MAX_EXP_LABEL = 1024  # 2**1024 - 1 overflows a double: exponential gains stop below it

# Rows of a chunk's scratch (each as long as the longest ranking or judgment list, + 2).
IDEAL_GAINS = 0  # the ideal ranking's positive gains, descending
CUM_REL = 1  # [i]: relevant docs in the top i
CUM_AP = 2  # [i]: AP's sum over the relevant docs in the top i
CUM_UNJ = 3  # [i]: unjudged docs in the top i
BEST_PREC = 4  # [i]: max precision at any rank >= i (interpolated precision)
REL_RANK = 5  # [c]: rank of the c-th relevant doc
CUM_DCG = 6  # [i]: DCG of the top i
CUM_IDCG = 7  # [i]: ideal DCG of the top i
SCRATCH_A = 8  # rows a measure's own loop may use (they describe no query afterwards)
SCRATCH_B = 9
N_ROWS = 10

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
def recall_count(recall, n_rel, compat):
    """Number of relevant docs at a recall level: lround (10.0) or (long)(x*R + 0.9) (9.0.8)."""
    if compat:
        return np.int64(recall * n_rel + 0.9)
    return _lround(recall * n_rel)


@jit
def gain(label, level, gain_kind, table):
    if label < 0:
        return 0.0
    if gain_kind == GAIN_TABLE:
        if label < len(table) and not np.isnan(table[label]):
            return table[label]
        return np.float64(label)
    if label < level or label <= 0:
        return 0.0
    if gain_kind == GAIN_EXP:
        return 2.0 ** label - 1.0
    return np.float64(label)


@helper
def count_at_least(ideal, v):
    """How many of the (descending) labels are >= v: a binary search."""
    lo = 0
    hi = len(ideal)
    while lo < hi:
        mid = (lo + hi) // 2
        if ideal[mid] >= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@helper
def insert_descending(values, m, v):
    """Insert ``v`` into the descending ``values[:m]``; returns the new length."""
    j = m - 1
    while j >= 0 and values[j] < v:
        values[j + 1] = values[j]
        j -= 1
    values[j + 1] = v
    return m + 1


@helper
def ideal_gains(ideal, level, gain_kind, table, out, limit):
    """Positive gains of all judged docs, descending, into ``out``; returns their count.
    With ``limit`` > 0 and label-derived gains, only the first ``limit`` are needed."""
    m = 0
    for label in ideal:
        if limit > 0 and m == limit and gain_kind != GAIN_TABLE:
            break
        g = gain(label, level, gain_kind, table)
        if g > 0.0:
            if gain_kind == GAIN_TABLE:  # table gains need not follow the labels' order
                m = insert_descending(out, m, g)
            else:
                out[m] = g
                m += 1
        elif gain_kind != GAIN_TABLE:
            break  # labels are sorted descending, and so are these gains
    return m
