"""ranx's functions backed by fastir: ``from fastir import ranx`` and a ranx script runs with
one changed import. ``evaluate`` (a float for one metric, a dict for several, ranx's
query-id check), ``compare`` (a :class:`~fastir.peers.ranx_report.Report`), ``fuse`` and
``optimize_fusion`` take ranx's arguments and return ranx's types; ``Qrels`` and ``Run``
are :mod:`fastir.peers.ranx_data`'s.

Metric names are ranx's, with ranx's meaning (``recall`` is the whole ranking's recall);
rankings are trec_eval's (ties by doc id descending; ranx leaves ties to its sort).
"""

import itertools

import numpy as np

from fastir.analysis import fusion
from fastir.analysis.stats import compare as fastir_compare
from fastir.io.inputs import as_qrels, as_run
from fastir.measures import registry
from fastir.model.errors import InputError
from fastir.peers.ranx_data import Qrels, Run
from fastir.peers.ranx_report import OptimizationReport, Pairs, Report

__all__ = ["Qrels", "Run", "compare", "evaluate", "fuse", "optimize_fusion"]

#: ranx's names of its statistical tests, as fastir.compare's.
STAT_TESTS = {"student": "t", "fisher": "randomization", "tukey": "tukey"}
#: ranx's fusion methods: ranx's name -> (fastir's, the fused run's name in ranx).
FUSIONS = {"min": ("min", "comb_min"), "max": ("max", "comb_max"), "med": ("med", "comb_med"),
           "sum": ("sum", "comb_sum"), "anz": ("anz", "comb_anz"), "mnz": ("mnz", "comb_mnz"),
           "gmnz": ("gmnz", "comb_gmnz"), "isr": ("isr", "isr"),
           "log_isr": ("log_isr", "log_isr"), "logn_isr": ("logn_isr", "logn_isr"),
           "rrf": ("rrf", "rrf"), "wsum": ("wsum", "weighted_sum"),
           "mixed": ("mixed", "mixed"), "wmnz": ("wmnz", "wmnz"), "rbc": ("rbc", "rbc"),
           "bordafuse": ("borda", "bordafuse"),
           "w_bordafuse": ("w_bordafuse", "weighted_bordafuse"),
           "condorcet": ("condorcet", "condorcet"),
           "w_condorcet": ("w_condorcet", "weighted_condorcet"),
           "mapfuse": ("mapfuse", "mapfuse"), "posfuse": ("posfuse", "posfuse"),
           "probfuse": ("probfuse", "probfuse"), "segfuse": ("segfuse", "segfuse"),
           "slidefuse": ("slidefuse", "slidefuse"), "bayesfuse": ("bayesfuse", "bayesfuse")}
KEYS_DIFFER = ("Qrels and Run query ids do not match. Pass `make_comparable=True` to add "
               "empty results for queries missing from the run and remove those not "
               "appearing in qrels.")


def measure(metric):
    """fastir's measure of a ranx metric name, with ranx's meaning (``recall`` is ranx's
    whole-ranking recall, not trec_eval's list)."""
    if not isinstance(metric, str):
        raise ValueError(f"Metrics error: metric names are strings, got {metric!r}")
    ((_, parsed),) = registry.parse("recall-l1" if metric == "recall" else metric)
    return parsed


def evaluate(qrels, run, metrics, return_mean=True, return_std=False, threads=0,
             save_results_in_run=True, make_comparable=False):
    """ranx's ``evaluate``.

    Parameters
    ----------
    qrels, run
        ranx's forms: a :class:`Qrels` / :class:`Run` (ranx's own too), a dict, or its
        arrays (one ``(n, 2)`` array per query: ``[doc, label]`` rows, and ``[doc, score]``
        rows in rank order, in a list, a numba typed List or a 3-d array); any form
        :func:`fastir.evaluate` takes as well.
    metrics : str or list of str
        ranx's metric names (``ndcg@10``, ``map``, ``precision@5-l2``, ``rbp.95``...).
    return_mean, return_std
        Means over the queries (with ``{"mean", "std"}`` per metric when ``return_std``),
        or each metric's per-query values as an array.
    threads : int
        Ignored: fastir never changes numba's thread count.
    save_results_in_run : bool
        Keep per-query values in ``run.scores``, means in ``run.mean_scores`` (and
        ``run.std_scores``) when ``run`` is a :class:`Run`.
    make_comparable : bool
        Score a qrels query the run lacks 0 and ignore run queries without judgments;
        otherwise the query ids must be the same (a ``ValueError``, as ranx's check).

    Returns
    -------
    float, dict or array
        One metric: its value; several: ``{metric: value}``. Means are numpy's (as ranx's).
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    results, columns = _results(qrels, run, names, make_comparable)
    values = {m: results.values[:, j] for m, j in zip(names, columns)}
    if isinstance(run, Run) and save_results_in_run:
        for m, column in values.items():
            run.mean_scores[m] = np.mean(column)
            if return_std:
                run.std_scores[m] = np.std(column)
            run.scores[m] = dict(zip(results.query_ids, column.tolist()))
    if return_mean:
        values = {m: {"mean": np.mean(v), "std": np.std(v)} if return_std else np.mean(v)
                  for m, v in values.items()}
    return values[names[0]] if len(names) == 1 else values


def _results(qrels, run, names, make_comparable):
    """fastir's Results of ranx's inputs, metrics and query-id check, and each metric's
    column (two names of one measure share it: ``recall`` and ``recall-l1``)."""
    from fastir.engine import disjoint_warning
    from fastir.loops.evaluator import Evaluator

    if _is_arrays(qrels) and _is_arrays(run):
        judged, ranked = _from_arrays(qrels, run)
    else:
        judged, ranked = as_qrels(qrels), as_run(run)
        if not make_comparable and _is_table(qrels) and _is_table(run) and \
                judged.query_ids.tolist() != ranked.query_ids.tolist():
            raise InputError(KEYS_DIFFER)
    measures = [measure(m) for m in names]
    unique = list(dict.fromkeys(measures))
    evaluator = Evaluator(judged, unique)
    evaluator.check = disjoint_warning  # (make_comparable: ranx scores a query it lacks 0)
    return evaluator.evaluate(ranked), [unique.index(m) for m in measures]


def _is_table(value):
    return isinstance(value, (Qrels, Run, dict)) or type(value).__module__.startswith("ranx")


def _is_arrays(value):
    """ranx's array form: a 3-d array, or a sequence of 2-d arrays (a numba typed List)."""
    if isinstance(value, np.ndarray):
        return value.ndim == 3
    return type(value).__name__ == "List" or (isinstance(value, list) and bool(value)
                                              and all(np.ndim(x) == 2 for x in value))


def _from_arrays(y_true, y_pred):
    """ranx's arrays as qrels and a run: query ``i`` of both; a doc id is its float's bits;
    the run's rows in the given order. A doc ranked again later in a query is a doc of its
    own there, unjudged (ranx would count it each time); a doc judged twice keeps its first
    label."""
    if len(y_true) != len(y_pred):
        raise InputError(f"qrels have {len(y_true)} queries and the run {len(y_pred)}")
    qrels, run = {}, {}
    for i, (truth, ranking) in enumerate(zip(y_true, y_pred)):
        query = f"{i:012d}"  # (trec_eval's order is the given order)
        judged = qrels[query] = {}
        for doc, label in np.asarray(truth, dtype=np.float64).reshape(-1, 2).tolist():
            judged.setdefault(repr(doc), int(label))
        docs = np.asarray(ranking, dtype=np.float64).reshape(-1, 2)[:, 0].tolist()
        ranked = run[query] = {}
        for position, doc in enumerate(docs):
            key = repr(doc) if repr(doc) not in ranked else f"{doc!r}#{position}"
            ranked[key] = float(len(docs) - position)
    return qrels, run


def compare(qrels, runs, metrics, stat_test="student", n_permutations=1000, max_p=0.01,
            random_seed=42, threads=0, rounding_digits=3, show_percentages=False,
            make_comparable=False):
    """ranx's ``compare``: every run evaluated, every pair tested, a :class:`Report`.

    ``runs`` is a list; a run's name is its ``.name`` (``run_1``, ``run_2``... without one).
    ``stat_test``: ``"student"`` (paired t-test), ``"fisher"`` (paired randomization test,
    ``n_permutations`` draws from ``random_seed``: an estimate of the same p-value as
    ranx's, from other draws) or ``"tukey"`` (fastir's randomized Tukey HSD; ranx's is
    scipy's studentized range). Significant: p <= ``max_p``, no correction, as ranx.
    """
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if stat_test not in STAT_TESTS:
        raise NotImplementedError(f"Statistical test `{stat_test}` not supported.")
    models = [run.name if getattr(run, "name", None) is not None else f"run_{i + 1}"
              for i, run in enumerate(runs)]
    evaluated, columns = {}, None
    for model, run in zip(models, runs):
        evaluated[model], columns = _results(qrels, run, names, make_comparable)
    per_query = {model: {m: res.values[:, j] for m, j in zip(names, columns)}
                 for model, res in evaluated.items()}
    results = {model: {m: float(np.mean(v)) for m, v in scores.items()}
               for model, scores in per_query.items()}
    tested = fastir_compare(None, evaluated, evaluated[models[0]].parsed,
                            test=STAT_TESTS[stat_test], n_resamples=n_permutations,
                            correction="none", seed=random_seed)
    comparisons = Pairs()
    for i, (a, b) in enumerate(tested.pairs):
        comparisons[a, b] = {m: {"p_value": float(p), "significant": bool(p <= max_p)}
                             for m, p in zip(names, tested.p_value[i][columns])}
    wtl = {(a, b): {m: _win_tie_loss(per_query[a][m], per_query[b][m]) for m in names}
           for a in models for b in models if a != b}
    return Report(models, results, comparisons, names, max_p, wtl, rounding_digits,
                  show_percentages, stat_test)


def _win_tie_loss(control, treatment):
    return {"W": int(np.sum(control > treatment)), "T": int(np.sum(control == treatment)),
            "L": int(np.sum(control < treatment))}


def fuse(runs, norm="min-max", method="wsum", params=None):
    """ranx's ``fuse``: normalise each run (``norm``: ranx's names, or None), fuse by
    ``method`` (ranx's 25: ``params`` as ranx's method functions take them, e.g.
    ``{"weights": [...]}`` for ``wsum``, ``{"k": 60}`` for ``rrf``, ``{"probs": ...}`` from
    a ``*_train`` function) and return a :class:`Run` named as ranx names it
    (``comb_sum``...)."""
    if len(runs) < 2:
        raise ValueError("Only one run provided")
    if method not in FUSIONS:
        raise ValueError(f"Fusion method {method} not supported.")
    return fused(runs, method, norm=norm, **dict(params or {}))


def fused(runs, method, *, norm=None, name=None, **params):
    """The :class:`Run` of ranx's ``method`` (a key of :data:`FUSIONS`) on ``runs``, named
    ``name`` or as ranx names it, with every query of the runs (ranx keeps a query no run
    retrieved anything for)."""
    ours, default_name = FUSIONS[method]
    unknown = sorted(set(params) - set(fusion.PARAMS.get(ours, {})))
    if unknown:
        raise TypeError(f"{method}() got an unexpected keyword argument {unknown[0]!r}")
    loaded = [as_run(r) for r in runs]
    name = name or default_name
    result = fusion.fuse(loaded, ours, norm=norm, name=name, **params)
    queries = {q for run in loaded for q in run.query_ids.tolist()}
    if len(queries) > result.n_queries:
        return Run({q: {} for q in queries} | result.to_dict(), name=name)
    return Run._wrap(result, name)


def trained(qrels, runs, method, **options):
    """What ranx's ``<method>_train(qrels, runs)`` returns, learnt by
    :func:`fastir.train_fusion` (every query of the runs a training query)."""
    return fusion.train_fusion(as_qrels(qrels), [as_run(r) for r in runs], method,
                               **options)[fusion.TRAINABLE[method]]


#: ranx's ``optimize_fusion`` per method: the parameter searched and its ranx keywords with
#: their defaults (the values tried: ``configs(**keywords)``).
SEARCHES = {
    "rrf": ("k", {"min_k": 10, "max_k": 100, "step": 10}),
    "gmnz": ("gamma", {"min_gamma": 0.01, "max_gamma": 1.0, "step": 0.01}),
    "logn_isr": ("sigma", {"min_sigma": 0.01, "max_sigma": 1.0, "step": 0.01}),
    "rbc": ("phi", {"min_phi": 0.01, "max_phi": 1.0, "step": 0.01}),
    "probfuse": ("n_segments", {"min_n_segments": 1, "max_n_segments": 100}),
    "slidefuse": ("w", {"min_w": 1, "max_w": 100}),
    **{m: ("weights", {"step": 0.1}) for m in ("wsum", "mixed", "wmnz", "w_bordafuse",
                                              "w_condorcet")},
}
TRAINED_ONLY = {"bayesfuse": "log_odds", "mapfuse": "map_scores", "posfuse": "probs",
                "segfuse": "probs"}


def optimize_fusion(qrels, runs, norm="min-max", method="wsum", metric="ndcg",
                    return_optimization_report=False, rounding_digits=3,
                    show_percentages=False, **kwargs):
    """ranx's ``optimize_fusion``: every setting ranx tries (its grids: weights summing to 1
    in ``step``; ``k`` from ``min_k`` to ``max_k``; ``gamma``, ``sigma``, ``phi`` in
    hundredths; ``w`` and ``n_segments`` 1 to 100), the last best wins, as in ranx; the
    trained-only methods (bayesfuse, mapfuse, posfuse, segfuse) return what they learn.
    Returns ``{"weights": ...}`` (``{"k": ...}``...), and an
    :class:`~fastir.peers.ranx_report.OptimizationReport` with
    ``return_optimization_report``. ``show_progress`` is ignored (the search is fast)."""
    kwargs.pop("show_progress", None)
    loaded = [as_run(r) for r in runs]
    judged = as_qrels(qrels)
    if len(loaded) < 2:
        raise ValueError("Only one run provided")
    for run in loaded:
        if run.query_ids.tolist() != judged.query_ids.tolist():
            raise InputError("Run and Qrels query ids do not match")
    if method in TRAINED_ONLY:
        if return_optimization_report:
            raise ValueError(f"{method} does not support optimization report.")
        if kwargs:
            raise TypeError(f"optimize_{method}() got an unexpected keyword argument "
                            f"{sorted(kwargs)[0]!r}")
        return {TRAINED_ONLY[method]: trained(judged, loaded, method, norm=norm)}
    if method not in SEARCHES:
        raise ValueError(f"{method} does not support optimization.")
    param, defaults = SEARCHES[method]
    unknown = sorted(set(kwargs) - set(defaults))
    if unknown:
        raise TypeError(f"optimize_{method}() got an unexpected keyword argument "
                        f"{unknown[0]!r}")
    configs = _configs(param, len(loaded), **(defaults | kwargs))
    ours = FUSIONS[method][0]
    grid = {"grid": configs} if param == "weights" else {"values": configs}
    search = fusion.optimize_fusion(judged, loaded, measure(metric), ours, norm, **grid)
    scores = search.values.tolist()
    best = len(scores) - 1 - int(np.argmax(scores[::-1]))  # (ties: the last, as ranx)
    found = _found(search, best, param, configs, judged, loaded, norm)
    if return_optimization_report:
        return found, OptimizationReport(method, [str(c) for c in configs], scores, metric)
    return found


def _found(search, best, param, configs, judged, loaded, norm):
    """ranx's answer for the best setting: ``{param: value}`` (``probfuse``: the probs
    learnt at the best number of segments; ``slidefuse``: the probs and ``w``)."""
    if param == "n_segments":
        return {"probs": np.array(trained(judged, loaded, "probfuse", norm=norm,
                                          n_segments=configs[best]))}
    if param == "w":
        return {"probs": trained(judged, loaded, "slidefuse", norm=norm), "w": configs[best]}
    return {param: configs[best]}


_MAX_WEIGHT_TUPLES = 10**5  # x 100: the product ranx's grid scans (10**7, a few seconds)


def _configs(param, n_runs, step=None, **bounds):
    """The settings ranx's ``optimize_<method>`` tries, in its order."""
    if param == "weights":
        return _weight_grid(step, n_runs)
    low = next(key for key in bounds if key.startswith("min_"))
    high = next(key for key in bounds if key.startswith("max_"))
    low_value, high_value = bounds[low], bounds[high]
    for key, value in bounds.items():
        if not isinstance(value, (int, float, np.integer, np.floating)) or \
                isinstance(value, bool):
            raise ValueError(f"{key}: a number, got {value!r}")
    if param in ("k", "w", "n_segments"):
        step = 1 if step is None else step
        if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool)
                   for x in (low_value, high_value, step)) or step < 1 or \
                not low_value <= high_value or (high_value - low_value) // step >= \
                _MAX_WEIGHT_TUPLES:
            raise ValueError(f"{low}, {high}, step: whole numbers with {low} <= {high} and "
                             f"step >= 1 (at most {_MAX_WEIGHT_TUPLES:,} values), got "
                             f"{low_value!r}, {high_value!r}, {step!r}")
        return list(range(low_value, high_value + 1, step))
    if not (isinstance(step, (int, float, np.integer, np.floating)) and 0 < step and
            (high_value - low_value) / step < _MAX_WEIGHT_TUPLES):
        raise ValueError(f"step: a positive number (at most {_MAX_WEIGHT_TUPLES:,} values "
                         f"from {low} to {high}), got {step!r}")
    digits = str(step)[::-1].find(".")
    return [round(x, digits) for x in np.arange(low_value, high_value + step, step)]


def _weight_grid(step, n_runs):
    """ranx's grid: every n-tuple of multiples of ``step`` (rounded to its decimals) whose
    float sum is exactly 1.0, in product order."""
    if not isinstance(step, (int, float, np.integer, np.floating)) or \
            isinstance(step, bool) or not 0 < step <= 1:
        raise ValueError(f"step: a grid step in (0, 1] (0.1, 0.05...), got {step!r}")
    tuples = (int(1 / step) + 2) ** n_runs
    if tuples > 100 * _MAX_WEIGHT_TUPLES:
        raise ValueError(f"step: a step of {step!r} over {n_runs} runs makes ranx's grid "
                         f"scan about {tuples:.3g} weight tuples, more than "
                         f"{100 * _MAX_WEIGHT_TUPLES:.0e}; take a larger step")
    digits = str(step)[::-1].find(".")
    weights = [round(x, digits) for x in np.arange(0, 1 + step, step)]  # (np.float64, as ranx)
    grid = [w for w in itertools.product(weights, repeat=n_runs) if sum(w) == 1.0]
    if not grid:
        raise ValueError(f"step: no {n_runs} multiples of {step!r} sum to 1, so there are no "
                         "weights to try; take a step that divides 1 (0.1, 0.05, 0.25...)")
    return grid
