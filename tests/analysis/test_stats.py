"""fastir.compare against scipy and statsmodels: the tests, corrections and intervals; its
determinism (seed, thread count); its reports; its refusals."""

import json
import math
import warnings

import numpy as np
import pytest
from checks import SMALL_QRELS, SMALL_RUNS, odd_call, odd_options, useful
from hypothesis import given, settings

import fastir
from fastir import _jit
from fastir.analysis import stats
from fastir.measures.registry import parse_all
from fastir.results import Results

scipy_stats = pytest.importorskip("scipy.stats")


def results(values, names=("AP", "nDCG@10"), queries=None):
    """A Results of per-query ``values`` (n_queries, n_measures), as if evaluated."""
    keys, parsed = parse_all(list(names))
    values = np.asarray(values, dtype=np.float64).reshape(len(values), len(keys))
    ids = np.array(queries if queries is not None else [f"q{i}" for i in range(len(values))])
    return Results(ids, keys, parsed, values, [], [], "zero", np.ones(len(values), bool))


def systems(n_queries, n_systems=3, seed=0, names=("AP", "nDCG@10")):
    rng = np.random.default_rng(seed)
    base = rng.random((n_queries, len(names)))
    return {f"s{s}": results(np.clip(base + rng.normal(0, 0.15, base.shape) + 0.03 * s, 0, 1),
                             names) for s in range(n_systems)}


def differences(comparison, pair, measure=0):
    a, b = comparison._pair_index[pair]
    return comparison.values[a, :, measure] - comparison.values[b, :, measure]


def test_t_test_is_scipys():
    c = fastir.compare(None, systems(60), ["AP", "nDCG@10"], test="t", n_resamples=200)
    for i, (a, b) in enumerate(c._pair_index):
        for m in range(2):
            want = scipy_stats.ttest_rel(c.values[a, :, m], c.values[b, :, m]).pvalue
            assert math.isclose(c.p_value[i, m], want, rel_tol=1e-9)


@pytest.mark.parametrize("n_queries", [12, 40, 80])
def test_wilcoxon_is_scipys(n_queries):
    c = fastir.compare(None, systems(n_queries, seed=n_queries), ["AP", "nDCG@10"],
                       test="wilcoxon", n_resamples=200)
    for i in range(len(c.pairs)):
        for m in range(2):
            d = differences(c, i, m)
            method = "exact" if n_queries <= 50 else "asymptotic"
            want = scipy_stats.wilcoxon(d, method=method).pvalue
            assert math.isclose(c.p_value[i, m], want, rel_tol=1e-9)


def test_wilcoxon_with_ties_and_zeros_is_scipys_normal_approximation():
    d = np.array([0.5, -0.5, 0.0, 0.25, 0.25, 0.25, -0.1, 0.3, 0.7, -0.2, 0.5, 0.0] * 3)
    assert math.isclose(stats.wilcoxon(d), scipy_stats.wilcoxon(d, method="asymptotic").pvalue,
                        rel_tol=1e-9)
    assert stats.wilcoxon(np.zeros(5)) == 1.0


def test_randomization_enumerates_every_sign_pattern_when_few_queries(engine):
    c = fastir.compare(None, systems(11, seed=3), ["AP", "nDCG@10"], n_resamples=5000)
    assert any("all 2^11 sign patterns" in note for note in c.notes)
    for i in range(len(c.pairs)):
        for m in range(2):
            d = differences(c, i, m)
            want = scipy_stats.permutation_test((d,), np.mean, permutation_type="samples",
                                                n_resamples=np.inf).pvalue
            assert math.isclose(c.p_value[i, m], want, rel_tol=1e-12)


def test_randomization_is_within_monte_carlo_error_of_scipy(engine):
    c = fastir.compare(None, systems(30, seed=5), ["AP"], n_resamples=4000, correction="none")
    for i in range(len(c.pairs)):
        d = differences(c, i)
        want = scipy_stats.permutation_test((d,), np.mean, permutation_type="samples",
                                            n_resamples=99_999, random_state=1).pvalue
        error = math.sqrt(max(want * (1 - want), 1e-4) / 4000)
        assert abs(c.p_value[i, 0] - want) < 5 * error + 1e-4


def test_bootstrap_interval_and_test_are_within_monte_carlo_error_of_scipy(engine):
    c = fastir.compare(None, systems(50, seed=7), ["AP"], test="bootstrap", n_resamples=4000,
                       correction="none")
    for i in range(len(c.pairs)):
        d = differences(c, i)
        ref = scipy_stats.bootstrap((d,), np.mean, method="percentile", n_resamples=20_000,
                                    random_state=2).confidence_interval
        spread = d.std(ddof=1) / math.sqrt(len(d))
        assert abs(c.ci_low[i, 0] - ref.low) < 0.1 * spread
        assert abs(c.ci_high[i, 0] - ref.high) < 0.1 * spread
        # the bootstrap test agrees with the t-test's order of magnitude (not the same test)
        t = scipy_stats.ttest_rel(c.values[c._pair_index[i][0], :, 0],
                                  c.values[c._pair_index[i][1], :, 0]).pvalue
        assert abs(c.p_value[i, 0] - t) < 0.05


@pytest.mark.parametrize("method, theirs", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                            ("bh", "fdr_bh")])
def test_corrections_are_statsmodels(method, theirs):
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 30):
        p = rng.random(size) ** 3
        p[: size // 3] = p[0]  # ties
        np.testing.assert_allclose(stats.adjust(p, method),
                                   multipletests(p, method=theirs)[1], rtol=1e-12)


def test_randomized_tukey_hsd_counts_the_largest_range_of_permuted_systems(engine):
    data = systems(15, n_systems=4, seed=11, names=("AP",))
    c = fastir.compare(None, data, ["AP"], test="tukey", n_resamples=300)
    values = c.values[:, :, 0].T  # (queries, systems)
    rng = np.random.default_rng([0, 2, 0])
    draws = rng.random((300, 15, 3))
    ranges = []
    for r in range(300):  # the permutation of the systems within each query, directly
        sums = np.zeros(4)
        for q in range(15):
            order = list(range(4))
            for t in range(3):
                last = 3 - t
                j = min(int(draws[r, q, t] * (last + 1)), last)
                order[last], order[j] = order[j], order[last]
            sums += values[q, order]
        ranges.append(sums.max() - sums.min())
    ranges = np.array(ranges)
    totals = values.sum(axis=0)
    for i, (a, b) in enumerate(c._pair_index):
        observed = abs(totals[a] - totals[b])
        want = (1 + np.sum(ranges >= observed * (1 - 1e-9))) / 301
        assert math.isclose(c.p_value[i, 0], want, abs_tol=1 / 301 + 1e-12)
    assert c.p_value.min() >= fastir.compare(None, data, ["AP"], n_resamples=300,
                                             correction="none").p_value.min() - 0.05


@pytest.mark.one_engine  # (compiled throughout: the Python engine has one thread)
def test_the_seed_decides_the_draws_not_the_thread_count():
    numba = pytest.importorskip("numba")
    if numba.config.NUMBA_NUM_THREADS < 2:  # 1 thread against 1 thread could not fail
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS)")
    data = systems(300, n_systems=4, seed=2)
    out = []
    with _jit.forced("numba"):
        for threads in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(threads)
            for test in ("randomization", "bootstrap", "tukey"):
                c = fastir.compare(None, data, ["AP", "nDCG@10"], test=test, n_resamples=3000)
                out.append((threads, test, c.p_value.tobytes(), c.ci_low.tobytes()))
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    by_test = {}
    for _threads, test, p, ci in out:
        by_test.setdefault(test, set()).add((p, ci))
    assert all(len(v) == 1 for v in by_test.values())
    again = fastir.compare(None, data, ["AP"], n_resamples=3000, seed=1).p_value
    assert not np.array_equal(again, fastir.compare(None, data, ["AP"], n_resamples=3000,
                                                    seed=2).p_value)


def test_evaluates_runs_and_reports():
    qrels = {f"q{i}": {f"d{j}": (i + j) % 3 for j in range(8)} for i in range(20)}
    runs = {"bm25": {q: {f"d{j}": float(8 - j) for j in range(8)} for q in qrels},
            "dense": {q: {f"d{j}": float((j * 7 + int(q[1:])) % 8) for j in range(8)}
                      for q in qrels}}
    c = fastir.compare(qrels, runs, ["nDCG@5", "AP"], baseline="bm25", n_resamples=500)
    assert c.pairs == [("dense", "bm25")]
    direct = fastir.evaluate(qrels, runs["dense"], ["nDCG@5", "AP"]).mean
    assert c.means[1].tolist() == [direct["nDCG@5"], direct["AP"]]
    markdown = c.to_markdown()
    assert "| a) bm25 |" in markdown and "paired randomization test (500 resamples)" in markdown
    latex = c.to_latex()
    assert r"\toprule" in latex and r"\textbf{" in latex and r"\caption{" in latex
    data = json.loads(c.to_json())
    assert data["pairs"][0]["system"] == "dense" and data["baseline"] == "bm25"
    pytest.importorskip("pandas")
    frame = c.to_pandas()
    assert list(frame.columns[:3]) == ["measure", "system", "vs"] and len(frame) == 2


def test_significant_differences_are_marked():
    rng = np.random.default_rng(0)
    base = rng.random(200)
    data = {"weak": results(np.stack([base, base], 1)),
            "strong": results(np.stack([base + 0.2, base + 0.1], 1) +
                              rng.normal(0, 0.01, (200, 2)))}
    c = fastir.compare(None, data, ["AP", "nDCG@10"], n_resamples=999)
    assert c.significant().all() and c.p_value.max() == 1 / 1000
    assert "0.0000" not in c.to_markdown().split("\n")[3]
    assert "ᵃ" in c.to_markdown().split("\n")[3]  # strong beats a) weak
    assert c.pairs == [("weak", "strong")]  # (rows: system - other)
    assert (c.losses == 200).all() and np.all(c.ci_high < 0)


def test_identical_systems_and_zero_variance_give_p_1_never_nan():
    same = results(np.tile([[0.5, 0.2]], (10, 1)))
    for test in stats.TESTS:
        c = fastir.compare(None, {"a": same, "b": same}, ["AP", "nDCG@10"], test=test,
                           n_resamples=300)
        assert np.all(c.p_value == 1.0) and np.all(c.effect_size == 0), test
        assert not np.isnan(c.p_adjusted).any()
    shifted = results(np.tile([[0.6, 0.3]], (10, 1)))
    c = fastir.compare(None, {"a": same, "b": shifted}, ["AP", "nDCG@10"], test="t")
    assert np.all(c.p_value == 0.0) and any("zero variance" in n for n in c.notes)


def test_bad_input_is_refused_clearly():
    data = systems(10)
    with pytest.raises(ValueError, match="at least two systems"):
        fastir.compare(None, {"a": data["s0"]}, ["AP"])
    with pytest.raises(ValueError, match=r"baseline 'x' is not among the runs \(s0, s1, s2\)"):
        fastir.compare(None, data, ["AP"], baseline="x")
    with pytest.raises(ValueError, match="test must be one of randomization, t"):
        fastir.compare(None, data, ["AP"], test="anova")
    with pytest.raises(ValueError, match="correction must be one of holm"):
        fastir.compare(None, data, ["AP"], correction="sidak")
    with pytest.raises(ValueError, match="n_resamples must be an integer from 1 to 10,000,000"):
        fastir.compare(None, data, ["AP"], n_resamples=0)
    with pytest.raises(ValueError, match="needs qrels"):
        fastir.compare(None, {"a": {"q": {"d": 1.0}}, "b": data["s0"]}, ["AP"])
    with pytest.raises(ValueError, match="lack P@5"):
        fastir.compare(None, data, ["P@5"])
    other = results(np.ones((10, 2)), queries=[f"x{i}" for i in range(10)])
    with pytest.raises(ValueError, match="0 queries in common"):
        fastir.compare(None, {"a": data["s0"], "b": other}, ["AP"])
    fewer = results(np.ones((6, 2)), queries=[f"q{i}" for i in range(6)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = fastir.compare(None, {"a": data["s0"], "b": fewer}, ["AP"], n_resamples=100)
    assert len(c.queries) == 6
    assert any("compared on the 6 queries every run has; left out: a 4" in str(w.message)
               for w in caught)


# -- no conclusion from values that are not numbers; bounded work -------------------------
def _results_with(value):
    qrels = {f"q{i}": {"a": 1, "b": i % 2} for i in range(6)}
    runs = {name: {q: {"a": 1.0 + k, "b": 2.0 - k} for q in qrels}
            for k, name in enumerate(["x", "y"])}
    results = {name: fastir.evaluate(qrels, run, ["AP"]) for name, run in runs.items()}
    results["x"].values[2, 0] = value
    return results


@pytest.mark.one_engine
@pytest.mark.parametrize("test", ["randomization", "bootstrap", "tukey", "t", "wilcoxon"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_compare_refuses_values_that_are_not_numbers(test, value):
    with pytest.raises(ValueError) as info:
        fastir.compare(None, _results_with(value), ["AP"], test=test, n_resamples=64)
    useful(info.value, "AP", "'x'", "q2")


@pytest.mark.one_engine
def test_a_comparison_on_an_overflowing_label_says_so_instead_of_a_winner():
    qrels = {f"q{i}": {"a": 1100 if i == 0 else 1, "b": 1} for i in range(5)}
    runs = {"x": {q: {"a": 2.0, "b": 1.0} for q in qrels},
            "y": {q: {"a": 1.0, "b": 2.0} for q in qrels}}
    with pytest.raises(ValueError, match="1024 or more"):
        fastir.compare(qrels, runs, ["nDCG(dcg='exp-log2')@3"])


@pytest.mark.one_engine
def test_resamples_are_bounded():
    qrels = {f"q{i}": {"a": 1} for i in range(3)}
    runs = {"x": {q: {"a": 1.0} for q in qrels}, "y": {q: {"a": 2.0} for q in qrels}}
    with pytest.raises(ValueError) as info:
        fastir.compare(qrels, runs, ["AP"], n_resamples=10**23)
    useful(info.value, "n_resamples")


#: compare's options that are evaluate's (the rest are the test's).
EVALUATION_OPTIONS = ("missing", "relevance_level", "max_docs")


@pytest.mark.one_engine
@settings(max_examples=50, deadline=None)
@given(odd_options(["n_resamples", "alpha", "seed", "test", "correction", "baseline",
                    "missing", "relevance_level", "max_docs"]))
def test_compare_takes_any_options(options):
    """Odd options give an error naming one, or the comparison of fastir.evaluate's values
    under the same options spelled plainly."""
    got = odd_call(lambda **kw: fastir.compare(SMALL_QRELS, SMALL_RUNS, ["AP"], **kw), options)
    if got is None:
        return
    plain = {name: value.item() if isinstance(value, np.generic) else value
             for name, value in options.items()}
    evaluation = {k: v for k, v in plain.items() if k in EVALUATION_OPTIONS}
    results = {name: fastir.evaluate(SMALL_QRELS, run, ["AP"], **evaluation)
               for name, run in SMALL_RUNS.items()}
    for s, name in enumerate(got.systems):
        per_query = results[name].to_dict()
        assert set(got.queries) == set(per_query)
        assert got.values[s, :, 0].tolist() == [per_query[q]["AP"] for q in got.queries]
    want = fastir.compare(None, results, ["AP"], **{k: v for k, v in plain.items()
                                                    if k not in EVALUATION_OPTIONS})
    assert got.pairs == want.pairs and np.array_equal(got.means, want.means)
    assert np.array_equal(got.p_value, want.p_value, equal_nan=True)
    assert np.array_equal(got.p_adjusted, want.p_adjusted, equal_nan=True)
