"""Kernels for repeated evaluation: fixed candidates with changing scores, and dense batches.

Both build, per (run, query), the ranked label codes of :mod:`fastir.model.join` in a scratch row
and hand it to :func:`fastir.measures.kernels.query_value`, so every measure is exactly the one of
:func:`fastir.evaluate`. Both rank in trec_eval's order (:func:`fastir.model.ranking.ranks_before`)
on (score, tie position): a candidate's tie position is its place in its query's
docno-descending order (from the join); a dense batch's columns stand for docs in
docno-descending order, so a column's tie position is its index: its key holds the scores
alone (equal scores then never rank before one another) and the columns enter the stable
sort and the top selection in column order, which keeps ties in that order without reading
a tie array.

Ranking fixed candidates does not need a sort when few candidates are judged (MS MARCO has
about one per query): a judged doc's rank is the number of candidates that rank before it,
one pass over the query; all other ranks hold unjudged documents. Queries with many judged
candidates are sorted, or, when the measures read only the first few ranks (nDCG@10), the
first few are selected. Fixed candidates take their score vectors as weighted sums of parts
(:data:`Weights`), so a fusion weight search scores each weight vector without building it.
"""

import math
from collections import namedtuple

from fastir._jit import helper, jit, pjit, prange
from fastir.measures.kernels import (
    KIND,
    Spec,
    Work,
    count_at_least,
    insert_descending,
    query_value,
    summarise,
)
from fastir.measures.registry import DCG, NDCG
from fastir.measures.ties import expected_value
from fastir.model.ranking import RankKey, rank_sort, ranks_before
from fastir.model.values import float32_score

#: Fixed candidates (see :class:`fastir.loops.evaluator.BoundCandidates`): query ``e``'s
#: candidates are the score columns ``rows[indptr[e]:indptr[e + 1]]``; each score column has
#: its label code (``codes``) and its tie position (``tie``: its place in its query's
#: docno-descending order); each query its row in the ideals (``qrels_query``) and its
#: judged candidates' score columns (``judged_rows[judged_indptr[e]:judged_indptr[e + 1]]``,
#: those whose code is not -1). Rankings keep ``limit`` candidates, then drop the unjudged
#: ones when ``judged_only``; when ``depth`` is not 0 (the measures read no rank below it:
#: :func:`fastir.engine.rank_depth`) and not ``judged_only``, only the first ``depth`` are
#: ranked.
Candidates = namedtuple("Candidates", "indptr rows codes tie qrels_query judged_indptr "
                                      "judged_rows limit judged_only depth")

#: Score vectors as weighted sums of parts (rows of a (n_parts, n_columns) array): vector
#: ``r`` is the sum over ``k`` in ``indptr[r]:indptr[r + 1]`` of ``weight[k] *
#: parts[part[k]]``, added in ``k`` order to 0.0 (as numpy adds ``w[k] * parts[k]`` term
#: by term), so a vector of the parts themselves is one term of weight 1.
Weights = namedtuple("Weights", "indptr part weight")

#: A dense batch: (batch, n_candidates) ``scores`` (float64), ``labels`` (int64, checked
#: here: from 0 to 2**31 - 1) and ``mask`` (True: a real candidate), and each row's
#: ``n_relevant`` (0: its candidates'). Columns tie in column order.
Batch = namedtuple("Batch", "scores labels mask n_relevant")

_SORT_ABOVE = 24  # judged candidates beyond which sorting beats counting ranks
_SELECT_UPTO = 64  # ranks kept up to which a top selection beats sorting every candidate


@helper
def _ranked_codes(key, candidates, e, out, order, buf):
    """Fill ``out`` with the ranked label codes of query ``e``'s candidates, ranked by
    ``key`` (a :data:`~fastir.model.ranking.RankKey` over score columns: one score vector,
    the candidates' tie positions); returns the ranking's length (after ``limit`` and
    ``depth``, then ``judged_only``)."""
    rows, codes = candidates.rows, candidates.codes
    judged_only = candidates.judged_only
    lo = candidates.indptr[e]
    hi = candidates.indptr[e + 1]
    n = hi - lo
    judged = candidates.judged_indptr[e + 1] - candidates.judged_indptr[e]
    m = min(n, candidates.limit)
    if candidates.depth > 0 and not judged_only:
        m = min(m, candidates.depth)
    if judged > _SORT_ABOVE:
        for i in range(n):
            order[i] = rows[lo + i]
        if m < n and m <= _SELECT_UPTO:
            _select_top(key, order, n, m, buf)
        else:
            rank_sort(order[:n], key, buf)
        k = 0
        for i in range(m):
            code = codes[order[i]]
            if judged_only and code < 0:
                continue
            out[k] = code
            k += 1
        return k
    return _counted_codes(key, candidates, e, m, out, order, buf)


@helper
def _counted_codes(key, candidates, e, m, out, order, buf):
    """:func:`_ranked_codes` for few judged candidates: count the candidates ranked before
    each of them (its rank); the first ``m`` ranks are kept."""
    rows, codes, judged_only = candidates.rows, candidates.codes, candidates.judged_only
    lo = candidates.indptr[e]
    hi = candidates.indptr[e + 1]
    if not judged_only:
        for i in range(m):
            out[i] = -1
    k = 0
    for j in range(candidates.judged_indptr[e], candidates.judged_indptr[e + 1]):
        row = candidates.judged_rows[j]
        code = codes[row]
        if judged_only and code < 0:
            continue
        rank = 0
        for i in range(lo, hi):
            if ranks_before(key, rows[i], row):
                rank += 1
        if rank < m:
            if judged_only:  # keep (rank, code) pairs, ordered below
                order[k] = rank
                buf[k] = code
                k += 1
            else:
                out[rank] = code
    if not judged_only:
        return m
    for a in range(1, k):  # insertion sort of the few judged docs by rank
        r, c = order[a], buf[a]
        b = a - 1
        while b >= 0 and order[b] > r:
            order[b + 1] = order[b]
            buf[b + 1] = buf[b]
            b -= 1
        order[b + 1] = r
        buf[b + 1] = c
    for a in range(k):
        out[a] = buf[a]
    return k


@helper
def _weighted_scores(rows, parts, weights, r, as_float32, scores):
    """``scores[row]`` for each of ``rows``: score vector ``r`` of :data:`Weights` over
    ``parts``, rounded to float32 when ``as_float32`` (:func:`fastir.model.values.float32_score`).
    Returns False when one is beyond a double (``scores`` then partly written)."""
    for i in range(len(rows)):
        row = rows[i]
        s = 0.0
        for k in range(weights.indptr[r], weights.indptr[r + 1]):
            s += weights.weight[k] * parts[weights.part[k], row]
        if not math.isfinite(s):
            return False
        scores[row] = float32_score(s) if as_float32 else s
    return True


@pjit(nrt=False)
def bound_values(tasks, candidates, parts, weights, as_float32, ideals, spec, work, scores,
                 bad, out):
    """``out[r, e, m]``: measure m of query e under score vector r (of :data:`Weights` over
    ``parts``). ``tasks`` splits the queries into chunks; a query's entries of ``scores``
    (one score column each: its candidates') hold one vector's scores while it is ranked.
    A vector that is one part of weight 1 is ranked in place (unless ``as_float32``).
    ``bad[c]``: the first vector whose scores in chunk ``c`` go beyond a double (-1: none;
    those queries are left unevaluated)."""
    n_vectors = len(weights.indptr) - 1
    for c in prange(len(tasks) - 1):
        ranked = work.codes[c, 0]
        for e in range(tasks[c], tasks[c + 1]):
            rows = candidates.rows[candidates.indptr[e]:candidates.indptr[e + 1]]
            q = candidates.qrels_query[e]
            ideal = ideals.labels[ideals.indptr[q]:ideals.indptr[q + 1]]
            for r in range(n_vectors):
                k = weights.indptr[r]
                if weights.indptr[r + 1] == k + 1 and weights.weight[k] == 1.0 and \
                        not as_float32:
                    vector = parts[weights.part[k]]  # a part itself: ranked where it is
                elif _weighted_scores(rows, parts, weights, r, as_float32, scores):
                    vector = scores
                else:
                    if bad[c] < 0 or r < bad[c]:
                        bad[c] = r
                    continue
                n = _ranked_codes(RankKey(vector, candidates.tie, None), candidates, e,
                                  ranked, work.index[c, 0], work.index[c, 1])
                for m in range(spec.table.shape[0]):
                    out[r, e, m] = query_value(e * n_vectors + r, spec, m, ranked[:n], ideal,
                                               0, 0, work.rows[c], work.state[c])


#: How a dense batch orders equal scores (its kernels' ``ties``): by column; by column,
#: DCG and nDCG averaging each group's gains (sklearn's, which is their value expected over
#: the orders of each group: :mod:`fastir.measures.ties`, with the family's own gains);
#: every order, the values expected over them.
TIES_COLUMN, TIES_AVERAGE, TIES_EXPECTED = range(3)

BAD_SCORE = -1  # a non-finite score (under the mask)
BAD_LABEL = -2  # a negative label, or one beyond 32 bits
MAX_LABEL = 2**31 - 1


@helper
def _matrix_row(b, batch, level, depth, ideal_cap, ranked, ideal, order, buf):
    """Ranked labels (score descending, ties by column: see :data:`Batch`; only the top
    ``depth`` when it is not 0) and the ideal labels (descending) of batch row ``b``;
    returns their lengths and how many relevant documents outside the candidates were left
    out of the ideal (at most ``ideal_cap`` are laid out, all when it is negative: the
    measures need no more), or (BAD_SCORE or BAD_LABEL, 0, 0) for invalid input.

    One pass over the columns validates them and counts labels (in ``ranked``, free until
    the ranking is written), then the ideal is laid out from the counts and the ranking
    is selected or sorted.
    """
    scores, labels, mask = batch.scores[b], batch.labels[b], batch.mask[b]
    n = 0
    top_label = -1
    relevant = 0
    small = True  # every label fits the counting array
    for j in range(len(scores)):
        if not mask[j]:
            continue
        label = labels[j]
        if label < 0 or label > MAX_LABEL:
            return BAD_LABEL, 0, 0
        if not math.isfinite(scores[j]):
            return BAD_SCORE, 0, 0
        order[n] = j
        n += 1
        if label >= level:
            relevant += 1
        if label >= len(ranked):
            small = False
        elif small:
            while top_label < label:
                top_label += 1
                ranked[top_label] = 0
            ranked[label] += 1
    outside = max(0, batch.n_relevant[b] - relevant)  # relevant docs outside the candidates
    shown = outside if ideal_cap < 0 else min(outside, ideal_cap)
    m = 0
    if small:  # counting sort, descending
        for v in range(top_label, -1, -1):
            for _ in range(ranked[v]):
                ideal[m] = v
                m += 1
    else:
        for i in range(n):
            m = insert_descending(ideal, m, labels[order[i]])
    # the outside documents (label: the relevance level) go after the labels above it
    if shown > 0:
        at = count_at_least(ideal[:m], level)
        for i in range(m - 1, at - 1, -1):
            ideal[i + shown] = ideal[i]
        for i in range(at, at + shown):
            ideal[i] = level
        m += shown
    key = RankKey(scores, None, None)  # (ties: column order, see the module's doc)
    if depth > 0 and depth < n:
        k = _select_top(key, order, n, depth, buf)
    else:
        rank_sort(order[:n], key, buf)
        k = n
    for i in range(k):
        ranked[i] = labels[order[i]]
    return k, m, outside - shown


@helper
def _select_top(key, order, n, depth, buf):
    """Keep in ``order[:depth]`` the ``depth`` first of the columns ``order[:n]`` in ranking
    order (``key``): an insertion into a sorted top list, O(n) when most columns do not
    enter it."""
    k = 0
    for i in range(n):
        j = order[i]
        if k == depth and not ranks_before(key, j, buf[depth - 1]):
            continue  # not before the last kept
        p = k if k < depth else depth - 1
        while p > 0 and ranks_before(key, j, buf[p - 1]):
            if p < depth:
                buf[p] = buf[p - 1]
            p -= 1
        buf[p] = j
        if k < depth:
            k += 1
    for i in range(k):
        order[i] = buf[i]
    return k


@helper
def _tie_groups(scores, order, n, groups):
    """Per ranked position its tie group (the position of its group's first column);
    whether two positions share one."""
    tied = False
    for i in range(n):
        same = i > 0 and scores[order[i]] == scores[order[i - 1]]
        groups[i] = groups[i - 1] if same else i
        tied = tied or same
    return tied


@helper
def _matrix_row_values(b, batch, relevance, rank_depth, ideal_cap, ties, spec, work, c, out):
    ranked, ideal = work.codes[c, 0], work.codes[c, 1]
    order = work.index[c, 0]
    n, m, outside = _matrix_row(b, batch, relevance, rank_depth, ideal_cap, ranked, ideal,
                                order, work.index[c, 1])
    if n < 0:
        return n
    groups = work.index[c, 1]  # (the tie groups: the ranking's scratch, free again)
    tied = ties != TIES_COLUMN and _tie_groups(batch.scores[b], order, n, groups)
    averaged = ties == TIES_AVERAGE and tied  # (untied, the average is the ranking's value)
    for k in range(spec.table.shape[0]):
        kind = spec.table[k, KIND]
        if ties == TIES_EXPECTED or (averaged and (kind == NDCG or kind == DCG)):
            # (with TIES_EXPECTED every relevant document is laid out: outside is 0)
            out[b, k] = expected_value(b, spec, k, ranked[:n], groups[:n], ideal[:m],
                                       work.rows[c], work.state[c])
        else:
            out[b, k] = query_value(b, spec, k, ranked[:n], ideal[:m], outside, relevance,
                                    work.rows[c], work.state[c])
    return 0


@pjit(nrt=False)
def matrix_values_parallel(bounds, batch, relevance, rank_depth, ideal_cap, ties, spec,
                           work, how, means, status, out):
    """Per-row values of a dense batch (parallel over chunks of rows), then ``means``: the
    summaries over rows (see :func:`fastir.measures.kernels.summarise`). Returns 0, or BAD_SCORE /
    BAD_LABEL (``status`` has a zeroed slot per chunk)."""
    for c in prange(len(bounds) - 1):
        for b in range(bounds[c], bounds[c + 1]):
            code = _matrix_row_values(b, batch, relevance, rank_depth, ideal_cap, ties, spec,
                                      work, c, out)
            if code != 0:
                status[c] = code
    for c in range(len(status)):
        if status[c] != 0:
            return status[c]
    summarise(out, how, means)
    return 0


@jit(nrt=False)
def matrix_values_serial(batch_fields, relevance, rank_depth, ideal_cap, ties, spec_fields,
                         work_fields, how, means, out):
    """The same, in the calling thread (small batches: no parallel launch). The
    :data:`Batch`, :data:`~fastir.measures.kernels.Spec` and
    :data:`~fastir.measures.kernels.Work` come as plain tuples of their fields: numba types
    those in C when a call starts, namedtuples in Python (1.3 us a call, a tenth of a small
    batch's)."""
    batch, spec = Batch(*batch_fields), Spec(*spec_fields)
    work = Work(*work_fields)
    for b in range(batch.scores.shape[0]):
        code = _matrix_row_values(b, batch, relevance, rank_depth, ideal_cap, ties, spec,
                                  work, 0, out)
        if code != 0:
            return code
    summarise(out, how, means)
    return 0
