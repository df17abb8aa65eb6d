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

import math
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, pjit, prange
from fastir.analysis.fusion.inputs import choice
from fastir.analysis.fusion.pairs import segment_source, source_row
from fastir.model.ranking import RankKey, rank_sort

NORMS = {"min-max": "min-max", "min_max": "min-max", "min-max-inverted": "min-max-inverted",
         "min_max_inverted": "min-max-inverted", "zmuv": "zmuv", "z-score": "zmuv",
         "sum": "sum", "max": "max", "rank": "rank", "borda": "borda"}
FLOOR = 1e-9  # ranx's floor on normalisation denominators
_HUGE = 2.0 ** 400  # scores beyond: scaled down before a normalisation (see normalise)
_CODES = {"min-max": 0, "min-max-inverted": 1, "sum": 2, "max": 3, "zmuv": 4, "rank": 5,
          "borda": 6}
_INVERTED, _SUM, _MAX, _ZMUV, _RANK, _BORDA = 1, 2, 3, 4, 5, 6

#: A normalised set of runs (over a :class:`~fastir.analysis.fusion.pairs.Pairs`): per row
#: of the runs' columns (``Pairs.sources``), its normalised value (``values``) and its rank in
#: its run's normalised ranking (``ranks``; None: the rows' own ranking, ``Pairs.rank``);
#: ``every``: every candidate has a value in every run (after ``borda``: a run's unranked
#: candidates get :func:`unranked_value`).
Scored = namedtuple("Scored", "values ranks every")

#: What :func:`_normalise_rows` writes: per row of the runs' columns its normalised value
#: (``values``) and, with ``min-max-inverted``, its rank by them (``ranks``; else empty);
#: per (query, run) its first kept row whose value is not finite (``bad``, -1: none).
Normalised = namedtuple("Normalised", "values ranks bad")


def norm_name(norm):
    """fastir's name of a normalisation (None: none), checked."""
    return None if norm is None else choice(norm, NORMS, "norm")


def normalise(pairs, norm, names=None):
    """The runs of ``pairs`` normalised by ``norm`` (a name of :data:`NORMS` or None), as
    :data:`Scored`: one kernel over the queries.

    The four score normalisations are unchanged by scaling a (run, query)'s scores by a
    power of two: those beyond ``2**400`` in magnitude are scaled down first (and the floor
    with them), exactly, so that no difference, sum or square overflows."""
    norm = norm_name(norm)
    if norm is None:
        return Scored(pairs.scores, None, False)
    values = np.empty(len(pairs.scores))
    ranks = np.empty(len(pairs.scores) if norm == "min-max-inverted" else 0, dtype=np.int64)
    bad = np.full(len(pairs.run_bounds) - 1, -1, dtype=np.int64)
    _jit.launch(_normalise_rows, pairs.chunks, pairs.n_runs, pairs.run_bounds, pairs.sources,
                pairs.scores, pairs.candidates, _CODES[norm], pairs.docs.args(),
                Normalised(values, ranks, bad))
    found = np.flatnonzero(bad >= 0)
    if len(found):  # (norm='max' of all-negative scores divides by the floor, 1e-9)
        i = int(bad[found[np.argmin(found % pairs.n_runs)]])  # (the first run's first)
        run = int(np.searchsorted(pairs.run_bounds, i, side="right") - 1) % pairs.n_runs
        raise ValueError(
            f"norm: {norm!r} takes the score {pairs.scores[pairs.source_rows([i])[0]]} of "
            f"{pairs.where(i)}{f' ({names[run]!r})' if names else ''} beyond a double; "
            f"choose another norm or scale the scores")
    return Scored(values, ranks if norm == "min-max-inverted" else None, norm == "borda")


def row_ranks(pairs, scored):
    """Each row's rank (from 1) in its run's normalised ranking of its query."""
    return pairs.rank if scored.ranks is None else scored.ranks[pairs.source_rows()]


@helper
def unranked_value(m, n):
    """``borda``'s value of a candidate its run did not rank (the run ranked ``m`` of the
    query's ``n`` candidates)."""
    return 0.5 - (m - 1.0) / (2.0 * n)


@pjit
def _normalise_rows(bounds, n_runs, run_bounds, sources, scores, candidates, code, docs, out):
    """Per (query, run), its rows' normalised values (``out.values[row]``, ``row`` a kept
    row's row in the runs' columns, :data:`~fastir.analysis.fusion.pairs.Sources`;
    normalisation ``code``), their ranks by them with ``min-max-inverted``
    (``out.ranks[row]``) and its first kept row whose value is not finite (``out.bad``, -1:
    none; ``out``: a :data:`Normalised`); chunks ``bounds[c]:bounds[c + 1]`` of queries."""
    values = out.values  # (as a local: see fastir.model.join)
    longest = 0
    for s in range(len(run_bounds) - 1):
        longest = max(longest, run_bounds[s + 1] - run_bounds[s])
    for c in prange(len(bounds) - 1):
        order = np.empty(longest if code == _INVERTED else 0, dtype=np.int64)
        buf = np.empty(len(order), dtype=np.int64)
        ranking = RankKey(values, None, docs)  # (made in the loop: see fastir.model.join)
        for q in range(bounds[c], bounds[c + 1]):
            for s in range(q * n_runs, (q + 1) * n_runs):
                _normalise_segment(s, run_bounds[s], run_bounds[s + 1], sources, scores,
                                   candidates[q], code, out, ranking, order, buf)


@helper
def _normalise_segment(s, lo, hi, sources, scores, n_candidates, code, out, ranking, order,
                       buf):
    """:func:`_normalise_rows` of segment ``s``, its kept rows ``lo:hi`` (``ranking``: by
    ``out.values``; ``order``, ``buf``: scratch)."""
    values, ranks, bad = out
    in_place, offset = segment_source(sources, s, lo)
    if code >= _RANK:
        _rank_values(code, in_place, offset, sources.src, lo, hi, n_candidates, values)
    elif hi > lo:
        _score_values(code, in_place, offset, sources.src, lo, hi, scores, values)
    for i in range(lo, hi):
        if not np.isfinite(values[source_row(sources.src, in_place, offset, i)]):
            bad[s] = i
            break
    if code == _INVERTED:
        m = hi - lo
        for j in range(m):
            order[j] = source_row(sources.src, in_place, offset, lo + j)
        rank_sort(order[:m], ranking, buf)
        for j in range(m):
            ranks[order[j]] = j + 1


@helper
def _rank_values(code, in_place, offset, src, lo, hi, n_candidates, values):
    """``rank``: ``1 - (rank - 1) / m``; ``borda``: ``1 - (rank - 1) / n`` (the kept rows
    ``lo:hi``, where :func:`~fastir.analysis.fusion.pairs.segment_source` says)."""
    n = float(n_candidates if code == _BORDA else hi - lo)
    for i in range(lo, hi):
        values[source_row(src, in_place, offset, i)] = 1 - (i - lo) / n


@helper
def _score_values(code, in_place, offset, src, lo, hi, scores, values):
    """The four score normalisations of the kept rows ``lo:hi`` (see the module doc; where
    :func:`~fastir.analysis.fusion.pairs.segment_source` says), scaled down by a power of
    two first when beyond ``2**400``."""
    low = high = scores[source_row(src, in_place, offset, lo)]
    for i in range(lo, hi):
        row = source_row(src, in_place, offset, i)
        x = scores[row]
        low = min(low, x)
        high = max(high, x)
    biggest = max(-low, high)
    shift = math.frexp(biggest)[1] if biggest > _HUGE else 0
    low, high = math.ldexp(low, -shift), math.ldexp(high, -shift)
    floor = math.ldexp(FLOOR, -shift)
    n = float(hi - lo)
    total = 0.0
    for i in range(lo, hi):
        row = source_row(src, in_place, offset, i)
        total += math.ldexp(scores[row], -shift)
    mean = 0.0
    if code == _ZMUV:
        mean = total / n
        square = 0.0
        for i in range(lo, hi):
            row = source_row(src, in_place, offset, i)
            d = math.ldexp(scores[row], -shift) - mean
            square += d * d
        spread = _floored(math.sqrt(square / n), floor)
    elif code == _SUM:
        spread = _floored(total - low * n, floor)
    elif code == _MAX:
        spread = _floored(high, floor)
    else:
        spread = _floored(high - low, floor)
    for i in range(lo, hi):
        row = source_row(src, in_place, offset, i)
        x = math.ldexp(scores[row], -shift)
        if code == _ZMUV:
            values[row] = (x - mean) / spread
        elif code == _SUM:
            values[row] = (x - low) / spread
        elif code == _MAX:
            values[row] = x / spread
        elif code == _INVERTED:
            values[row] = (high - x) / spread
        else:
            values[row] = (x - low) / spread


@helper
def _floored(x, floor):
    """A denominator at least ``floor`` (numpy's ``maximum``)."""
    return x if x >= floor else floor
