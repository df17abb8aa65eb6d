"""Score normalisations, per run and query over the run's docs (ranx's, with its floor of
1e-9 on every denominator, so that equal scores normalise to 0 and ``max`` of all-negative
scores divides by 1e-9):

* ``min-max`` ``(s - min) / (max - min)``; ``min-max-inverted`` ``(max - s) / (max - min)``
  (the best doc gets 0: for runs whose low scores are the good ones, distances say);
* ``zmuv`` ``(s - mean) / std`` (population std); ``sum`` ``(s - min) / (sum - min * m)``;
  ``max`` ``s / max``;
* ``rank`` ``1 - (rank - 1) / m``; ``borda`` ``1 - (rank - 1) / n`` and, for the ``n - m``
  candidates the run did not retrieve, ``0.5 - (m - 1) / (2 n)`` (so after it every run has
  every candidate).

A normalised run is ranked by its normalised scores: the run's own ranking after every
normalisation but ``min-max-inverted``, which reverses it (as ranx re-sorts a run after
it). The candidates ``borda`` adds to a run have a score, but no rank: the run did not
retrieve them (see :mod:`fastir.analysis.fusion.methods` for what each method reads).
"""

from collections import namedtuple

import numpy as np

from fastir.analysis.fusion.inputs import choice

NORMS = {"min-max": "min-max", "min_max": "min-max", "min-max-inverted": "min-max-inverted",
         "min_max_inverted": "min-max-inverted", "zmuv": "zmuv", "z-score": "zmuv",
         "sum": "sum", "max": "max", "rank": "rank", "borda": "borda"}
FLOOR = 1e-9  # ranx's floor on normalisation denominators
_HUGE = 2.0 ** 400  # scores beyond: scaled down before a normalisation (see normalise)

#: A normalised set of runs, ``(n_runs, n_pairs)`` arrays: ``values`` (0 where absent),
#: ``present`` (the run has a value for the pair: after ``borda``, every candidate),
#: ``ranks`` (the pair's rank in the run's normalised ranking, from 1; 0 where the run did
#: not retrieve the doc).
Scored = namedtuple("Scored", "values present ranks")


def norm_name(norm):
    """fastir's name of a normalisation (None: none), checked."""
    return None if norm is None else choice(norm, NORMS, "norm")


def normalise(pairs, norm, names=None):
    """The runs of ``pairs`` normalised by ``norm`` (a name of :data:`NORMS` or None), as
    :data:`Scored`.

    The four score normalisations are unchanged by scaling a (run, query)'s scores by a
    power of two: those beyond ``2**400`` in magnitude are scaled down first (and the floor
    with them), exactly, so that no difference, sum or square overflows."""
    norm = norm_name(norm)
    x = _row_values(pairs, norm)
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):  # (norm='max' of all-negative scores divides by the floor, 1e-9)
        i = bad[0]
        run = pairs.run_of[i]
        raise ValueError(
            f"norm: {norm!r} takes the score {pairs.score[i]} of "
            f"{pairs.where(i)}{f' ({names[run]!r})' if names else ''} beyond a double; "
            f"choose another norm or scale the scores")
    rank = pairs.ranks_by(x) if norm == "min-max-inverted" else pairs.rank
    ranks = pairs.spread(rank)
    if norm == "borda":
        cand = pairs.candidates.astype(np.float64)
        values = 0.5 - (pairs.run_lengths() - 1) / (2 * cand[pairs.pair_query])
        values[pairs.run_of, pairs.pair] = x
        return Scored(values, np.ones(values.shape, dtype=bool), ranks)
    return Scored(pairs.spread(x), ranks > 0, ranks)


def _row_values(pairs, norm):
    """Each row's normalised score (its score without a normalisation)."""
    x, seg = pairs.score, pairs.segment
    n = pairs.length.astype(np.float64)
    if norm in ("min-max", "min-max-inverted", "sum", "zmuv", "max"):
        starts = pairs.segment_starts
        lo = np.minimum.reduceat(x, starts)[seg] if len(x) else x
        hi = np.maximum.reduceat(x, starts)[seg] if len(x) else x
        exp = np.where(np.maximum(-lo, hi) > _HUGE, np.frexp(np.maximum(-lo, hi))[1], 0)
        x, lo, hi = (np.ldexp(a, -exp) for a in (x, lo, hi))
        floor = np.ldexp(FLOOR, -exp)
        total = np.bincount(seg, weights=x)[seg]
    if norm == "min-max":
        return (x - lo) / np.maximum(hi - lo, floor)
    if norm == "min-max-inverted":
        return (hi - x) / np.maximum(hi - lo, floor)
    if norm == "sum":
        return (x - lo) / np.maximum(total - lo * n, floor)
    if norm == "max":
        with np.errstate(over="ignore"):
            return x / np.maximum(hi, floor)
    if norm == "zmuv":
        mean = total / n
        std = np.sqrt(np.bincount(seg, weights=(x - mean) ** 2)[seg] / n)
        return (x - mean) / np.maximum(std, floor)
    if norm == "rank":
        return 1 - (pairs.rank - 1) / n
    if norm == "borda":
        cand = pairs.candidates.astype(np.float64)
        return 1 - (pairs.rank - 1) / cand[pairs.pair_query[pairs.pair]]
    return x
