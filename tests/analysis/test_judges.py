"""Two judges compared (``fastir.compare_judges``, ``fastir judges``) on drawn judgments and
runs: the orders' tau equals scipy's and tau-AP the naive formula; the significance outcomes
are what ``fastir.compare`` concludes under each judge; each bias is the mean of the
per-query differences ``fastir.evaluate`` gives, its interval scipy's t interval; the
confusion matrix and kappas are sklearn's; the command prints the library's numbers."""

import json
import math

import numpy as np
import pytest
from cli_calls import cli

import fastir
from fastir.analysis import judges

pytestmark = pytest.mark.one_engine
scipy_stats = pytest.importorskip("scipy.stats")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

MEASURES = ["nDCG@10", "AP", "P@5", "num_rel_ret"]


def drawn(seed, n_queries=12, n_docs=20, n_systems=5):
    """People's qrels, a noisy machine's (some of its queries and documents missing, one
    query of its own), and systems that see people's labels through more or less noise."""
    rng = np.random.default_rng(seed)
    people = {f"q{q}": {f"d{d}": int(rng.integers(0, 4)) for d in range(n_docs)}
              for q in range(n_queries)}
    machine = {}
    for q, docs in people.items():
        if rng.random() < 0.1:
            continue  # (a query the machine did not judge)
        machine[q] = {d: int(np.clip(label + rng.integers(-1, 2), 0, 3))
                      for d, label in docs.items() if rng.random() < 0.9}
    machine["extra"] = {"d0": 1}
    runs = {}
    for s in range(n_systems):
        skill = rng.random()
        runs[f"sys{s}"] = {q: {d: float(skill * label + rng.random()) for d, label in
                               docs.items()} for q, docs in people.items()}
    return people, machine, runs


def tau_ap_naive(truth, other):
    """Yilmaz et al.'s tau-AP of ``other``'s order against ``truth``'s, written out (equal
    means in the systems' given order)."""
    order = sorted(range(len(other)), key=lambda i: -other[i])
    place = {s: k for k, s in enumerate(sorted(range(len(truth)), key=lambda i: -truth[i]))}
    total = 0.0
    for i in range(1, len(order)):
        above = sum(1 for j in order[:i] if place[j] < place[order[i]])
        total += above / i
    return 2 / (len(order) - 1) * total - 1


@pytest.fixture(scope="module", params=range(3))
def case(request):
    people, machine, runs = drawn(request.param)
    result = fastir.compare_judges(people, machine, runs, MEASURES, names=["people", "llm"],
                                   n_resamples=500, seed=request.param, top_k=3)
    return people, machine, runs, result


def test_orders_agree_as_scipy_and_the_formula_say(case):
    _, _, _, result = case
    for m, ranking in enumerate(result.rankings):
        a, b = result.means[0, :, m], result.means[1, :, m]
        if np.ptp(a) > 0 and np.ptp(b) > 0:
            assert ranking["tau"] == pytest.approx(scipy_stats.kendalltau(a, b).statistic,
                                                   abs=1e-12)
        assert ranking["tau_ap"] == pytest.approx(tau_ap_naive(a, b), abs=1e-12)
        top_a, top_b = set(np.argsort(-a, kind="stable")[:3]), \
            set(np.argsort(-b, kind="stable")[:3])
        assert ranking["top_k"] == len(top_a & top_b) / 3


def test_significance_is_compare_under_each_judge(case):
    people, machine, runs, result = case
    under = [fastir.compare(q, runs, MEASURES, n_resamples=500, seed=result.comparisons[0].seed)
             for q in (people, machine)]
    for m, counts in enumerate(result.significance):
        sig = [c.significant()[:, m] for c in under]
        up = [np.sign(c.difference[:, m]) for c in under]
        expected = {"both": 0, "opposite": 0, "only_a": 0, "only_b": 0, "neither": 0}
        for p in range(len(sig[0])):
            if sig[0][p] and sig[1][p]:
                expected["both" if up[0][p] == up[1][p] else "opposite"] += 1
            elif sig[0][p] or sig[1][p]:
                expected["only_a" if sig[0][p] else "only_b"] += 1
            else:
                expected["neither"] += 1
        assert counts == {**expected, "n_pairs": len(sig[0])}
        np.testing.assert_array_equal(result.means[0], under[0].means)
        np.testing.assert_array_equal(result.means[1], under[1].means)


def test_bias_is_the_mean_difference_over_the_common_queries(case):
    people, machine, runs, result = case
    common = sorted(set(people) & set(machine))
    assert result.n_common == len(common)
    for s, run in enumerate(runs.values()):
        values = [fastir.evaluate(q, run, MEASURES) for q in (people, machine)]
        for m, key in enumerate(MEASURES):
            d = np.array([values[1].to_dict()[q][key] - values[0].to_dict()[q][key]
                          for q in common])
            scale = len(common) if key == "num_rel_ret" else 1  # (a sum: n times the mean)
            low, high = scipy_stats.t.interval(0.95, len(d) - 1, loc=d.mean(),
                                               scale=scipy_stats.sem(d))
            assert result.bias[s, m] == pytest.approx(scale * d.mean(), abs=1e-12)
            assert result.bias_low[s, m] == pytest.approx(scale * low, abs=1e-9)
            assert result.bias_high[s, m] == pytest.approx(scale * high, abs=1e-9)


def test_labels_agree_as_sklearn_counts_them(case):
    people, machine, _, result = case
    both = [(q, d) for q in people for d in people[q] if d in machine.get(q, {})]
    a = [people[q][d] for q, d in both]
    b = [machine[q][d] for q, d in both]
    labels = sorted(set(a) | set(b))
    np.testing.assert_array_equal(result.label_values, labels)
    np.testing.assert_array_equal(result.confusion,
                                  sklearn_metrics.confusion_matrix(a, b, labels=labels))
    pair = result.labels.pairs[0]
    assert pair["both"] == len(both)
    binary = [[int(x >= 1) for x in side] for side in (a, b)]
    assert pair["kappa"] == pytest.approx(sklearn_metrics.cohen_kappa_score(*binary),
                                          abs=1e-12)
    for weights in ("linear", "quadratic"):
        assert pair[weights] == pytest.approx(
            sklearn_metrics.cohen_kappa_score(a, b, weights=weights), abs=1e-12)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
@pytest.mark.parametrize("df", [1, 2, 7, 30, 500])
def test_t_quantile_is_scipys(p, df):
    assert judges.t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-12)


def test_reports_say_the_same_numbers(case, tmp_path):
    _, _, _, result = case
    out = json.loads(result.to_json())
    assert out["judges"] == ["people", "llm"] and out["measures"] == MEASURES
    assert out["bias"]["sys0"]["AP"]["bias"] == result.bias[0, 1]
    assert out["rankings"]["AP"]["tau_ap"] == result.rankings[1]["tau_ap"]
    text = result.to_markdown()
    assert f"Cohen's kappa {result.labels.pairs[0]['kappa']:.3f}" in text
    assert f"{result.bias[0, 1]:+.4f}" in text
    assert r"\begin{tabular}" in result.to_latex()
    pytest.importorskip("matplotlib")
    from fastir.output import plots

    plots.to_files()
    assert plots.save(result.plot("AP"), str(tmp_path / "j.png")) == str(tmp_path / "j.png")
    assert (tmp_path / "j.png").stat().st_size > 0


def _write(path, data, run=False):
    with open(path, "w") as f:
        for q, docs in data.items():
            for rank, (d, x) in enumerate(docs.items()):
                f.write(f"{q} Q0 {d} {rank + 1} {x!r} r\n" if run else f"{q} 0 {d} {x}\n")


def test_the_command_prints_the_librarys_numbers(tmp_path):
    people, machine, runs = drawn(7)
    _write(tmp_path / "people.qrels", people)
    _write(tmp_path / "llm.qrels", machine)
    paths = []
    for name, run in runs.items():
        paths.append(str(tmp_path / f"{name}.run"))
        _write(paths[-1], run, run=True)
    done = cli("judges", str(tmp_path / "people.qrels"), str(tmp_path / "llm.qrels"), *paths,
               "-m", "AP", "-m", "P@5", "--resamples", "200", "--format", "json", text=True)
    assert done.returncode == 0, done.stderr
    expected = fastir.compare_judges(str(tmp_path / "people.qrels"),
                                     str(tmp_path / "llm.qrels"),
                                     {f"{n}.run": p for n, p in zip(runs, paths)},
                                     ["AP", "P@5"], names=["people.qrels", "llm.qrels"],
                                     n_resamples=200)
    assert json.loads(done.stdout) == json.loads(expected.to_json())
    one = cli("judges", str(tmp_path / "people.qrels"), str(tmp_path / "llm.qrels"),
              paths[0], text=True)
    assert one.returncode == 1 and one.stderr.strip() == \
        "fastir judges: error: give two or more runs, got 1"
    named = cli("judges", str(tmp_path / "people.qrels"), str(tmp_path / "llm.qrels"),
                *paths, "--judge", "x", text=True)
    assert named.returncode == 1 and "--judge names the two judges" in named.stderr


def test_bad_arguments_are_named():
    people, machine, runs = drawn(1)
    with pytest.raises(ValueError, match="top_k"):
        fastir.compare_judges(people, machine, runs, ["AP"], top_k=0)
    with pytest.raises(ValueError, match="names"):
        fastir.compare_judges(people, machine, runs, ["AP"], names=["one"])
    with pytest.raises(ValueError, match="runs"):
        fastir.compare_judges(people, machine, {"a": runs["sys0"]}, ["AP"])
    assert math.isnan(judges.t_interval(np.array([1.0]), 0.05)[1])


def test_each_run_file_is_read_once_and_results_are_refused(tmp_path, monkeypatch):
    from fastir.io import trec

    people, machine, runs = drawn(4, n_queries=5, n_systems=3)
    paths = {}
    for name, run in runs.items():
        paths[name] = tmp_path / f"{name}.run"
        paths[name].write_text("".join(f"{q} Q0 {d} 0 {s!r} {name}\n" for q, docs in
                                       run.items() for d, s in docs.items()))
    reads = []
    real_read_run = trec.read_run
    monkeypatch.setattr(trec, "read_run", lambda *a, **k: reads.append(a[0]) or
                        real_read_run(*a, **k))
    from_files = fastir.compare_judges(people, machine, {k: str(p) for k, p in paths.items()},
                                       MEASURES, n_resamples=100)
    assert sorted(map(str, reads)) == sorted(map(str, paths.values()))
    from_dicts = fastir.compare_judges(people, machine, runs, MEASURES, n_resamples=100)
    assert from_files.to_dict() == from_dicts.to_dict()
    results = {name: fastir.evaluate(people, run, MEASURES) for name, run in runs.items()}
    with pytest.raises(ValueError, match=r"runs\['sys0'\] is a Results.*give the run"):
        fastir.compare_judges(people, machine, results, MEASURES)
