"""Prediction-powered inference (``fastir.ppi``): the estimate and interval of
``fastir.analysis.ppi.ppi_mean`` equal ppi-python's (``ppi_mean_pointestimate``,
``ppi_mean_ci``) on drawn values, for a tuned lambda, PPI and the classical interval; ppi()
is ppi_mean on fastir.evaluate's per-query values under each qrels (and on their per-query
differences with a baseline); bad inputs are refused by name."""

import json
import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest

import fastir
from fastir.analysis.ppi import PPIEstimate, ppi_mean, tuned_lam

pytestmark = pytest.mark.one_engine

with warnings.catch_warnings():  # (ppi_py silences every warning when imported)
    ppi_py = pytest.importorskip("ppi_py")
    from ppi_py.ppi import _calc_lam_glm

LAMS = [None, 1, 0]


def drawn_values(seed, discrete=False):
    """(Y, Yhat, Yhat_unlabelled): a measure's values on 40 to 300 queries, 5% to 50% of
    them judged by humans too, the machine's values the humans' with noise (rounded to
    tenths, as P@10's, when ``discrete``)."""
    rng = np.random.default_rng(seed)
    total = int(rng.integers(40, 300))
    n = max(2, int(round(rng.uniform(0.05, 0.5) * total)))
    truth = rng.beta(2, 3, total)
    machine = np.clip(truth + rng.normal(rng.uniform(-0.1, 0.1), rng.uniform(0.02, 0.6),
                                         total), 0, 1)
    if discrete:
        truth, machine = np.round(truth, 1), np.round(machine, 1)
    return truth[:n], machine[:n], machine[n:]


def ppi_pys(y, yhat, unlabelled, alpha, lam):
    with warnings.catch_warnings():
        estimate = ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)
        low, high = ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=alpha, lam=lam,
                                       alternative="two-sided")
    return float(np.squeeze(estimate)), float(np.squeeze(low)), float(np.squeeze(high))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("discrete", [False, True])
def test_ppi_mean_is_ppi_pys(seed, lam, discrete):
    y, yhat, unlabelled = drawn_values(seed, discrete)
    for alpha in (0.05, 0.1, 0.3):
        got = ppi_mean(y, yhat, unlabelled, alpha, lam)
        want = ppi_pys(y, yhat, unlabelled, alpha, lam)
        assert got[:3] == pytest.approx(want, abs=1e-9, rel=0)
        assert (got.n_human, got.n_machine) == (len(y), len(y) + len(unlabelled))
        if lam is not None:
            assert got.lam == lam


@pytest.mark.parametrize("seed", range(8))
def test_tuned_lam_is_ppi_pys_clipped(seed):
    y, yhat, unlabelled = drawn_values(seed)
    theta = unlabelled.mean() + (y - yhat).mean()  # (its gradients, as ppi_mean_ci's)
    want = _calc_lam_glm(y - theta, yhat - theta, unlabelled - theta, np.eye(1), clip=True)
    assert tuned_lam(y, yhat, unlabelled) == pytest.approx(float(want), abs=1e-12)
    assert 0 <= tuned_lam(y, yhat, unlabelled) <= 1


def test_tuned_lam_is_clipped_both_ways():
    y = np.array([0.1, 0.9, 0.2, 0.8])
    assert tuned_lam(y, 1 - y, np.array([0.5, 0.4])) == 0.0  # (a machine that disagrees)
    assert tuned_lam(y, y * 3, np.array([0.0, 3.0])) < 1  # (a steeper one: lam = 1/3-ish)
    assert tuned_lam(y * 10, y, y[:2]) == 1.0  # (a flatter one: clipped)


def test_lam_zero_is_the_classical_interval():
    y, yhat, unlabelled = drawn_values(3)
    got = ppi_mean(y, yhat, unlabelled, 0.1, lam=0)
    half = NormalDist().inv_cdf(0.95) * y.std() / math.sqrt(len(y))
    assert got.estimate == pytest.approx(y.mean(), abs=1e-12)
    assert (got.ci_low, got.ci_high) == pytest.approx((y.mean() - half, y.mean() + half),
                                                      abs=1e-12)


def test_a_constant_machine_gives_the_classical_interval():
    """ppi-python's tuned lambda is 0 / 0 there (NaN); fastir's is 0."""
    y = np.array([0.2, 0.5, 0.9, 0.4])
    got = ppi_mean(y, np.full(4, 0.3), np.full(7, 0.3))
    assert got.lam == 0.0
    assert got[:3] == ppi_mean(y, np.full(4, 0.3), np.full(7, 0.3), lam=0)[:3]


def test_a_good_machine_narrows_the_interval():
    rng = np.random.default_rng(0)
    truth = rng.random(200)
    machine = truth + rng.normal(0, 0.02, 200)
    y, yhat, unlabelled = truth[:30], machine[:30], machine[30:]
    tuned, classical = ppi_mean(y, yhat, unlabelled), ppi_mean(y, yhat, unlabelled, lam=0)
    assert tuned.lam > 0.9
    assert tuned.ci_high - tuned.ci_low < 0.8 * (classical.ci_high - classical.ci_low)


# -- end to end: ppi() on qrels and runs --------------------------------------------------
MEASURES = ["AP", "nDCG@10", "P@5", "RR"]


def drawn_judgments(seed, n_queries=30):
    """(human, machine, runs): machine qrels of ``n_queries`` queries (graded 0-2), human
    qrels of 5% to 50% of them (at least 2) that disagree on some labels, and three runs
    (a query or two missing from each)."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(25)]
    machine, human = {}, {}
    n_human = max(2, int(round(rng.uniform(0.05, 0.5) * n_queries)))
    for i in range(n_queries):
        q = f"q{i}"
        judged = rng.choice(docs, size=int(rng.integers(5, 20)), replace=False)
        machine[q] = {str(d): int(rng.integers(0, 3)) for d in judged}
        if i < n_human:
            human[q] = {d: (label if rng.random() < 0.7 else int(rng.integers(0, 3)))
                        for d, label in machine[q].items()}
    runs = []
    for _ in range(3):
        dropped = set(rng.choice(n_queries, size=2, replace=False).tolist())
        runs.append({f"q{i}": {d: float(rng.random()) for d in docs[:int(rng.integers(5, 25))]}
                     for i in range(n_queries) if i not in dropped})
    return human, machine, runs


def per_query(qrels, run, **options):
    res = fastir.evaluate(qrels, run, MEASURES, **options)
    return {str(q): res.values[i] for i, q in enumerate(res.query_ids)}


def expected(human, machine, runs, alpha, lam, **options):
    """ppi_mean on evaluate's per-query values of ``runs[0]`` (less ``runs[1]``'s)."""
    values = []
    for qrels in (human, machine):
        tables = [per_query(qrels, run, **options) for run in runs]
        if len(tables) == 2:
            tables = [{q: v - tables[1][q] for q, v in tables[0].items() if q in tables[1]}]
        values.append(tables[0])
    h, m = values
    labelled = [q for q in h if q in m]
    unlabelled = [q for q in m if q not in human]
    y, yhat = np.array([h[q] for q in labelled]), np.array([m[q] for q in labelled])
    yhat_u = np.array([m[q] for q in unlabelled])
    return [ppi_mean(y[:, k], yhat[:, k], yhat_u[:, k], alpha, lam)
            for k in range(len(MEASURES))]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("options", [{}, {"missing": "skip"}, {"relevance_level": 2},
                                     {"ties": "expected", "missing": "skip"}])
def test_ppi_is_ppi_mean_of_evaluates_values(seed, lam, options):
    human, machine, runs = drawn_judgments(seed)
    alpha = (0.05, 0.1)[seed % 2]
    got = fastir.ppi(human, machine, runs[0], MEASURES, alpha=alpha, lam=lam, **options)
    want = expected(human, machine, runs[:1], alpha, lam, **options)
    assert got.measures == MEASURES
    for key, estimate in zip(MEASURES, want):
        assert tuple(got[key]) == pytest.approx(tuple(estimate), abs=1e-12)
    assert got.n_human == len(human) - (0 if "missing" not in options else
                                        sum(q not in runs[0] for q in human))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lam", LAMS)
@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_the_difference_of_two_runs_is_ppi_mean_of_the_differences(seed, lam, missing):
    human, machine, runs = drawn_judgments(seed + 10)
    got = fastir.ppi(human, machine, runs[1], MEASURES, baseline=runs[2], lam=lam,
                     missing=missing)
    want = expected(human, machine, runs[1:], 0.05, lam, missing=missing)
    assert got.difference
    for key, estimate in zip(MEASURES, want):
        assert tuple(got[key]) == pytest.approx(tuple(estimate), abs=1e-12)


def test_ppi_of_the_machine_judging_as_humans_do():
    """Machine qrels that agree with the human ones: Y == Yhat, so the tuned lambda is near
    1 and the interval narrower than the classical one."""
    _, machine, runs = drawn_judgments(5, n_queries=60)
    human = {q: machine[q] for q in list(machine)[:20]}
    tuned = fastir.ppi(human, machine, runs[0], "AP")["AP"]
    classical = fastir.ppi(human, machine, runs[0], "AP", lam=0)["AP"]
    assert tuned.lam > 0.5
    assert tuned.ci_high - tuned.ci_low < classical.ci_high - classical.ci_low


def test_reports():
    human, machine, runs = drawn_judgments(1)
    res = fastir.ppi(human, machine, runs[0], ["ndcg_cut.10", "AP"])
    assert res["nDCG@10"] is res["ndcg_cut_10"] is res["ndcg_cut.10"]
    assert isinstance(res["AP"], PPIEstimate)
    with pytest.raises(KeyError, match="P@5"):
        res["P@5"]
    assert list(res) == res.measures == ["ndcg_cut_10", "AP"] and len(res) == 2
    d = res.to_dict()
    assert d["estimates"]["AP"]["ci_low"] == res["AP"].ci_low
    assert (d["n_human"], d["n_machine"], d["alpha"], d["lam"]) == (
        len(human), len(machine), 0.05, None)
    assert json.loads(res.to_json()) == d
    assert fastir.ppi(human, machine, runs[0], "AP", lam=np.float64(1)).to_dict()["lam"] == 1.0
    text = res.to_markdown()
    assert str(res) == text and "| AP |" in text and "95% CI" in text
    assert f"[{res['AP'].ci_low:.4f}, {res['AP'].ci_high:.4f}]" in text
    assert f"over the {len(machine)} machine-judged queries, {len(human)} of them" in text
    assert "PPIEstimates(" in repr(res)
    paired = fastir.ppi(human, machine, runs[0], "AP", baseline=runs[1], lam=1, alpha=0.1)
    assert "run - baseline" in str(paired) and "90% CI" in str(paired)
    assert "| AP | +" in str(paired) or "| AP | -" in str(paired)
    pd = pytest.importorskip("pandas")
    frame = res.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.loc["AP", "estimate"] == res["AP"].estimate


# -- refusals -------------------------------------------------------------------------------
QRELS = {f"q{i}": {"a": i % 2, "b": 1} for i in range(6)}
HUMAN = {f"q{i}": {"a": 1, "b": i % 2} for i in range(3)}
RUN = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(6)}


@pytest.mark.parametrize("call, match", [
    (dict(human_qrels={"q0": {"a": 1}, "x": {"a": 1}, "y": {"b": 0}}),
     r"human_qrels judges 2 queries that machine_qrels does not: 'x', 'y'"),
    (dict(human_qrels={"q0": {"a": 1}}), r"human_qrels judges 1 queries; ppi needs at least 2"),
    (dict(human_qrels=QRELS), r"machine_qrels judges no query that human_qrels does not"),
    (dict(alpha=0), r"alpha must be a number in \(0, 1\)"),
    (dict(alpha=1.5), r"alpha must be"),
    (dict(lam=1.5), r"lam must be None \(tuned, PPI\+\+\) or a number in \[0, 1\]"),
    (dict(lam=-0.1), r"lam must be"),
    (dict(lam="tuned"), r"lam must be"),
    (dict(measures=["AP", "num_rel"]), r"measures must be summarised by their mean.*num_rel"),
    (dict(measures=["nope"]), r"measures: "),
    (dict(run=(RUN, RUN)), r"run must be one run; .* baseline="),
    (dict(run={"q0": {"a": 1.0}, "q4": {"b": 1.0}}, missing="skip"),
     r"the run has 1 of the queries human_qrels judges; ppi needs at least 2"),
])
def test_bad_inputs_are_refused_by_name(call, match):
    args = dict(human_qrels=HUMAN, machine_qrels=QRELS, run=RUN, measures="P@1") | call
    with pytest.raises(ValueError, match=match):
        fastir.ppi(**args)


@pytest.mark.parametrize("args, match", [
    (([0.1, 0.2], [0.1], [0.3]), r"yhat must have one value per value of y \(2\), got 1"),
    (([0.1], [0.1], [0.3]), r"y must have at least 2 values"),
    (([0.1, 0.2], [0.1, 0.2], []), r"yhat_unlabelled must have at least 1 value"),
    (([0.1, math.nan], [0.1, 0.2], [0.3]), r"y holds a value that is not a finite number"),
    (([[0.1, 0.2]], [0.1, 0.2], [0.3]), r"y must be one-dimensional"),
    (([0.1, 0.2], ["a", "b"], [0.3]), r"yhat must be an array of numbers"),
])
def test_ppi_mean_refuses_by_name(args, match):
    with pytest.raises(ValueError, match=match):
        ppi_mean(*args)
