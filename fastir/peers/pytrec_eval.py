"""pytrec_eval's module backed by fastir: ``import fastir.pytrec_eval as pytrec_eval`` runs a
pytrec_eval script unchanged, with the same dicts (queries in the run's order, measures in
trec_eval's), the same floats and the same JSON.

``RelevanceEvaluator`` computes with trec_eval 9.0.8's semantics, the version inside
pytrec_eval (``tests/peers/test_compat.py`` and ``tests/peers/test_pytrec_eval_shim.py`` run
both side by side); ``parse_qrel``, ``parse_run``, ``compute_aggregated_measure``,
``supported_measures`` and ``supported_nicknames`` are pytrec_eval's.
"""

import collections
import itertools
import math
from collections.abc import Mapping

import numpy as np

from fastir.loops.evaluator import Evaluator
from fastir.measures import registry, trec_requests
from fastir.measures.kernels import MIN_GEO_MEAN
from fastir.model.errors import InputError
from fastir.model.ids import listed

#: pytrec_eval's measure names, runid included: trec_eval 9's but yaap, which is newer than
#: the trec_eval inside pytrec_eval (``RelevanceEvaluator`` computes it when asked by name),
#: and not those of other judgments than qrels (pytrec_eval reads qrels only).
supported_measures = frozenset(
    name for name, (family, trec) in registry.TREC_NAMES.items()
    if "9.0.8" in registry.FAMILIES[family].versions and name != "yaap"
    and registry.FAMILIES[family].path not in ("prefs", "groups")) | {"runid"}

#: pytrec_eval's nicknames: trec_eval's measure sets, their trec_eval 9 members.
supported_nicknames = {name: {m for m in members if m in supported_measures}
                       for name, members in registry.NICKNAMES.items()
                       if not any(registry.FAMILIES[registry.TREC_NAMES[m][0]].path in
                                  ("prefs", "groups") for m in members if m != "runid")}

#: What is evaluated when a request has no number in it (its values are not reported): the
#: queries are chosen as for any other request.
_PLACEHOLDER = registry.make("NumRet")


def parse_run(f_run):
    """A TREC run as pytrec_eval reads it: ``{query_id: {doc_id: score}}`` in file order.

    Parameters
    ----------
    f_run : iterable of str
        Lines ``query_id Q0 doc_id rank score tag`` (an open file). Blank lines and ``#``
        comment lines are skipped (pytrec_eval fails on them).

    Returns
    -------
    collections.defaultdict
        ``{query_id: {doc_id: float score}}``, as pytrec_eval's.

    Raises
    ------
    InputError
        A line of another length, a score that is not a finite number (``1_0``, ``nan``), a
        doc given twice in a query (pytrec_eval: an ``AssertionError``), naming the line.
    """
    return _parse(f_run, 6, 2, 4, _score)


def parse_qrel(f_qrel):
    """TREC qrels as pytrec_eval reads them: ``{query_id: {doc_id: int label}}`` in file order
    (lines ``query_id iteration doc_id label``; otherwise as :func:`parse_run`)."""
    return _parse(f_qrel, 4, 2, 3, _label)


def _parse(lines, n_fields, doc, value, convert):
    out = collections.defaultdict(dict)
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            line = line.decode("utf-8", "surrogateescape")
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        where = f"line {number}"
        if len(fields) != n_fields:
            raise InputError(f"{where}: {len(fields)} fields, expected {n_fields}: {line!r}")
        docs = out[fields[0]]
        if fields[doc] in docs:
            raise InputError(f"{where}: query {fields[0]!r} has doc {fields[doc]!r} twice")
        docs[fields[doc]] = convert(fields[value], where)
    return out


def _score(text, where):
    try:
        score = float(text)
    except ValueError:
        score = math.nan
    if "_" in text or not math.isfinite(score):
        raise InputError(f"{where}: score {text!r} is not a finite number")
    return score


def _label(text, where):
    if "_" not in text:  # (Python reads 1_0 as 10)
        try:
            return int(text)
        except ValueError:
            pass
    raise InputError(f"{where}: label {text!r} is not an integer")


def compute_aggregated_measure(measure, values):
    """pytrec_eval's summary of per-query ``values``: their sum for ``num_*`` measures, the
    geometric mean for ``gm_*`` (the values are the logarithms ``evaluate`` reports), the
    mean otherwise. numpy's pairwise sums, as pytrec_eval's, so the float is pytrec_eval's
    (trec_eval's own summaries, and :func:`fastir.evaluate`'s ``mean``, sum in query order)."""
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


class RelevanceEvaluator:
    """pytrec_eval's evaluator: ``RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"})``, then
    ``evaluate(run) -> {query: {measure: value}}`` for every run query with judgments.

    Keys as pytrec_eval writes them: a cutoff list by member (``P.5,10`` -> ``P_5``,
    ``P_10``), a parameterised single measure by its base name (``utility.2,-1,0,0`` ->
    ``utility``); per-query ``gm_map`` / ``gm_bpref`` are the logarithms it reports. Judged
    queries absent from the run are left out, and scores are ranked as float32 with 9.0.8's
    recall levels, as trec_eval 9.0.8 inside pytrec_eval does. fastir's own names
    (``nDCG@10``) are accepted too, keyed as written.

    The request is read as pytrec_eval reads it (``tests/peers/test_compat.py`` checks each case
    against it):

    - the nicknames ``official``, ``set`` and ``all_trec`` are their trec_eval 9 members,
      ``runid`` included; ``runid`` and ``relstring`` (text in trec_eval) are 0.0;
    - the cutoffs of one measure are merged, whichever way they are written: ``ndcg_cut.1,4``
      with ``ndcg_cut_20,4`` is ``ndcg_cut_1``, ``_4``, ``_20``; ``P.5`` with ``P_5`` is one
      ``P_5``; a bare name (``P``, or ``P`` from ``official``) gives trec_eval's default
      cutoffs only when no cutoff of it is given;
    - an empty request gives ``{query: {}}`` for the queries a request would score, and an
      empty run gives ``{}``;
    - a query whose judgments are an empty dict is not judged (not scored).

    Where pytrec_eval fails, fastir says why instead: a cutoff given twice in two spellings
    (``P.5`` with ``P.5.0``: pytrec_eval's trec_eval aborts the interpreter), two parameter
    sets of one single measure (``set_F.0.5`` with ``set_F.1``: pytrec_eval joins them into
    ``set_F.0.5,1`` and trec_eval reads the first). Parameters are read whole, as trec_eval
    reads them (pytrec_eval stops at the first character that is not a digit, a dot or a
    comma, so its ``utility.2,-1,0,0`` is ``utility.2``); ``runid`` alone is 0.0 (pytrec_eval
    reads uninitialised memory for it).
    """

    def __init__(self, query_relevance, measures, relevance_level=1,
                 judged_docs_only_flag=False):
        if isinstance(query_relevance, Mapping):  # pytrec_eval drops queries without judgments
            query_relevance = {q: docs for q, docs in query_relevance.items() if len(docs)}
        self._keys, self._logs, self._column = [], set(), {}
        numbers = {}  # each measure once, however many keys name it (nDCG@10, ndcg_cut_10)
        for key, measure in _requested(measures):
            if key in self._keys:
                raise ValueError(f"measure {key!r} requested twice")
            self._keys.append(key)
            if measure is None or measure.spec.aggregate == "none":
                continue  # runid, relstring: text in trec_eval, 0.0 in pytrec_eval
            if measure.spec.aggregate == "gmean":
                self._logs.add(key)
            self._column[key] = numbers.setdefault(measure, len(numbers))
        self._evaluator = Evaluator(query_relevance, list(numbers) or [_PLACEHOLDER],
                                    relevance_level=relevance_level, missing="skip",
                                    judged_only=judged_docs_only_flag, compat="9.0.8")

    def evaluate(self, run):
        """``{query: {measure: value}}`` for the run's judged queries, in the run's order and
        keyed as the run keys them (``{}`` for an empty run, as pytrec_eval). ``run`` is a
        dict, as for pytrec_eval, or any form :func:`fastir.evaluate` takes (then in
        trec_eval's query order)."""
        if isinstance(run, Mapping) and not run:
            return {}
        results = self._evaluator.evaluate(run)
        values = results.values
        if self._logs:  # (per-query gm_map and gm_bpref: the logarithms pytrec_eval gives,
            values = values.copy()  # C's log, as math.log; numpy's may differ in an ulp)
            for j in {self._column[key] for key in self._logs}:  # (a column once, however
                values[:, j] = [math.log(max(v, MIN_GEO_MEAN))  # many keys name it)
                                for v in values[:, j].tolist()]
        columns = [self._column.get(key) for key in self._keys]
        rows = (values[:, [j for j in columns if j is not None]] if None not in columns
                else _with_zeros(values, columns)).tolist()
        out = dict(zip(results.query_ids, map(dict, map(zip, itertools.repeat(self._keys),
                                                          rows))))
        if not isinstance(run, Mapping):
            return out
        order = [query for query in run if query in out]  # (the run's order, its own keys)
        if len(order) < len(out):  # (keys given as bytes: looked up as text)
            return {query: out[listed(query)] for query in run if listed(query) in out}
        return dict(zip(order, map(out.__getitem__, order)))


def _with_zeros(values, columns):
    """The columns of ``values`` in key order, 0.0 for a key with none (runid, relstring)."""
    out = np.zeros((len(values), len(columns)))
    for k, j in enumerate(columns):
        if j is not None:
            out[:, k] = values[:, j]
    return out


def _requested(measures):
    """``(key, Measure)`` pairs of a pytrec_eval request, in trec_eval's print order, then
    fastir's own names as given (``None`` for runid)."""
    given, own = trec_requests.read(
        measures, has=supported_measures.__contains__,
        split=lambda name: trec_requests.split_pytrec_eval(name, supported_measures))
    pairs = []
    for base, params in trec_requests.pytrec_eval_params(given):
        if base == "runid":
            pairs.append((base, None))
            continue
        text = base if params is None else f"{base}.{params}"
        cut = trec_requests.style(base) == "cut"
        pairs += [(measure.trec_name() if cut else base, measure)
                  for measure in registry.parse_trec(text)]
    for name in own:
        pairs.extend(registry.parse(name))
    return pairs
