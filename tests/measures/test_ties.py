"""Tie orders and holes (``ties=``, ``unjudged=``) against their definitions: the expected
value is the mean over every order of the tied documents (brute force), "input" is the run's
own order (ranx's), and the optimistic value is the value on the augmented qrels."""

import math

import numpy as np
import pytest
from conftest import MEASURES, naive_values, qrels_and_runs
from engine.test_engines import both
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import ties as naive_ties

import fastir
from fastir.measures.registry import parse_all

EXPECTED_NAMES = [n for n in MEASURES if parse_all([n])[1][0].spec.ties is not None]
REFUSED_NAMES = [n for n in MEASURES if n not in EXPECTED_NAMES]
#: Those that take unjudged=("relevant", label): Hole counts the documents no query judges
UNJUDGED_NAMES = [n for n in MEASURES if not parse_all([n])[1][0].spec.anywhere]
DOCS = ["d1", "d10", "d2", "d3", "D3", "d4", "e", "d5", "d6", "d7"]


@st.composite
def tied_runs(draw):
    """Qrels and a run whose queries have tie groups of up to 6 documents (few enough
    orders to enumerate)."""
    qids = draw(st.lists(st.sampled_from(["q1", "q2", "3"]), min_size=1, max_size=2,
                         unique=True))
    qrels, run = {}, {}
    for qid in qids:
        sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3).filter(
            lambda s: sum(s) <= len(DOCS) and math.prod(math.factorial(k) for k in s) <= 1440))
        docs = draw(st.permutations(DOCS))[:sum(sizes)]
        run[qid], at = {}, 0
        for g, size in enumerate(sizes):
            for doc in docs[at:at + size]:
                run[qid][doc] = float(len(sizes) - g)
            at += size
        pool = draw(st.lists(st.sampled_from(DOCS + ["x", "y"]), max_size=8, unique=True))
        qrels[qid] = {doc: draw(st.integers(-1, 3)) for doc in pool}
    return qrels, run


def brute_force_means(qrels, run, names):
    """Per query, the mean over every order of its tied documents of the default values:
    every order is a query of its own in one evaluation."""
    orders_qrels, orders_run, owner = {}, {}, []
    for qid, run_q in run.items():
        if qid not in qrels:
            continue
        for k, ranking in enumerate(naive_ties.every_order(run_q)):
            name = f"{qid}#{k:05d}"
            orders_qrels[name] = qrels[qid]
            orders_run[name] = naive_ties.as_scores(ranking)
            owner.append(qid)
    res = fastir.evaluate(orders_qrels, orders_run, names, num_docs=10_000)
    values = res.to_dict()
    means = {}
    for qid in set(owner):
        rows = [values[name] for name in values if name.split("#")[0] == qid]
        means[qid] = {n: sum(r[n] for r in rows) / len(rows) for n in names}
    return means


@settings(max_examples=40, deadline=None)
@given(tied_runs())
def test_expected_is_the_mean_over_every_tie_order(data):
    qrels, run = data
    want = brute_force_means(qrels, run, EXPECTED_NAMES)
    got = fastir.evaluate(qrels, run, EXPECTED_NAMES, ties="expected", num_docs=10_000,
                          missing="skip").to_dict()
    assert set(got) == set(want)
    for qid, values in want.items():
        for name, value in values.items():
            assert got[qid][name] == pytest.approx(value, rel=1e-9, abs=1e-12), (
                f"{name} on {qid}: expected {got[qid][name]!r}, brute force {value!r}")


@settings(max_examples=60, deadline=None)
@given(qrels_and_runs(), st.booleans())
def test_expected_without_ties_is_the_default_bit_for_bit(data, judged_only):
    qrels, run = data
    run = {q: naive_ties.as_scores(naive_ties.input_order(r)) for q, r in run.items()}
    default = fastir.evaluate(qrels, run, EXPECTED_NAMES, num_docs=10_000,
                              judged_only=judged_only)
    res = fastir.evaluate(qrels, run, EXPECTED_NAMES, ties="expected", num_docs=10_000,
                          judged_only=judged_only)
    assert np.array_equal(res.values, default.values)


@pytest.mark.one_engine
def test_both_engines_agree_on_expected_values():
    qrels = {"q": {"a": 1, "b": 0, "c": 2, "d": 1, "z": 3}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.5, "e": 0.5, "f": 0.2}}
    py, nb = both(fastir.evaluate, qrels, run, EXPECTED_NAMES, ties="expected",
                  num_docs=10_000)
    assert np.array_equal(py.values, nb.values)
    assert py.mean["RR"] == pytest.approx(5 / 6)  # the first relevant: at 1 (2 in 3), else 2


def test_families_without_an_expected_value_are_refused_by_name():
    for name in REFUSED_NAMES:
        with pytest.raises(ValueError, match="no expected value over tie orders") as info:
            fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name, "AP"],
                            ties="expected")
        assert str(info.value).startswith(name.split("@")[0].split("(")[0])
        assert "AP" not in str(info.value).split(":")[0].split(", ")


@settings(max_examples=80, deadline=None)
@given(qrels_and_runs())
def test_input_order_is_the_runs_order_among_equal_scores(data):
    qrels, run = data
    names = [n for n in MEASURES if n != "RelString"]
    reordered = {q: naive_ties.as_scores(naive_ties.input_order(r)) for q, r in run.items()}
    want = naive_values(qrels, reordered, names, num_docs=10_000)
    got = fastir.evaluate(qrels, run, names, ties="input", num_docs=10_000).to_dict()
    assert set(got) == set(want)
    for qid, values in want.items():
        for name, value in zip(names, values):
            assert got[qid][name] == value or (math.isnan(value)
                                               and math.isnan(got[qid][name])), name


@settings(max_examples=40, deadline=None)
@given(qrels_and_runs())
def test_input_order_is_the_default_without_ties(data):
    qrels, run = data
    run = {q: naive_ties.as_scores(naive_ties.input_order(r)) for q, r in run.items()}
    default = fastir.evaluate(qrels, run, MEASURES, num_docs=10_000)
    got = fastir.evaluate(qrels, run, MEASURES, ties="input", num_docs=10_000)
    assert np.array_equal(got.values, default.values, equal_nan=True)


RANX = {"map": "AP", "mrr": "RR", "precision@3": "P@3", "recall@3": "R@3",
        "ndcg@3": "nDCG@3", "hit_rate@2": "Success@2"}


@settings(max_examples=40, deadline=None)
@given(tied_runs())
def test_input_order_equals_ranx_on_runs_with_ties(data):
    ranx = pytest.importorskip("ranx")
    qrels, run = data
    qrels = {q: {d: lab for d, lab in j.items() if lab > 0} for q, j in qrels.items()}
    qrels = {q: j for q, j in qrels.items() if j}
    run = {q: r for q, r in run.items() if q in qrels}
    if not qrels or not run:
        return
    want = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), list(RANX))
    got = fastir.evaluate(qrels, run, list(RANX.values()), ties="input", missing="skip").mean
    for name, ours in RANX.items():
        assert got[ours] == pytest.approx(float(want[name]), rel=1e-12), name


@settings(max_examples=80, deadline=None)
@given(qrels_and_runs(), st.integers(0, 3), st.one_of(st.none(), st.integers(0, 6)),
       st.booleans(), st.sampled_from(["trec_eval", "input"]))
def test_unjudged_relevant_is_the_value_on_augmented_qrels(data, label, max_docs,
                                                           judged_only, ties):
    qrels, run = data
    names = UNJUDGED_NAMES
    want = fastir.evaluate(naive_ties.augmented(qrels, run, label, max_docs)
                           if ties == "trec_eval" else _augmented_input(qrels, run, label,
                                                                        max_docs),
                           run, names, num_docs=10_000, max_docs=max_docs,
                           judged_only=judged_only, ties=ties)
    res = fastir.evaluate(qrels, run, names, unjudged=("relevant", label), num_docs=10_000,
                          max_docs=max_docs, judged_only=judged_only, ties=ties)
    assert res.query_ids == want.query_ids
    assert np.array_equal(res.values, want.values, equal_nan=True)


def test_hole_refuses_unjudged_relevant():
    with pytest.raises(ValueError, match=r"^Hole@3: unjudged=\('relevant', 1\) is not available"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "x": 0.5}}, ["Hole@3", "P@3"],
                        unjudged="relevant")


def _augmented_input(qrels, run, label, max_docs):
    out = {}
    for qid, judged in qrels.items():
        out[qid] = dict(judged)
        for doc in naive_ties.input_order(run.get(qid, {}))[:max_docs]:
            out[qid].setdefault(doc, label)
    return out


def test_unjudged_relevant_alone_means_label_1():
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 0.5, "x": 0.9, "b": 0.7}}
    assert fastir.evaluate(qrels, run, "P@1", unjudged="relevant").mean["P@1"] == 1.0
    assert fastir.evaluate(qrels, run, "P@1").mean["P@1"] == 0.0
    two = fastir.evaluate(qrels, run, ["P@1", "NumRel"], unjudged=("relevant", 2),
                          relevance_level=2).mean
    assert two == {"P@1": 1.0, "NumRel": 1}


@pytest.mark.parametrize("bad", ["maybe", ("relevant", -1), ("relevant", 1.5), ("x", 1),
                                 ("relevant",), 3])
def test_a_bad_unjudged_is_one_clear_error(bad):
    with pytest.raises(ValueError, match="^unjudged must be"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "AP", unjudged=bad)


@pytest.mark.parametrize("bad", ["docid", None, 1])
def test_a_bad_ties_is_one_clear_error(bad):
    with pytest.raises(ValueError, match="^ties must be"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "AP", ties=bad)


def test_expected_refuses_max_docs():
    with pytest.raises(ValueError, match="max_docs"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "AP", ties="expected",
                        max_docs=10)


@settings(max_examples=40, deadline=None)
@given(qrels_and_runs(), st.sampled_from(["trec_eval", "input"]),
       st.sampled_from(["nonrelevant", "relevant", ("relevant", 2)]))
def test_bound_candidates_take_ties_and_unjudged_as_a_run_does(data, ties, unjudged):
    qrels, run = data
    names = ["AP", "nDCG@3", "P@2", "RR", "R@5", "NumRel"]
    rows = [(q, d, s) for q, r in run.items() for d, s in r.items()]
    if not rows:
        return
    qids, docs, scores = zip(*rows)
    evaluator = fastir.Evaluator(qrels, names, ties=ties, unjudged=unjudged)
    got = evaluator.bind(list(qids), list(docs)).evaluate(np.array(scores))
    want = fastir.evaluate(qrels, run, names, ties=ties, unjudged=unjudged)
    assert np.array_equal(got.values, want.values)


def test_bound_candidates_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="ties='expected' is not available for bound"):
        fastir.Evaluator({"q": {"a": 1}}, "AP", ties="expected").bind(["q"], ["a"])
    with pytest.raises(ValueError, match="with max_docs is not available"):
        fastir.Evaluator({"q": {"a": 1}}, "AP", unjudged="relevant",
                         max_docs=5).bind(["q"], ["a"])


MONOTONE = ["AP", "P@2", "R@3", "nDCG@3", "nDCG", "RR", "Success@2", "DCG@2", "RBP"]


@settings(max_examples=30, deadline=None)
@given(tied_runs(), st.one_of(st.none(), st.integers(1, 5)))
def test_the_tie_report_range_is_the_range_over_every_order(data, max_docs):
    from fastir.analysis.ties import tie_report

    qrels, run = data
    report = tie_report(qrels, run, MONOTONE, max_docs=max_docs, missing="skip")
    orders_qrels, orders_run = {}, {}
    for qid, run_q in run.items():
        for k, ranking in enumerate(naive_ties.every_order(run_q)):
            orders_qrels[f"{qid}#{k:05d}"] = qrels[qid]
            orders_run[f"{qid}#{k:05d}"] = naive_ties.as_scores(ranking)
    every = fastir.evaluate(orders_qrels, orders_run, MONOTONE, max_docs=max_docs).to_dict()
    low, high = report.low.to_dict(), report.high.to_dict()
    for qid in report.value.query_ids:
        for name in MONOTONE:
            values = [v[name] for k, v in every.items() if k.split("#")[0] == qid]
            assert (low[qid][name], high[qid][name]) == (min(values), max(values)), name
    moved = {(q, m) for q, m, *_ in report.moved()}
    assert moved == {(q, m) for q in low for m in MONOTONE if low[q][m] != high[q][m]}


def test_the_tie_report_counts_the_queries_with_ties():
    from fastir.analysis.ties import tie_report

    qrels = {"q": {"a": 1}, "r": {"a": 1}, "s": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}, "r": {"a": 1.0, "b": 2.0}, "s": {"b": 1.0}}
    report = tie_report(qrels, run, ["P@1", "NumRet"])
    assert report.n_tied == 1
    assert report.moved() == [("q", "P@1", 0.0, 0.0, 1.0)]
    assert report.spread() == {"P@1": 1 / 3, "NumRet": 0}



MATRIX_NAMES = [n for n in EXPECTED_NAMES if not parse_all([n])[1][0].spec.unjudged
                and not parse_all([n])[1][0].spec.num_docs]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 7), st.data())
def test_a_dense_batch_takes_expected_ties_as_a_run_does(batch, width, data):
    from conftest import matrix_to_dicts

    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=batch * width,
                                         max_size=batch * width))).reshape(batch, width)
    labels = np.array(data.draw(st.lists(st.integers(0, 3), min_size=batch * width,
                                         max_size=batch * width))).reshape(batch, width)
    n_relevant = np.array(data.draw(st.lists(st.integers(0, 9), min_size=batch,
                                             max_size=batch)))
    qrels, run = matrix_to_dicts(scores, labels, n_relevant=n_relevant)
    names = MATRIX_NAMES
    _, got = fastir.evaluate_matrix(scores, labels, names, ties="expected", per_row=True,
                                    n_relevant=n_relevant)
    want = fastir.evaluate(qrels, run, names, ties="expected", num_docs=10_000)
    np.testing.assert_allclose(got, want.values, rtol=1e-12, atol=1e-15)


def test_a_dense_batch_refuses_expected_for_families_without_one():
    with pytest.raises(ValueError, match="^Bpref: no expected value"):
        fastir.evaluate_matrix(np.zeros((1, 2)), np.ones((1, 2)), ["Bpref"], ties="expected")
    with pytest.raises(ValueError, match="^ties must be one of"):
        fastir.evaluate_matrix(np.zeros((1, 2)), np.ones((1, 2)), ["AP"], ties="docid")


@pytest.mark.parametrize("way", [{"ties": "expected"}, {"ties": "input"},
                                 {"unjudged": ("relevant", 2)}])
def test_evaluate_file_takes_ties_and_unjudged_as_evaluate_does(tmp_path, way):
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"a": 1}}
    lines = ["q1 Q0 c 1 2.0 x", "q1 Q0 a 2 2.0 x", "q1 Q0 z 3 2.0 x", "q1 Q0 b 4 1.0 x",
             "q2 Q0 y 1 1.0 x", "q2 Q0 a 2 1.0 x"]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    names = ["AP", "nDCG@2", "RR", "P@1"]
    want = fastir.evaluate(qrels, str(tmp_path / "run"), names, **way)
    got = fastir.evaluate_file(qrels, str(tmp_path / "run"), names, chunk_bytes=40, **way)
    assert got.to_dict() == want.to_dict()
    assert want.to_dict() != fastir.evaluate(qrels, str(tmp_path / "run"), names).to_dict()
