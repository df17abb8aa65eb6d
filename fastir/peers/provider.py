"""fastir as an ir_measures provider: :func:`register` puts it first in ir_measures' default
pipeline, so ``ir_measures.calc_aggregate``, ``iter_calc``, ``evaluator`` and PyTerrier's
``pt.Experiment`` compute every measure fastir has on fastir, and the measures defined at
runtime (``ir_measures.define`` / ``define_byquery``: their own pandas functions, called as
ir_measures' runtime provider calls them), ir_measures' own providers taking the rest (``Accuracy``,
``RBP``...).

Values are those of the provider ir_measures would have chosen (``tests/peers/
test_ir_measures_provider.py`` compares them): trec_eval 9.0.8's (the version inside
pytrec_eval) for the measures ir_measures' pytrec_eval provider computes, fastir's own
(float64 scores) for the others; a judged query the run misses gets the measure's
``DEFAULT`` (0), as ir_measures gives it, so ``NumQ`` and ``NumRel`` sum over the run's
queries. Where the other providers break ties otherwise, fastir keeps trec_eval's order
(see the README, "ir_measures and PyTerrier").
"""

import warnings

import numpy as np

from fastir._optional import require
from fastir.io.inputs import as_qrels, as_run
from fastir.loops.evaluator import Evaluator
from fastir.measures import registry
from fastir.model.data import Qrels
from fastir.model.errors import FastirWarning
from fastir.peers.ir_measures import metrics

ir_measures = require("ir_measures", "fastir.ir_measures (fastir as ir_measures' provider)")
M, providers = ir_measures.measures, ir_measures.providers
MeanAgg, SumAgg = M.base.MeanAgg, M.base.SumAgg
NOT_PROVIDED, Any, Choices = (providers.base.NOT_PROVIDED, providers.base.Any,
                              providers.base.Choices)

#: The measures ir_measures' default pipeline gives to pytrec_eval: trec_eval 9.0.8's values.
TREC_EVAL = {"P", "Rprec", "AP", "R", "Bpref", "NumRet", "NumQ", "NumRel", "SetAP", "SetF",
             "SetP", "SetR", "Success", "IPrec", "infAP"}
DIVERSITY = {"ERR_IA", "nERR_IA", "alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP", "P_IA",
             "AP_IA", "StRecall"}
CWL = {"BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ"}
#: The place in ir_measures' default pipeline of the provider it would give a measure to:
#: metrics are yielded in that order (PyTerrier's columns follow it).
PIPELINE = ("pytrec_eval", "cwl_eval", "compat", "pyndeval", "judged", "msmarco", "gdeval",
            "ranx")


def _any(cls, **fixed):
    """ir_measures' description of a measure a provider supports: any value of each of
    its parameters but ``fixed`` (fastir's parser refuses what fastir lacks)."""
    return cls(**{name: fixed.get(name, Any()) for name in cls.SUPPORTED_PARAMS})


class FastirProvider(providers.Provider):
    """fastir, as ir_measures' providers are: ``supports(measure)``, ``evaluator(measures,
    qrels)``, ``iter_calc`` / ``calc_aggregate`` / ``calc``."""

    NAME = "fastir"
    SUPPORTED_MEASURES = [
        *(_any(cls) for cls in (M._P, M._RR, M._AP, M._R, M._Success, M._Rprec, M._Bpref,
                                M._infAP, M._NumRet, M._NumQ, M._NumRel, M._SetAP, M._SetR,
                                M._SetF, M._SetP, M._IPrec, M._ERR, M._Judged, M._Compat,
                                M._BPM, M._SDCG, M._NERR8, M._NERR9, M._NERR10, M._NERR11,
                                M._INST, M._INSQ, M._ERR_IA, M._nERR_IA, M._alpha_DCG,
                                M._alpha_nDCG, M._NRBP, M._nNRBP, M._P_IA, M._StRecall,
                                M._AP_IA)),
        _any(M._nDCG, dcg=Choices("log2")),
        _any(M._nDCG, dcg=Choices("exp-log2"), gains=Choices(NOT_PROVIDED)),
    ]

    def supports(self, measure):
        """Whether fastir computes ``measure`` with ir_measures' meaning of it (measures
        defined at runtime, ``ir_measures.define`` / ``define_byquery``, too)."""
        if is_runtime(measure):
            measure.validate_params()
            return True
        if not super().supports(measure):
            return False
        try:
            return fastir_measure(measure) is not None
        except ValueError:  # a parameter fastir refuses: another provider may take it
            return False

    def __init__(self, digits=None):
        super().__init__()
        self.digits = digits

    def _evaluator(self, measures, qrels):
        measures = list(measures)
        runtime = [m for m in measures if is_runtime(m)]
        if not runtime:
            return FastirEvaluator(measures, qrels, self.digits)
        from ir_measures.providers.fallback_provider import FallbackEvaluator
        from ir_measures.util import QrelsConverter

        ours = [m for m in measures if m not in runtime]
        copies = QrelsConverter(qrels, strict=False).tee(2 if ours else 1)
        evaluators = [RuntimeEvaluator(runtime, copies[0].qrels)]
        if ours:
            evaluators.append(FastirEvaluator(ours, copies[1].qrels, self.digits))
        return evaluators[0] if not ours else FallbackEvaluator(measures, evaluators)

    def run_inputs(self, measures):
        """The run columns the measures read: a runtime measure's ``RUN_INPUTS``, else
        query_id, doc_id and score (as ir_measures' providers answer)."""
        return _inputs(measures, "RUN_INPUTS", super().run_inputs(()))

    def qrel_inputs(self, measures):
        """The qrels columns the measures read (as :meth:`run_inputs`)."""
        return _inputs(measures, "QREL_INPUTS", super().qrel_inputs(()))


def is_runtime(measure):
    """Whether ``measure`` was defined at runtime (``ir_measures.define`` /
    ``define_byquery``): its values are its own function's."""
    return hasattr(measure, "runtime_impl")


def _inputs(measures, attribute, default):
    inputs = set()
    for m in measures:
        inputs.update(getattr(m, attribute, None) if is_runtime(m) else default)
    return list(inputs)


class RuntimeEvaluator(providers.Evaluator):
    """Measures defined at runtime, answered as ir_measures' runtime provider answers them:
    their functions are pandas code, called as Python on the frames (the qrels sorted by
    query and doc, the run by query and score descending; a cutoff keeps each query's
    first rows). A function of one query's frames may as well be fastir's own measure
    (``fastir.define_measure``, docs/guides/own-measures.md): compiled, hundreds of times
    faster."""

    def __init__(self, measures, qrels):
        from ir_measures.util import QrelsConverter

        frame = QrelsConverter(qrels, strict=False).as_pd_dataframe()
        if "query_id" not in frame.columns:
            raise ValueError("ir_measures qrels: no column query_id (columns: "
                             f"{frame.columns.to_list()})")
        order = ["query_id"] + (["doc_id"] if "doc_id" in frame.columns else [])
        self.qrels = frame.sort_values(by=order)
        super().__init__(measures, set(self.qrels["query_id"].unique()))

    def _iter_calc(self, run):
        from ir_measures.util import RunConverter

        run = RunConverter(run, strict=False).as_pd_dataframe()
        if "query_id" not in run.columns:
            raise ValueError("ir_measures run: no column query_id (columns: "
                             f"{run.columns.to_list()})")
        has_score = "score" in run.columns
        run = run.sort_values(by=["query_id", "score"] if has_score else ["query_id"],
                              ascending=[True, False] if has_score else [True])
        for measure in self.measures:
            yield from measure.runtime_impl(self.qrels, run)


def fastir_measure(measure):
    """fastir's :class:`~fastir.Measure` of an ir_measures measure (read by its text)."""
    ((_, parsed),) = registry.parse(str(measure))
    return parsed


class FastirEvaluator(providers.Evaluator):
    """Qrels and measures prepared once (one :class:`fastir.Evaluator` per kind of
    semantics); each run is read once, whatever its form."""

    def __init__(self, measures, qrels, digits=None):
        measures = list(measures)
        self.digits = digits
        judged = _qrels(qrels, any(m.NAME in DIVERSITY for m in measures))
        qids = set(qrels) if isinstance(qrels, dict) else set(judged.query_ids.tolist())
        super().__init__(measures, qids)
        groups = {}
        for m in sorted(measures, key=_pipeline_order):
            nine = _provider(m) == "pytrec_eval"  # (RR@k is msmarco's: float64 scores)
            groups.setdefault("9.0.8" if nine else None, []).append(m)
        self._parts = [(ms, Evaluator(judged, [fastir_measure(m) for m in ms], missing="skip",
                                      compat=compat)) for compat, ms in groups.items()]

    def _results(self, run):
        run = as_run(run)
        with warnings.catch_warnings():  # (ir_measures says nothing of a run it cannot score)
            warnings.simplefilter("ignore", FastirWarning)
            parts = [(ms, evaluator.evaluate(run)) for ms, evaluator in self._parts]
        if self.digits is not None:
            for _, results in parts:
                results.values = printed(results.values, self.digits)
        return parts

    def iter_calc(self, run):
        """ir_measures' ``iter_calc``: every metric, then each measure's default for every
        judged query it did not score, sorted by measure name and query, as the base class
        yields them; the queries scored are counted per measure, by sets of query ids,
        instead of hashing each metric's measure (its text, built per metric) twice."""
        scored = {}
        for measures, results in self._results(run):
            qids = set(results.query_ids)
            for measure in measures:
                scored.setdefault(measure, set()).update(qids)
            yield from metrics(ir_measures.Metric, results.query_ids, measures, results.values)
        judged = set(self.qrel_qids)
        missing = [(measure, qid) for measure in set(self.measures)
                   for qid in judged - scored.get(measure, set())]
        for measure, qid in sorted(missing, key=lambda x: (str(x[0]), x[1])):
            yield ir_measures.Metric(query_id=qid, measure=measure, value=measure.DEFAULT)

    def _iter_calc(self, run):
        for measures, results in self._results(run):
            yield from metrics(ir_measures.Metric, results.query_ids, measures, results.values)

    def calc_aggregate(self, run):
        """``{measure: aggregate}`` as ir_measures aggregates, without a Metric per value."""
        aggregates = {}
        for measures, results in self._results(run):
            missing = len(self.qrel_qids - set(results.query_ids))
            for measure, column in zip(measures, results.values.T):
                aggregates[measure] = aggregate(measure, column, missing)
        return {m: aggregates[m] for m in self.measures}


def aggregate(measure, values, missing):
    """ir_measures' aggregate of a measure's per-query ``values`` and ``missing`` queries
    scoring its ``DEFAULT``: a mean or a sum (ir_measures' MeanAgg, SumAgg) summed in order
    by numpy's sequential accumulate, as the aggregator adds (the same float); any other
    aggregator fed value by value."""
    aggregator = measure.aggregator()
    values = np.concatenate((values, np.full(missing, measure.DEFAULT, dtype=np.float64)))
    if type(aggregator) in (MeanAgg, SumAgg) and len(values):
        total = float(np.add.accumulate(values)[-1])
        return total / len(values) if type(aggregator) is MeanAgg else total
    for value in values.tolist():
        aggregator.add(value)
    return aggregator.result()


def printed(values, digits):
    """``values`` as a tool that prints them with ``digits`` decimals gives them (``%.5f``
    read back: gdeval's)."""
    text = [f"{v:.{digits}f}" for v in values.ravel().tolist()]
    return np.array(text, dtype=np.float64).reshape(values.shape)


def _provider(measure):
    """The provider ir_measures' default pipeline gives ``measure`` to (of fastir's)."""
    name, cut = measure.NAME, measure.params.get("cutoff", NOT_PROVIDED) is not NOT_PROVIDED
    if name in TREC_EVAL or (name == "RR" and not cut) or (name == "nDCG" and
                                                           measure["dcg"] == "log2"):
        return "pytrec_eval"
    if name == "nDCG":
        return "gdeval" if cut else "ranx"
    table = {"RR": "msmarco", "ERR": "gdeval", "Judged": "judged", "Compat": "compat"}
    return table.get(name) or ("cwl_eval" if name in CWL else "pyndeval")


def _pipeline_order(measure):
    """The order ir_measures yields metrics in: by provider; pytrec_eval's in trec_eval's
    print order (a cutoff list by cutoff)."""
    provider = _provider(measure)
    if provider != "pytrec_eval":
        return PIPELINE.index(provider), 0, 0
    parsed = fastir_measure(measure)
    names = parsed.spec.trec
    name = next((t for t in names if t.cut == (parsed.cutoff is not None)), names[0])
    return 0, name.order, parsed.cutoff or 0


def _qrels(qrels, subtopics):
    """fastir's Qrels of ir_measures' qrels (a dict, records or a DataFrame; a dict's
    queries without judgments dropped, as pytrec_eval drops them); with ``subtopics``, their
    ``iteration`` is the subtopic, as ir_measures' pyndeval provider reads it."""
    if not subtopics:
        if isinstance(qrels, dict):
            qrels = {q: docs for q, docs in qrels.items() if docs}
        return as_qrels(qrels)
    rows = list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter())
    return Qrels.from_arrays([r.query_id for r in rows], [r.doc_id for r in rows],
                             [r.relevance for r in rows],
                             subtopics=[getattr(r, "iteration", "0") for r in rows],
                             source="ir_measures qrels")


#: The provider :func:`register` puts in ir_measures' pipeline.
provider = FastirProvider()
#: fastir as gdeval answers: its values printed with 5 decimals and read back (what
#: ``ir_measures.gdeval`` gives for ERR@k and nDCG@k), for reproducing gdeval's numbers.
gdeval = FastirProvider(digits=5)


def register():
    """Put fastir first in ir_measures' default pipeline (``ir_measures.calc_aggregate``,
    ``iter_calc``, ``evaluator``, ``calc``, and PyTerrier's ``pt.Experiment`` through them)
    and in its registry as ``"fastir"``. Idempotent; ``import fastir.ir_measures`` calls it."""
    pipeline = ir_measures.DefaultPipeline.providers
    if provider not in pipeline:
        pipeline.insert(0, provider)
    providers.register(provider)


def unregister():
    """Take fastir out of ir_measures' default pipeline and registry."""
    pipeline = ir_measures.DefaultPipeline.providers
    if provider in pipeline:
        pipeline.remove(provider)
    providers.registry.pop(provider.NAME, None)
