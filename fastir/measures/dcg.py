"""The gain measures: DCG, its ideal and nDCG (path "gains": read in the driver's gain
prefix rows, or summed here for gain tables), and the loops beside every positive ideal
gain of trec_eval's nDCGRel, RnDCG and G, with binary G (path "own")."""

import math

import numpy as np

from fastir._jit import helper
from fastir.measures.common import IDEAL_GAINS, gain, ideal_gains
from fastir.measures.registry import DCG, IDEAL_DCG, NDCG, NDCG_REL, RNDCG


@helper
def dcg_value(kind, dcg, idcg):
    """DCG, ideal DCG or nDCG from the DCG of the top k and its ideal's."""
    if kind == DCG:
        return dcg
    if kind == IDEAL_DCG:
        return idcg
    if kind == NDCG:
        return dcg / idcg if idcg > 0.0 else 0.0
    return np.nan


@helper
def dcg_sum(ranked, cutoff, level, gain_kind, table, log2):
    n = len(ranked) if cutoff == 0 else min(cutoff, len(ranked))
    dcg = 0.0
    for i in range(n):
        g = gain(ranked[i], level, gain_kind, table)
        if g != 0.0:
            dcg += g / log2[i]
    return dcg


@helper
def ideal_dcg_sum(ig, m, cutoff, log2):
    top = m if cutoff == 0 else min(cutoff, m)
    idcg = 0.0
    for i in range(top):
        idcg += ig[i] / log2[i]
    return idcg


@helper
def ideal_relative(kind, ranked, ideal, n_rel, level, gain_kind, params, log2, sc):
    """nDCGRel, RnDCG and G: loops over the ranking beside every positive ideal gain."""
    count = ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS], 0)
    ig = sc[IDEAL_GAINS]
    if kind == NDCG_REL:
        return _ndcg_rel(ranked, ig, count, level, gain_kind, params, log2)
    if kind == RNDCG:
        return _rndcg(ranked, ig, count, n_rel, level, gain_kind, params, log2)
    return _g(ranked, ig, count, level, gain_kind, params)


@helper
def _ndcg_rel(ranked, ig, m, level, gain_kind, table, log2):
    """m_ndcg_rel.c: nDCG averaged over the ranks of the relevant docs."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    n_rel_ret = 0
    for i in range(len(ranked)):
        g = gain(ranked[i], level, gain_kind, table)
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
        g = gain(ranked[i], level, gain_kind, table)
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
            g = gain(ranked[i], level, gain_kind, table)
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
        g = gain(ranked[i], level, gain_kind, table)
        sum_results += g
        ideal_gain = ig[i] if i < m else 0.0
        if ideal_gain > 0.0:
            sum_ideal += ideal_gain
        sum_cost += ideal_gain if ideal_gain >= 1.0 else 1.0
        if g != 0.0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    while i < n:
        g = gain(ranked[i], level, gain_kind, table)
        sum_results += g
        sum_cost += 1.0
        if g != 0.0:
            results_g += g / math.log2(2 + sum_cost - sum_results)
        i += 1
    for k in range(i, m):
        sum_ideal += ig[k]
    return results_g / sum_ideal if sum_ideal > 0.0 else 0.0


@helper
def bing(ranked, n_rel, level, log2):
    """m_binG.c: sum over relevant docs of 1/log2(2 + non-relevant docs above it)."""
    rel = 0
    total = 0.0
    for i in range(len(ranked)):
        if ranked[i] >= level:
            rel += 1
            total += 1.0 / log2[1 + i - rel]  # log2(3 + i - rel_so_far)
    return total / n_rel if rel > 0 else 0.0
