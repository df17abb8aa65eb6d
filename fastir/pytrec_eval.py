"""pytrec_eval, computed by fastir: ``import fastir.pytrec_eval as pytrec_eval`` and a
pytrec_eval script runs unchanged (see :mod:`fastir.peers.pytrec_eval`)."""

from fastir.peers.pytrec_eval import (
    RelevanceEvaluator,
    compute_aggregated_measure,
    parse_qrel,
    parse_run,
    supported_measures,
    supported_nicknames,
)

__all__ = ["RelevanceEvaluator", "compute_aggregated_measure", "parse_qrel", "parse_run",
           "supported_measures", "supported_nicknames"]
