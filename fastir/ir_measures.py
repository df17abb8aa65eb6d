"""fastir as ir_measures' provider: ``import fastir.ir_measures`` puts fastir first in
ir_measures' default pipeline, so ``ir_measures.calc_aggregate`` / ``iter_calc`` /
``evaluator`` and PyTerrier's ``pt.Experiment`` run on fastir for every measure it computes
(see :mod:`fastir.peers.provider`). ``unregister()`` undoes it; ``provider`` is the provider
itself (``provider.calc_aggregate(measures, qrels, run)``); ``gdeval`` answers as
``ir_measures.gdeval`` does (its values printed with 5 decimals)."""

from fastir.peers.provider import FastirProvider, gdeval, provider, register, unregister

__all__ = ["FastirProvider", "gdeval", "provider", "register", "unregister"]

register()
