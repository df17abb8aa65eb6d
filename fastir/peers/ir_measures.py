"""ir_measures' functions with fastir's semantics: ``fastir.iter_calc``, ``fastir.calc_aggregate``
and ``fastir.evaluator(measures, qrels)``, taking ir_measures' measure objects (or any name
fastir reads) and every qrels / run form fastir takes, ir_measures' records included.

ir_measures itself is not imported (its measure objects are read by their text); to run
ir_measures (and PyTerrier) on fastir instead, see :mod:`fastir.ir_measures`.
"""

import itertools
from collections import namedtuple

from fastir.engine import disjoint_warning
from fastir.loops.evaluator import Evaluator
from fastir.measures import registry

Metric = namedtuple("Metric", ["query_id", "measure", "value"])
"""A per-query value, as ir_measures' ``iter_calc`` yields it."""


class MeasuresEvaluator:
    """ir_measures' ``Evaluator``: measures and qrels prepared once (a :class:`fastir.Evaluator`
    inside), then ``iter_calc(run)`` / ``calc_aggregate(run)`` for each run.

    Values and means are :func:`fastir.evaluate`'s with ``options`` (``relevance_level``,
    ``missing``, ``judged_only``, ``compat``...): by default every judged query counts and
    one the run misses scores 0, as in ir_measures. Results are keyed by the measures as
    given (ir_measures objects or names)."""

    def __init__(self, measures, qrels, **options):
        self.measures = list(measures) if isinstance(measures, (list, tuple, set)) \
            else [measures]
        parsed = [registry.parse(m) for m in self.measures]
        if any(len(p) != 1 for p in parsed):
            raise ValueError("iter_calc / calc_aggregate take single measures (a trec_eval "
                             "list such as 'P.5,10' expands: use fastir.evaluate)")
        self._evaluator = Evaluator(qrels, [p[0][1] for p in parsed], **options)
        self._evaluator.check = disjoint_warning  # (ir_measures scores a query it lacks 0)

    def iter_calc(self, run):
        """A :class:`Metric` per judged query and measure (``measure`` as given; a text
        measure's value its text, as :func:`fastir.evaluate` gives it)."""
        results = self._evaluator.evaluate(run)
        values = results.values
        if results.strings:
            values = values.astype(object)
            for key, texts in results.strings.items():
                values[:, results.measures.index(key)] = texts
        yield from metrics(Metric, results.query_ids, self.measures, values)

    def calc_aggregate(self, run):
        """``{measure: value over the queries}``, keyed by the measures as given; a text
        measure (RelString), which has none, is refused by name (:meth:`iter_calc` gives
        its text per query)."""
        text = [str(m) for m in self._evaluator.plan.parsed if m.spec.aggregate == "none"]
        if text:
            raise ValueError(f"{', '.join(text)}: a text measure has no value over the "
                             "queries; iter_calc gives its text per query")
        return dict(zip(self.measures, self._evaluator.evaluate(run).mean.values()))


def metrics(kind, query_ids, measures, values):
    """A ``kind(query_id, measure, value)`` per query and measure of ``values`` (n_queries,
    n_measures), query by query: namedtuples made by C-level calls (``tuple.__new__``), not
    by a Python call each."""
    queries = itertools.chain.from_iterable(map(itertools.repeat, query_ids,
                                                itertools.repeat(len(measures))))
    rows = zip(queries, itertools.cycle(measures), values.ravel().tolist())
    return map(tuple.__new__, itertools.repeat(kind), rows)


def evaluator(measures, qrels, **options):
    """ir_measures' ``evaluator(measures, qrels)``: a :class:`MeasuresEvaluator` (qrels and
    measures prepared once for many runs).

    Examples
    --------
    >>> import fastir
    >>> ev = fastir.evaluator(["AP", "P@1"], {"q": {"a": 1, "b": 0}})
    >>> ev.calc_aggregate({"q": {"a": 0.2, "b": 0.9}})
    {'AP': 0.5, 'P@1': 0.0}
    """
    return MeasuresEvaluator(measures, qrels, **options)


def iter_calc(measures, qrels, run, **options):
    """ir_measures' ``iter_calc``: a :class:`Metric` per judged query and measure
    (``measure`` is what you passed: an ir_measures object or a name; a query the run misses
    scores 0, as in ir_measures). ``options`` as for :func:`fastir.evaluate`."""
    return MeasuresEvaluator(measures, qrels, **options).iter_calc(run)


def calc_aggregate(measures, qrels, run, **options):
    """ir_measures' ``calc_aggregate``: ``{measure: value over the queries}``, keyed by what
    you passed (an ir_measures object or a name)."""
    return MeasuresEvaluator(measures, qrels, **options).calc_aggregate(run)
