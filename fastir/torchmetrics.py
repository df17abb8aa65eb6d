"""torchmetrics' retrieval metrics, computed by fastir: ``from fastir.torchmetrics import
RetrievalMAP, RetrievalNormalizedDCG, ...`` in place of ``torchmetrics.retrieval`` (see
:mod:`fastir.peers.torchmetrics`; torch is imported here, and only here)."""

from fastir.peers.torchmetrics import (
    RetrievalAUROC,
    RetrievalFallOut,
    RetrievalHitRate,
    RetrievalMAP,
    RetrievalMRR,
    RetrievalNormalizedDCG,
    RetrievalPrecision,
    RetrievalPrecisionRecallCurve,
    RetrievalRecall,
    RetrievalRecallAtFixedPrecision,
    RetrievalRPrecision,
)

__all__ = ["RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP",
           "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalPrecision",
           "RetrievalPrecisionRecallCurve", "RetrievalRPrecision", "RetrievalRecall",
           "RetrievalRecallAtFixedPrecision"]
