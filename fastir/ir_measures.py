"""fastir as ir_measures' provider: ``import fastir.ir_measures`` puts fastir first in
ir_measures' default pipeline, so ``ir_measures.calc_aggregate`` / ``iter_calc`` /
``evaluator`` and PyTerrier's ``pt.Experiment`` run on fastir for every measure it computes
(see :mod:`fastir.peers.provider`). ``unregister()`` undoes it; ``provider`` is the provider
itself (``provider.calc_aggregate(measures, qrels, run)``)."""

from fastir.peers.provider import FastirProvider, provider, register, unregister

__all__ = ["FastirProvider", "provider", "register", "unregister"]

register()
