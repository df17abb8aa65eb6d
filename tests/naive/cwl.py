"""The C/W/L measures of cwl_eval (ir_measures' cwl_eval provider)."""

from __future__ import annotations

import math

from .base import NONPOOL

#: The C/W/L measures of cwl_eval (ir_measures' cwl_eval provider).
CWL_FAMILIES = ("BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ")


CWL_DEPTH = 1000  # cwl_eval's ranking length (cut or padded with gain-0 documents)


def _cwl(family: str, codes: list[int], k: int | None, min_rel: int, max_rel: int,
         T: float, p: float) -> float:
    """cwl_eval's expected utility per item: C(i) is the probability of going on from rank
    i, P(i) = C(1)...C(i-1), W(i) = P(i) / sum_j P(j) over ranks 1..1000, EU = sum W(i) g(i).
    Gains: (clip(max(label, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel), 0 for
    a doc not in the qrels; the ranking is cut or padded to 1000 ranks."""
    gains = []
    for c in codes[:CWL_DEPTH]:
        if c == NONPOOL:
            gains.append(0.0)
        else:
            label = min(max(max(c, 0), min_rel), max_rel)
            gains.append((label - min_rel) / (max_rel - min_rel))
    gains += [0.0] * (CWL_DEPTH - len(gains))
    cont = []
    so_far = 0.0
    for i, g in enumerate(gains, start=1):
        so_far += g
        before_k = k is not None and i < k
        if family == "BPM":  # stop at the target gain T, or at rank K
            c = 1.0 if so_far < T and before_k else 0.0
        elif family == "SDCG":  # DCG's discount 1/log2(i+1) as continuation
            c = math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if before_k else 0.0
        elif family == "NERR8":
            c = 1.0 - g if before_k else 0.0
        elif family == "NERR9":
            c = (1.0 * i / (i + 1.0)) * (1.0 - g) if before_k else 0.0
        elif family == "NERR10":
            c = p * (1 - g)
        elif family == "NERR11":
            c = (i + 2.0 * T - 1.0) / (i + 2.0 * T)
            c = c * c * (1.0 - g)
        elif family == "INST":  # T_i = T - gain so far
            c = (i + T + (T - so_far) - 1.0) / (i + T + (T - so_far))
            c = c * c
        else:  # INSQ
            c = (i + 2.0 * T - 1.0) / (i + 2.0 * T)
            c = c * c
        cont.append(c)
    reach = [1.0]
    for c in cont[:-1]:
        reach.append(reach[-1] * c)
    utility = 0.0
    total = 0.0
    for r, g in zip(reach, gains):
        utility += r * g
        total += r
    return utility / total
