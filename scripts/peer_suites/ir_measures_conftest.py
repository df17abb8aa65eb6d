"""Adapter: scripts/peer_suites.py copies this file as conftest.py next to ir_measures' own
`tests/` (unchanged) and runs pytest there with THROUGH set.

Runs ir_measures' own tests with THROUGH=peer (ir_measures alone), THROUGH=pipeline
(import fastir.ir_measures: fastir first in the default pipeline) or THROUGH=providers (that,
and each named provider -- ir_measures.pytrec_eval, .judged, .gdeval, ..., the registry and the
provider classes -- routed through fastir for the measures that provider claims and fastir
computes; the provider itself takes the rest)."""
import os

import ir_measures
from ir_measures import providers
from ir_measures.providers.fallback_provider import FallbackEvaluator
from ir_measures.util import QrelsConverter

THROUGH = os.environ.get("THROUGH", "peer")
if THROUGH in ("pipeline", "providers"):
    import fastir.ir_measures  # noqa: F401 (registers fastir first in the default pipeline)


class Routed(providers.Provider):
    def __init__(self, original):
        super().__init__()
        self.original, self.NAME = original, original.NAME
        # (gdeval's values are printed with 5 decimals: fastir answers as it prints them)
        self.fastir = fastir.ir_measures.gdeval if self.NAME == "gdeval" else \
            fastir.ir_measures.provider

    def supports(self, measure):
        return self.original.supports(measure)

    def is_available(self):
        return True

    def _fastir_takes(self, measure):
        try:
            claimed = not self.original.is_available() or self.original.supports(measure)
        except AssertionError:  # (a measure given parameters it does not have)
            return False
        return claimed and self.fastir.supports(measure)

    def _evaluator(self, measures, qrels):
        measures = list(measures)
        ours = [m for m in measures if self._fastir_takes(m)]
        theirs = [m for m in measures if m not in ours]
        parts = [(self.fastir, ours), (self.original, theirs)]
        parts = [(p, ms) for p, ms in parts if ms]
        copies = QrelsConverter(qrels).tee(len(parts))
        evaluators = [p.evaluator(ms, q.qrels) for (p, ms), q in zip(parts, copies)]
        return evaluators[0] if len(evaluators) == 1 else FallbackEvaluator(measures, evaluators)


if THROUGH == "providers":
    for name, original in list(providers.registry.items()):
        if name in ("fastir", "runtime"):
            continue
        providers.registry[name] = routed = Routed(original)
        setattr(ir_measures, name, routed)
    for cls_name in ("PytrecEvalProvider", "JudgedProvider", "GdevalProvider", "CompatProvider",
                     "CwlEvalProvider", "PyNdEvalProvider", "MsMarcoProvider", "RanxProvider",
                     "TrectoolsProvider", "AccuracyProvider"):
        cls = getattr(providers, cls_name)
        setattr(providers, cls_name, lambda cls=cls: Routed(cls()))
