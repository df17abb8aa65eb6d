"""The one JIT policy of fastir: every kernel is compiled through these decorators.

Kernels are cached on disk (``cache=True``), release the GIL (``nogil=True``), use numpy's
error model (a division by zero gives inf/nan instead of raising; kernels guard their
denominators) and never use fastmath: sums must be bit-identical to trec_eval's.
Nothing here changes numba's global state (thread count, threading layer).
"""

import numba

_POLICY = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": False}


def jit(func):
    """Compile a serial kernel."""
    return numba.njit(**_POLICY)(func)


def helper(func):
    """Compile a helper that never allocates: without numba's reference counting.

    Kernels call helpers per row or per measure; a helper compiled with reference counting
    increments and decrements every array argument on each call (atomic operations, ~100 ns
    a call for a few arrays). Helpers must not create arrays (views are fine).
    """
    return numba.njit(_nrt=False, **_POLICY)(func)


def pjit(func):
    """Compile a kernel whose ``numba.prange`` loops run in parallel."""
    return numba.njit(parallel=True, **_POLICY)(func)


prange = numba.prange


def chunk_bounds(weights, n_threads):
    """Split ``len(weights)`` items into contiguous chunks of roughly equal total weight.

    Returns ``bounds`` with ``bounds[c]:bounds[c + 1]`` the items of chunk ``c``. Chunks are
    a pure function of the weights and the thread count, and every kernel computes each item
    independently of its chunk, so results never depend on the chunking.
    """
    import numpy as np

    n = len(weights)
    n_chunks = max(1, min(n, 4 * n_threads))
    cum = np.cumsum(np.asarray(weights, dtype=np.int64) + 1)
    total = int(cum[-1]) if n else 0
    targets = (np.arange(1, n_chunks) * total) // n_chunks
    inner = np.searchsorted(cum, targets, side="left") + 1
    bounds = np.concatenate(([0], inner, [n])).astype(np.int64)
    return np.unique(bounds)
