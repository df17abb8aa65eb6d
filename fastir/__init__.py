"""fastir: fast, exact information-retrieval evaluation.

>>> import fastir
>>> res = fastir.evaluate("qrels.txt", "run.txt", ["nDCG@10", "map", "P_5"])  # doctest: +SKIP
>>> res.mean  # doctest: +SKIP

The names below are imported on first use, so ``import fastir`` costs almost nothing and
a command pays only for the modules it runs. The peers' interfaces are modules:
``fastir.pytrec_eval``, ``fastir.ir_measures`` (fastir as ir_measures' provider),
``fastir.ranx``, ``fastir.torchmetrics`` and ``fastir.repro_eval``.
"""

import importlib

from fastir._version import __version__  # noqa: F401  (re-exported)

_EXPORTS = {
    "Results": "fastir.results", "evaluate": "fastir.api", "ResultsByRun": "fastir.results",
    "evaluate_datasets": "fastir.datasets", "ResultsByDataset": "fastir.datasets",
    "BoundCandidates": "fastir.loops.evaluator", "Evaluator": "fastir.loops.evaluator",
    "evaluate_matrix": "fastir.loops.evaluator",
    "FastirWarning": "fastir.model.errors", "InputError": "fastir.model.errors",
    "MissingQueriesWarning": "fastir.model.errors",
    "Qrels": "fastir.model.data", "Run": "fastir.model.data",
    "read_qrels": "fastir.io.trec", "read_run": "fastir.io.trec",
    "Prefs": "fastir.model.prefs", "JudgmentGroups": "fastir.model.prefs",
    "read_prefs": "fastir.io.prefs", "read_judgment_groups": "fastir.io.prefs",
    "evaluate_file": "fastir.scale.streaming",
    "read_parquet": "fastir.io.parquet", "write_parquet": "fastir.io.parquet",
    "Measure": "fastir.measures.registry", "UnknownMeasureError": "fastir.measures.registry",
    "define_measure": "fastir.measures.user", "undefine_measure": "fastir.measures.user",
    "Comparison": "fastir.analysis.stats", "compare": "fastir.analysis.stats",
    "Agreement": "fastir.analysis.agreement", "agreement": "fastir.analysis.agreement",
    "MetaEvaluation": "fastir.analysis.meta", "meta_evaluate": "fastir.analysis.meta",
    "JudgeComparison": "fastir.analysis.judges", "compare_judges": "fastir.analysis.judges",
    "ppi": "fastir.analysis.ppi", "PPIEstimates": "fastir.analysis.ppi",
    "fuse": "fastir.analysis.fusion", "optimize_fusion": "fastir.analysis.fusion",
    "write_run": "fastir.io.writers",
    "FusionSearch": "fastir.analysis.fusion", "train_fusion": "fastir.analysis.fusion",
    "pool": "fastir.analysis.pooling", "Pool": "fastir.analysis.pooling",
    "pr_curve": "fastir.analysis.curves", "cutoff_curve": "fastir.analysis.curves",
    "tie_report": "fastir.analysis.ties", "TieReport": "fastir.analysis.ties",
    "MetricAccumulator": "fastir.loops.training", "evaluate_flat": "fastir.loops.training",
    "RelevanceEvaluator": "fastir.peers.pytrec_eval",
    "supported_measures": "fastir.peers.pytrec_eval",
    "iter_calc": "fastir.peers.ir_measures", "calc_aggregate": "fastir.peers.ir_measures",
    "evaluator": "fastir.peers.ir_measures", "Metric": "fastir.peers.ir_measures",
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
