"""fastir: fast, exact information-retrieval evaluation.

>>> import fastir
>>> res = fastir.evaluate("qrels.txt", "run.txt", ["nDCG@10", "map", "P_5"])  # doctest: +SKIP
>>> res.mean  # doctest: +SKIP

The names below are imported on first use, so ``import fastir`` costs almost nothing and
a command pays only for the modules it runs.
"""

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Results": "fastir.api", "evaluate": "fastir.api", "ResultsByRun": "fastir.results",
    "BoundCandidates": "fastir.batch", "Evaluator": "fastir.batch",
    "evaluate_matrix": "fastir.batch",
    "FastirWarning": "fastir.data", "InputError": "fastir.data", "Qrels": "fastir.data",
    "Run": "fastir.data",
    "read_qrels": "fastir.io.trec", "read_run": "fastir.io.trec",
    "evaluate_file": "fastir.streaming",
    "read_parquet": "fastir.arrow", "write_parquet": "fastir.arrow",
    "Measure": "fastir.measures", "UnknownMeasureError": "fastir.measures",
    "Comparison": "fastir.stats", "compare": "fastir.stats",
    "Agreement": "fastir.assessors", "agreement": "fastir.assessors",
    "fuse": "fastir.fusion", "optimize_fusion": "fastir.fusion", "write_run": "fastir.fusion",
    "FusionSearch": "fastir.fusion",
    "pr_curve": "fastir.curves", "cutoff_curve": "fastir.curves",
    "MetricAccumulator": "fastir.training", "evaluate_flat": "fastir.training",
    "RelevanceEvaluator": "fastir.compat", "supported_measures": "fastir.compat",
    "iter_calc": "fastir.compat", "calc_aggregate": "fastir.compat", "Metric": "fastir.compat",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'fastir' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
