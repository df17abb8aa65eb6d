"""Requests as users write them: a subset of the registered measures, in any order, with
their parameters, not every measure at once.

Each drawn request must give, for every measure, the naive reference's value and the value
of the same measure computed among all the others (the prefix rows a plan builds depend on
the request: a measure that reads beyond them is wrong only beside some others). Both
engines run every test (tests/conftest.py)."""

import math

import numpy as np
import pytest
from conftest import (
    MEASURES,
    SUBTOPIC_MEASURES,
    matrix_to_dicts,
    naive_values,
    qrels_and_runs,
    run_rows,
    subtopic_qrels_and_runs,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir.measures.registry import RANK, Measure, parse

#: Everything at once, as the reference tests evaluate it.
LUMP = MEASURES
OPTIONS = {"num_docs": 10_000}  # (Accuracy needs the collection size)


@st.composite
def requests(draw, pool=MEASURES, max_size=6):
    """A request: distinct registered measures in a drawn order, a rank cutoff drawn anew
    for some (so that the largest cutoff, and with it the prefix depth, varies)."""
    names = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=max_size, unique=True))
    request = []
    for name in names:
        measure = parse(name)[0][1]
        if measure.spec.cutoff is RANK and draw(st.booleans()):
            cutoff = draw(st.one_of(st.none(), st.integers(1, 14)) if not
                          measure.spec.cutoff_required else st.integers(1, 14))
            measure = Measure(measure.family, cutoff, **dict(measure.values))
        if str(measure) not in request:
            request.append(str(measure))
    return request


def _same(a, b):
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def _check_request(qrels, run, request, **options):
    options = {**OPTIONS, **options}
    alone = fastir.evaluate(qrels, run, request, **options).to_dict()
    lump_names = LUMP + [name for name in request if name not in LUMP]
    lump = fastir.evaluate(qrels, run, lump_names, **options).to_dict()
    expected = naive_values(qrels, run, request, **options)
    assert set(alone) == set(expected)
    for qid, values in expected.items():
        for name, want in zip(request, values):
            assert _same(alone[qid][name], want), (
                f"{name} in {request} on {qid}: {alone[qid][name]!r} != naive {want!r}")
            assert _same(alone[qid][name], lump[qid][name]), (
                f"{name} in {request} on {qid}: {alone[qid][name]!r} != "
                f"{lump[qid][name]!r} among all measures")


@settings(max_examples=1000, deadline=None)
@given(qrels_and_runs(), requests())
def test_every_request_matches_the_reference_and_the_lump(data, request):
    _check_request(*data, request)


@settings(max_examples=200, deadline=None)
@given(qrels_and_runs(), requests(), st.sampled_from(["zero", "skip"]), st.integers(0, 3),
       st.one_of(st.none(), st.integers(0, 6)), st.booleans())
def test_requests_with_options(data, request, missing, level, max_docs, judged_only):
    _check_request(*data, request, missing=missing, relevance_level=level,
                   max_docs=max_docs, judged_only=judged_only)


def test_a_cutoff_measure_beside_a_whole_ranking_one():
    """The reproducer: IPrecAvg beside P@3 read past the three ranks the plan built."""
    qrels = {"q1": {"a": 1, "b": 1, "c": 0, "d": 1, "e": 1}}
    run = {"q1": {doc: 10.0 - i for i, doc in enumerate("xaybzcwdve")}}
    alone = fastir.evaluate(qrels, run, ["IPrecAvg"]).mean["IPrecAvg"]
    assert alone == naive_values(qrels, run, ["IPrecAvg"])["q1"][0]
    for request in (["IPrecAvg", "P@3"], ["P@3", "IPrecAvg"], ["RR@1", "IPrecAvg", "nDCG@2"]):
        assert fastir.evaluate(qrels, run, request).mean["IPrecAvg"] == alone


#: The measures a dense batch or bound candidates compute (no unjudged documents, no
#: collection size, no subtopics).
DENSE = [name for name in MEASURES if not parse(name)[0][1].spec.unjudged
         and parse(name)[0][1].spec.num_docs is None and parse(name)[0][1].spec.aggregate
         != "none"]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 12), st.booleans(), st.randoms(),
       requests(pool=DENSE))
def test_dense_batch_requests_match_evaluate(batch, width, masked, rnd, request):
    """evaluate_matrix orders only the top ranks a request reads: any request gives the
    values evaluate gives on the same rows."""
    rng = np.random.default_rng(rnd.randrange(2**32))
    scores = rng.choice([0.0, 0.25, 0.5, 1.0], size=(batch, width))
    labels = rng.integers(0, 4, size=(batch, width))
    mask = rng.random((batch, width)) < 0.7 if masked else None
    _, per_row = fastir.evaluate_matrix(scores, labels, request, valid=mask, per_row=True)
    qrels, run = matrix_to_dicts(scores, labels, mask)
    want = fastir.evaluate(qrels, run, request)
    assert np.array_equal(per_row, want.values, equal_nan=True), request


#: The measures bound candidates compute (numbers, no collection size, judged by the query:
#: test_bound_candidates_refuse_what_any_query_judges).
BOUND = [name for name in MEASURES if parse(name)[0][1].spec.num_docs is None
         and parse(name)[0][1].spec.aggregate != "none" and not parse(name)[0][1].spec.anywhere]


@settings(max_examples=150, deadline=None)
@given(qrels_and_runs(), requests(pool=BOUND), st.randoms())
def test_bound_candidate_requests_match_evaluate(data, request, rnd):
    """Bound candidates rank each score vector and hand the rankings to the same kernel."""
    qrels, run = data
    run = {q: d for q, d in run.items() if d}  # a bound query always has candidates
    qids, docs, _ = run_rows(run)
    if not qids:
        return
    bound = fastir.Evaluator(qrels, request).bind(np.array(qids), np.array(docs))
    vector = np.array([rnd.choice([0.0, 0.5, 1.0]) for _ in qids])
    rerun = {}
    for q, d, s in zip(qids, docs, vector):
        rerun.setdefault(q, {})[d] = float(s)
    want = fastir.evaluate(qrels, rerun, request)
    got = bound.evaluate(vector)
    assert np.array_equal(got.values, want.values, equal_nan=True), request


@pytest.mark.one_engine
def test_bound_candidates_refuse_what_any_query_judges():
    """Hole@k reads each doc's judgments in every query: bound candidates do not look them
    up, and say so (an evaluated run does)."""
    ev = fastir.Evaluator({"q": {"a": 1}, "r": {"b": 0}}, ["Hole@2", "AP"])
    with pytest.raises(ValueError, match=r"Hole@2: counts the documents no query judges"):
        ev.bind(np.array(["q", "q"]), np.array(["a", "b"]))
    got = ev.evaluate({"q": {"c": 1.0, "b": 0.5, "a": 0.1}}).to_dict()["q"]
    assert got == {"Hole@2": 0.5, "AP": 1 / 3}


@st.composite
def subtopic_requests(draw):
    """Diversity measures mixed with the others (a subset of each)."""
    return draw(requests(pool=SUBTOPIC_MEASURES, max_size=3)) + draw(requests(max_size=3))


@settings(max_examples=150, deadline=None)
@given(subtopic_qrels_and_runs(), subtopic_requests())
def test_diversity_requests(data, request):
    qrels, run = data
    got = fastir.evaluate(qrels, run, request, **OPTIONS).to_dict()
    expected = naive_values(qrels, run, request, **OPTIONS)
    for qid, values in expected.items():
        for name, want in zip(request, values):
            assert _same(got[qid][name], want), f"{name} in {request} on {qid}"
