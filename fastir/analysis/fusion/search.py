"""A search of a fusion method's parameters (:func:`optimize_fusion`): the measure of every
setting of a grid, on judged queries (and held-out ones).

The candidates (the union of the runs' docs) are joined with the qrels once
(:meth:`fastir.Evaluator.bind`); each setting then costs one re-scoring. Weights of the
methods whose fused score is a weighted sum (``wsum``, ``wrrf``, ``w_bordafuse``) are
scored inside the bound kernel, never built (:meth:`~fastir.BoundCandidates.evaluate_weighted`);
the other settings' fused scores are built in batches and evaluated together.
"""

import numpy as np

from fastir import _jit
from fastir.analysis.fusion.inputs import depth as checked_depth
from fastir.analysis.fusion.inputs import load_runs, number, real
from fastir.analysis.fusion.methods import (
    LINEAR,
    PARAMS,
    checked_params,
    fused_scores,
    method_name,
    parts,
)
from fastir.analysis.fusion.norms import norm_name, normalise, row_ranks
from fastir.analysis.fusion.pairs import Pairs
from fastir.analysis.fusion.training import Hits
from fastir.io.inputs import as_qrels, size_hint
from fastir.model.data import Qrels
from fastir.model.ids import Ids, rows_of
from fastir.output.tables import markdown_row

MAX_GRID_POINTS = 10**6  # the most weight vectors optimize_fusion's simplex grid may hold
#: The methods with one parameter to search, its name and ranx's values to try.
ONE_PARAMETER = {
    "rrf": ("k", list(range(10, 101, 10))),
    "gmnz": ("gamma", None), "logn_isr": ("sigma", None), "rbc": ("phi", None),
    "slidefuse": ("w", list(range(1, 101))), "probfuse": ("n_segments", list(range(1, 101))),
}
WEIGHTED = tuple(m for m, p in PARAMS.items() if "weights" in p)
_BATCH = 2**24  # fused scores built at once (128 MiB)


def hundredths():
    """ranx's grid of gamma, sigma and phi: 0.01 to 1.0 in steps of 0.01."""
    return [round(x, 2) for x in np.arange(0.01, 1.0 + 0.01, 0.01)]


def optimize_fusion(qrels, runs, measure, method="wsum", norm="min-max", *, step=0.1,
                    grid=None, values=None, k=60, depth=None, test_queries=None, **options):
    """Search a fusion method's parameters: the best of every setting of a grid.

    Weights (``wsum``, ``wrrf``, ``mixed``, ``wmnz``, ``w_bordafuse``, ``w_condorcet``) are
    searched on the simplex: every weight vector of integer counts over ``1 / step`` (all
    the points with counts summing to ``round(1 / step)``: none lost to float rounding), in
    lexicographic order of the counts. One parameter (``rrf``'s ``k``, ``gmnz``'s
    ``gamma``, ``logn_isr``'s ``sigma``, ``rbc``'s ``phi``, ``slidefuse``'s ``w``,
    ``probfuse``'s ``n_segments``) is searched over ``values`` (default: ranx's, 10 to 100
    by 10 for ``k``, 0.01 to 1 by 0.01, 1 to 100 for ``w`` and ``n_segments``);
    ``slidefuse`` and ``probfuse`` learn their probabilities from the training queries
    (:func:`fastir.train_fusion`). Ties go to the first setting in grid order.

    Parameters
    ----------
    qrels : Qrels, dict or path
    runs : list or dict
        As for :func:`fastir.fuse`.
    measure : str
        The measure to maximise (any name :func:`fastir.evaluate` takes).
    method : str
        A method with weights or one parameter (above).
    norm : str or None
        As for :func:`fastir.fuse` (default ``min-max``, as ranx's).
    step : float
        Weight grid step; ``1 / step`` must be a whole number (0.1, 0.05, 0.25...), and the
        grid at most :data:`MAX_GRID_POINTS` points (refused up front beyond).
    grid : array-like, shape (n_points, n_runs), optional
        Weight vectors to try instead of the simplex.
    values : sequence, optional
        The values of the one parameter to try.
    k, depth
        As for :func:`fastir.fuse` (``k``: ``wrrf``'s).
    test_queries : collection of query ids, optional
        Held out: the search (and the training) runs on the other queries, and the table
        reports both sides.
    **options
        ``relevance_level``, ``missing``... as for :class:`fastir.Evaluator`.

    Returns
    -------
    FusionSearch
    """
    method = method_name(method)
    if method not in WEIGHTED and method not in ONE_PARAMETER:
        raise ValueError(
            f"method: optimize_fusion searches the weights of {', '.join(WEIGHTED)} or the "
            f"parameter of {', '.join(ONE_PARAMETER)}; {method!r} has nothing to search"
            + (" (learn its parameters with train_fusion)" if PARAMS.get(method) else ""))
    norm = norm_name(norm)
    names, loaded = load_runs(runs)
    if method in WEIGHTED:
        if values is not None:
            raise ValueError(f"values: {method!r} searches weights (step= or grid=), not "
                             f"values")
        param, points = "weights", (_simplex(len(loaded), step) if grid is None
                                    else _grid(grid, len(loaded)))
    else:
        if grid is not None:
            raise ValueError(f"grid: {method!r} searches one parameter (values=), not "
                             f"weights")
        param, points = _values(method, values)
    depth = checked_depth(depth)
    from fastir.loops.evaluator import Evaluator

    # (the work: every point re-scores every row)
    with _jit.tier(sum(len(r) for r in loaded) * len(points) + size_hint(qrels)):
        qrels = as_qrels(qrels)
        pairs = Pairs(loaded, depth)
        scored = normalise(pairs, norm, names)
        sides = {"train": qrels, "test": None}
        if test_queries is not None:
            sides = dict(zip(("train", "test"), _split(qrels, test_queries)))
        qids, dids = pairs.candidate_arrays()
        bound = {side: Evaluator(side_qrels, [measure], **options).bind(qids, dids)
                 for side, side_qrels in sides.items() if side_qrels is not None}
        settings = _Settings(method, param, points, pairs, scored, k, sides["train"],
                             test_queries)
        table = {side: settings.evaluate(b) for side, b in bound.items()}
    return FusionSearch(names, measure, param, points, table["train"], table.get("test"),
                        settings.best_params)


class _Settings:
    """The settings of a search, each scored over the pairs."""

    def __init__(self, method, param, points, pairs, scored, k, train_qrels, held_out):
        self.method, self.param, self.points = method, param, points
        self.pairs, self.scored, self.k = pairs, scored, k
        self.trained = None
        if method in ("slidefuse", "probfuse"):
            ours = set(str(q) for q in pairs.query_ids.tolist())
            queries = [q for q in map(str, train_qrels.query_ids.tolist()) if q in ours]
            self.hits = Hits(train_qrels, pairs, row_ranks(pairs, scored), queries)
            if method == "slidefuse":
                self.trained = self.hits.learn("slidefuse")

    def params(self, i):
        """The parameters of :func:`fastir.fuse` at setting ``i``."""
        value = self.points[i]
        if self.param == "weights":
            given = {"weights": value, "k": self.k}
        elif self.method == "probfuse":
            given = {"probs": self.hits.learn("probfuse", int(value))}
        elif self.method == "slidefuse":
            given = {"probs": self.trained, "w": value}
        else:
            given = {self.param: value}
        return checked_params(self.method, self.pairs.n_runs, given)

    def best_params(self, best):
        """What :func:`fastir.fuse` takes to fuse with the best setting."""
        params = self.params(best)
        return {key: (v.tolist() if key == "weights" else v) for key, v in params.items()}

    def evaluate(self, bound):
        """The measure's mean at every setting."""
        if self.method in LINEAR:
            contributions = parts(self.method, self.scored, self.pairs,
                                  {"k": number(self.k, "k", low=0, rule="RRF's constant is "
                                               "a finite number, 0 or more")})
            return _search(bound, contributions, self.points)
        out = np.empty(len(self.points))
        batch = max(1, _BATCH // max(self.pairs.n_pairs, 1))
        for first in range(0, len(self.points), batch):
            chosen = range(first, min(first + batch, len(self.points)))
            scores = np.empty((len(chosen), self.pairs.n_pairs))
            for row, i in enumerate(chosen):
                with np.errstate(over="ignore", invalid="ignore"):
                    scores[row] = fused_scores(self.method, self.scored, self.pairs,
                                               self.params(i))
                if not np.isfinite(scores[row]).all():
                    raise ValueError(f"{self.param}: {self.points[i]!r} (setting {i}) takes "
                                     f"the fused scores beyond a double; give smaller ones")
            out[first:first + len(chosen)] = bound.evaluate(scores)[:, 0]
        return out


def _values(method, values):
    """The name of ``method``'s one parameter and the values to try, checked."""
    param, default = ONE_PARAMETER[method]
    if values is None:
        values = default if default is not None else hundredths()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__") or not len(values):
        raise ValueError(f"values: a non-empty list of {param} values to try, got {values!r}")
    if param == "n_segments":
        for v in values:
            number(v, "values", low=1, whole=True,
                   rule="probfuse's n_segments, whole numbers from 1")
        return param, np.array([int(v) for v in values], dtype=object)
    checked = [checked_params(method, 2, {param: v} | _TRAINED_STAND_IN.get(method, {}))[param]
               for v in values]
    return param, np.array(checked, dtype=object)


_TRAINED_STAND_IN = {"slidefuse": {"probs": [[], []]}}  # (to check w alone)


class FusionSearch:
    """What :func:`optimize_fusion` found.

    Attributes
    ----------
    names : list of str
        The runs, in weight order.
    measure : str
    param : str
        What was searched: ``"weights"`` or the method's parameter (``"k"``...).
    grid : ndarray
        The settings tried, in order: weight vectors, shape (n_points, n_runs), or the
        parameter's values, shape (n_points,).
    values : ndarray, shape (n_points,)
        The measure's mean for each (on the training queries with ``test_queries``).
    test_values : ndarray or None
        The same on the held-out queries.
    best : int
        Index of the best point (the first of equal ones).
    weights : list of float or None
        ``grid[best]`` for a weight search.
    params : dict
        The best setting as :func:`fastir.fuse`'s keywords (``{"weights": [...]}``,
        ``{"k": 60}``, ``{"probs": [...], "w": 3}``...).
    """

    def __init__(self, names, measure, param, grid, values, test_values, best_params):
        self.names, self.measure, self.param, self.grid = names, measure, param, grid
        self.values, self.test_values = values, test_values
        self.best = int(np.argmax(values))
        self.weights = grid[self.best].tolist() if param == "weights" else None
        self.params = best_params(self.best)

    def __repr__(self):
        if self.param == "weights":
            setting = "weights {" + ", ".join(f"{n!r}: {w:g}" for n, w in
                                              zip(self.names, self.weights)) + "}"
        else:
            setting = f"{self.param}={self.grid[self.best]!r}"
        return (f"FusionSearch({self.measure} {self.values[self.best]:.4f} at {setting}, "
                f"{len(self.grid)} points)")

    def to_markdown(self, digits=4):
        """The table as markdown: one row per point in grid order, the best marked ``*``."""
        test = self.test_values is not None
        columns = self.names if self.param == "weights" else [self.param]
        head = columns + [self.measure + (" (train)" if test else "")] + \
            ([f"{self.measure} (test)"] if test else [])
        lines = [markdown_row(head), "|" + "---:|" * len(head)]
        for i, row in enumerate(self.grid):
            cells = [f"{w:g}" for w in np.atleast_1d(row)] + [
                f"{self.values[i]:.{digits}f}" + ("*" if i == self.best else "")]
            if test:
                cells.append(f"{self.test_values[i]:.{digits}f}")
            lines.append(markdown_row(cells))
        return "\n".join(lines)


def _simplex(n_runs, step):
    """Every vector of ``n_runs`` counts summing to ``1 / step``, over it, lexicographic."""
    try:
        steps = round(1 / step) if real(step) and 0 < step <= 1 else 0
        exact = steps >= 1 and abs(steps * step - 1) < 1e-9
    except (TypeError, ZeroDivisionError, OverflowError, ValueError):
        exact = False
    if not exact:
        raise ValueError(f"step: 1 / step must be a whole number (0.1, 0.05, 0.25...; a "
                         f"step in (0, 1]), got {step!r}")
    from math import comb

    n_points = comb(steps + n_runs - 1, n_runs - 1)
    if n_points > MAX_GRID_POINTS:
        many = f"{n_points:,}" if n_points < 10**15 else f"about 10**{len(str(n_points)) - 1}"
        raise ValueError(f"step: a step of {step!r} over {n_runs} runs makes a grid of "
                         f"{many} weight vectors, more than the {MAX_GRID_POINTS:,} "
                         f"optimize_fusion searches; take a larger step, or give grid=")
    rows = [[]]
    for _ in range(n_runs - 1):
        rows = [row + [c] for row in rows for c in range(steps - sum(row) + 1)]
    counts = np.array([row + [steps - sum(row)] for row in rows], dtype=np.float64)
    return counts / steps


def _grid(grid, n_runs):
    try:
        array = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        array = np.empty(0)
    if array.ndim != 2 or array.shape[1] != n_runs or not len(array) or \
            not np.isfinite(array).all():
        got = f"shape {array.shape}" if array.ndim == 2 else repr(grid)[:80]
        raise ValueError(f"grid: an (n_points, {n_runs}) array of finite weights, one column "
                         f"per run, got {got}")
    return array


def _split(qrels, test_queries):
    """The qrels of the training queries and of the held-out ones."""
    try:
        if isinstance(test_queries, (str, bytes)):
            raise TypeError
        held = Ids.from_array(np.array(list(test_queries), dtype=object)).keys()
    except (TypeError, ValueError):
        raise TypeError(f"test_queries: a collection of query ids (a list or set), got "
                        f"{test_queries!r}") from None
    held = set(held)
    keys = qrels.query_ids.keys()
    test = np.array([key in held for key in keys], dtype=bool)
    if not test.any() or test.all():
        raise ValueError("test_queries: hold out some of the qrels' queries, not none or all")
    return _subset(qrels, ~test), _subset(qrels, test)


def _subset(qrels, keep):
    lengths = np.diff(qrels.indptr)[keep]
    rows = rows_of(qrels.indptr[:-1][keep], lengths)
    return Qrels(qrels.query_ids.take(np.flatnonzero(keep)),
                 np.concatenate(([0], np.cumsum(lengths))), qrels.doc_ids.take(rows),
                 qrels.labels[rows], qrels.source)


def _search(bound, parts, points):
    """The measure's mean for every weight vector: each scored inside the bound kernel
    (:meth:`~fastir.BoundCandidates.evaluate_weighted`), never built."""
    with np.errstate(over="ignore", invalid="ignore"):  # (the check below, per point)
        finite = np.isfinite(np.abs(points) @ np.abs(parts).max(axis=1, initial=0.0))
    if not finite.all():  # (a bound on every sum) perhaps beyond a double: build those
        for p in np.flatnonzero(~finite):
            scores = np.zeros(parts.shape[1])
            with np.errstate(over="ignore", invalid="ignore"):
                for r in range(len(parts)):
                    scores = scores + points[p, r] * parts[r]
            if not np.isfinite(scores).all():
                raise ValueError(f"grid: the weights {points[p].tolist()} (point {p}) take "
                                 f"the fused scores beyond a double; give smaller weights")
    return bound.evaluate_weighted(parts, points)[:, 0]


