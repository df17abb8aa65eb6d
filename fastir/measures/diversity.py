"""The diversity kernel: intent-aware measures over subtopic judgments, as ndeval computes them.

ndeval (TREC Web track, Clarke; the code behind pyndeval and ir_measures' diversity
measures) scores a ranking by its documents' novelty-discounted gains: the document at
rank i gains ``sum over the subtopics s it is relevant to of (1 - alpha)^c_s``, ``c_s``
the documents above it relevant to s. Relevant means label >= the level. S, the query's
intents, are the subtopics with a relevant judgment. The ideal ranking is ndeval's greedy
one over the query's judged documents: at each rank the document of the largest gain, ties
to the greatest docno (the documents are stored in docno order). Sums run in rank order
and subtopics in subtopic order, as ndeval's loops.
"""

import math
from collections import namedtuple

from fastir._jit import helper, pjit, prange
from fastir.measures.kernels import CUTOFF, KIND, LEVEL
from fastir.measures.registry import (
    ALPHA_DCG,
    AP_IA,
    ERR_IA,
    NERR_IA,
    NNRBP,
    NRBP,
    P_IA,
    ST_RECALL,
)

#: A query's subtopic judgments (see :class:`fastir.model.subtopics.Subtopics`): documents at
#: ``indptr[q]:indptr[q + 1]`` (the qrels rows' bounds), each with its pairs
#: ``pairs[p]:pairs[p + 1]`` of ``subtopic`` and ``label``.
Judgments = namedtuple("Judgments", "indptr pairs subtopic label n_subtopics")

# Rows of a chunk's scratch: per subtopic its current gain, whether it is covered; per
# document whether the ideal took it; the ideal's gains.
GAIN, COVERED, TAKEN, IDEAL = range(4)
N_ROWS = 4


@helper
def _intents(lo, hi, level, judgments, covered, n_subtopics):
    """S: the subtopics with a judgment >= level among documents lo:hi."""
    for s in range(n_subtopics):
        covered[s] = 0.0
    count = 0
    for t in range(judgments.pairs[lo], judgments.pairs[hi]):
        s = judgments.subtopic[t]
        if judgments.label[t] >= level and covered[s] == 0.0:
            covered[s] = 1.0
            count += 1
    return count


@helper
def _doc_gain(p, level, judgments, gain):
    """The gain of document ``p`` under the current subtopic gains (not updated)."""
    score = 0.0
    for t in range(judgments.pairs[p], judgments.pairs[p + 1]):
        if judgments.label[t] >= level:
            score += gain[judgments.subtopic[t]]
    return score


@helper
def _take(p, level, alpha, judgments, gain):
    """Discount the subtopics of document ``p`` by (1 - alpha)."""
    for t in range(judgments.pairs[p], judgments.pairs[p + 1]):
        if judgments.label[t] >= level:
            gain[judgments.subtopic[t]] *= 1.0 - alpha


@helper
def _ideal(lo, hi, level, alpha, depth, judgments, sc, n_subtopics):
    """ndeval's greedy ideal down to ``depth`` ranks (0: all): its gains in ``sc[IDEAL]``;
    returns their number (it stops where the gains left are 0)."""
    gain, taken, ideal = sc[GAIN], sc[TAKEN], sc[IDEAL]
    for s in range(n_subtopics):
        gain[s] = 1.0
    for j in range(hi - lo):
        taken[j] = 0.0
    limit = hi - lo if depth == 0 else min(depth, hi - lo)
    m = 0
    while m < limit:
        where = -1
        best = 0.0
        for j in range(hi - lo):
            if taken[j] == 0.0:
                score = _doc_gain(lo + j, level, judgments, gain)
                if where == -1 or score >= best:  # ties: the greater docno (later)
                    best = score
                    where = j
        if where == -1 or best == 0.0:
            break
        taken[where] = 1.0
        ideal[m] = best
        m += 1
        _take(lo + where, level, alpha, judgments, gain)
    return m


@helper
def _discounted(kind, gain, i):
    """A gain at rank i (from 0) discounted as ndeval does: times log(2)/log(i + 2)
    (alpha-DCG; 1 at the top) or divided by i + 1 (ERR-IA)."""
    if kind == ERR_IA or kind == NERR_IA:
        return gain / (i + 1.0)
    return gain * (math.log(2.0) / math.log(i + 2.0) if i > 0 else 1.0)


@helper
def diversity_value(spec, m, ranked, lo, hi, judgments, sc, n_subtopics):
    """Measure ``m`` of the spec on a ranking (``ranked``: documents' places among the
    query's documents lo:hi, or negative: unjudged)."""
    kind = spec.table[m, KIND]
    k = spec.table[m, CUTOFF]
    level = spec.table[m, LEVEL]
    n_intents = _intents(lo, hi, level, judgments, sc[COVERED], n_subtopics)
    if n_intents == 0:
        return 0.0
    if kind == AP_IA:
        return _ap_ia(ranked, lo, hi, level, judgments, sc, n_subtopics, n_intents)
    top = len(ranked) if k == 0 else min(k, len(ranked))
    gain = sc[GAIN]
    for s in range(n_subtopics):
        gain[s] = 1.0
    if kind == P_IA:
        return _intent_pairs(ranked, top, lo, level, judgments) / (k * n_intents)
    if kind == ST_RECALL:
        return _covered(ranked, top, lo, level, judgments, sc[COVERED], n_subtopics) / n_intents
    if kind == NRBP or kind == NNRBP:
        return _nrbp(kind, ranked, lo, hi, level, spec.params[m, 0], spec.params[m, 1],
                     judgments, sc, n_subtopics, n_intents)
    return _alpha_dcg(kind, ranked, top, k, lo, hi, level, spec.params[m, 0], judgments, sc,
                      n_subtopics, n_intents)


@helper
def _ap_ia(ranked, lo, hi, level, judgments, sc, n_subtopics, n_intents):
    """MAP-IA as ndeval computes it: per intent, the sum over the ranks i (from 0) of the
    documents relevant to it so far / (i + 1) at each one relevant to it, over its
    relevant judged documents; these summed in subtopic order, over the intents."""
    judged, found, total = sc[TAKEN], sc[GAIN], sc[IDEAL]
    for s in range(n_subtopics):
        judged[s] = 0.0
        found[s] = 0.0
        total[s] = 0.0
    for t in range(judgments.pairs[lo], judgments.pairs[hi]):
        if judgments.label[t] >= level:
            judged[judgments.subtopic[t]] += 1.0
    for i in range(len(ranked)):
        if ranked[i] >= 0:
            p = lo + ranked[i]
            for t in range(judgments.pairs[p], judgments.pairs[p + 1]):
                if judgments.label[t] >= level:
                    s = judgments.subtopic[t]
                    found[s] += 1.0
                    total[s] += found[s] / (i + 1.0)
    value = 0.0
    for s in range(n_subtopics):
        if judged[s] > 0.0:
            value += total[s] / judged[s]
    return value / n_intents


@helper
def _intent_pairs(ranked, top, lo, level, judgments):
    """P-IA's count: relevant (document, subtopic) pairs in the top ranks."""
    count = 0
    for i in range(top):
        if ranked[i] >= 0:
            p = lo + ranked[i]
            for t in range(judgments.pairs[p], judgments.pairs[p + 1]):
                if judgments.label[t] >= level:
                    count += 1
    return count


@helper
def _covered(ranked, top, lo, level, judgments, covered, n_subtopics):
    """Subtopic recall's count: subtopics some document of the top ranks is relevant to."""
    for s in range(n_subtopics):
        covered[s] = 0.0
    count = 0
    for i in range(top):
        if ranked[i] >= 0:
            p = lo + ranked[i]
            for t in range(judgments.pairs[p], judgments.pairs[p + 1]):
                s = judgments.subtopic[t]
                if judgments.label[t] >= level and covered[s] == 0.0:
                    covered[s] = 1.0
                    count += 1
    return count


@helper
def _nrbp(kind, ranked, lo, hi, level, alpha, beta, judgments, sc, n_subtopics, n_intents):
    """NRBP over the whole ranking, and nNRBP over the greedy ideal's."""
    gain = sc[GAIN]
    total = 0.0
    decay = 1.0
    for i in range(len(ranked)):
        if ranked[i] >= 0:
            total += _doc_gain(lo + ranked[i], level, judgments, gain) * decay
            _take(lo + ranked[i], level, alpha, judgments, gain)
        decay *= beta
    value = total * ((1 - (1 - alpha) * beta) / n_intents)
    if kind == NRBP:
        return value
    best = 0.0
    decay = 1.0
    for i in range(_ideal(lo, hi, level, alpha, 0, judgments, sc, n_subtopics)):
        best += sc[IDEAL, i] * decay
        decay *= beta
    best = best * ((1 - (1 - alpha) * beta) / n_intents)
    return value / best if best > 0.0 else 0.0


@helper
def _alpha_dcg(kind, ranked, top, k, lo, hi, level, alpha, judgments, sc, n_subtopics,
               n_intents):
    """alpha-DCG and ERR-IA over the "ideal ideal" (every rank relevant to all S
    subtopics), and alpha-nDCG and nERR-IA over the greedy ideal's."""
    gain = sc[GAIN]
    score = 0.0
    for i in range(top):
        if ranked[i] >= 0:
            score += _discounted(kind, _doc_gain(lo + ranked[i], level, judgments, gain), i)
            _take(lo + ranked[i], level, alpha, judgments, gain)
    most = 0.0
    intents = 1.0 * n_intents
    for i in range(k):
        most += _discounted(kind, intents, i)
        intents *= 1.0 - alpha
    if kind == ALPHA_DCG or kind == ERR_IA:
        return score / most
    if score == 0.0:
        return 0.0
    best = 0.0
    for i in range(_ideal(lo, hi, level, alpha, k, judgments, sc, n_subtopics)):
        best += _discounted(kind, sc[IDEAL, i], i)
    return (score / most) / (best / most)


@pjit(nrt=False)
def diversity_queries(bounds, rankings, judgments, spec, columns, scratch, out):
    """Fill ``out[e, columns[i]]`` with the diversity measures of the spec (parallel over
    chunks ``bounds`` of queries; ``scratch``: N_ROWS rows per chunk)."""
    for c in prange(len(bounds) - 1):
        for e in range(bounds[c], bounds[c + 1]):
            ranked = rankings.labels[rankings.indptr[e]:rankings.indptr[e + 1]]
            q = rankings.qrels_query[e]
            lo = judgments.indptr[q]
            hi = judgments.indptr[q + 1]
            for i in range(len(columns)):
                out[e, columns[i]] = diversity_value(spec, columns[i], ranked, lo, hi,
                                                     judgments, scratch[c],
                                                     judgments.n_subtopics[q])
