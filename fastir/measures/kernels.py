"""The fused measure kernel: every requested measure, for every query, in one parallel pass.

The kernel sees only arrays. Per query ``e`` it reads the ranked label codes
``labels[indptr[e]:indptr[e + 1]]`` (see :mod:`fastir.model.join`) and the query's judged
labels sorted in descending order (the ideal ranking), and evaluates each row of the measure
table (:data:`Spec`; columns ``KIND``, ``PATH``, ``CUTOFF``, ``LEVEL``, ``GAIN``, ``COMPAT``,
``EMPTY``, float parameters in ``params``). :func:`query_value` dispatches on ``PATH``, the
registry's ``Family.path``: the query's counts; the rank prefix rows read at the cutoff
("ranks") or anywhere down to the end ("set"); the gain prefix rows (DCG and ideal DCG); a
loop of the measure's own. Each path is one small function, and each measure one case of its
path's function (or a helper it calls). The prefix rows are built once per query and level,
down to :func:`prefix_depth`, and read through views of exactly the ranks built.

Floating-point operations follow trec_eval's order (sequential sums in rank order, the same
divisions, the C library's ``log2`` through a precomputed table), so values are
bit-identical to trec_eval 10.0. An empty ranking scores 0 but for the measures whose
``EMPTY`` column is set.
"""

import math
from collections import namedtuple

import numpy as np

from fastir._jit import helper, jit, pjit, prange, python_variant

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
IDEAL_DCG = 18
INFAP = 19
RPREC_MULT = 20
UTILITY = 21
IPREC_AVG = 22
BING = 23
G = 24
NDCG_REL = 25
RNDCG = 26
REL_P = 27
SET_REL_P = 28
SET_AP = 29
RBP = 30
RBP_RESID = 31
UNJ = 32
YAAP = 33
ERR = 34
NERR = 35
JUDGED = 36
ACCURACY = 37
COMPATIBILITY = 38
BPM = 39  # the C/W/L family (BPM .. INSQ): one helper, _cwl
SDCG = 40
NERR8 = 41
NERR9 = 42
NERR10 = 43
NERR11 = 44
INST = 45
INSQ = 46
# The diversity measures (fastir.measures.diversity: their own pass over subtopic judgments)
ALPHA_DCG = 47
ALPHA_NDCG = 48
ERR_IA = 49
NERR_IA = 50
NRBP = 51
NNRBP = 52
P_IA = 53
ST_RECALL = 54
# ranx's own measures
HITS = 55
F1 = 56
FALLOUT = 57  # torchmetrics' RetrievalFallOut

GAIN_LINEAR = 0  # the label (labels below the level count 0)
GAIN_EXP = 1  # 2**label - 1
GAIN_TABLE = 2  # params[m, label] where not NaN, else the label (trec_eval "ndcg.1=3,2=9")
MAX_EXP_LABEL = 1024  # 2**1024 - 1 overflows a double: exponential gains stop below it

INFAP_EPSILON = 0.00001

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
def _recall_count(recall, n_rel, compat):
    """Number of relevant docs at a recall level: lround (10.0) or (long)(x*R + 0.9) (9.0.8)."""
    if compat:
        return np.int64(recall * n_rel + 0.9)
    return _lround(recall * n_rel)


@jit
def _gain(label, level, gain_kind, table):
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
def _ideal_gains(ideal, level, gain_kind, table, out, limit=0):
    """Positive gains of all judged docs, descending, into ``out``; returns their count.
    With ``limit`` > 0 and label-derived gains, only the first ``limit`` are needed."""
    m = 0
    for label in ideal:
        if limit > 0 and m == limit and gain_kind != GAIN_TABLE:
            break
        g = _gain(label, level, gain_kind, table)
        if g > 0.0:
            if gain_kind == GAIN_TABLE:  # table gains need not follow the labels' order
                m = insert_descending(out, m, g)
            else:
                out[m] = g
                m += 1
        elif gain_kind != GAIN_TABLE:
            break  # labels are sorted descending, and so are these gains
    return m


@helper
def _dcg(ranked, cutoff, level, gain_kind, table, log2):
    n = len(ranked) if cutoff == 0 else min(cutoff, len(ranked))
    dcg = 0.0
    for i in range(n):
        g = _gain(ranked[i], level, gain_kind, table)
        if g != 0.0:
            dcg += g / log2[i]
    return dcg


@helper
def _ideal_dcg(ig, m, cutoff, log2):
    top = m if cutoff == 0 else min(cutoff, m)
    idcg = 0.0
    for i in range(top):
        idcg += ig[i] / log2[i]
    return idcg


@helper
def _iprec_avg(ranked, n_rel, level, recalls, compat):
    """m_11pt_avg.c: the C loop as is (it assumes ascending levels; given ones are not
    sorted), summing from the highest level down."""
    n = len(ranked)
    n_rel_ret = 0
    for i in range(n):
        if ranked[i] >= level:
            n_rel_ret += 1
    k = len(recalls)
    current = k - 1
    while current >= 0 and _recall_count(recalls[current], n_rel, compat) > n_rel_ret:
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
            while current >= 0 and rel_so_far == _recall_count(recalls[current], n_rel,
                                                                 compat):
                total += int_precis
                current -= 1
            rel_so_far -= 1
        i -= 1
    while current >= 0:
        total += int_precis
        current -= 1
    return total / np.float64(k)


@helper
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


@helper
def _infap(ranked, n_rel, level):
    """m_infap.c: inferred AP (Yilmaz & Aslam) with its epsilon smoothing."""
    nonrel_so_far = 0
    rel_so_far = 0
    unjudged_so_far = 0
    total = 0.0
    for j in range(len(ranked)):
        code = ranked[j]
        if code == -1:
            continue
        if code == -2:
            unjudged_so_far += 1
            continue
        if code < level:
            nonrel_so_far += 1
            continue
        rel_so_far += 1
        if j == 0:
            total += 1.0
        else:
            fj = np.float64(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                (rel_so_far - 1 + nonrel_so_far + unjudged_so_far) / fj) * (
                (rel_so_far - 1 + INFAP_EPSILON)
                / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON))
    return total / n_rel if n_rel > 0 else total


@helper
def _ndcg_rel(ranked, ig, m, level, gain_kind, table, log2):
    """m_ndcg_rel.c: nDCG averaged over the ranks of the relevant docs."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    n_rel_ret = 0
    for i in range(len(ranked)):
        g = _gain(ranked[i], level, gain_kind, table)
        if g != 0.0:
            results_dcg += g / log2[i]
        if i < m:
            ideal_dcg += ig[i] / log2[i]
        if g > 0.0:
            total += results_dcg / ideal_dcg
            n_rel_ret += 1
    for i in range(len(ranked), m):
        ideal_dcg += ig[i] / log2[i]
    total += np.float64(m - n_rel_ret) * results_dcg / ideal_dcg
    return total / m if total > 0.0 else 0.0


@helper
def _rndcg(ranked, ig, m, n_rel, level, gain_kind, table, log2):
    """m_Rndcg.c: nDCG averaged at the ranks where the ideal gain changes."""
    if n_rel == 0:
        return 0.0
    n = len(ranked)
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    count = 0
    old = ig[0] if m > 0 else 0.0
    ideal_gain = old
    i = 0
    while i < n and ideal_gain > 0.0:
        g = _gain(ranked[i], level, gain_kind, table)
        ideal_gain = ig[i] if i < m else 0.0
        if old != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                count += 1
            old = ideal_gain
        if g != 0.0:
            results_dcg += g / log2[i]
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / log2[i]
        i += 1
    if i < n:
        while i < n:
            g = _gain(ranked[i], level, gain_kind, table)
            if g != 0.0:
                results_dcg += g / log2[i]
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            count += 1
    while ideal_gain > 0.0:
        ideal_gain = ig[i] if i < m else 0.0
        if old != ideal_gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                count += 1
            old = ideal_gain
        if ideal_gain > 0.0:
            ideal_dcg += ideal_gain / log2[i]
        i += 1
    return total / count if count > 0 else 0.0


@helper
def _g(ranked, ig, m, level, gain_kind, table):
    """m_G.c: gain discounted by the ideal gain still missing."""
    n = len(ranked)
    results_g = 0.0
    sum_results = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    ideal_gain = ig[0] if m > 0 else 0.0
    i = 0
    while i < n and ideal_gain > 0.0:
        g = _gain(ranked[i], level, gain_kind, table)
        sum_results += g
        ideal_gain = ig[i] if i < m else 0.0
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
        if g != 0.0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < n:
        g = _gain(ranked[i], level, gain_kind, table)
        sum_results += g
        sum_cost += 1.0
        if g != 0.0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    for k in range(i, m):
        sum_ideal += ig[k]
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


@helper
def _bing(ranked, n_rel, level, log2):
    """m_binG.c: sum over relevant docs of 1/log2(2 + non-relevant docs above it)."""
    rel = 0
    total = 0.0
    for i in range(len(ranked)):
        if ranked[i] >= level:
            rel += 1
            total += 1.0 / log2[1 + i - rel]  # log2(3 + i - rel_so_far)
    return total / n_rel if rel > 0 else 0.0


@helper
def _rbp(ranked, ideal, p, level, scaled):
    """m_rbp.c with default gains (the labels), scaled by the query's largest label when
    it exceeds 1 (trec_eval reads min/max uninitialised; this is the intended value);
    labels below ``level`` gain 0, and unscaled (``scaled`` 0) the gains are the labels
    themselves (ranx's rbp)."""
    top = np.float64(ideal[0]) if len(ideal) > 0 and ideal[0] > 0 else 0.0
    total = 0.0
    cur_p = 1.0
    for i in range(len(ranked)):
        label = ranked[i]
        if label > 0 and label >= level:
            g = np.float64(label)
            if top > 1.0 and scaled != 0.0:
                g = (g - 0.0) / (top - 0.0)
            total += g * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


@helper
def _rbp_resid(ranked):
    p = 0.9
    total = 0.0
    cur_p = 1.0
    unjudged = 0
    for i in range(len(ranked)):
        if ranked[i] < 0:
            unjudged += 1
            total += cur_p
        cur_p = cur_p * p
    return cur_p + (1 - p) * total if unjudged > 0 else 0.0


@helper
def _err(labels, n, max_grade):
    """ERR of the first ``n`` labels as gdeval.pl computes it (Chapelle et al. 2009): stop
    probability r = (2^label - 1) / 2^max_grade (0 for labels <= 0 and unjudged documents),
    summing r * P(reaching the rank) / rank in rank order."""
    top = 2.0 ** max_grade
    score = 0.0
    decay = 1.0
    for i in range(n):
        label = labels[i]
        r = (2.0 ** label - 1.0) / top if label > 0 else 0.0
        score += r * decay / (i + 1)
        decay *= 1.0 - r
    return score


@helper
def _judged(ranked, top):
    """ir_measures' Judged@k: the share of the top k with a judgment (any label, negative
    ones included), over min(k, n) (trec_eval's unj divides by k and counts negative labels
    as unjudged)."""
    judged = 0
    for i in range(top):
        if ranked[i] != -1:
            judged += 1
    return judged / top


@helper
def _compat(ranked, ideal, p, normalize, sc):
    """Compatibility with the ideal ranking (Clarke, Vtyurina & Smucker 2021), as ir_measures
    computes it: rank-biased overlap with persistence ``p`` down to depth D = max(n, |I|),
    I = the documents labelled > 0 by label descending (equal labels: the retrieved ones
    first, in ranking order); ``normalize`` divides by the ideal's overlap with itself.

    The overlap at depth i counts the retrieved ideal documents whose rank and ideal
    position are both <= i: from each document's ideal position (the documents of higher
    labels, plus those of its label retrieved before it), without document ids."""
    n = len(ranked)
    n_ideal = count_at_least(ideal, 1)
    if n_ideal == 0:
        return 0.0
    depth = max(n, n_ideal)
    seen = sc[SCRATCH_A]  # [start of a label's block in the ideal]: its retrieved so far
    entering = sc[SCRATCH_B]  # [i]: documents entering the overlap at depth i
    for i in range(n_ideal):
        seen[i] = 0.0
    for i in range(depth + 1):
        entering[i] = 0.0
    for r in range(n):
        label = ranked[r]
        if label > 0:
            start = count_at_least(ideal, label + 1)
            position = start + np.int64(seen[start]) + 1
            seen[start] += 1.0
            entering[max(r + 1, position)] += 1.0
    score = 0.0
    best = 0.0
    norm = 0.0
    weight = 1.0
    overlap = 0.0
    for i in range(depth):
        overlap += entering[i + 1]
        score += weight * overlap / (i + 1)
        best += weight * min(i + 1, n_ideal) / (i + 1)
        norm += weight
        weight *= p
    value = score / norm
    if normalize and best > 0.0:
        return value / (best / norm)
    return value


CWL_DEPTH = 1000  # cwl_eval's ranking length: rankings are cut or padded to it


@helper
def _cwl(ranked, kind, k, params):
    """A C/W/L measure as cwl_eval computes it (its expected utility per item, the value
    ir_measures reports): the user goes on from rank i with probability C(i), reaching it
    with P(i) = C(1)...C(i-1); EU = sum P(i) g(i) / sum P(i) over exactly CWL_DEPTH ranks
    (zero-gain padding). Gains scale labels into [0, 1]: (clip(max(label, 0), min_rel,
    max_rel) - min_rel) / (max_rel - min_rel), 0 for documents without a judgment.
    ``params``: min_rel, max_rel, then T (BPM, NERR11, INST, INSQ) or p (NERR10); ``k`` the
    cutoff of BPM (its K), SDCG, NERR8 and NERR9."""
    min_rel = params[0]
    max_rel = params[1]
    t = params[2]
    n = min(len(ranked), CWL_DEPTH)
    reach = 1.0
    total_reach = 0.0
    utility = 0.0
    gained = 0.0
    for i in range(CWL_DEPTH):
        rank = i + 1.0
        g = 0.0
        if i < n and ranked[i] != -1:
            label = min(max(max(np.float64(ranked[i]), 0.0), min_rel), max_rel)
            g = (label - min_rel) / (max_rel - min_rel)
        gained += g
        total_reach += reach
        utility += reach * g
        if kind == BPM:
            c = 1.0 if gained < t and i + 1 < k else 0.0
        elif kind == SDCG:
            c = (math.log(rank + 1.0) / math.log(2.0)) / (math.log(rank + 2.0) / math.log(2.0)) \
                if i + 1 < k else 0.0
        elif kind == NERR8:
            c = 1.0 - g if i + 1 < k else 0.0
        elif kind == NERR9:
            c = (1.0 * rank / (rank + 1.0)) * (1.0 - g) if i + 1 < k else 0.0
        elif kind == NERR10:
            c = t * (1.0 - g)
        elif kind == NERR11:
            c = (rank + 2.0 * t - 1.0) / (rank + 2.0 * t)
            c = c * c * (1.0 - g)
        elif kind == INST:
            left = t - gained
            c = (rank + t + left - 1.0) / (rank + t + left)
            c = c * c
        else:  # INSQ
            c = (rank + 2.0 * t - 1.0) / (rank + 2.0 * t)
            c = c * c
        reach *= c
        if reach == 0.0:
            break  # (the rest adds nothing)
    return utility / total_reach


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

# Slots of a chunk's state: which query and parameters the cumulative rows describe, and
# how far they reach.
ST_QUERY, ST_LEVEL, ST_BUILT, ST_DCG_QUERY, ST_DCG_LEVEL, ST_DCG_GAIN, ST_DCG_BUILT, \
    ST_IDEAL = range(8)
N_STATE = 8

# The measure table: one row per measure, these columns (see fastir.engine.measure_spec).
# PATH: how the kernel computes it (the registry's ``Family.path``, below); CUTOFF: the rank
# cutoff k (0: the whole ranking), the only rank a measure on the prefix paths reads;
# EMPTY: computed on an empty ranking (else 0 there).
KIND, PATH, CUTOFF, LEVEL, GAIN, COMPAT, EMPTY = range(7)
N_COLUMNS = 7

#: The kernel's paths, one per value of ``Family.path``: the query's counts; the rank
#: prefix rows (relevant counts, AP sums, unjudged counts, interpolated precision) read at
#: the cutoff ("ranks") or at the end of the ranking ("set"); the gain prefix rows (DCG,
#: ideal DCG); a loop of the measure's own; the diversity kernel's; and two that read
#: other judgments than qrels, never this kernel: the preference kernel's
#: (fastir.measures.prefs) and judgment groups' (fastir.preferences).
PATHS = {"counts": 0, "ranks": 1, "set": 2, "gains": 3, "own": 4, "subtopics": 5,
         "prefs": 6, "groups": 7}
PATH_COUNTS, PATH_RANKS, PATH_SET, PATH_GAINS, PATH_OWN, PATH_SUBTOPICS = range(6)


def prefix_depth(table):
    """The rank down to which the cumulative rows are built for a measure table: a measure
    on a prefix path reads them at rank min(CUTOFF, n), or n with no cutoff (gain tables
    have loops of their own), so the depth is the largest cutoff, or 0 (the whole ranking)
    when one of them has none. The kernel hands the measures views of exactly the rows it
    built: a read beyond them is an IndexError (Python, NUMBA_BOUNDSCHECK)."""
    path = table[:, PATH]
    reading = (path == PATH_RANKS) | (path == PATH_SET) | ((path == PATH_GAINS)
                                                          & (table[:, GAIN] != GAIN_TABLE))
    cutoffs = table[reading, CUTOFF]
    return 0 if (cutoffs == 0).any() else int(cutoffs.max(initial=0))


#: What the kernels know of the measures: ``table`` (int64, one row per measure, the columns
#: above), ``params`` (float64, one row per measure: its float parameters), ``log2`` (the
#: discounts: ``log2[i] == log2(i + 2)``) and ``depth`` (:func:`prefix_depth`).
Spec = namedtuple("Spec", "table params log2 depth")

#: A chunk's scratch, per chunk: ``rows`` (float64: the cumulative rows above), ``state``
#: (int64: which query and parameters the rows describe), ``codes`` (int32: a ranking's
#: labels in row 0, an ideal's in row 1) and ``index`` (int64: an order and its merge
#: buffer).
Work = namedtuple("Work", "rows state codes index")

#: The joined rankings: ``labels[indptr[e]:indptr[e + 1]]`` is query ``e``'s ranking, whose
#: judgments are row ``qrels_query[e]`` of the ideals.
Rankings = namedtuple("Rankings", "indptr labels qrels_query")

#: Each judged query's labels, descending: ``labels[indptr[q]:indptr[q + 1]]``.
Ideals = namedtuple("Ideals", "indptr labels")


@helper
def _rank_prefixes(ranked, n, level, sc):
    """One pass over the top ``n`` ranks: the cumulative rows for relevance level ``level``.
    Sums run in rank order, so a prefix at k is bit-identical to trec_eval's sum over the
    top k."""
    rel = 0
    unjudged = 0
    ap = 0.0
    sc[CUM_REL, 0] = 0.0
    sc[CUM_AP, 0] = 0.0
    sc[CUM_UNJ, 0] = 0.0
    for i in range(n):
        code = ranked[i]
        if code >= level:
            rel += 1
            ap += rel / (i + 1)
            sc[REL_RANK, rel] = i + 1
        elif code < 0:
            unjudged += 1
        sc[CUM_REL, i + 1] = rel
        sc[CUM_AP, i + 1] = ap
        sc[CUM_UNJ, i + 1] = unjudged
    best = rel / n if n > 0 else 0.0
    for i in range(n, 0, -1):  # m_iprec_at_recall.c's backward interpolation
        precision = sc[CUM_REL, i] / i
        if best < precision:
            best = precision
        sc[BEST_PREC, i] = best


@helper
def _gain_prefixes(ranked, n, ideal, depth, level, gain_kind, params, log2, sc):
    """Cumulative DCG of the top ``n`` ranks, and of the ideal ranking down to ``depth``
    (0: all of it); returns the ideal's length (at most ``depth``)."""
    dcg = 0.0
    sc[CUM_DCG, 0] = 0.0
    for i in range(n):
        g = _gain(ranked[i], level, gain_kind, params)
        if g != 0.0:
            dcg += g / log2[i]
        sc[CUM_DCG, i + 1] = dcg
    m = _ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS], depth)
    if depth > 0:
        m = min(m, depth)
    idcg = 0.0
    sc[CUM_IDCG, 0] = 0.0
    for i in range(m):
        idcg += sc[IDEAL_GAINS, i] / log2[i]
        sc[CUM_IDCG, i + 1] = idcg
    return m


@helper
def _built(n, depth):
    """How many ranks the cumulative rows cover: the top ``depth``, or all ``n``."""
    return n if depth == 0 else min(depth, n)


@helper
def _rank_rows(e, ranked, level, depth, sc, state):
    """Builds the rank prefix rows of query ``e`` at ``level`` unless they are (once for all
    its measures that share the level); returns how many ranks they cover."""
    if state[ST_QUERY] != e or state[ST_LEVEL] != level:
        state[ST_BUILT] = _built(len(ranked), depth)
        _rank_prefixes(ranked, state[ST_BUILT], level, sc)
        state[ST_QUERY] = e
        state[ST_LEVEL] = level
    return state[ST_BUILT]


@helper
def query_value(e, spec, m, ranked, ideal, outside, outside_label, sc, state):
    """Measure ``m`` of the spec for query ``e`` (``ranked``: label codes; ``ideal``: labels,
    descending; ``outside`` more judged documents of label ``outside_label`` that the ideal
    leaves out, counted but not laid out: a dense batch's relevant documents beyond the
    measures' depth).

    The measure's PATH column (its registry ``path``) says how it is computed: most
    measures are a lookup in cumulative rows that ``sc``/``state`` (the chunk's scratch
    rows and their description) hold once for all the query's measures that share a
    relevance level (or gains), down to rank ``spec.depth``. An empty ranking scores 0 but
    for the measures whose ``EMPTY`` column is set (trec_eval 10.0 -c evaluates a missing
    query on one unjudged placeholder document: NUM_REL, IDEAL_DCG and YAAP are the values
    that differ from 0 on it). A NaN says the measure is not defined on the query's input
    (the registry's ``invalid``), or that its kind is not on its path (a registry error the
    reference tests find).
    """
    row = spec.table[m]
    level = row[LEVEL]
    n_rel = count_at_least(ideal, level)  # labels are sorted descending
    n_nonrel = count_at_least(ideal, 0) - n_rel
    if outside > 0 and outside_label >= level:
        n_rel += outside
    elif outside > 0 and outside_label >= 0:
        n_nonrel += outside
    n = len(ranked)
    path = row[PATH]
    if path == PATH_COUNTS:
        return _count_value(row[KIND], n, n_rel)
    if n == 0 and row[EMPTY] == 0:
        return 0.0
    if path == PATH_RANKS or path == PATH_SET:
        built = _rank_rows(e, ranked, level, spec.depth, sc, state)
        rows = sc[:, :built + 1]  # exactly the ranks built: a read beyond them is an error
        if path == PATH_RANKS:
            return _cutoff_value(row, spec.params[m], n, n_rel, n_nonrel, rows)
        return _set_value(row, spec.params[m], n, n_rel, rows)
    if path == PATH_GAINS:
        return _gain_value(e, spec, m, ranked, ideal, sc, state)
    if path == PATH_OWN:
        return _own_value(row, spec.params[m], ranked, ideal, n_rel, n_nonrel, spec.log2, sc)
    return np.nan  # PATH_SUBTOPICS (the diversity kernel's), "prefs", "groups"


@helper
def _count_value(kind, n, n_rel):
    """The counts path: what needs no ranking but its length."""
    if kind == NUM_Q:
        return 1.0
    if kind == NUM_REL:
        return np.float64(n_rel)
    if kind == NUM_RET:
        return np.float64(n)
    return np.nan


@helper
def _cutoff_value(row, params, n, n_rel, n_nonrel, rows):
    """The "ranks" path: measures of the top k (the whole ranking without a cutoff), which
    read the rows at rank min(k, n) only."""
    kind = row[KIND]
    cutoff = row[CUTOFF]
    top = n if cutoff == 0 else min(cutoff, n)
    hits = rows[CUM_REL, top]
    if kind == AP:
        return rows[CUM_AP, top] / n_rel if hits > 0 else 0.0
    if kind == RR:
        return 1.0 / rows[REL_RANK, 1] if hits > 0 else 0.0
    if kind == P:
        return hits / cutoff
    if kind == RECALL:
        return hits / n_rel if n_rel > 0 else 0.0
    if kind == REL_P:
        denominator = min(cutoff, n_rel)
        return hits / denominator if denominator > 0 else 0.0
    if kind == UNJ:
        return rows[CUM_UNJ, top] / cutoff
    if kind == SUCCESS:
        return 1.0 if hits > 0 else 0.0
    if kind == HITS:
        return hits
    if kind == F1:  # ranx: P = hits / k (k as given), R = hits / R
        if n_rel == 0:
            return 0.0
        precision = hits / (cutoff if cutoff > 0 else n)
        recall = hits / n_rel
        if precision + recall == 0.0:
            return 0.0
        return 2.0 * ((precision * recall) / (precision + recall))
    if kind == FALLOUT:  # judged non-relevant in the top k over all judged non-relevant
        return (top - hits - rows[CUM_UNJ, top]) / n_nonrel if n_nonrel > 0 else 0.0
    if kind == ACCURACY:  # (TP + TN) / N over the top k; params[0]: N
        fp = top - hits
        fn = n_rel - hits
        tn = params[0] - hits - fp - fn
        return (hits + tn) / params[0] if tn >= 0 else np.nan
    return np.nan


@helper
def _set_value(row, params, n, n_rel, rows):
    """The "set" path: measures of the whole ranking, which read the rows at any rank up to
    n (the plan then builds them down to n)."""
    kind = row[KIND]
    rel_ret = np.int64(rows[CUM_REL, n])
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
        c = _recall_count(params[0], n_rel, row[COMPAT])
        if c > rel_ret:
            return 0.0
        if rel_ret == 0:
            return rows[BEST_PREC, n]  # 0: no relevant doc retrieved
        return rows[BEST_PREC, np.int64(rows[REL_RANK, max(c, 1)])]
    return _set_ratio(kind, params, n, n_rel, rel_ret)


@helper
def _set_ratio(kind, params, n, n_rel, rel_ret):
    """The measures of the retrieved set as a whole: counts only."""
    if kind == UTILITY:
        return (params[0] * rel_ret + params[1] * (n - rel_ret) + params[2] * (n_rel - rel_ret)
                + params[3] * (np.int64(params[4]) + rel_ret - n - n_rel))
    if kind == SET_P:
        return rel_ret / n
    if kind == SET_R:
        return rel_ret / n_rel if n_rel > 0 else 0.0
    if kind == SET_REL_P:
        denominator = min(n, n_rel)
        return rel_ret / denominator if denominator > 0 else 0.0
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
    return np.nan


@helper
def _gain_value(e, spec, m, ranked, ideal, sc, state):
    """The gain prefix path: DCG, ideal DCG and nDCG of the top k (gain tables: loops of
    their own, over every judged document)."""
    row = spec.table[m]
    kind, cutoff, level, gain_kind = row[KIND], row[CUTOFF], row[LEVEL], row[GAIN]
    params = spec.params[m]
    if gain_kind == GAIN_EXP and len(ideal) > 0 and ideal[0] >= MAX_EXP_LABEL:
        return np.nan  # 2**label - 1 overflows: not defined here (the registry's invalid)
    if gain_kind == GAIN_TABLE:
        count = _ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS])
        idcg = _ideal_dcg(sc[IDEAL_GAINS], count, cutoff, spec.log2)
        dcg = _dcg(ranked, cutoff, level, gain_kind, params, spec.log2)
    else:
        if state[ST_DCG_QUERY] != e or state[ST_DCG_LEVEL] != level \
                or state[ST_DCG_GAIN] != gain_kind:
            state[ST_DCG_BUILT] = _built(len(ranked), spec.depth)
            state[ST_IDEAL] = _gain_prefixes(ranked, state[ST_DCG_BUILT], ideal, spec.depth,
                                             level, gain_kind, params, spec.log2, sc)
            state[ST_DCG_QUERY] = e
            state[ST_DCG_LEVEL] = level
            state[ST_DCG_GAIN] = gain_kind
        built, count = state[ST_DCG_BUILT], state[ST_IDEAL]
        n = len(ranked)
        dcg = sc[CUM_DCG, :built + 1][n if cutoff == 0 else min(cutoff, n)]
        idcg = sc[CUM_IDCG, :count + 1][count if cutoff == 0 else min(cutoff, count)]
    if kind == DCG:
        return dcg
    if kind == IDEAL_DCG:
        return idcg
    if kind == NDCG:
        return dcg / idcg if idcg > 0.0 else 0.0
    return np.nan


@helper
def _own_value(row, params, ranked, ideal, n_rel, n_nonrel, log2, sc):
    """The measures with a loop of their own over the ranking (``sc``: scratch rows)."""
    kind, cutoff, level, gain_kind = row[KIND], row[CUTOFF], row[LEVEL], row[GAIN]
    if kind == NDCG_REL or kind == RNDCG or kind == G:
        return _ideal_relative(kind, ranked, ideal, n_rel, level, gain_kind, params, log2, sc)
    if kind == ERR or kind == NERR:
        return _err_value(kind, ranked, ideal, cutoff, params[0])
    if kind >= BPM and kind <= INSQ:
        return _cwl(ranked, kind, cutoff, params)
    if kind == JUDGED:
        return _judged(ranked, len(ranked) if cutoff == 0 else min(cutoff, len(ranked)))
    if kind == COMPATIBILITY:  # params: p, normalize
        return _compat(ranked, ideal, params[0], params[1] != 0.0, sc)
    if kind == BPREF:
        return _bpref(ranked, n_rel, n_nonrel, level)
    if kind == INFAP:
        return _infap(ranked, n_rel, level)
    if kind == RBP:  # params: p, scaled
        return _rbp(ranked, ideal, params[0], level, params[1])
    if kind == RBP_RESID:
        return _rbp_resid(ranked)
    if kind == BING:
        return _bing(ranked, n_rel, level, log2)
    if kind == IPREC_AVG:  # params: the number of recall levels, then the levels
        return _iprec_avg(ranked, n_rel, level, params[1:1 + np.int64(params[0])], row[COMPAT])
    return np.nan


@helper
def _ideal_relative(kind, ranked, ideal, n_rel, level, gain_kind, params, log2, sc):
    """nDCGRel, RnDCG and G: loops over the ranking beside every positive ideal gain."""
    count = _ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS])
    ig = sc[IDEAL_GAINS]
    if kind == NDCG_REL:
        return _ndcg_rel(ranked, ig, count, level, gain_kind, params, log2)
    if kind == RNDCG:
        return _rndcg(ranked, ig, count, n_rel, level, gain_kind, params, log2)
    return _g(ranked, ig, count, level, gain_kind, params)


@helper
def _err_value(kind, ranked, ideal, cutoff, max_grade):
    """ERR, and nERR over the ideal ranking's; NaN when a label is above ``max_grade``."""
    if len(ideal) > 0 and ideal[0] > max_grade:
        return np.nan
    n = len(ranked)
    err = _err(ranked, n if cutoff == 0 else min(cutoff, n), max_grade)
    if kind == ERR:
        return err
    positive = count_at_least(ideal, 1)
    best = _err(ideal, positive if cutoff == 0 else min(cutoff, positive), max_grade)
    return err / best if best > 0.0 else 0.0


@pjit(nrt=False)
def evaluate_queries(bounds, rankings, ideals, spec, work, out):
    """Fill ``out[e, m]`` for all queries (parallel over chunks ``bounds``) and measures.

    ``work`` has a chunk's rows (N_ROWS, longest list + 2) and state (filled with -1) per
    chunk. Compiled without numba's reference counting (nothing is allocated here): with
    it, every measure of every query would pay atomic updates for its array arguments.
    """
    for c in prange(len(bounds) - 1):
        for e in range(bounds[c], bounds[c + 1]):
            ranked = rankings.labels[rankings.indptr[e]:rankings.indptr[e + 1]]
            q = rankings.qrels_query[e]
            ideal = ideals.labels[ideals.indptr[q]:ideals.indptr[q + 1]]
            for m in range(spec.table.shape[0]):
                out[e, m] = query_value(e, spec, m, ranked, ideal, 0, 0, work.rows[c],
                                        work.state[c])


#: Aggregation codes of :func:`summaries`.
HOW = {"mean": 0, "sum": 1, "gmean": 2, "none": 3}
MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the log of gm_map / gm_bpref


@helper
def summarise(values, how, means):
    """Summaries of ``values[e, m]`` over the queries ``e``, as trec_eval's 'all' line:
    sequential sums in query order, then the mean (``how`` 0), the sum (1), the geometric
    mean of values floored at 1e-5 (2) or NaN (3: text measures). 0 without queries."""
    n = values.shape[0]
    for m in range(values.shape[1]):
        if how[m] == 3:
            means[m] = np.nan
            continue
        total = 0.0
        if how[m] == 2:
            for e in range(n):
                total += math.log(max(values[e, m], MIN_GEO_MEAN))
            means[m] = math.exp(total / n) if n > 0 else 0.0
        else:
            for e in range(n):
                total += values[e, m]
            means[m] = total if how[m] == 1 or n == 0 else total / n


@jit
def summaries(values, how):
    """:func:`summarise` for each run of ``values[r, e, m]``: an (n_runs, n_measures) array."""
    out = np.zeros((values.shape[0], values.shape[2]))
    for r in range(values.shape[0]):
        summarise(values[r], how, out[r])
    return out


@python_variant(summaries)
def summaries(values, how):
    """The same with numpy: a cumulative sum is a sequential sum (from 0.0, so that -0.0
    values sum as the loop sums them); geometric means go through ``math.log`` as the
    kernel's do."""
    n_runs, n, n_measures = values.shape
    out = np.zeros((n_runs, n_measures))
    for m in range(n_measures):
        column = values[:, :, m]
        if how[m] == 3:
            out[:, m] = np.nan
        elif n == 0:
            continue
        elif how[m] == 2:
            for r in range(n_runs):
                total = 0.0
                for v in column[r].tolist():
                    total += math.log(max(v, MIN_GEO_MEAN))
                out[r, m] = math.exp(total / n)
        else:
            padded = np.concatenate((np.zeros((n_runs, 1)), column), axis=1)
            totals = np.cumsum(padded, axis=1)[:, -1]
            out[:, m] = totals if how[m] == 1 else totals / n
    return out
