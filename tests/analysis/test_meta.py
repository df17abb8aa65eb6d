"""Judging the judges (``fastir.meta_evaluate``): the correlations between system rankings
equal scipy's (Kendall's tau, Spearman, Pearson) and trectools' (tau-AP) on drawn means,
RBO equals a naive extrapolated RBO, and the swapped significant pairs are counted as scipy's
paired t-test decides them."""

import math
import random

import numpy as np
import pytest

import fastir
from fastir.analysis import meta

pytestmark = pytest.mark.one_engine
scipy_stats = pytest.importorskip("scipy.stats")


def drawn_means(seed, n=12, ties=False):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = a + rng.normal(0, 0.2, n)
    if ties:
        a, b = np.round(a, 1), np.round(b, 1)
    return a, b


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_correlations_equal_scipy(seed, ties):
    a, b = drawn_means(seed, ties=ties)
    got = meta.correlations(a, b)
    assert got["tau"] == pytest.approx(scipy_stats.kendalltau(a, b).statistic, abs=1e-12)
    assert got["spearman"] == pytest.approx(scipy_stats.spearmanr(a, b).statistic, abs=1e-12)
    assert got["pearson"] == pytest.approx(scipy_stats.pearsonr(a, b).statistic, abs=1e-12)


def test_constant_means_have_no_correlation():
    got = meta.correlations(np.ones(4), np.arange(4.0))
    assert math.isnan(got["tau"]) and math.isnan(got["spearman"]) and \
        math.isnan(got["pearson"])


@pytest.mark.parametrize("value", [0.1, 0.7, 1 / 3, 0.3])
def test_constant_means_whose_mean_is_off_by_an_ulp(value):
    """Three systems all at 0.1: the mean of [0.1] * 3 is not 0.1, and r was the rounding
    noise divided by itself (-1.0 or 1.0); scipy says NaN."""
    constant, varied = [value] * 3, [0.7, 0.1, 0.3]
    for x, y in ((constant, [0.7] * 3), (constant, varied), (varied, constant)):
        assert math.isnan(meta.pearson(x, y)) and math.isnan(meta.spearman(x, y))
        with pytest.warns(scipy_stats.ConstantInputWarning):
            assert math.isnan(scipy_stats.pearsonr(x, y).statistic)


def test_meta_evaluate_of_systems_level_under_both_qrels():
    """Through meta_evaluate: three systems all at P@10 = 0.1 under one qrels and 0.7
    under the other rank nothing: every correlation is NaN."""
    docs = [f"d{i}" for i in range(10)]
    qrels_a = {"q": {d: int(i < 1) for i, d in enumerate(docs)}}
    qrels_b = {"q": {d: int(i < 7) for i, d in enumerate(docs)}}
    runs = {f"s{k}": {"q": {d: 10.0 - i for i, d in enumerate(docs)}} for k in range(3)}
    res = fastir.meta_evaluate(qrels_a, qrels_b, runs=runs, measure="P@10")
    assert res.means.tolist() == [[0.1] * 3, [0.7] * 3]
    (pair,) = res.pairs
    assert all(math.isnan(pair[key]) for key in ("tau", "spearman", "pearson")), pair


@pytest.mark.parametrize("seed", range(8))
def test_tau_ap_equals_trectools(seed):
    misc = pytest.importorskip("trectools.misc")
    a, b = drawn_means(seed, n=5 + seed)
    systems = [f"s{i}" for i in range(len(a))]
    sorted_a = sorted(zip(a.tolist(), systems), reverse=True)
    sorted_b = sorted(zip(b.tolist(), systems), reverse=True)
    want = misc.get_correlation(sorted_a, sorted_b, correlation="tauap")[0]
    assert meta.tau_ap(a, b) == pytest.approx(want, abs=1e-12)
    assert meta.tau_ap(a, a) == 1.0 and meta.tau_ap(a, -a) == -1.0


def naive_rbo_ext(order_a, order_b, p):
    """Webber et al.'s RBO_ext of two full orders, with sets, depth by depth."""
    k = len(order_a)
    total = 0.0
    for d in range(1, k + 1):
        overlap = len(set(order_a[:d]) & set(order_b[:d]))
        total += overlap / d * p ** d
    return (1 - p) / p * total + len(set(order_a) & set(order_b)) / k * p ** k


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_rbo_equals_the_extrapolated_definition(seed, p):
    order = list(range(20))
    other = order[:]
    random.Random(seed).shuffle(other)
    got = meta.rbo(np.array(order), np.array(other), p)
    assert got == pytest.approx(naive_rbo_ext(order, other, p), rel=1e-12)
    assert meta.rbo(np.array(order), np.array(order), p) == pytest.approx(1.0, rel=1e-12)


def collection(seed, n_queries=30, n_docs=40, n_systems=6):
    """Qrels a and b (b: a with some labels flipped), runs of systems of spread quality."""
    rng = np.random.default_rng(seed)
    a, b, runs = {}, {}, {}
    for q in range(n_queries):
        labels = rng.choice([0, 0, 0, 1, 2], size=n_docs)
        flipped = np.where(rng.random(n_docs) < 0.3, rng.choice([0, 1, 2], size=n_docs), labels)
        a[f"q{q}"] = {f"d{d}": int(v) for d, v in enumerate(labels)}
        b[f"q{q}"] = {f"d{d}": int(v) for d, v in enumerate(flipped)}
    for s in range(n_systems):
        runs[f"sys{s}"] = {q: {d: float(label * s / n_systems + rng.normal()) for d, label in
                               docs.items()} for q, docs in a.items()}
    return a, b, runs


@pytest.mark.parametrize("seed", [0, 1])
def test_meta_evaluate_as_the_peers_count_it(seed):
    a, b, runs = collection(seed)
    result = fastir.meta_evaluate(a, b, runs=runs, measure="AP", names=["human", "llm"])
    values = {}
    for name, q in (("human", a), ("llm", b)):
        per_system = [fastir.evaluate(q, runs[s], ["AP"]).to_dict() for s in runs]
        values[name] = np.array([[scores[qid]["AP"] for scores in per_system]
                                 for qid in sorted(q)])
    np.testing.assert_allclose(result.means, [values["human"].mean(0), values["llm"].mean(0)],
                               rtol=0, atol=1e-15)
    (pair,) = result.pairs
    assert pair["tau"] == pytest.approx(scipy_stats.kendalltau(*result.means).statistic)
    systems = list(runs)
    swaps = significant = significant_swaps = conflicts = 0
    for i in range(len(systems)):
        for j in range(i + 1, len(systems)):
            da = result.means[0, i] - result.means[0, j]
            db = result.means[1, i] - result.means[1, j]
            swapped = da * db < 0
            p_a = scipy_stats.ttest_rel(values["human"][:, i], values["human"][:, j]).pvalue
            p_b = scipy_stats.ttest_rel(values["llm"][:, i], values["llm"][:, j]).pvalue
            swaps += swapped
            significant += p_a < 0.05
            significant_swaps += swapped and p_a < 0.05
            conflicts += swapped and p_a < 0.05 and p_b < 0.05
    assert (pair["swaps"], pair["significant"], pair["significant_swaps"],
            pair["significant_conflicts"]) == (swaps, significant, significant_swaps, conflicts)
    assert pair["n_pairs"] == len(systems) * (len(systems) - 1) // 2
    assert "tau-AP" in result.to_markdown() and "human" in repr(result)


def test_a_reversed_judge_swaps_every_pair():
    a, _, runs = collection(3)
    reversed_judge = {q: {d: 2 - label for d, label in docs.items()} for q, docs in a.items()}
    (pair,) = fastir.meta_evaluate(a, reversed_judge, runs=runs, measure="nDCG@10").pairs
    assert pair["tau"] < 0 and pair["swaps"] > pair["n_pairs"] // 2
    assert pair["significant_swaps"] > 0


def test_agreement_reports_the_rankings_too():
    a, b, runs = collection(2)
    report = fastir.agreement(a, b, runs=runs, measure="P@10", names=["a", "b"])
    assert report.tau is report.rankings.pairs
    assert report.tau[0]["tau_ap"] == meta.tau_ap(*report.system_means)
    assert "Kendall's tau" in report.to_markdown() and "tau-AP" in report.to_markdown()


@pytest.mark.parametrize("call, message", [
    (lambda a, runs: fastir.meta_evaluate(a, runs=runs), "at least two qrels"),
    (lambda a, runs: fastir.meta_evaluate(a, a, runs={"x": runs["sys0"]}), "two systems"),
    (lambda a, runs: fastir.meta_evaluate(a, a, runs=runs, measure="P.5,10"), "one numeric"),
    (lambda a, runs: fastir.meta_evaluate(a, a, runs=runs, rbo_p=1.0), "rbo_p"),
    (lambda a, runs: fastir.meta_evaluate(a, a, runs=runs, alpha=5), "alpha"),
    (lambda a, runs: fastir.meta_evaluate(a, a, runs=runs, names=["x"]), "one name per"),
])
def test_bad_arguments_say_which(call, message):
    a, _, runs = collection(0, n_queries=3, n_systems=2)
    with pytest.raises(ValueError, match=message):
        call(a, runs)


def test_plot_of_system_means(tmp_path):
    pytest.importorskip("matplotlib")
    from fastir.output.plots import save, to_files

    to_files()
    a, b, runs = collection(1)
    ax = fastir.meta_evaluate(a, b, runs=runs, names=["human", "llm"]).plot()
    assert ax.get_xlabel() == "AP under human" and "tau-AP" in ax.get_title()
    assert save(ax, tmp_path / "means.png").endswith("means.png")
