"""Adapter: scripts/peer_suites.py copies this file as conftest.py next to ranx's own `tests/`
(unchanged) and runs pytest there with THROUGH set.

Runs ranx's own unit tests with THROUGH=peer (ranx itself) or THROUGH=fastir: ranx's public
names (Qrels, Run, evaluate, compare, fuse, optimize_fusion) replaced by fastir.ranx's, and
ranx's per-method fusion functions (ranx.fusion.rrf, comb_sum, ...: what ranx.fuse calls after
normalising) answered by fastir.ranx.fuse(runs, norm=None, method=...) for the methods fastir
has (the others are not importable). ranx's other internal modules (ranx.metrics' numba
kernels, ranx.normalization) stay ranx's own."""
import os
import sys
import types

if os.environ.get("THROUGH", "peer") == "fastir":
    import ranx

    import fastir.ranx

    for name in fastir.ranx.__all__:
        setattr(ranx, name, getattr(fastir.ranx, name))

    def method(ranx_method, *keywords):
        def fused(runs, *args, name=None, **kwargs):
            params = dict(zip(keywords, args), **kwargs)
            run = fastir.ranx.fuse(runs, norm=None, method=ranx_method, params=params)
            run.name = name or run.name
            return run
        return fused

    fusion = types.ModuleType("ranx.fusion")
    for ranx_name, ranx_method, keywords in [
            ("comb_sum", "sum", ()), ("comb_mnz", "mnz", ()), ("comb_max", "max", ()),
            ("comb_min", "min", ()), ("comb_med", "med", ()), ("comb_anz", "anz", ()),
            ("isr", "isr", ()), ("log_isr", "log_isr", ()), ("rrf", "rrf", ("k",)),
            ("wsum", "wsum", ("weights",)), ("bordafuse", "bordafuse", ())]:
        setattr(fusion, ranx_name, method(ranx_method, *keywords))
    sys.modules["ranx.fusion"] = fusion
