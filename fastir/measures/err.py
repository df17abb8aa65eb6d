"""Expected reciprocal rank (gdeval.pl's stop probabilities) and nERR over the ideal's
(path "own")."""

import numpy as np

from fastir._jit import helper
from fastir.measures.common import count_at_least
from fastir.measures.registry import ERR


@helper
def err_value(kind, ranked, ideal, cutoff, max_grade):
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
