"""ndeval's intent-aware measures (TREC Web track; pyndeval, ir_measures' diversity)."""

from __future__ import annotations

import math

#: ndeval's intent-aware measures (TREC Web track; pyndeval, ir_measures' diversity).
DIVERSITY_FAMILIES = ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP",
                      "P_IA", "StRecall", "AP_IA")


def _subtopic_order(names) -> list:
    """A query's subtopics by number when they are integers, else by their bytes (the
    order gains are summed in)."""
    try:
        return sorted(names, key=int)
    except (TypeError, ValueError):
        return sorted(names, key=lambda s: str(s).encode("utf-8"))


def diversity(family: str, judged: dict, ranked: list, *, cutoff: int | None = None,
              rel: int = 1, alpha: float = 0.5, beta: float = 0.5) -> float:
    """ndeval's measures on one query: ``judged`` is {doc: {subtopic: label}}, ``ranked``
    the ranked doc ids. A doc is relevant to a subtopic when its label there is >= rel; the
    intents S are the subtopics some doc is relevant to (0 intents: 0). The doc at rank i
    gains sum over its relevant subtopics s of (1 - alpha)^(docs above relevant to s).

    - alpha_DCG@k: sum_{i<k} gain_i / log2(i + 2), over the same for a ranking with every
      doc relevant to all S intents ("ideal ideal"); ERR_IA@k: the same with 1 / (i + 1).
      (ndeval leaves k = 1 undivided: fastir divides there too.)
    - alpha_nDCG@k, nERR_IA@k: the run's over the greedy ideal's, 0 when the run gains 0.
      The greedy ideal takes, rank after rank, the judged doc of the largest gain (ties:
      the greatest docno in byte order).
    - NRBP: (1 - (1 - alpha) beta) / S * sum_i beta^i gain_i over the whole ranking;
      nNRBP: over the greedy ideal's (0 when that is 0; ndeval gives NaN).
    - P_IA@k: relevant (doc, subtopic) pairs in the top k over k S; StRecall@k: subtopics
      with a relevant doc in the top k over S.
    - AP_IA (ndeval's MAP-IA): per intent s with R_s judged docs relevant to it, the sum of
      (docs relevant to s in the top i) / i at each rank i of a doc relevant to s, over
      R_s; the mean of these over the S intents.
    """
    subtopics = _subtopic_order({s for pairs in judged.values() for s in pairs})
    relevant = {doc: [s for s in subtopics if pairs.get(s, rel - 1) >= rel]
                for doc, pairs in judged.items()}
    intents = len({s for doc in relevant for s in relevant[doc]})
    if intents == 0:
        return 0.0
    k = cutoff
    top = ranked[:k]

    def gains(docs):
        gain = {s: 1.0 for s in subtopics}
        out = []
        for doc in docs:
            score = 0.0
            for s in relevant.get(doc, []):
                score += gain[s]
                gain[s] *= 1.0 - alpha
            out.append(score)
        return out

    def greedy_ideal(depth):
        gain = {s: 1.0 for s in subtopics}
        left = sorted(judged, key=lambda d: str(d).encode("utf-8"))
        out = []
        while left and (depth is None or len(out) < depth):
            chosen, best = None, 0.0
            for doc in left:
                score = 0.0
                for s in relevant[doc]:
                    score += gain[s]
                if chosen is None or score >= best:
                    chosen, best = doc, score
            if best == 0.0:
                break
            left.remove(chosen)
            out.append(best)
            for s in relevant[chosen]:
                gain[s] *= 1.0 - alpha
        return out

    def discounted(g, i):
        if family in ("ERR_IA", "nERR_IA"):
            return g / (i + 1.0)
        return g * (math.log(2.0) / math.log(i + 2.0) if i > 0 else 1.0)

    if family == "P_IA":
        return sum(len(relevant.get(doc, [])) for doc in top) / (k * intents)
    if family == "AP_IA":  # ndeval's MAP-IA: each intent's AP (over its R_s), their mean
        total = 0.0
        for s in subtopics:
            r_s = sum(1 for doc in relevant if s in relevant[doc])
            if r_s == 0:
                continue
            found, ap = 0, 0.0
            for i, doc in enumerate(ranked):
                if s in relevant.get(doc, []):
                    found += 1
                    ap += found / (i + 1.0)
            total += ap / r_s
        return total / intents
    if family == "StRecall":
        return len({s for doc in top for s in relevant.get(doc, [])}) / intents
    if family in ("NRBP", "nNRBP"):
        def nrbp(values):
            total, decay = 0.0, 1.0
            for g in values:
                total += g * decay
                decay *= beta
            return total * ((1 - (1 - alpha) * beta) / intents)

        value = nrbp(gains(ranked))
        if family == "NRBP":
            return value
        best = nrbp(greedy_ideal(None))
        return value / best if best > 0 else 0.0
    score = 0.0
    for i, g in enumerate(gains(top)):
        score += discounted(g, i)
    most = 0.0
    weight = 1.0 * intents
    for i in range(k):
        most += discounted(weight, i)
        weight *= 1.0 - alpha
    if family in ("alpha_DCG", "ERR_IA"):
        return score / most
    if score == 0.0:
        return 0.0
    best = 0.0
    for i, g in enumerate(greedy_ideal(k)):
        best += discounted(g, i)
    return (score / most) / (best / most)
