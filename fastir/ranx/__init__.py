"""ranx, computed by fastir: ``from fastir import ranx`` and a ranx script runs with one
changed import (``Qrels``, ``Run``, ``evaluate``, ``compare``, ``fuse``, ``optimize_fusion``:
see :mod:`fastir.peers.ranx`; ``fastir.ranx.fusion``: ranx.fusion's method and training
functions)."""

from fastir.peers.ranx import Qrels, Run, compare, evaluate, fuse, optimize_fusion

__all__ = ["Qrels", "Run", "compare", "evaluate", "fuse", "optimize_fusion"]
