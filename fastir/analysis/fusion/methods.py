"""The fusion methods: each pair's fused score from the normalised runs (:data:`Scored`).

Definitions follow ranx's (``ranx.fusion``), over what a normalised run has
(:mod:`~fastir.analysis.fusion.norms`): its ``values`` (after ``borda``, every candidate
has one) and its ranking (``rank``, from 1, of the docs the run retrieved; ranks and ties
as fastir ranks everywhere: score descending, ties by doc id descending).

Methods of scores, over the runs that have a value for the doc (``c`` of them):

* ``sum`` (CombSUM) ``S = sum(s)``; ``mnz`` ``S * c``; ``gmnz`` ``S * c ** gamma``;
  ``anz`` ``S / c``; ``max``, ``min``, ``med`` of the values (ranx uses the sentinels
  -1e9 / 1e9 for max / min; fastir takes the true extreme);
* ``wsum`` ``sum(w * s)`` (every run, 0 where absent); ``mixed`` ``sum(w * s) * sqrt(c)``;
  ``wmnz`` ``S * sum(w)`` (the weights of the runs that have the doc).

Methods of ranks, over the runs that retrieved the doc (``c`` of them; ``r`` its rank,
``m`` the docs the run retrieved for the query, ``n`` the query's candidates):

* ``rrf`` ``sum(1 / (k + r))``; ``wrrf`` ``sum(w / (k + r))``;
* ``isr`` ``sum(1 / r**2) * c``; ``log_isr`` ``sum(1 / r**2) * ln(c)`` (0 for a doc one
  run retrieved, as in ranx); ``logn_isr`` ``sum(1 / r**2) * ln(c + sigma)``;
* ``rbc`` ``sum((1 - phi) * phi ** (r - 1))`` (rank-biased centroid);
* ``borda`` ``sum(n - r + 1)`` over every run, a run that did not retrieve the doc giving
  its unranked points ``(n - m + 1) / 2``; ``w_bordafuse`` the same weighted;
* ``condorcet``, ``w_condorcet``: each query's candidates sorted by pairwise majority (doc
  ``x`` goes before ``y`` when the runs (their weights) ranking ``x`` above ``y`` outweigh
  those ranking ``y`` above ``x``; a run that retrieved neither abstains), by a stable merge
  sort from fastir's tie order; scores ``n, n - 1, ..., 1``. ranx sorts with Python's
  ``sorted`` from its candidates' set order: where the majorities form a strict order the
  two agree, elsewhere (ties, cycles) ranx's order is its set order's;
* trained (:mod:`~fastir.analysis.fusion.training`), one array or number per run:
  ``mapfuse`` ``sum(map / r)``; ``posfuse`` ``sum(probs[r - 1])`` (0 beyond the array);
  ``probfuse`` ``sum(probs[j] / (j + 1))`` with ``j = (r - 1) // ceil(m / len(probs))``
  (the run's ranking cut in ``len(probs)`` segments); ``segfuse``
  ``sum(probs[j] * (s + 1))`` with ``j`` the segment of ``r`` among ranx's fixed ones
  (1-5, 6-15, 16-35, 36-75... ``10 * 2**(j - 1) - 5``; 0 beyond the 10th) and ``s`` the
  doc's (normalised) score; ``slidefuse`` the mean of ``probs`` over the window
  ``r - w .. r + w`` clipped to ``1 .. m``; ``bayesfuse`` ``sum(log_odds[r - 1])``, a run
  that did not retrieve the doc giving ``ln(0.001 / 0.999)``.
"""

import functools
import math
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, pjit, prange
from fastir.analysis.fusion.inputs import choice, number, numbers, vectors
from fastir.analysis.fusion.norms import Scored, unranked_value
from fastir.analysis.fusion.pairs import segment_source, source_row
from fastir.model.ranking import RankKey, rank_sort

METHODS = {"rrf": "rrf", "wrrf": "wrrf", "sum": "sum", "combsum": "sum", "comb_sum": "sum",
           "mnz": "mnz", "combmnz": "mnz", "comb_mnz": "mnz", "gmnz": "gmnz",
           "combgmnz": "gmnz", "comb_gmnz": "gmnz", "max": "max", "combmax": "max",
           "comb_max": "max", "min": "min", "combmin": "min", "comb_min": "min",
           "med": "med", "combmed": "med", "comb_med": "med", "anz": "anz",
           "combanz": "anz", "comb_anz": "anz", "wsum": "wsum", "mixed": "mixed",
           "wmnz": "wmnz", "borda": "borda", "bordafuse": "borda",
           "w_bordafuse": "w_bordafuse", "weighted_bordafuse": "w_bordafuse",
           "condorcet": "condorcet", "w_condorcet": "w_condorcet",
           "weighted_condorcet": "w_condorcet", "isr": "isr", "log_isr": "log_isr",
           "logn_isr": "logn_isr", "rbc": "rbc", "mapfuse": "mapfuse", "posfuse": "posfuse",
           "probfuse": "probfuse", "segfuse": "segfuse", "slidefuse": "slidefuse",
           "bayesfuse": "bayesfuse"}

REQUIRED = object()  # a parameter without a default
#: Each method's parameters (keywords of :func:`fastir.fuse`) and their defaults (ranx's;
#: ``weights``: 1 each).
PARAMS = {"rrf": {"k": 60}, "wrrf": {"weights": None, "k": 60}, "wsum": {"weights": None},
          "mixed": {"weights": None}, "wmnz": {"weights": None},
          "w_bordafuse": {"weights": None}, "w_condorcet": {"weights": None},
          "gmnz": {"gamma": REQUIRED}, "logn_isr": {"sigma": 0.01}, "rbc": {"phi": REQUIRED},
          "mapfuse": {"map_scores": REQUIRED}, "posfuse": {"probs": REQUIRED},
          "probfuse": {"probs": REQUIRED}, "segfuse": {"probs": REQUIRED},
          "slidefuse": {"probs": REQUIRED, "w": REQUIRED},
          "bayesfuse": {"log_odds": REQUIRED}}
#: The methods whose fused score is ``sum(w * part)`` over the runs (weight searches need
#: not build the scores: :meth:`fastir.BoundCandidates.evaluate_weighted`).
LINEAR = ("wsum", "wrrf", "w_bordafuse")
SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)])
MIN_ODD = math.log(0.001 / 0.999)  # bayesfuse's log odds of a doc a run did not retrieve


def method_name(method):
    """fastir's name of a fusion method, checked."""
    return choice(method, METHODS, "method")


def checked_params(method, n_runs, given):
    """The parameters of ``method`` from ``given`` ({keyword: value or None}), defaults
    filled and each checked; a parameter the method does not take is refused."""
    takes = PARAMS.get(method, {})
    for key, value in given.items():
        if value is not None and key not in takes and key != "k":
            users = sorted(m for m, p in PARAMS.items() if key in p)
            raise ValueError(f"{key}: only {', '.join(map(repr, users))} take {key}, not "
                             f"{method!r}")
    params = {}
    for key, default in takes.items():
        value = given.get(key)
        if value is None:
            if default is REQUIRED:
                raise ValueError(f"{key}: {method!r} needs {key} ({_RULES[key]})")
            value = default
        params[key] = _CHECKS[key](value, n_runs)
    if method in ("probfuse", "segfuse") and any(not len(a) for a in params["probs"]):
        raise ValueError(f"probs: {method!r} needs one probability per segment, got an empty "
                         f"array; give what train_fusion returns")
    return params


def checked_k(k):
    """RRF's constant ``k`` as a float, or a ValueError naming it (``None`` too)."""
    return _CHECKS["k"](k, 0)


_RULES = {"k": "a finite number, 0 or more (60 is usual)",
          "gamma": "a finite number (1: CombMNZ, 0: CombSUM)",
          "sigma": "a number in [0, 1] (0.01 by default)",
          "phi": "a number in [0, 1] (rank-biased centroid's persistence, 0.6 to 0.9 is usual)",
          "w": "a whole number of positions, 0 or more (the sliding window's half-width)",
          "map_scores": "one MAP per run, from train_fusion",
          "probs": "one array per run, from train_fusion",
          "log_odds": "one array per run, from train_fusion"}

_CHECKS = {
    "weights": lambda v, n: np.ones(n) if v is None else numbers(v, n, "weights"),
    "k": lambda v, n: number(v, "k", low=0, rule="RRF's constant is " + _RULES["k"]),
    "gamma": lambda v, n: number(v, "gamma", rule="CombGMNZ's exponent is " + _RULES["gamma"]),
    "sigma": lambda v, n: number(v, "sigma", low=0, high=1, rule="logn_isr's sigma is " +
                                 _RULES["sigma"]),
    "phi": lambda v, n: number(v, "phi", low=0, high=1, rule="RBC's phi is " + _RULES["phi"]),
    "w": lambda v, n: int(min(number(v, "w", low=0, whole=True, rule="slidefuse's w is " +
                                     _RULES["w"]), 2**62)),
    "map_scores": lambda v, n: numbers(v, n, "map_scores"),
    "probs": lambda v, n: vectors(v, n, "probs"),
    "log_odds": lambda v, n: vectors(v, n, "log_odds"),
}


#: The kernels' codes of the methods (condorcet has a kernel of its own).
_CODES = {m: i for i, m in enumerate((
    "sum", "mnz", "gmnz", "anz", "wmnz", "mixed", "max", "min", "med", "wsum",  # values
    "rrf", "wrrf", "isr", "log_isr", "logn_isr", "rbc", "mapfuse", "posfuse", "probfuse",
    "segfuse", "slidefuse", "borda", "w_bordafuse", "bayesfuse"))}
_WMNZ, _MIXED, _MAX, _MIN, _MED, _WSUM = (_CODES[m] for m in ("wmnz", "mixed", "max",
                                                              "min", "med", "wsum"))
_RRF, _WRRF, _RBC, _MAPFUSE, _POSFUSE, _PROBFUSE, _SEGFUSE, _SLIDEFUSE, _BORDA, \
    _W_BORDAFUSE, _BAYESFUSE = (_CODES[m] for m in (
        "rrf", "wrrf", "rbc", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse",
        "borda", "w_bordafuse", "bayesfuse"))
_ISR_FAMILY = (_CODES["isr"], _CODES["log_isr"], _CODES["logn_isr"])
_FIRST_BY_RANK = _RRF  # codes from here on read ranks, those before values

#: What the kernels take of a method's parameters: ``per_run`` (weights; ``mapfuse``: the
#: MAP scores), ``k``, ``per_rank`` (``rbc``'s weight of each rank, from 1), ``trained``
#: (the runs' trained arrays end to end: ``probs``, ``slidefuse``'s cumulative sums of
#: them from 0, ``log_odds``; run ``r``'s are ``trained[trained_bounds[r]:trained_bounds[r
#: + 1]]``) and ``w``.
MethodArgs = namedtuple("MethodArgs", "per_run k per_rank trained trained_bounds w")

#: What :func:`_combine` writes, per pair: ``total`` (the runs' parts combined), ``count``
#: (its terms) and, for ``wmnz``, ``extra`` (the sum of their weights; else empty).
Combined = namedtuple("Combined", "total count extra")

#: :func:`_combine_query`'s scratch, one set per chunk of queries (see its doc).
CombineScratch = namedtuple("CombineScratch", "seen unranked parts gathered")


def fused_scores(method, scored, pairs, params):
    """Each pair's fused score (float64, ``pairs.n_pairs``): one kernel over the queries,
    then the methods' factors of the number of runs per pair, as numpy computes them."""
    if method in ("condorcet", "w_condorcet"):
        return condorcet(pairs, scored, params.get("weights", np.ones(pairs.n_runs)))
    if method == "bayesfuse":
        _within_training(params["log_odds"], pairs, scored, "log_odds")
    total, count, extra = _combined(method, scored, pairs, params)
    with np.errstate(divide="ignore", invalid="ignore"):
        if method in ("mnz", "isr"):
            return total * count
        if method == "gmnz":
            return total * np.power(count.astype(np.float64), params["gamma"])
        if method == "anz":
            return total / count
        if method == "mixed":
            return total * np.sqrt(count)
        if method == "wmnz":
            return total * extra
        if method == "log_isr":
            return total * np.log(count)
        if method == "logn_isr":
            return total * np.log(count + params["sigma"])
    return total


def _combined(method, scored, pairs, params):
    """Per pair, the kernel's sum (or extreme, or median) over the runs, its number of
    terms and (``wmnz``) the sum of their weights."""
    total = np.empty(pairs.n_pairs)
    count = np.empty(pairs.n_pairs, dtype=np.int64)
    extra = np.empty(pairs.n_pairs if method == "wmnz" else 0)
    _jit.launch(_combine, pairs.chunks, pairs.layout, pairs.sources, _kernel_scored(scored),
                _CODES[method], _method_args(method, pairs, params),
                median_network(pairs.n_runs if method == "med" else 0),
                Combined(total, count, extra))
    return total, count, extra


def _ranks(scored):
    """The kernels' ranks: an empty array for the rows' own ranking."""
    return np.empty(0, dtype=np.int64) if scored.ranks is None else scored.ranks


def _kernel_scored(scored):
    """``scored`` (:data:`Scored`) as the kernels read it: its ranks by :func:`_ranks`."""
    return Scored(scored.values, _ranks(scored), scored.every)


def _method_args(method, pairs, params):
    """The kernels' :data:`MethodArgs` of a method's parameters."""
    per_run = params.get("weights", params.get("map_scores", np.ones(pairs.n_runs)))
    per_rank = np.zeros(0)
    if method == "rbc":
        longest = int(np.diff(pairs.run_bounds).max(initial=0))
        phi = params["phi"]
        per_rank = (1 - phi) * np.power(phi, np.arange(longest, dtype=np.float64))
    arrays = params.get("probs", params.get("log_odds", []))
    if method == "slidefuse":
        arrays = [np.concatenate(([0.0], np.cumsum(probs))) for probs in arrays]
    trained_bounds = np.cumsum([0] + [len(a) for a in arrays]).astype(np.int64)
    trained = np.concatenate(arrays) if len(arrays) else np.zeros(0)
    return MethodArgs(np.asarray(per_run, dtype=np.float64), float(params.get("k", 60)),
                      per_rank, trained.astype(np.float64), trained_bounds,
                      int(params.get("w", 0)))


def parts(method, scored, pairs, params):
    """(n_runs, n_pairs): what a weight multiplies in a :data:`LINEAR` method (``wsum``:
    the value, 0 where the run has none; ``wrrf``: ``1 / (k + r)``, 0 where not retrieved;
    ``w_bordafuse``: the Borda points)."""
    out = np.empty((pairs.n_runs, pairs.n_pairs))
    _jit.launch(_run_parts, pairs.chunks, pairs.layout, pairs.sources, _kernel_scored(scored),
                _CODES[method], _method_args(method, pairs, params), out)
    return out


def _within_training(arrays, pairs, scored, what):
    """Refuse a rank beyond a run's trained positions (``arrays[r]``), naming the first
    run's first such doc."""
    lengths = np.diff(pairs.run_bounds).reshape(-1, pairs.n_runs)
    for r, array in enumerate(arrays):
        over = np.flatnonzero(lengths[:, r] > len(array))
        if not len(over):
            continue
        s = over[0] * pairs.n_runs + r
        rows = np.arange(pairs.run_bounds[s], pairs.run_bounds[s + 1])
        ranks = rows - rows[0] + 1 if scored.ranks is None else \
            scored.ranks[pairs.source_rows(rows)]
        row = rows[np.flatnonzero(ranks == len(array) + 1)[0]]
        pair = pairs.pair_bounds[over[0]] + pairs.local_pair[row]
        raise ValueError(
            f"{what}: run {r} ranks {pairs.where(pair=pair)} at "
            f"{len(array) + 1}, beyond its {len(array)} trained positions; fuse each run's "
            f"top {len(array)} (depth={len(array)}) or train on deeper runs")


@functools.cache
def median_network(n_runs):
    """The comparators ``(a, b)``, ``a < b``, of Batcher's odd-even merge sort of
    ``n_runs`` places (an int64 array of shape (k, 2)), less those no place from 0 to
    ``n_runs // 2`` depends on: the places a median of up to ``n_runs`` values reads once
    the places after its values hold +inf."""
    comparators = []
    p = 1
    while p < n_runs:
        k = p
        while k >= 1:
            for j in range(k % p, n_runs - k, 2 * k):
                for i in range(min(k, n_runs - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        comparators.append((i + j, i + j + k))
            k //= 2
        p *= 2
    read = set(range(n_runs // 2 + 1))
    kept = []
    for a, b in reversed(comparators):
        if a in read or b in read:
            kept.append((a, b))
            read.update((a, b))
    return np.array(kept[::-1], dtype=np.int64).reshape(-1, 2)


@pjit
def _combine(bounds, layout, sources, scored, code, args, network, out):
    """Per query (chunks ``bounds[c]:bounds[c + 1]`` of queries; the pairs' :data:`Layout`
    and :data:`Sources`), each pair's combination over the runs, in run order, into
    ``out`` (:data:`Combined`): ``total`` (the sum of the runs' parts, their weighted sum,
    their extreme or their median), ``count`` (its terms) and, for ``wmnz``, ``extra`` (the
    sum of their weights). A run gives a part (from ``scored``, :data:`Scored` with ranks
    by :func:`_ranks`) for each doc it ranked and, with the methods of
    :func:`_gives_unranked`, for each candidate it did not rank; method ``code`` (its
    parameters ``args``, :data:`MethodArgs`). ``network``: ``med``'s
    :func:`median_network`."""
    n_runs, run_bounds, pair, pair_bounds = layout  # (as locals: see fastir.model.join)
    dense = _gives_unranked(code, scored.every)
    widest = 0
    for q in range(len(pair_bounds) - 1):
        widest = max(widest, pair_bounds[q + 1] - pair_bounds[q])
    for c in prange(len(bounds) - 1):
        seen = np.empty(widest if dense else 0, dtype=np.int64)
        unranked = np.empty(widest if dense else 0, dtype=pair.dtype)
        parts = np.empty(widest)
        gathered = np.empty(widest * n_runs if code == _MED else 0)
        scratch = CombineScratch(seen, unranked, parts, gathered)
        for q in range(bounds[c], bounds[c + 1]):
            _combine_query(q, layout, sources, scored, dense, code, args, network, out,
                           scratch)


# The row loops are in helpers, called once per query: a kernel compiled with reference
# counting that calls a helper per row (one not inlined, taking arrays) increments and
# decrements each array on every call (measured: 8x the whole loop's time).
@helper
def _combine_query(q, layout, sources, scored, dense, code, args, network, out, scratch):
    """:func:`_combine` of query ``q``, run after run: the run's parts of its rows (the
    values where they are, for the methods of values), then, when ``dense``, of the
    candidates it did not rank (``scratch``, :data:`CombineScratch`: ``seen``,
    ``unranked``, ``parts``). ``med`` gathers pair ``j``'s parts in ``gathered[j]``,
    ``gathered[n + j]``..., +inf after them."""
    n_runs, run_bounds, pair, pair_bounds = layout
    values, ranks = scored.values, scored.ranks
    total, count, extra = out
    seen, unranked, parts, gathered = scratch
    per_run = args.per_run
    base = pair_bounds[q]
    n = pair_bounds[q + 1] - base
    start = -np.inf if code == _MAX else np.inf if code == _MIN else 0.0  # (parts are finite)
    for p in range(base, base + n):
        total[p] = start
        count[p] = 0
    if code == _WMNZ:
        for p in range(base, base + n):
            extra[p] = 0.0
    if dense:
        for j in range(n):
            seen[j] = -1
    if code == _MED:
        gathered[:n_runs * n] = np.inf
    for r in range(n_runs):
        s = q * n_runs + r
        lo, hi = run_bounds[s], run_bounds[s + 1]
        m = hi - lo
        in_place, offset = segment_source(sources, s, lo)
        if code < _FIRST_BY_RANK and in_place:
            ranked = values[lo + offset:hi + offset]
        else:
            for i in range(lo, hi):
                row = source_row(sources.src, in_place, offset, i)
                rank = i - lo + 1 if len(ranks) == 0 else ranks[row]
                parts[i - lo] = _part(code, args, r, values[row], rank, m, n)
            ranked = parts[:m]
        _add(code, per_run[r], ranked, pair[lo:hi], base, n, total, count, extra, gathered)
        if dense:
            for i in range(lo, hi):
                seen[pair[i]] = r
            k = 0
            for j in range(n):
                if seen[j] != r:
                    unranked[k] = j
                    parts[k] = _unranked_part(code, m, n)
                    k += 1
            _add(code, per_run[r], parts[:k], unranked[:k], base, n, total, count, extra,
                 gathered)
    if code == _MED:
        _medians(gathered[:n_runs * n], n, network, count[base:base + n],
                 total[base:base + n])


@pjit
def _run_parts(bounds, layout, sources, scored, code, args, out):
    """:func:`parts` per query: ``out[r, p]``, run ``r``'s part of pair ``p`` (see
    :func:`_combine`; 0 where it gives none)."""
    dense = _gives_unranked(code, scored.every)
    for c in prange(len(bounds) - 1):
        for q in range(bounds[c], bounds[c + 1]):
            _query_parts(q, layout, sources, scored, dense, code, args, out)


@helper
def _query_parts(q, layout, sources, scored, dense, code, args, out):
    """:func:`_run_parts` of query ``q``."""
    n_runs, run_bounds, pair, pair_bounds = layout
    values, ranks = scored.values, scored.ranks
    base = pair_bounds[q]
    n = pair_bounds[q + 1] - base
    for r in range(n_runs):
        s = q * n_runs + r
        lo, hi = run_bounds[s], run_bounds[s + 1]
        unranked = _unranked_part(code, hi - lo, n) if dense else 0.0
        for j in range(base, base + n):
            out[r, j] = unranked
        in_place, offset = segment_source(sources, s, lo)
        for i in range(lo, hi):
            row = source_row(sources.src, in_place, offset, i)
            rank = i - lo + 1 if len(ranks) == 0 else ranks[row]
            out[r, base + pair[i]] = _part(code, args, r, values[row], rank, hi - lo, n)


@helper
def _part(code, args, r, value, rank, m, n):
    """Run ``r``'s part of a doc it ranked at ``rank`` (its value ``value``; ``m``: the docs
    it ranked for the query, ``n``: the query's candidates); see the module doc."""
    if code < _FIRST_BY_RANK:
        return value
    if code == _RRF or code == _WRRF:
        return 1 / (args.k + rank)
    if code in _ISR_FAMILY:
        return 1 / (float(rank) * float(rank))
    if code == _RBC:
        return args.per_rank[rank - 1]
    if code == _MAPFUSE:
        return args.per_run[r] / rank
    if code == _BORDA or code == _W_BORDAFUSE:
        return n - (rank - 1.0)
    return _trained_part(code, args.trained, args.trained_bounds[r],
                         args.trained_bounds[r + 1], args.w, value, rank, m)


@helper
def _trained_part(code, trained, lo, hi, w, value, rank, m):
    """:func:`_part` of the trained methods, from the run's ``trained[lo:hi]`` (apart:
    :func:`_part` stays small enough to be inlined in the row loops; called with one
    array, not :data:`MethodArgs`, for a cheap call)."""
    size = hi - lo
    i = rank - 1
    if code == _BAYESFUSE:
        return trained[lo + i]
    if code == _POSFUSE:
        return trained[lo + i] if i < size else 0.0
    if code == _PROBFUSE:
        j = i // max(-(-m // size), 1)  # (segments of ceil(m / size) docs)
        return trained[lo + j] / (j + 1)
    if code == _SEGFUSE:
        j = 0
        while j < 10 and i >= SEGFUSE_BOUNDS[j + 1]:
            j += 1
        return (trained[lo + j] if j < min(size, 10) else 0.0) * (value + 1)
    # slidefuse: the mean of probs over the window, from their cumulative sums
    size -= 1
    a, b = max(i - w, 0), min(i + w, m - 1)
    return (trained[lo + min(b + 1, size)] - trained[lo + min(a, size)]) / \
        (b - a + 1)


@helper
def _gives_unranked(code, every):
    """Whether a run gives a part for each candidate it did not rank
    (:func:`_unranked_part`): with ``borda``, ``w_bordafuse`` and ``bayesfuse``, and with
    the methods of values after the ``borda`` normalisation (``every``)."""
    return code == _BORDA or code == _W_BORDAFUSE or code == _BAYESFUSE or \
        (every and code < _FIRST_BY_RANK)


@helper
def _unranked_part(code, m, n):
    """A run's part of a candidate it did not rank (it ranked ``m`` of the ``n``)."""
    if code == _BORDA or code == _W_BORDAFUSE:
        return (n - m + 1) / 2.0
    if code == _BAYESFUSE:
        return MIN_ODD
    return unranked_value(m, n)  # (the methods of values, after borda)


@helper
def _add(code, weight, parts, where, base, n, total, count, extra, gathered):
    """Add a run's ``parts`` (of weight ``weight``) to the combinations of the pairs ``base
    + where[k]`` (distinct; ``n`` of them in the query): the method's case chosen once,
    then a loop over the parts."""
    if code == _MAX:  # (from -inf: the first part, then a greater one)
        for k in range(len(parts)):
            p = base + where[k]
            total[p] = parts[k] if parts[k] > total[p] else total[p]
    elif code == _MIN:
        for k in range(len(parts)):
            p = base + where[k]
            total[p] = parts[k] if parts[k] < total[p] else total[p]
    elif code == _MED:
        for k in range(len(parts)):
            gathered[count[base + where[k]] * n + where[k]] = parts[k]
    elif code == _WSUM or code == _WRRF or code == _W_BORDAFUSE:
        if weight != 0:  # (terms of weight 0 left out: evaluate_weighted's sum)
            for k in range(len(parts)):
                p = base + where[k]
                total[p] = total[p] + weight * parts[k]
    elif code == _MIXED:
        for k in range(len(parts)):
            p = base + where[k]
            total[p] = total[p] + parts[k] * weight
    elif code == _WMNZ:
        for k in range(len(parts)):
            p = base + where[k]
            total[p] = total[p] + parts[k]
            extra[p] = extra[p] + weight
    else:
        for k in range(len(parts)):
            p = base + where[k]
            total[p] = total[p] + parts[k]
    for k in range(len(parts)):
        count[base + where[k]] += 1


@helper
def _medians(gathered, n, network, count, median):
    """``median[j]``, the median of the ``count[j]`` values ``gathered[j]``,
    ``gathered[n + j]``...: the mean of the two middle ones of their stable sort (one
    pass of ``network``'s comparators over all ``n`` pairs for each, then the middle
    places). Sorted that way a -0.0 and a 0.0 could trade places: a query with a -0.0
    counts each value's place instead."""
    bits = gathered.view(np.int64)
    negative_zero = False
    for i in range(len(bits)):
        negative_zero |= bits[i] == _NEGATIVE_ZERO_BITS
    if negative_zero:
        for j in range(n):
            median[j] = _median(gathered, j, n, count[j])
        return
    for t in range(len(network)):
        low = gathered[network[t, 0] * n:(network[t, 0] + 1) * n]
        high = gathered[network[t, 1] * n:(network[t, 1] + 1) * n]
        for j in range(n):
            x, y = low[j], high[j]
            low[j] = x if x < y else y
            high[j] = y if x < y else x
    for j in range(n):
        c = count[j]
        median[j] = (gathered[(c - 1) // 2 * n + j] + gathered[c // 2 * n + j]) / 2


#: The bits of -0.0 read as an int64.
_NEGATIVE_ZERO_BITS = np.int64(-2 ** 63)


@helper
def _median(values, start, stride, c):
    """The median of the ``c`` values ``values[start]``, ``values[start + stride]``...:
    the mean of the two middle ones of their stable sort (each value's place in it
    counted, without branches: the values it follows)."""
    low, high = 0.0, 0.0
    for i in range(c):
        x = values[start + i * stride]
        place = 0
        for j in range(c):
            y = values[start + j * stride]
            place += (y < x) | ((y == x) & (j < i))
        if place == (c - 1) // 2:
            low = x
        if place == c // 2:
            high = x
    return (low + high) / 2


def condorcet(pairs, scored, weights):
    """Condorcet fusion's scores (see the module doc), one kernel over the queries."""
    out = np.empty(pairs.n_pairs)
    _jit.launch(_condorcet_sort, pairs.chunks, pairs.layout, pairs.sources, _ranks(scored),
                np.zeros(pairs.n_pairs), pairs.pair_docs.args(),
                np.asarray(weights, dtype=np.float64), out)
    return out


@pjit
def _condorcet_sort(bounds, layout, sources, ranks, no_scores, docs, weights, out):
    """Per query, its pairs (in doc id descending order first) merge-sorted by
    :func:`_beats` (stable: a later doc goes first only when it beats the earlier);
    ``out[p]`` is ``n - position``. ``docs``: the pairs' doc ids."""
    n_runs, run_bounds, pair, pair_bounds = layout  # (as locals: see fastir.model.join)
    widest = 0
    for q in range(len(pair_bounds) - 1):
        widest = max(widest, pair_bounds[q + 1] - pair_bounds[q])
    for c in prange(len(bounds) - 1):
        votes = np.empty(widest * n_runs, dtype=np.int64)
        a = np.empty(widest, dtype=np.int64)
        b = np.empty(widest, dtype=np.int64)
        by_doc = RankKey(no_scores, None, docs)  # (made in the loop: see fastir.model.join)
        for q in range(bounds[c], bounds[c + 1]):
            base = pair_bounds[q]
            n = pair_bounds[q + 1] - base
            votes[:n * n_runs] = 0
            for r in range(n_runs):
                s = q * n_runs + r
                _rank_votes(votes, n_runs, r, s, run_bounds[s], run_bounds[s + 1], sources,
                            pair, ranks)
            for j in range(n):
                a[j] = base + j
            rank_sort(a[:n], by_doc, b)  # (equal scores: doc id descending)
            for j in range(n):
                a[j] -= base
            _merge_sort(a[:n], b[:n], votes, n_runs, weights)
            for position in range(n):
                out[base + a[position]] = n - position


@helper
def _rank_votes(votes, n_runs, r, s, lo, hi, sources, pair, ranks):
    """Run ``r``'s rank of each pair it ranked (its kept rows ``lo:hi``, segment ``s``):
    ``votes[p * n_runs + r]``."""
    in_place, offset = segment_source(sources, s, lo)
    for i in range(lo, hi):
        votes[pair[i] * n_runs + r] = i - lo + 1 if len(ranks) == 0 else \
            ranks[source_row(sources.src, in_place, offset, i)]


@helper
def _merge_sort(a, b, votes, n_runs, weights):
    """Sort the pairs ``a`` stably by :func:`_beats` (``b``: scratch), bottom-up."""
    n = len(a)
    width = 1
    while width < n:
        for start in range(0, n, 2 * width):
            mid, end = min(start + width, n), min(start + 2 * width, n)
            i, j, k = start, mid, start
            while i < mid and j < end:
                if _beats(votes, n_runs, weights, a[j], a[i]):
                    b[k] = a[j]
                    j += 1
                else:
                    b[k] = a[i]
                    i += 1
                k += 1
            while i < mid:
                b[k] = a[i]
                i += 1
                k += 1
            while j < end:
                b[k] = a[j]
                j += 1
                k += 1
        for k in range(n):
            a[k] = b[k]
        width *= 2


@helper
def _beats(votes, n_runs, weights, x, y):
    """Whether the runs ranking ``x`` above ``y`` outweigh those ranking ``y`` above ``x``
    (``votes[p * n_runs + r]``: pair ``p``'s rank in run ``r``, 0 where not retrieved)."""
    for_x, for_y = 0.0, 0.0  # (summed apart, in run order: ranx's rounding of the votes)
    for r in range(n_runs):
        rx, ry = votes[x * n_runs + r], votes[y * n_runs + r]
        if rx > 0 and (ry == 0 or rx < ry):
            for_x += weights[r]
        elif ry > 0 and (rx == 0 or ry < rx):
            for_y += weights[r]
    return for_x > for_y
