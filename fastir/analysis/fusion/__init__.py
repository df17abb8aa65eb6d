"""Rank fusion (:func:`fuse`), what its trainable methods learn (:func:`train_fusion`) and a
search of its parameters (:func:`optimize_fusion`); the fused runs are written by
:func:`fastir.write_run` (:mod:`fastir.io.writers`).

Runs are fused query by query, each step one parallel kernel over the queries: each run's
rows of a query ranked and its docs matched with the other runs' (:mod:`.pairs`: the union
of the runs' (query, doc) pairs), normalised (:mod:`.norms`), then combined pair by pair,
run after run, by a method (:mod:`.methods`, which gives each definition). Trained
parameters come from :mod:`.training`, the search from :mod:`.search`.
"""

import numpy as np

from fastir import _jit
from fastir.analysis.fusion.inputs import depth as checked_depth
from fastir.analysis.fusion.inputs import load_runs
from fastir.analysis.fusion.methods import METHODS, PARAMS, checked_k, checked_params, fused_scores
from fastir.analysis.fusion.methods import method_name as _method_name
from fastir.analysis.fusion.norms import NORMS, norm_name, normalise
from fastir.analysis.fusion.pairs import Pairs
from fastir.analysis.fusion.search import MAX_GRID_POINTS, FusionSearch, optimize_fusion
from fastir.analysis.fusion.training import TRAINABLE, train_fusion


def fuse(runs, method="rrf", *, weights=None, norm=None, k=60, depth=None, name=None,
         gamma=None, sigma=None, phi=None, w=None, probs=None, map_scores=None,
         log_odds=None):
    """Fuse runs into one :class:`Run`.

    Parameters
    ----------
    runs : list or dict
        Two or more runs (:class:`Run`, ``{query: {doc: score}}`` dict or path), or
        ``{name: run}``. A query absent from a run is one the run retrieved nothing for.
    method : str
        Of scores: ``sum`` (CombSUM), ``mnz``, ``gmnz``, ``max``, ``min``, ``med``,
        ``anz``, ``wsum``, ``mixed``, ``wmnz``; of ranks: ``rrf``, ``wrrf``, ``isr``,
        ``log_isr``, ``logn_isr``, ``rbc``, ``borda``, ``w_bordafuse``, ``condorcet``,
        ``w_condorcet``; trained: ``mapfuse``, ``posfuse``, ``probfuse``, ``segfuse``,
        ``slidefuse``, ``bayesfuse`` (ranx's names too: ``comb_sum``, ``bordafuse``...).
    weights : sequence of float, optional
        One per run, for ``wsum``, ``wrrf``, ``mixed``, ``wmnz``, ``w_bordafuse``,
        ``w_condorcet`` (default: 1 each); finite, of any sign.
    norm : str, optional
        Score normalisation first: ``min-max``, ``min-max-inverted``, ``zmuv`` (z-score),
        ``sum``, ``max``, ``rank``, ``borda`` (default: none).
    k : float
        RRF's constant (``rrf``, ``wrrf``): a finite number, 0 or more.
    depth : int, optional
        Fuse only each run's top ``depth`` docs per query.
    name : str, optional
        The fused run's tag (default: the method).
    gamma : float
        ``gmnz``'s exponent of the number of runs (no default, as ranx).
    sigma : float
        ``logn_isr``'s constant, in [0, 1] (default 0.01).
    phi : float
        ``rbc``'s persistence, in [0, 1] (no default, as ranx).
    w : int
        ``slidefuse``'s window half-width (no default, as ranx).
    probs, map_scores, log_odds
        What :func:`train_fusion` learnt: ``probs`` for ``posfuse``, ``probfuse``,
        ``segfuse`` and ``slidefuse``; ``map_scores`` for ``mapfuse``; ``log_odds`` for
        ``bayesfuse`` (one array or number per run).

    :mod:`fastir.analysis.fusion.methods` gives each definition. Scores must be finite; a
    normalisation is computed without overflow however large they are (``min-max`` of
    -1e308 and 1e308 is 0 and 1), and a fused score beyond a double (``sum`` of 1e308 and
    1e308) is refused, not returned as ``inf``.

    Examples
    --------
    >>> import fastir
    >>> a = {"q": {"d1": 3.0, "d2": 2.0}}
    >>> b = {"q": {"d2": 0.9, "d3": 0.1}}
    >>> fastir.fuse([a, b], "rrf", k=1).to_dict()
    {'q': {'d2': 0.8333333333333333, 'd1': 0.5, 'd3': 0.3333333333333333}}
    """
    method = _method_name(method)
    norm = norm_name(norm)
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"name: the fused run's tag, a non-empty string, got {name!r}")
    names, loaded = load_runs(runs)
    given = {"weights": weights, "k": k, "gamma": gamma, "sigma": sigma, "phi": phi, "w": w,
             "probs": probs, "map_scores": map_scores, "log_odds": log_odds}
    checked_k(k)  # (whatever the method; None too: k's default is 60, not None)
    params = checked_params(method, len(loaded), given)
    depth = checked_depth(depth)
    with _jit.tier(sum(len(r) for r in loaded)):
        pairs = Pairs(loaded, depth)
        scored = normalise(pairs, norm, names)
        with np.errstate(over="ignore", invalid="ignore"):  # (refused just below)
            scores = fused_scores(method, scored, pairs, params)
        _finite_fused(scores, pairs, method, norm, given)
        return pairs.run(scores, name or method)


def _finite_fused(scores, pairs, method, norm, given):
    """Refuse a fused score beyond a double (``sum`` of 1e308 and 1e308): ``inf`` would rank
    as a tie and write as no number."""
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        p = bad[0]
        said = ", ".join(f"{key}={value!r}" for key, value in given.items()
                         if value is not None and key in PARAMS.get(method, {}))
        raise ValueError(
            f"method: {method!r} (norm={norm!r}{', ' + said if said else ''}) gives "
            f"{pairs.where(pair=p)} a score beyond a double ({scores[p]}); scale the runs' "
            f"scores or the weights down, or normalise them (norm='min-max')")


__all__ = ["fuse", "optimize_fusion", "train_fusion", "FusionSearch", "METHODS", "NORMS",
           "PARAMS", "TRAINABLE", "MAX_GRID_POINTS"]
