"""The shapes of the peers' entry points, backed by :class:`fastir.Evaluator`: pytrec_eval's
``RelevanceEvaluator`` and ir_measures' ``iter_calc`` / ``calc_aggregate``.

Code written for either runs unchanged after swapping the import, and gets the same keys
and values (``tests/test_compat.py`` runs both side by side).
"""

import math
from collections import namedtuple

from fastir import measures as registry
from fastir.batch import Evaluator
from fastir.kernels import MIN_GEO_MEAN

#: pytrec_eval's measure names (trec_eval 9's, as its ``supported_measures``).
supported_measures = frozenset(
    name for name, (family, trec) in registry.TREC_NAMES.items()
    if "9.0.8" in registry.FAMILIES[family].versions)


class RelevanceEvaluator:
    """pytrec_eval's evaluator: ``RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"})``, then
    ``evaluate(run) -> {query: {measure: value}}`` for every run query with judgments.

    Keys as pytrec_eval writes them: a cutoff list by member (``P.5,10`` -> ``P_5``,
    ``P_10``), a parameterised single measure by its base name (``utility.2,-1,0,0`` ->
    ``utility``); per-query ``gm_map`` / ``gm_bpref`` are the logarithms it reports. Judged
    queries absent from the run are left out, and scores are ranked as float32 with 9.0.8's
    recall levels, as trec_eval 9.0.8 inside pytrec_eval does. fastir's own names
    (``nDCG@10``) are accepted too, keyed as written.
    """

    def __init__(self, query_relevance, measures, relevance_level=1,
                 judged_docs_only_flag=False):
        if isinstance(measures, str):
            measures = [measures]
        self._keys, self._logs, names = [], set(), []
        for name in measures:
            for key, measure in registry.parse(name):
                base = name.split(".")[0]
                if base in registry.TREC_NAMES and registry.TREC_NAMES[base][1].style != "cut":
                    key = base  # pytrec_eval's key for a parameterised single measure
                if measure.spec.aggregate == "none":
                    raise ValueError(f"{name!r} is text, not a number (pytrec_eval reports "
                                     "0.0 for it); fastir.evaluate gives it in to_dict()")
                if measure.spec.aggregate == "gmean":
                    self._logs.add(key)
                self._keys.append(key)
                names.append(measure)
        self._evaluator = Evaluator(query_relevance, names, relevance_level=relevance_level,
                                    missing="skip", judged_only=judged_docs_only_flag,
                                    compat="9.0.8")

    def evaluate(self, run):
        """``{query: {measure: value}}`` for the run's judged queries."""
        results = self._evaluator.evaluate(run)
        out = {}
        for query, row in zip(results.query_ids, results.values.tolist()):
            values = dict(zip(self._keys, row))
            for key in self._logs:
                values[key] = math.log(max(values[key], MIN_GEO_MEAN))
            out[query] = values
        return out


Metric = namedtuple("Metric", ["query_id", "measure", "value"])
"""A per-query value, as ir_measures' ``iter_calc`` yields it."""


def iter_calc(measures, qrels, run, **options):
    """ir_measures' ``iter_calc``: a :class:`Metric` per judged query and measure
    (``measure`` is what you passed: an ir_measures object or a name; a query the run misses
    scores 0, as in ir_measures). ``options`` as for :func:`fastir.evaluate`."""
    measures, results = _calc(measures, qrels, run, options)
    for query, row in zip(results.query_ids, results.values.tolist()):
        for measure, value in zip(measures, row):
            yield Metric(query, measure, value)


def calc_aggregate(measures, qrels, run, **options):
    """ir_measures' ``calc_aggregate``: ``{measure: value over the queries}``, keyed by what
    you passed (an ir_measures object or a name)."""
    measures, results = _calc(measures, qrels, run, options)
    means = list(results.mean.values())
    return dict(zip(measures, means))


def _calc(measures, qrels, run, options):
    measures = list(measures) if isinstance(measures, (list, tuple, set)) else [measures]
    parsed = [registry.parse(m) for m in measures]
    if any(len(p) != 1 for p in parsed):
        raise ValueError("iter_calc / calc_aggregate take single measures (a trec_eval list "
                         "such as 'P.5,10' expands: use fastir.evaluate)")
    results = Evaluator(qrels, [p[0][1] for p in parsed], **options).evaluate(run)
    return measures, results
