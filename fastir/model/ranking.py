"""trec_eval's ranking order, written once: score descending, ties broken by document id
descending in byte (``strcmp``) order. The join ranks each query with :func:`rank_rows`;
:func:`ranked_rows` ranks a whole run (the TREC writer)."""

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit, python_variant
from fastir.model.ids import order_keys, sort_by_id


@helper
def sort_by_score(order, n, scores, buf):
    """Stable bottom-up merge sort of ``order[:n]`` by descending score."""
    width = 1
    src = order
    dst = buf
    in_buf = False
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if scores[src[j]] > scores[src[i]]:
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
        src, dst = dst, src
        in_buf = not in_buf
        width *= 2
    if in_buf:
        for k in range(n):
            order[k] = buf[k]


@helper
def rank_rows(start, stop, scores, docs, order, buf):
    """Write into ``order[:n]`` the rows ``start:stop`` in trec_eval order: score
    descending, then docno descending.

    Rows already in score order (the usual run file) cost one pass; otherwise a stable
    merge sort by score. Then each group of equal scores is put in docno order.
    """
    n = stop - start
    by_score = True
    for i in range(1, n):
        if scores[start + i] > scores[start + i - 1]:
            by_score = False
            break
    for i in range(n):
        order[i] = start + i
    if not by_score:
        sort_by_score(order, n, scores, buf)
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and scores[order[hi]] == scores[order[lo]]:
            hi += 1
        if hi - lo > 1:  # docno descending
            sort_by_id(order, lo, hi, docs, buf, -1)
        lo = hi


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
    at = 0
    for q in range(len(starts)):
        n = stops[q] - starts[q]
        rank_rows(starts[q], stops[q], scores, docs, out[at:at + n], buf)
        at += n
    return out


@python_variant(_rank_run)
def _rank_run(starts, stops, scores, docs):
    keys = order_keys(docs)
    score = scores.tolist()
    out = []
    for lo, hi in zip(starts.tolist(), stops.tolist()):
        out += sorted(range(lo, hi), key=lambda row: (score[row], keys[row]), reverse=True)
    return np.array(out, dtype=np.int64)
