"""The C/W/L family (cwl_eval's measures, path "own"): BPM, SDCG, NERR8 .. NERR11, INST and
INSQ, one loop that differs by its continuation probability C(i)."""

import math

import numpy as np

from fastir._jit import helper
from fastir.measures.registry import BPM, INST, NERR8, NERR9, NERR10, NERR11, SDCG

CWL_DEPTH = 1000  # cwl_eval's ranking length: rankings are cut or padded to it


@helper
def cwl(ranked, kind, k, params):
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
