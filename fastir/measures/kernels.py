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
from fastir.measures.common import (  # noqa: F401 (GAIN_LINEAR, N_ROWS, log2_table: the engine's)
    BEST_PREC,
    CUM_AP,
    CUM_DCG,
    CUM_IDCG,
    CUM_REL,
    CUM_UNJ,
    GAIN_EXP,
    GAIN_LINEAR,
    GAIN_TABLE,
    IDEAL_GAINS,
    MAX_EXP_LABEL,
    N_ROWS,
    REL_RANK,
    count_at_least,
    gain,
    ideal_gains,
    insert_descending,
    log2_table,
)
from fastir.measures.cwl import cwl
from fastir.measures.dcg import bing, dcg_sum, dcg_value, ideal_dcg_sum, ideal_relative
from fastir.measures.err import err_value
from fastir.measures.own import bpref, compat, infap, judged, rbp, rbp_resid
from fastir.measures.precision import cutoff_value, iprec_avg, set_value
from fastir.measures.registry import (
    BING,
    BPM,
    BPREF,
    COMPATIBILITY,
    ERR,
    INFAP,
    INSQ,
    IPREC_AVG,
    JUDGED,
    NDCG_REL,
    NERR,
    NUM_Q,
    NUM_REL,
    NUM_RET,
    RBP,
    RBP_RESID,
    RNDCG,
    G,
)
from fastir.model.data import Ideals  # noqa: F401 (numba caches made before it moved name it here)

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
#: discounts: ``log2[i] == log2(i + 2)``), ``depth`` (:func:`prefix_depth`) and ``own``
#: (None when no measure is on the "own" path, else 1: see :func:`spec`).
Spec = namedtuple("Spec", "table params log2 depth own")


def spec(table, params, log2, depth):
    """The :data:`Spec` of a measure table: the one way to make one. Its ``own`` is None when
    no measure of ``table`` is on the "own" path, so that the kernels compiled for it leave
    out the loops of that path (numba drops a branch on an argument typed None, and never
    compiles what it calls: a fresh install's first ``fastir eval`` of the default measures
    compiles a smaller kernel)."""
    own = np.int64(1) if (table[:, PATH] == PATH_OWN).any() else None
    return Spec(table, params, log2, np.int64(depth), own)

#: A chunk's scratch, per chunk: ``rows`` (float64: the cumulative rows above), ``state``
#: (int64: which query and parameters the rows describe), ``codes`` (int32: a ranking's
#: labels in row 0, an ideal's in row 1) and ``index`` (int64: an order and its merge
#: buffer).
Work = namedtuple("Work", "rows state codes index")

#: The joined rankings: ``labels[indptr[e]:indptr[e + 1]]`` is query ``e``'s ranking, whose
#: judgments are row ``qrels_query[e]`` of the ideals.
Rankings = namedtuple("Rankings", "indptr labels qrels_query")



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
        g = gain(ranked[i], level, gain_kind, params)
        if g != 0.0:
            dcg += g / log2[i]
        sc[CUM_DCG, i + 1] = dcg
    m = ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS], depth)
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
            return cutoff_value(row[KIND], row[CUTOFF], spec.params[m], n, n_rel, n_nonrel,
                                rows)
        return set_value(row[KIND], row[COMPAT], spec.params[m], n, n_rel, rows)
    if path == PATH_GAINS:
        return _gain_value(e, spec, m, ranked, ideal, sc, state)
    if path == PATH_OWN:
        return _own_path(spec.own, row, spec.params[m], ranked, ideal, n_rel, n_nonrel,
                         spec.log2, sc)
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
def _gain_value(e, spec, m, ranked, ideal, sc, state):
    """The gain prefix path: DCG, ideal DCG and nDCG of the top k (gain tables: loops of
    their own, over every judged document)."""
    row = spec.table[m]
    kind, cutoff, level, gain_kind = row[KIND], row[CUTOFF], row[LEVEL], row[GAIN]
    params = spec.params[m]
    if gain_kind == GAIN_EXP and len(ideal) > 0 and ideal[0] >= MAX_EXP_LABEL:
        return np.nan  # 2**label - 1 overflows: not defined here (the registry's invalid)
    if gain_kind == GAIN_TABLE:
        count = ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS], 0)
        idcg = ideal_dcg_sum(sc[IDEAL_GAINS], count, cutoff, spec.log2)
        dcg = dcg_sum(ranked, cutoff, level, gain_kind, params, spec.log2)
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
    return dcg_value(kind, dcg, idcg)


@helper
def _own_path(own, row, params, ranked, ideal, n_rel, n_nonrel, log2, sc):
    """The "own" path: :func:`_own_value`, compiled only for a :data:`Spec` whose ``own``
    says a measure takes it (else NaN, never reached: see :func:`spec`)."""
    if own is None:
        return np.nan
    return _own_value(row, params, ranked, ideal, n_rel, n_nonrel, log2, sc)


@helper
def _own_value(row, params, ranked, ideal, n_rel, n_nonrel, log2, sc):
    """The measures with a loop of their own over the ranking (``sc``: scratch rows)."""
    kind, cutoff, level, gain_kind = row[KIND], row[CUTOFF], row[LEVEL], row[GAIN]
    if kind == NDCG_REL or kind == RNDCG or kind == G:
        return ideal_relative(kind, ranked, ideal, n_rel, level, gain_kind, params, log2, sc)
    if kind == ERR or kind == NERR:
        return err_value(kind, ranked, ideal, cutoff, params[0])
    if kind >= BPM and kind <= INSQ:
        return cwl(ranked, kind, cutoff, params)
    if kind == JUDGED:
        return judged(ranked, len(ranked) if cutoff == 0 else min(cutoff, len(ranked)))
    if kind == COMPATIBILITY:  # params: p, normalize
        return compat(ranked, ideal, params[0], params[1] != 0.0, sc)
    if kind == BPREF:
        return bpref(ranked, n_rel, n_nonrel, level)
    if kind == INFAP:
        return infap(ranked, n_rel, level)
    if kind == RBP:  # params: p, scaled
        return rbp(ranked, ideal, params[0], level, params[1])
    if kind == RBP_RESID:
        return rbp_resid(ranked)
    if kind == BING:
        return bing(ranked, n_rel, level, log2)
    if kind == IPREC_AVG:  # params: the number of recall levels, then the levels
        return iprec_avg(ranked, n_rel, level, params[1:1 + np.int64(params[0])], row[COMPAT])
    return np.nan


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
