"""The measures: the registry (``registry``: the one place a measure is described, its kernel
case included, and the three name dialects), the fused kernel (``kernels``: the driver, which
calls the families' helper modules ``precision``, ``dcg``, ``own``, ``err`` and ``cwl``;
``common``: what they share), the diversity pass (``diversity``) and the kernels of dense
batches and bound candidates (``dense``).

The registry's public names are importable from here too (``from fastir.measures import
parse``).
"""

from fastir.measures.registry import (  # noqa: F401
    FAMILIES,
    NICKNAMES,
    TREC_NAMES,
    Family,
    Measure,
    Param,
    UnknownMeasureError,
    known_names,
    make,
    parse,
    parse_all,
    parse_trec,
)
