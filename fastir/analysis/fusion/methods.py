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

import math

import numpy as np

from fastir import _jit
from fastir._jit import helper, pjit, prange
from fastir.analysis.fusion.inputs import choice, number, numbers, vectors

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
#: The methods that read each run's ranking (and which docs it retrieved), not its values.
BY_RANK = ("rrf", "wrrf", "isr", "log_isr", "logn_isr", "borda", "w_bordafuse", "condorcet",
           "w_condorcet", "rbc", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse",
           "bayesfuse")
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


def fused_scores(method, scored, pairs, params):
    """Each pair's fused score (float64, ``pairs.n_pairs``)."""
    values, present, ranks = scored
    retrieved = ranks > 0
    if method in LINEAR:
        return weighted_sum(params["weights"], parts(method, scored, pairs, params))
    if method in ("condorcet", "w_condorcet"):
        return condorcet(pairs, ranks, params.get("weights", np.ones(pairs.n_runs)))
    if method in BY_RANK:
        return _by_rank(method, scored, pairs, params, retrieved)
    count = present.sum(axis=0)
    if method in ("max", "min"):
        pick = np.max if method == "max" else np.min
        return pick(np.where(present, values, -np.inf if method == "max" else np.inf), axis=0)
    if method == "med":
        ordered = np.sort(np.where(present, values, np.inf), axis=0)
        cols = np.arange(pairs.n_pairs)
        return (ordered[(count - 1) // 2, cols] + ordered[count // 2, cols]) / 2
    if method == "mixed":
        return _sum(values * params["weights"][:, None], present) * np.sqrt(count)
    total = _sum(values, present)
    if method == "mnz":
        return total * count
    if method == "gmnz":
        return total * np.power(count.astype(np.float64), params["gamma"])
    if method == "anz":
        return total / count
    if method == "wmnz":
        return total * _sum(np.broadcast_to(params["weights"][:, None], present.shape),
                            present)
    return total  # sum


def _by_rank(method, scored, pairs, params, retrieved):
    ranks = scored.ranks
    count = retrieved.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "rrf":
            return _sum(1 / (params["k"] + ranks), retrieved)
        if method in ("isr", "log_isr", "logn_isr"):
            total = _sum(1 / (ranks * ranks), retrieved)
            if method == "isr":
                return total * count
            return total * np.log(count + (params["sigma"] if method == "logn_isr" else 0))
        if method == "borda":
            return _sum(parts("borda", scored, pairs, params), np.ones_like(retrieved))
        if method == "rbc":
            phi = params["phi"]
            return _sum((1 - phi) * np.power(phi, ranks - 1), retrieved)
        if method == "mapfuse":
            return _sum(params["map_scores"][:, None] / ranks, retrieved)
        if method == "bayesfuse":
            return _sum(_at_rank(params["log_odds"], ranks, retrieved, pairs, "log_odds"),
                        np.ones_like(retrieved))
    return _sum(_trained_parts(method, scored, pairs, params), retrieved)


def _sum(parts, mask):
    """``sum(parts[r])`` over the runs where ``mask``, in run order from 0.0 (as ranx)."""
    total = np.zeros(parts.shape[1])
    for r in range(len(parts)):
        total = total + np.where(mask[r], parts[r], 0.0)
    return total


def weighted_sum(weights, parts):
    """``sum(w[r] * parts[r])`` in run order from 0.0, as
    :meth:`~fastir.BoundCandidates.evaluate_weighted` sums it (terms of weight 0 left
    out)."""
    total = np.zeros(parts.shape[1])
    for r in range(len(parts)):
        if weights[r] != 0:
            total = total + weights[r] * parts[r]
    return total


def parts(method, scored, pairs, params):
    """(n_runs, n_pairs): what a weight multiplies in a :data:`LINEAR` method (``wsum``:
    the value; ``wrrf``: ``1 / (k + r)``; ``borda``, ``w_bordafuse``: the Borda points)."""
    values, present, ranks = scored
    retrieved = ranks > 0
    if method == "wsum":
        return np.where(present, values, 0.0)
    if method == "wrrf":
        with np.errstate(divide="ignore"):
            return np.where(retrieved, 1 / (params["k"] + ranks), 0.0)
    cand = pairs.candidates[pairs.pair_query].astype(np.float64)
    return np.where(retrieved, cand - (ranks - 1), (cand - pairs.run_lengths() + 1) / 2)


def _at_rank(arrays, ranks, retrieved, pairs, what):
    """(n_runs, n_pairs): ``arrays[r][rank - 1]`` where retrieved (bayesfuse's
    :data:`MIN_ODD` elsewhere); a rank beyond the array is refused."""
    out = np.full(ranks.shape, MIN_ODD)
    for r, array in enumerate(arrays):
        rows = np.flatnonzero(retrieved[r])
        position = ranks[r, rows].astype(np.int64) - 1
        beyond = np.flatnonzero(position >= len(array))
        if len(beyond):
            p = rows[beyond[0]]
            raise ValueError(
                f"{what}: run {r} ranks {pairs.where(pair=p)} at {position[beyond[0]] + 1}, "
                f"beyond its {len(array)} trained positions; fuse each run's top "
                f"{len(array)} (depth={len(array)}) or train on deeper runs")
        out[r, rows] = array[position]
    return out


def _trained_parts(method, scored, pairs, params):
    """(n_runs, n_pairs) per-run scores of ``posfuse``, ``probfuse``, ``segfuse`` and
    ``slidefuse`` (0 where the run did not retrieve the doc)."""
    out = np.zeros((pairs.n_runs, pairs.n_pairs))
    position = scored.ranks[pairs.run_of, pairs.pair].astype(np.int64) - 1  # per row
    length = pairs.length
    for r, probs in enumerate(params["probs"]):
        rows = np.flatnonzero(pairs.run_of == r)
        i, m = position[rows], length[rows]
        if method == "posfuse":
            got = np.where(i < len(probs), probs[np.minimum(i, len(probs) - 1)], 0.0) \
                if len(probs) else np.zeros(len(rows))
        elif method == "probfuse":
            size = -(-m // max(len(probs), 1))  # ceil(m / n_segments)
            j = i // np.maximum(size, 1)
            got = probs[j] / (j + 1) if len(probs) else np.zeros(len(rows))
        elif method == "segfuse":
            j = np.searchsorted(SEGFUSE_BOUNDS, i, side="right") - 1
            inside = j < min(len(probs), 10)
            value = scored.values[r, pairs.pair[rows]]
            got = np.where(inside, np.append(probs[:10], 0.0)[np.where(inside, j, -1)],
                           0.0) * (value + 1)
        else:  # slidefuse
            w = params["w"]
            cum = np.concatenate(([0.0], np.cumsum(probs)))
            a, b = np.maximum(i - w, 0), np.minimum(i + w, m - 1)
            top = np.minimum(b + 1, len(probs))
            got = (cum[top] - cum[np.minimum(a, len(probs))]) / (b - a + 1)
        out[r, pairs.pair[rows]] = got
    return out


def condorcet(pairs, ranks, weights):
    """Condorcet fusion's scores (see the module doc), one kernel over the queries."""
    order = np.lexsort((pairs.tie(pairs.pair_doc), pairs.pair_query)).astype(np.int64)
    out = np.zeros(pairs.n_pairs)
    by_pair = np.ascontiguousarray(ranks.T)
    _jit.launch(_condorcet_sort, pairs.pair_bounds, order, by_pair,
                np.asarray(weights, dtype=np.float64), out)
    return out


@pjit
def _condorcet_sort(pair_bounds, order, ranks, weights, out):
    """Per query, its pairs ``order[pair_bounds[q]:pair_bounds[q + 1]]`` merge-sorted by
    :func:`_beats` (stable: a later doc goes first only when it beats the earlier);
    ``out[p]`` is ``n - position``."""
    for q in prange(len(pair_bounds) - 1):
        lo, hi = pair_bounds[q], pair_bounds[q + 1]
        n = hi - lo
        a = order[lo:hi].copy()
        b = np.empty(n, dtype=np.int64)
        width = 1
        while width < n:
            for start in range(0, n, 2 * width):
                mid, end = min(start + width, n), min(start + 2 * width, n)
                i, j, k = start, mid, start
                while i < mid and j < end:
                    if _beats(ranks, weights, a[j], a[i]):
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
            a, b = b, a
            width *= 2
        for position in range(n):
            out[a[position]] = n - position


@helper
def _beats(ranks, weights, x, y):
    """Whether the runs ranking ``x`` above ``y`` outweigh those ranking ``y`` above ``x``
    (``ranks[p, r]``: pair ``p``'s rank in run ``r``, 0 where not retrieved)."""
    for_x, for_y = 0.0, 0.0  # (summed apart, in run order: ranx's rounding of the votes)
    for r in range(ranks.shape[1]):
        rx, ry = ranks[x, r], ranks[y, r]
        if rx > 0 and (ry == 0 or rx < ry):
            for_x += weights[r]
        elif ry > 0 and (rx == 0 or ry < rx):
            for_y += weights[r]
    return for_x > for_y
