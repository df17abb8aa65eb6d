"""The measures with a loop of their own over the ranking's labels (path "own") that no
other family module holds: bpref, infAP, RBP and its residual, Judged, Compat."""

import numpy as np

from fastir._jit import helper
from fastir.measures.common import SCRATCH_A, SCRATCH_B, count_at_least

INFAP_EPSILON = 0.00001


@helper
def bpref(ranked, n_rel, n_nonrel, level):
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
def infap(ranked, n_rel, level):
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
def rbp(ranked, ideal, p, level, scaled):
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
def rbp_resid(ranked):
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
def judged(ranked, top):
    """ir_measures' Judged@k: the share of the top k with a judgment (any label, negative
    ones included), over min(k, n) (trec_eval's unj divides by k and counts negative labels
    as unjudged)."""
    judged = 0
    for i in range(top):
        if ranked[i] != -1:
            judged += 1
    return judged / top


@helper
def compat(ranked, ideal, p, normalize, sc):
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
