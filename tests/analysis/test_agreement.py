"""fastir.agreement against the seed's worked example, sklearn, statsmodels and scipy."""

import math

import numpy as np
import pytest
from checks import SMALL_QRELS, odd_call, odd_options, useful
from hypothesis import given, settings

import fastir
from fastir.analysis.agreement import cohen
from fastir.analysis.meta import kendall_tau

pytestmark = pytest.mark.one_engine


def seed_table_qrels():
    """The seed documents' two judges: 300 both relevant, 20 only the first, 10 only the
    second, 70 neither (400 documents)."""
    a, b = {"q": {}}, {"q": {}}
    for i, (x, y) in enumerate([(1, 1)] * 300 + [(1, 0)] * 20 + [(0, 1)] * 10 + [(0, 0)] * 70):
        a["q"][f"d{i}"], b["q"][f"d{i}"] = x, y
    return a, b


def test_the_seed_example():
    agree = fastir.agreement(*seed_table_qrels())
    pair = agree.pairs[0]
    assert pair["table"].tolist() == [[300, 20], [10, 70]]
    assert math.isclose(pair["p_agree"], 0.925) and math.isclose(pair["p_chance"], 0.665)
    assert round(agree.kappa, 3) == 0.776 and agree.band.startswith("fair agreement")
    assert "| 0.925 | 0.665 | 0.776 |" in agree.to_markdown()


def test_kappas_are_sklearns_and_statsmodels():
    sklearn = pytest.importorskip("sklearn.metrics")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 4, 300)
    judges = [np.clip(truth + rng.integers(-1, 2, 300) * (rng.random(300) < p), 0, 3)
              for p in (0.2, 0.4, 0.6)]
    qrels = [{"q1": {f"d{i}": int(v) for i, v in enumerate(j[:150])},
              "q2": {f"d{i}": int(v) for i, v in enumerate(j[150:])}} for j in judges]
    agree = fastir.agreement(*qrels, relevance_level=2)
    for pair, (i, j) in zip(agree.pairs, [(0, 1), (0, 2), (1, 2)]):
        a, b = judges[i], judges[j]
        assert math.isclose(pair["kappa"], sklearn.cohen_kappa_score(a >= 2, b >= 2))
        for weights in ("linear", "quadratic"):
            assert math.isclose(pair[weights],
                                sklearn.cohen_kappa_score(a, b, weights=weights))
    table = np.stack([sum(j >= 2 for j in judges), sum(j < 2 for j in judges)], axis=1)
    assert math.isclose(agree.fleiss, inter_rater.fleiss_kappa(table))
    assert math.isclose(agree.kappa, np.mean([p["kappa"] for p in agree.pairs]))
    assert "Fleiss' kappa" in agree.to_markdown()


def test_only_documents_both_judge_count_and_the_rest_is_said():
    a = {"q": {"x": 1, "y": 0, "z": 1, "u": -1}}
    b = {"q": {"x": 1, "y": 1, "w": 0, "u": 1}}
    pair = fastir.agreement(a, b, names=["nist", "crowd"]).pairs[0]
    assert (pair["both"], pair["only_a"], pair["only_b"]) == (2, 1, 2)
    assert pair["a"] == "nist"
    with pytest.raises(ValueError, match="no \\(query, doc\\) is judged by both"):
        fastir.agreement({"q": {"x": 1}}, {"q": {"y": 1}})
    with pytest.raises(ValueError, match="at least two qrels"):
        fastir.agreement(a)
    constant = fastir.agreement({"q": {"x": 1, "y": 1}}, {"q": {"x": 1, "y": 1}})
    assert math.isnan(constant.kappa) and "undefined" in constant.to_markdown()


def test_kendall_tau_of_system_rankings_is_scipys():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, y = rng.integers(0, 5, 8).astype(float), rng.integers(0, 5, 8).astype(float)
        want = scipy_stats.kendalltau(x, y).statistic
        assert math.isclose(kendall_tau(x, y), want) or (math.isnan(want) and
                                                          math.isnan(kendall_tau(x, y)))
    a, b = seed_table_qrels()
    runs = {f"s{k}": {"q": {f"d{i}": float((i * (k + 3)) % 17) for i in range(400)}}
            for k in range(4)}
    agree = fastir.agreement(a, b, runs=runs, measure="P@10")
    means = [[fastir.evaluate(judge, runs[s], ["P@10"]).mean["P@10"] for s in agree.systems]
             for judge in (a, b)]  # each system's mean under each judge, evaluated apart
    assert np.allclose(agree.system_means, means, rtol=0, atol=1e-15)
    assert len(set(means[0])) > 1 and means[0] != means[1]  # (a ranking with something to rank)
    assert math.isclose(agree.tau[0]["tau"], scipy_stats.kendalltau(*means).statistic)
    assert "Kendall's tau" in agree.to_markdown()


def test_cohen_of_identical_lists_is_1():
    labels = [0, 1, 1, 2]
    observed, chance, kappa = cohen(labels, labels)
    # chance agreement P(E): the sum over labels of the product of the two judges' shares,
    # here (1/4)^2 + (2/4)^2 + (1/4)^2
    assert (observed, kappa) == (1.0, 1.0) and math.isclose(chance, 0.375)
    for weights in ("linear", "quadratic"):
        assert cohen(labels, labels, weights)[::2] == (1.0, 1.0)


# -- refusals and odd options -----------------------------------------------------------------
@pytest.mark.parametrize("measure", ["relstring", "P", "official"])
def test_agreement_ranks_systems_by_one_numeric_measure(measure):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {"x": {"q1": {"a": 1.0, "b": 2.0}}, "y": {"q1": {"a": 2.0, "b": 1.0}}}
    with pytest.raises(ValueError) as info:
        fastir.agreement(qrels, qrels, runs=runs, measure=measure)
    useful(info.value, "measure", measure)


def test_agreement_matches_integer_ids_with_the_same_ids_as_text():
    pair = fastir.agreement({"q": {"1": 1, "2": 0}}, {"q": {1: 1, 2: 1}}).pairs[0]
    assert pair["both"] == 2 and pair["table"].tolist() == [[1, 0], [1, 0]]


def _naive_table(a, b, level):
    """The 2x2 table of the (query, doc) pairs both judge with a label >= 0: rows a
    relevant / not, columns b relevant / not."""
    table = np.zeros((2, 2), dtype=np.int64)
    for q, docs in a.items():
        for d, label in docs.items():
            other = b.get(q, {}).get(d, -1)
            if label >= 0 and other >= 0:
                table[int(label < level), int(other < level)] += 1
    return table


@settings(max_examples=100, deadline=None)
@given(odd_options(["relevance_level", "names", "runs", "measure"]))
def test_agreement_takes_any_options(options):
    """Odd options give an error naming one, or the agreement the options spelled plainly
    give, whose tables are the naive counts at the relevance level."""
    other = {q: {d: (v + 1) % 3 for d, v in docs.items()} for q, docs in SMALL_QRELS.items()}
    got = odd_call(lambda **kw: fastir.agreement(SMALL_QRELS, other, **kw), options)
    if got is None:
        return
    plain = {name: value.item() if isinstance(value, np.generic) else value
             for name, value in options.items()}
    level = plain.get("relevance_level", 1)
    assert got.relevance_level == level
    assert got.pairs[0]["table"].tolist() == _naive_table(SMALL_QRELS, other, level).tolist()
    want = fastir.agreement(SMALL_QRELS, other, **plain)
    assert [p["kappa"] for p in got.pairs] == pytest.approx([p["kappa"] for p in want.pairs],
                                                            nan_ok=True, rel=0, abs=0)
    assert got.names == want.names
    if got.rankings is not None:
        for j, qrels in enumerate((SMALL_QRELS, other)):
            means = [fastir.evaluate(qrels, run, [got.measure], relevance_level=level).mean[0]
                     for run in plain["runs"].values()]
            assert got.system_means[j] == means
