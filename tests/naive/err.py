"""ERR and nERR as gdeval.pl computes them."""

from __future__ import annotations


def _err(codes: list[int], k: int | None, max_grade: float) -> float:
    """gdeval.pl's ERR@k (Chapelle et al. 2009): the user stops at rank i with probability
    R_i = (2^g - 1) / 2^max_grade (g = the label, 0 when not > 0);
    ERR = sum_i R_i / i * prod_{j < i} (1 - R_j), summed in rank order as gdeval does."""
    score = 0.0
    decay = 1.0
    for i, c in enumerate(codes[:k]):
        r = (2.0 ** c - 1.0) / (2.0 ** max_grade) if c > 0 else 0.0
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def _nerr(codes: list[int], qrels_q: dict[str, int], k: int | None, max_grade: float) -> float:
    """ERR@k over the ERR@k of the ideal ranking (the labels > 0, descending); 0 when the
    query has no positive label."""
    ideal = sorted((label for label in qrels_q.values() if label > 0), reverse=True)
    best = _err(ideal, k, max_grade)
    return _err(codes, k, max_grade) / best if best > 0 else 0.0
