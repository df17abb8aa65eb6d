"""torchmetrics' retrieval metrics, computed by fastir: ``from fastir.torchmetrics import
RetrievalMAP, RetrievalNormalizedDCG, ...`` in place of ``torchmetrics.retrieval`` (see
:mod:`fastir.peers.torchmetrics`; torch is imported here, and only here)."""

from fastir.peers.torchmetrics import (
    RetrievalFallOut,
    RetrievalHitRate,
    RetrievalMAP,
    RetrievalMRR,
    RetrievalNormalizedDCG,
    RetrievalPrecision,
    RetrievalRecall,
    RetrievalRPrecision,
)

__all__ = ["RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP", "RetrievalMRR",
           "RetrievalNormalizedDCG", "RetrievalPrecision", "RetrievalRPrecision",
           "RetrievalRecall"]
