"""The kernels against the independent naive reference, on generated inputs."""

import math

import naive
import pytest
from conftest import (
    MEASURES,
    SUBTOPIC_MEASURES,
    naive_values,
    qrels_and_runs,
    subtopic_qrels_and_runs,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir

NAMES = MEASURES


def _check(qrels, run, names=NAMES, **options):
    options.setdefault("num_docs", 10_000)  # (Accuracy needs the collection size)
    expected = naive_values(qrels, run, names, **options)
    res = fastir.evaluate(qrels, run, names, **options)
    got = res.to_dict()
    assert set(got) == set(expected)
    for qid, values in expected.items():
        for name, want in zip(names, values):
            have = got[qid][name]
            assert have == want or (math.isnan(want) and math.isnan(have)), (
                f"{name} on {qid}: fastir {have!r} != naive {want!r}")
    # summaries: the naive aggregate over the same query order
    for j, name in enumerate(names):
        family = naive.parse(name)[0]
        if family == "RelString":
            continue  # (text: no summary)
        column = [expected[q][j] for q in res.query_ids]
        assert res.mean[name] == naive.aggregate(family, column), name


@settings(max_examples=300, deadline=None)
@given(qrels_and_runs())
def test_kernels_match_naive(data):
    _check(*data)


@settings(max_examples=150, deadline=None)
@given(qrels_and_runs(), st.sampled_from(["zero", "skip"]), st.integers(0, 3),
       st.one_of(st.none(), st.integers(0, 6)), st.booleans(), st.integers(16, 60))
def test_kernels_match_naive_with_options(data, missing, level, max_docs, judged_only,
                                          num_docs):
    _check(*data, missing=missing, relevance_level=level, max_docs=max_docs,
           judged_only=judged_only, num_docs=num_docs)


@settings(max_examples=300, deadline=None)
@given(subtopic_qrels_and_runs(), st.sampled_from(["zero", "skip"]), st.integers(0, 2),
       st.one_of(st.none(), st.integers(0, 6)), st.booleans())
def test_diversity_kernel_matches_naive(data, missing, level, max_docs, judged_only):
    """Subtopic qrels: the diversity measures, and the others on each doc's largest label."""
    _check(*data, SUBTOPIC_MEASURES + ["AP", "nDCG@5", "P@3"], missing=missing,
           relevance_level=level, max_docs=max_docs, judged_only=judged_only)


def test_cutoff_beyond_ranking_and_empty_queries():
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"x": 0}}
    run = {"q1": {"a": 1.0}, "q3": {}, "q9": {"z": 1.0}}
    _check(qrels, run)
    _check(qrels, run, missing="skip")


def test_all_ties_are_broken_by_docno_descending():
    qrels = {"q": {"dA": 1, "dB": 0, "dC": 0}}
    run = {"q": {"dA": 1.0, "dB": 1.0, "dC": 1.0}}  # ranks dC, dB, dA
    res = fastir.evaluate(qrels, run, ["RR", "P@1", "AP"])
    assert res.mean == {"RR": 1 / 3, "P@1": 0.0, "AP": 1 / 3}


@pytest.mark.parametrize("n_docs", [1, 7, 64, 300])
def test_large_tie_groups_sort_like_naive(n_docs):
    docs = [f"doc{i}" for i in range(n_docs)]
    qrels = {"q": {d: (i % 3) for i, d in enumerate(docs[::2])}}
    run = {"q": {d: float(i % 4) for i, d in enumerate(docs)}}
    _check(qrels, run)
