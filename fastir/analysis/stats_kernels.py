"""Resampling kernels of :mod:`fastir.analysis.stats`: the null and bootstrap distributions of every
(pair, measure) in one pass per block of resamples.

The random draws are made by the caller (numpy generators seeded by ``(seed, block)``), so a
resample's statistic depends only on the seed: each is a sequential sum over the queries in
query order, computed by one thread whatever the thread count. Resamples are taken in
groups of ``GROUP`` so that a query's row of differences is read once per group.
"""

import numpy as np

from fastir._jit import jit, pjit, prange, python_variant

GROUP = 8  # resamples that share a pass over the queries


@pjit(nrt=False)
def sign_flip_sums(diffs, flips, out):
    """``out[r, k] = sum over queries q of (-diffs[q, k] if flips[r, q] else diffs[q, k])``,
    summed in query order (``diffs``: (n_queries, K); ``flips``: (R, n_queries) int8)."""
    n, width = diffs.shape
    n_resamples = flips.shape[0]
    for g in prange((n_resamples + GROUP - 1) // GROUP):
        lo = g * GROUP
        hi = min(n_resamples, lo + GROUP)
        for r in range(lo, hi):
            for k in range(width):
                out[r, k] = 0.0
        for q in range(n):
            for r in range(lo, hi):
                sign = -1.0 if flips[r, q] else 1.0
                for k in range(width):
                    out[r, k] += sign * diffs[q, k]


@python_variant(sign_flip_sums)
def sign_flip_sums(diffs, flips, out):
    """The same with numpy (a cumulative sum is a sequential sum)."""
    signs = np.where(flips.astype(bool), -1.0, 1.0)
    for r in range(len(flips)):
        terms = np.concatenate((np.zeros((1, diffs.shape[1])), signs[r][:, None] * diffs))
        out[r] = np.cumsum(terms, axis=0)[-1]


@pjit(nrt=False)
def resample_sums(diffs, picks, out):
    """``out[r, k] = sum over i of diffs[picks[r, i], k]`` in draw order (a bootstrap
    resample of the queries; ``picks``: (R, n_queries))."""
    width = diffs.shape[1]
    n_resamples, n = picks.shape
    for g in prange((n_resamples + GROUP - 1) // GROUP):
        lo = g * GROUP
        hi = min(n_resamples, lo + GROUP)
        for r in range(lo, hi):
            for k in range(width):
                out[r, k] = 0.0
        for i in range(n):
            for r in range(lo, hi):
                q = picks[r, i]
                for k in range(width):
                    out[r, k] += diffs[q, k]


@python_variant(resample_sums)
def resample_sums(diffs, picks, out):
    """The same with numpy."""
    for r in range(len(picks)):
        terms = np.concatenate((np.zeros((1, diffs.shape[1])), diffs[picks[r]]))
        out[r] = np.cumsum(terms, axis=0)[-1]


@jit
def _permutation(draws, order):
    """Fisher-Yates: ``order`` (0..S-1) shuffled by ``draws[t]`` (uniform in [0, 1)): step
    t swaps position S - 1 - t with one of the positions up to it."""
    size = len(order)
    for s in range(size):
        order[s] = s
    for t in range(size - 1):
        last = size - 1 - t
        j = min(np.int64(draws[t] * (last + 1)), last)
        swap = order[last]
        order[last] = order[j]
        order[j] = swap


@pjit
def permuted_ranges(values, draws, out):
    """Randomized Tukey HSD: for each resample r, the systems' values are permuted within
    every query (``draws[r, q]``: Fisher-Yates draws), and ``out[r, m]`` is the largest
    minus the smallest system sum for measure m (``values``: (n_queries, S, M); ``draws``:
    (R, n_queries, S - 1) uniform in [0, 1))."""
    n, n_systems, n_measures = values.shape
    n_resamples = draws.shape[0]
    for r in prange(n_resamples):
        sums = np.zeros((n_systems, n_measures))
        order = np.empty(n_systems, dtype=np.int64)
        for q in range(n):
            _permutation(draws[r, q], order)
            for s in range(n_systems):
                for m in range(n_measures):
                    sums[s, m] += values[q, order[s], m]
        for m in range(n_measures):
            low = sums[0, m]
            high = sums[0, m]
            for s in range(1, n_systems):
                low = min(low, sums[s, m])
                high = max(high, sums[s, m])
            out[r, m] = high - low


@python_variant(permuted_ranges)
def permuted_ranges(values, draws, out):
    """The same with numpy."""
    n, n_systems, n_measures = values.shape
    order = np.empty(n_systems, dtype=np.int64)
    for r in range(len(draws)):
        picked = np.empty_like(values)
        for q in range(n):
            _permutation(draws[r, q], order)
            picked[q] = values[q, order]
        terms = np.concatenate((np.zeros((1, n_systems, n_measures)), picked))
        sums = np.cumsum(terms, axis=0)[-1]
        out[r] = sums.max(axis=0) - sums.min(axis=0)
