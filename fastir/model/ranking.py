"""trec_eval's ranking order, written once: score descending, ties broken by document id
descending in byte (``strcmp``) order.

:func:`ranks_before` is the comparison ("does row a rank before row b") and
:func:`rank_sort` the one sort; every path ranks with them: the join
(:func:`rank_rows`), the TREC writer (:func:`ranked_rows`), fusion
(:func:`rank_segments`), bound candidates and dense batches
(:mod:`fastir.measures.dense`). A :data:`RankKey` says what a row's rank depends on: its
score and, for equal scores, its doc id, or its precomputed tie position (its place in
its query's docno-descending order) where a path has one: bound candidates (from the
join); or the score alone, where the rows come
in docno-descending order already (dense batches: columns stand for docs in that order),
so that the stable sort keeps equal scores as they came. Ascending id order (queries) is
the same sort with equal scores, read backwards (:func:`sort_ids`).

Python variants rank with :func:`python_ranked`, the same order as sort keys.
"""

from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit, pjit, prange, python_variant
from fastir.model.ids import column_length, id_cmp, order_keys, rows_of

#: What ranks rows ``a``, ``b``: ``scores[a]``, ``scores[b]``; for equal scores, either
#: ``tie[a]``, ``tie[b]`` (positions in docno-descending order: the lower first) or, when
#: ``tie`` is None, the doc ids ``docs`` (an :data:`~fastir.model.ids.IdColumn`: the greater
#: in strcmp order first); both None: equal scores are equal (the rows' given order stays).
RankKey = namedtuple("RankKey", "scores tie docs")

_RUN = 16  # rows per insertion-sorted run of rank_sort, before the merges


@helper
def ranks_before(key, a, b):
    """Whether row ``a`` ranks before row ``b`` (:data:`RankKey` ``key``): a higher score,
    or an equal score and a greater doc id (a lower tie position)."""
    score_a = key.scores[a]
    score_b = key.scores[b]
    if score_a != score_b:
        return score_a > score_b
    return _tie_before(key.tie, key.docs, a, b)


@helper
def _tie_before(tie, docs, a, b):
    # numba compiles one branch: with ``tie`` None the test is decided by the type.
    if tie is None:
        return _doc_before(docs, a, b)
    return tie[a] < tie[b]


@helper
def _doc_before(docs, a, b):
    if docs is None:  # (the score alone ranks)
        return False
    return id_cmp(docs, a, docs, b) > 0


@helper
def rank_sort(order, key, buf):
    """Sort the rows ``order`` stably into ranking order (:func:`ranks_before` on ``key``),
    with ``buf`` (at least as long) as scratch.

    Runs of 16 rows are sorted by insertion, then merged bottom-up; a merge moves only the
    rows that overlap the other half (found by binary search), none when the halves are
    in order. Rows already ranked (the usual run file) cost one pass: ``n - 1``
    comparisons, and one per merge.
    """
    n = len(order)
    for lo in range(0, n, _RUN):
        hi = min(lo + _RUN, n)
        for i in range(lo + 1, hi):
            row = order[i]
            if not ranks_before(key, row, order[i - 1]):
                continue  # in place already
            j = i - 1
            order[i] = order[j]
            while j > lo and ranks_before(key, row, order[j - 1]):
                order[j] = order[j - 1]
                j -= 1
            order[j] = row
    width = _RUN
    while width < n:
        for lo in range(0, n - width, 2 * width):
            mid = lo + width
            if ranks_before(key, order[mid], order[mid - 1]):  # (else in order already)
                _merge(order, lo, mid, min(lo + 2 * width, n), key, buf)
        width *= 2


@helper
def _merge(order, lo, mid, hi, key, buf):
    """Merge the ranked rows ``order[lo:mid]`` and ``order[mid:hi]`` in place, stably (the
    first of the second half ranks before the last of the first)."""
    first = order[mid]  # left rows before the first that it ranks before stay
    a, b = lo, mid - 1
    while a < b:
        m = (a + b) // 2
        if ranks_before(key, first, order[m]):
            b = m
        else:
            a = m + 1
    start = a
    last = order[mid - 1]  # right rows from the first that does not rank before it stay
    a, b = mid + 1, hi
    while a < b:
        m = (a + b) // 2
        if ranks_before(key, order[m], last):
            a = m + 1
        else:
            b = m
    stop = a
    n_left = mid - start
    for k in range(n_left):
        buf[k] = order[start + k]
    i = 0
    j = mid
    k = start
    while i < n_left and j < stop:
        if ranks_before(key, order[j], buf[i]):
            order[k] = order[j]
            j += 1
        else:
            order[k] = buf[i]
            i += 1
        k += 1
    while i < n_left:
        order[k] = buf[i]
        i += 1
        k += 1


@helper
def rank_rows(start, stop, key, order, buf):
    """Write into ``order[:stop - start]`` the rows ``start:stop`` in ranking order."""
    n = stop - start
    for i in range(n):
        order[i] = start + i
    rank_sort(order[:n], key, buf)


def python_ranked(rows, scores, keys):
    """:func:`ranks_before` for Python variants: ``rows`` sorted by ``scores[row]``, then
    ``keys[row]``, both descending (``keys``: :func:`~fastir.model.ids.order_keys` of the
    doc ids), stably as :func:`rank_sort`."""
    return sorted(rows, key=lambda row: (scores[row], keys[row]), reverse=True)


# -- whole runs and segments ---------------------------------------------------------------
def ranked_rows(run):
    """A run's rows in ranked order, query after query (queries in id order), and the query
    of each row."""
    lengths = run.stops - run.starts
    order = _jit.select(_rank_run, len(run))(run.starts, run.stops, run.scores,
                                             run.doc_ids.args())
    return order, np.repeat(np.arange(run.n_queries), lengths)


@jit
def _rank_run(starts, stops, scores, docs):
    total = 0
    longest = 0
    for q in range(len(starts)):
        total += stops[q] - starts[q]
        longest = max(longest, stops[q] - starts[q])
    out = np.empty(total, dtype=np.int64)
    buf = np.empty(longest, dtype=np.int64)
    key = RankKey(scores, None, docs)
    at = 0
    for q in range(len(starts)):
        n = stops[q] - starts[q]
        rank_rows(starts[q], stops[q], key, out[at:at + n], buf)
        at += n
    return out


@python_variant(_rank_run)
def _rank_run(starts, stops, scores, docs):
    keys = order_keys(docs)
    score = scores.tolist()
    out = []
    for lo, hi in zip(starts.tolist(), stops.tolist()):
        out += python_ranked(range(lo, hi), score, keys)
    return np.array(out, dtype=np.int64)


@pjit
def rank_segments(chunks, bounds, scores, docs):
    """The rows of each segment ``bounds[s]:bounds[s + 1]`` in ranking order, by
    ``scores`` and doc ids ``docs`` (an :data:`~fastir.model.ids.IdColumn` of the rows);
    chunks ``chunks[c]:chunks[c + 1]`` of segments in parallel.

    Segments of more than ``_RADIX_ROWS`` rows are ranked by :func:`_radix_rank`, the
    others by :func:`rank_sort`: both sort stably by :func:`ranks_before`, so the order is
    the same (a stable sort has one result). Scores must not be NaN."""
    order = np.arange(len(scores))
    buf = np.empty(len(scores), dtype=np.int64)
    bits = scores.view(np.uint64)
    longest = 0
    for s in range(len(bounds) - 1):
        longest = max(longest, bounds[s + 1] - bounds[s])
    for c in prange(len(chunks) - 1):
        keys = np.empty(2 * longest if longest > _RADIX_ROWS else 0, dtype=np.uint64)
        counts = np.empty(8 * 256, dtype=np.int64)
        key = RankKey(scores, None, docs)  # (made in the loop: see fastir.model.join)
        for s in range(chunks[c], chunks[c + 1]):
            lo, hi = bounds[s], bounds[s + 1]
            if hi - lo > _RADIX_ROWS:
                _radix_rank(order[lo:hi], bits, key, buf[lo:hi], keys, counts)
            else:
                rank_sort(order[lo:hi], key, buf[lo:hi])
    return order


_RADIX_ROWS = 64  # (measured: rank_sort is as fast below)
_SIGN = np.uint64(1 << 63)


@helper
def _radix_rank(order, bits, key, buf, keys, counts):
    """Sort the rows ``order`` into ranking order (:func:`ranks_before` on ``key``): an LSD
    radix sort, a byte a pass, of the scores' bit patterns (``bits``, the scores viewed as
    uint64) mapped to keys ascending as the scores descend (-0.0 as 0.0), then
    :func:`rank_sort` of each run of equal scores (by doc id). ``buf``, ``keys`` (twice
    ``order``'s length), ``counts`` (8 x 256: each byte's counts, all counted in the pass
    that makes the keys: a byte's counts do not depend on the keys' order): scratch."""
    n = len(order)
    for d in range(8 * 256):
        counts[d] = 0
    for i in range(n):
        b = bits[order[i]]
        if b == _SIGN:  # -0.0 ranks as 0.0
            b = np.uint64(0)
        k = b if b & _SIGN else ~(b | _SIGN)  # (ascending as the score descends)
        keys[i] = k
        for byte in range(8):
            counts[byte * 256 + ((k >> np.uint64(8 * byte)) & np.uint64(255))] += 1
    src_keys, dst_keys = keys[:n], keys[n:2 * n]
    src, dst = order, buf
    moved = 0
    for byte in range(8):
        shift = np.uint64(8 * byte)
        at_byte = byte * 256
        if counts[at_byte + ((src_keys[0] >> shift) & np.uint64(255))] == n:
            continue  # (every key has this byte: the pass would move nothing)
        total = 0
        for d in range(at_byte, at_byte + 256):
            c = counts[d]
            counts[d] = total
            total += c
        for i in range(n):
            d = at_byte + ((src_keys[i] >> shift) & np.uint64(255))
            at = counts[d]
            counts[d] = at + 1
            dst_keys[at] = src_keys[i]
            dst[at] = src[i]
        src_keys, dst_keys = dst_keys, src_keys
        src, dst = dst, src
        moved += 1
    if moved % 2:  # (the rows are in ``buf``)
        for i in range(n):
            order[i] = src[i]
    start = 0
    for i in range(1, n + 1):
        if i == n or src_keys[i] != src_keys[start]:
            if i - start > 1:
                rank_sort(order[start:i], key, buf[:i - start])
            start = i


@python_variant(rank_segments)
def rank_segments(chunks, bounds, scores, docs):
    keys = order_keys(docs)
    score = scores.tolist()
    out = []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        out += python_ranked(range(lo, hi), score, keys)
    return np.array(out, dtype=np.int64)


# -- what a run's scores say of its rows' order ------------------------------------------
#: What :func:`score_order` says of a query's rows, from their scores alone (so it holds
#: whatever kind their doc ids are): the scores strictly descend (the rows are in ranking
#: order); they never rise but some are equal (the doc ids decide: :func:`ranks_before`);
#: one rises (the rows are not in ranking order); one is not finite (NaN or infinite).
DESCENDING, LEVEL, RISING, NOT_FINITE = 0, 1, 2, 3


@pjit
def score_order(chunks, starts, stops, scores, out):
    """Per query ``q`` (chunks ``chunks[c]:chunks[c + 1]`` of queries in parallel), what
    its rows' scores ``scores[starts[q]:stops[q]]`` say of their order: ``out[q]`` is
    :data:`DESCENDING`, :data:`LEVEL`, :data:`RISING` or :data:`NOT_FINITE`."""
    for c in prange(len(chunks) - 1):
        for q in range(chunks[c], chunks[c + 1]):
            out[q] = _score_order(starts[q], stops[q], scores)


@helper
def _score_order(lo, hi, scores):
    # One loop of sums, without branches, which LLVM vectorises (measured: 1.1 ns a row
    # against 2.5 with a loop for each question): ``x - x`` is 0 for a finite score, NaN
    # for NaN or an infinity, and NaN stays in the sum.
    nan_if_not_finite = scores[lo] - scores[lo] if hi > lo else 0.0
    rises = 0
    level = 0
    for row in range(lo + 1, hi):
        x = scores[row]
        before = scores[row - 1]
        nan_if_not_finite += x - x
        rises += np.int64(x > before)
        level += np.int64(x == before)
    if nan_if_not_finite != 0.0:
        return NOT_FINITE
    return RISING if rises else LEVEL if level else DESCENDING


@python_variant(score_order)
def score_order(chunks, starts, stops, scores, out):
    """The same with numpy over all the queries' rows at once, not a few numpy calls per
    query (small runs run as Python)."""
    queries = np.arange(chunks[0], chunks[-1])
    lengths = stops[queries] - starts[queries]
    rows = rows_of(starts[queries], lengths)
    query = np.repeat(np.arange(len(queries)), lengths)
    row_scores = scores[rows]
    after_row = query[1:] == query[:-1]  # (a row and the one before it, of one query)
    before, after = row_scores[:-1][after_row], row_scores[1:][after_row]
    of_pair = query[1:][after_row]

    def per_query(where, of):
        return np.bincount(of[where], minlength=len(queries)) > 0

    out[queries] = np.select(
        [per_query(~np.isfinite(row_scores), query), per_query(after > before, of_pair),
         per_query(after == before, of_pair)], [NOT_FINITE, RISING, LEVEL], DESCENDING)


# -- ids in ascending order -----------------------------------------------------------------
@jit
def sort_ids(ids):
    """Permutation sorting an id column in ascending strcmp order (stable): the ranking
    order of equal scores (doc id descending) read backwards, from the column reversed (so
    that equal ids keep their order)."""
    n = column_length(ids)
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = n - 1 - i
    rank_sort(order, RankKey(np.zeros(n), None, ids), np.empty(n, dtype=np.int64))
    return order[::-1].copy()


@python_variant(sort_ids)
def sort_ids(ids):
    keys = order_keys(ids)
    return np.array(sorted(range(len(keys)), key=keys.__getitem__), dtype=np.int64)
