"""Per-query ROC areas and precision-recall pairs of flat rows (torchmetrics' retrieval
form: one row per (query, document), the query's index beside it), for
:mod:`fastir.peers.torchmetrics`' ``RetrievalAUROC``, ``RetrievalPrecisionRecallCurve`` and
``RetrievalRecallAtFixedPrecision``.

Rows come grouped by query (``bounds[q]:bounds[q + 1]``) and, within a query, by score
descending (:func:`ranked_groups`).
"""

import numpy as np

from fastir import _jit
from fastir._jit import pjit, prange


def ranked_groups(scores, indexes):
    """The rows ordered by query index, then score descending (ties in row order), and the
    bounds of each query's rows."""
    order = np.lexsort((-scores, indexes))
    query = indexes[order]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else \
        np.zeros(0, dtype=np.int64)
    return order, np.r_[starts, len(query)].astype(np.int64)


def auroc(scores, labels, bounds, top_k=0, max_fpr=None):
    """Per query, the area under the ROC curve of its top ``top_k`` rows (0: all) as
    torchmetrics' ``retrieval_auroc``: 0 without both a relevant and a non-relevant row
    there; scores outside [0, 1] through a float32 sigmoid first (as ``binary_auroc`` takes
    them for logits); with ``max_fpr``, the partial area up to that false-positive rate,
    McClish-standardised.

    ``scores`` (float64 of float32 values) and ``labels`` (0 or 1) in :func:`ranked_groups`
    order."""
    out = np.empty(len(bounds) - 1)
    _jit.launch(_auroc_kernel, scores, labels.astype(np.float64), bounds, int(top_k),
                -1.0 if max_fpr is None else float(max_fpr), out)
    return out


@pjit
def _auroc_kernel(scores, labels, bounds, top_k, max_fpr, out):
    for q in prange(len(bounds) - 1):
        lo = bounds[q]
        n = bounds[q + 1] - lo
        if top_k > 0:
            n = min(n, top_k)
        positives = 0.0
        logits = False
        for i in range(lo, lo + n):
            positives += labels[i]
            if scores[i] < 0.0 or scores[i] > 1.0:
                logits = True
        if positives == 0.0 or positives == n:
            out[q] = 0.0
            continue
        s = np.empty(n)
        for i in range(n):
            s[i] = scores[lo + i]
            if logits:
                s[i] = np.float32(1.0) / (np.float32(1.0) + np.exp(np.float32(-s[i])))
        # the ROC's points: (0, 0), then one at the end of each stretch of equal scores
        fpr = np.zeros(n + 1)
        tpr = np.zeros(n + 1)
        m = 1
        tp = 0.0
        for i in range(n):
            tp += labels[lo + i]
            if i == n - 1 or s[i + 1] != s[i]:
                tpr[m] = tp
                fpr[m] = i + 1 - tp
                m += 1
        for j in range(m):
            fpr[j] /= fpr[m - 1]
            tpr[j] /= tpr[m - 1]
        if max_fpr <= 0.0 or max_fpr == 1.0:
            out[q] = _trapezoid(fpr, tpr, m)
            continue
        stop = 0  # the first point beyond max_fpr
        while stop < m and fpr[stop] <= max_fpr:
            stop += 1
        weight = (max_fpr - fpr[stop - 1]) / (fpr[stop] - fpr[stop - 1])
        tpr[stop] = tpr[stop - 1] + weight * (tpr[stop] - tpr[stop - 1])
        fpr[stop] = max_fpr
        partial = _trapezoid(fpr, tpr, stop + 1)
        least = 0.5 * max_fpr * max_fpr
        out[q] = 0.5 * (1.0 + (partial - least) / (max_fpr - least))


@_jit.helper
def _trapezoid(x, y, m):
    area = 0.0
    for j in range(1, m):
        area += (x[j] - x[j - 1]) * (y[j] + y[j - 1]) / 2.0
    return area


def hits_by_rank(labels, bounds, max_k):
    """``(n_queries, max_k)``: the relevant rows within each query's top k, k = 1..max_k
    (``labels`` in :func:`ranked_groups` order)."""
    n = np.diff(bounds)
    rank = np.arange(len(labels)) - np.repeat(bounds[:-1], n)
    query = np.repeat(np.arange(len(n)), n)
    top = rank < max_k
    relevant = np.zeros((len(n), max_k))
    relevant[query[top], rank[top]] = labels[top]
    return np.cumsum(relevant, axis=1)
