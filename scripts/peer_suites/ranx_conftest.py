"""Adapter: scripts/peer_suites.py copies this file as conftest.py next to ranx's own `tests/`
(unchanged) and runs pytest there with THROUGH set.

Runs ranx's own unit tests with THROUGH=peer (ranx itself) or THROUGH=fastir: ranx's public
names (Qrels, Run, evaluate, compare, fuse, optimize_fusion) replaced by fastir.ranx's, and
ranx.fusion (and its submodules, ranx.fusion.rrf...: what its tests import from) by
fastir.ranx.fusion: ranx's method and training functions. ranx's other internal modules
(ranx.metrics' numba kernels, ranx.normalization) stay ranx's own."""
import os
import sys

if os.environ.get("THROUGH", "peer") == "fastir":
    import ranx

    import fastir.ranx

    for name in fastir.ranx.__all__:
        setattr(ranx, name, getattr(fastir.ranx, name))

    import fastir.ranx.fusion

    sys.modules["ranx.fusion"] = ranx.fusion = fastir.ranx.fusion
    for module in list(sys.modules):  # (ranx.fusion.rrf...: what its tests import from)
        if module.startswith("ranx.fusion."):
            sys.modules[module] = fastir.ranx.fusion
