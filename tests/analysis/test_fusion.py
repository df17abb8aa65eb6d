"""fastir.fuse against a naive reference written from the definitions
(fastir.analysis.fusion's module doc) and against ranx.fuse; optimize_fusion against
evaluating each fused run."""

import io
import math
import subprocess

import numpy as np
import pytest
from checks import SMALL_QRELS, SMALL_RUNS, odd_call, odd_options, useful
from cli_calls import PROGRAM
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import ranx as shim
from fastir.analysis.fusion import methods, search
from fastir.peers.ranx import FUSIONS as RANX_FUSIONS
from fastir.peers.ranx import SEARCHES as RANX_SEARCHES

METHODS = ["rrf", "wrrf", "sum", "mnz", "gmnz", "max", "min", "med", "anz", "wsum", "mixed",
           "wmnz", "borda", "w_bordafuse", "condorcet", "w_condorcet", "isr", "log_isr",
           "logn_isr", "rbc", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse",
           "bayesfuse"]
NORMS = [None, "min-max", "min-max-inverted", "zmuv", "sum", "max", "rank", "borda"]
BY_RANK = {"rrf", "wrrf", "isr", "log_isr", "logn_isr", "borda", "w_bordafuse", "condorcet",
           "w_condorcet", "rbc", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse",
           "bayesfuse"}
WEIGHTED = {"wsum", "wrrf", "mixed", "wmnz", "w_bordafuse", "w_condorcet"}


# -- the naive reference ------------------------------------------------------------------
def ranked(docs):
    """A run's docs for one query, best first: score descending, ties by id descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]


def naive_norm(runs, norm):
    """Each run normalised per query; ``borda`` also gives every candidate to every run."""
    out = []
    for run in runs:
        normed = {}
        for q in {q for r in runs for q in r}:
            docs = run.get(q, {})
            order = ranked(docs)
            s = [docs[d] for d in order]
            m = len(s)
            if norm is None or (not docs and norm != "borda"):
                normed[q] = dict(docs)
            elif norm in ("min-max", "min-max-inverted"):
                sign = -1 if norm == "min-max-inverted" else 1
                top = max(s) if sign < 0 else min(s)
                normed[q] = {d: sign * (docs[d] - top) / max(max(s) - min(s), 1e-9)
                             for d in docs}
            elif norm == "max":
                normed[q] = {d: docs[d] / max(max(s), 1e-9) for d in docs}
            elif norm == "sum":
                total = 0.0
                for v in s:
                    total += v
                normed[q] = {d: (docs[d] - min(s)) / max(total - min(s) * m, 1e-9)
                             for d in docs}
            elif norm == "zmuv":
                total = 0.0
                for v in s:
                    total += v
                mean = total / m if m else 0.0
                square = 0.0
                for v in s:
                    square += (v - mean) ** 2
                std = math.sqrt(square / m) if m else 0.0
                normed[q] = {d: (docs[d] - mean) / max(std, 1e-9) for d in docs}
            elif norm == "rank":
                normed[q] = {d: 1 - i / m for i, d in enumerate(order)}
            elif norm == "borda":
                cands = {d for r in runs for d in r.get(q, {})}
                n = len(cands)
                normed[q] = {d: (1 - order.index(d) / n if d in docs else
                                 0.5 - (m - 1) / (2 * n)) for d in cands}
            if not normed[q]:
                del normed[q]
        out.append(normed)
    return out


def naive_condorcet(orders, cands, weights):
    """Condorcet's scores where the majorities are a strict weak order (then every stable
    sort from the tie order, doc id descending, agrees), else None."""
    def ahead(x, y):
        return sum(w for order, w in zip(orders, weights) if x in order and
                   (y not in order or order.index(x) < order.index(y)))
    beats = {(x, y) for x in cands for y in cands if x != y and ahead(x, y) > ahead(y, x)}
    wins = {x: sum((x, y) in beats for y in cands) for x in cands}
    if any(((x, y) in beats) != (wins[x] > wins[y]) for x in cands for y in cands):
        return None  # (not a strict weak order: a cycle, or ties that are not transitive)
    order = sorted(sorted(cands, reverse=True), key=lambda d: -wins[d])
    return {d: float(len(order) - i) for i, d in enumerate(order)}


def naive_fuse(runs, method, params, norm=None, depth=None):
    """{query: {doc: fused score}} from the definitions, in plain Python (None where the
    reference does not decide: a condorcet query without a strict weak order)."""
    if depth is not None:
        runs = [{q: {d: docs[d] for d in ranked(docs)[:depth]} for q, docs in r.items()}
                for r in runs]
    weights = params.get("weights") or [1.0] * len(runs)
    k = params.get("k", 60)
    normed = naive_norm(runs, norm)
    fused = {}
    for q in sorted({q for r in runs for q in r}):
        cands = {d for r in runs for d in r.get(q, {})}
        n = len(cands)
        orders = [ranked((normed[i] if norm == "min-max-inverted" else r).get(q, {}))
                  for i, r in enumerate(runs)]
        orders = [[d for d in order if d in runs[i].get(q, {})]
                  for i, order in enumerate(orders)]
        if method in ("condorcet", "w_condorcet"):
            fused[q] = naive_condorcet(orders, cands, weights)
            continue
        fused[q] = {}
        for d in cands:
            if method in BY_RANK:
                got = [(i, orders[i].index(d) + 1) for i in range(len(runs))
                       if d in orders[i]]
            else:
                got = [(i, normed[i][q][d]) for i in range(len(runs))
                       if d in normed[i].get(q, {})]
            values = [v for _, v in got]
            c = len(got)
            total = 0.0
            if method in ("sum", "mnz", "gmnz", "anz", "wmnz"):
                for v in values:
                    total += v
            if method == "sum":
                score = total
            elif method == "mnz":
                score = total * c
            elif method == "gmnz":
                score = total * c ** params["gamma"]
            elif method == "anz":
                score = total / c
            elif method == "wmnz":
                w = 0.0
                for i, _ in got:
                    w += weights[i]
                score = total * w
            elif method == "max":
                score = max(values)
            elif method == "min":
                score = min(values)
            elif method == "med":
                s = sorted(values)
                score = (s[(c - 1) // 2] + s[c // 2]) / 2
            elif method == "wsum":
                for i, r in enumerate(normed):
                    total += weights[i] * r.get(q, {}).get(d, 0.0)
                score = total
            elif method == "mixed":
                for i, v in got:
                    total += weights[i] * v
                score = total * math.sqrt(c)
            elif method in ("borda", "w_bordafuse"):
                for i, order in enumerate(orders):
                    points = n - order.index(d) if d in order else (n - len(order) + 1) / 2
                    total += (weights[i] if method == "w_bordafuse" else 1) * points
                score = total
            else:
                for i, rank in got:
                    total += naive_rank_score(method, params, i, rank, len(orders[i]),
                                              normed[i][q][d], k, weights)
                if method == "bayesfuse":
                    total += sum(math.log(0.001 / 0.999) for i in range(len(runs))
                                 if d not in orders[i])
                score = total * {"isr": c, "log_isr": math.log(c) if c else 0,
                                 "logn_isr": math.log(c + params.get("sigma", 0.01))
                                 }.get(method, 1)
            fused[q][d] = score
    return fused


def naive_rank_score(method, params, i, rank, m, value, k, weights):
    """What run ``i`` gives a doc it ranks at ``rank`` (of ``m``) under a rank method."""
    if method in ("rrf", "wrrf"):
        return (weights[i] if method == "wrrf" else 1) * (1 / (k + rank))
    if method in ("isr", "log_isr", "logn_isr"):
        return 1 / (rank * rank)
    if method == "rbc":
        return (1 - params["phi"]) * params["phi"] ** (rank - 1)
    if method == "mapfuse":
        return params["map_scores"][i] / rank
    if method == "bayesfuse":
        return params["log_odds"][i][rank - 1]
    probs = params["probs"][i]
    if method == "posfuse":
        return probs[rank - 1] if rank - 1 < len(probs) else 0.0
    if method == "probfuse":
        size = math.ceil(m / len(probs))
        j = (rank - 1) // size
        return probs[j] / (j + 1)
    if method == "segfuse":
        bounds = [0, 5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115]
        j = next(j for j in range(10) if bounds[j] <= rank - 1 < bounds[j + 1])
        return (probs[j] if j < len(probs) else 0.0) * (value + 1)
    # slidefuse
    a, b = max(rank - 1 - params["w"], 0), min(rank - 1 + params["w"], m - 1)
    return sum(probs[a:b + 1]) / (b - a + 1)


# -- data ----------------------------------------------------------------------------------
DOCS = st.sampled_from(["d1", "d10", "d2", "d3", "e", "d4", "d5", "x"])
SCORES = st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 1.5, 3.0, 7.0])
RUN = st.dictionaries(st.sampled_from(["q1", "q2", "q10"]),
                      st.dictionaries(DOCS, SCORES, min_size=1, max_size=6),
                      min_size=1, max_size=3)
GRAINS = st.sampled_from([0.0, 0.125, 0.25, 0.5, 1.0])  # (exact: sums are the same any way)


def drawn_params(data, method, n_runs):
    """Parameters for ``method`` drawn from ``data``."""
    def arrays(size):
        return data.draw(st.lists(st.lists(GRAINS, min_size=size, max_size=size).map(
            np.array), min_size=n_runs, max_size=n_runs))
    if method in WEIGHTED:
        return {"weights": data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5]),
                                              min_size=n_runs, max_size=n_runs))}
    return {"gmnz": lambda: {"gamma": data.draw(st.sampled_from([0.0, 0.5, 1.0, 2.0]))},
            "logn_isr": lambda: {"sigma": data.draw(st.sampled_from([0.0, 0.01, 1.0]))},
            "rbc": lambda: {"phi": data.draw(st.sampled_from([0.0, 0.5, 0.9, 1.0]))},
            "mapfuse": lambda: {"map_scores": data.draw(st.lists(
                GRAINS, min_size=n_runs, max_size=n_runs))},
            "posfuse": lambda: {"probs": arrays(data.draw(st.integers(0, 8)))},
            "probfuse": lambda: {"probs": arrays(data.draw(st.integers(1, 4)))},
            "segfuse": lambda: {"probs": arrays(10)},
            "slidefuse": lambda: {"probs": arrays(data.draw(st.integers(0, 8))),
                                  "w": data.draw(st.integers(0, 3))},
            "bayesfuse": lambda: {"log_odds": arrays(8)},
            }.get(method, dict)()


@settings(max_examples=150, deadline=None)
@given(st.lists(RUN, min_size=2, max_size=4), st.sampled_from(METHODS),
       st.sampled_from(NORMS), st.one_of(st.none(), st.integers(1, 4)),
       st.sampled_from([0, 1, 60]), st.data())
def test_fuse_equals_the_naive_reference(runs, method, norm, depth, k, data):
    params = drawn_params(data, method, len(runs))
    if method in ("rrf", "wrrf"):
        params["k"] = max(k, 1)
    got = fastir.fuse(runs, method, norm=norm, depth=depth, **params).to_dict()
    want = naive_fuse(runs, method, params, norm, depth)
    assert sorted(got) == sorted(want)
    for q, docs in want.items():
        if docs is not None:
            assert got[q] == pytest.approx(docs, rel=1e-12, abs=1e-12), q


SIGNED_SCORES = st.sampled_from([-1.0, -0.0, 0.0, 0.5, 2.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["q1", "q2"]), st.dictionaries(
    DOCS, SIGNED_SCORES, min_size=1, max_size=8), min_size=1, max_size=2),
    min_size=2, max_size=12), st.sampled_from([None, "borda"]))
def test_med_of_up_to_twelve_runs_is_the_stable_sorts_to_the_sign_of_zero(runs, norm):
    """med sorts each doc's values with a comparator network, which may swap a -0.0 and a
    0.0: the median is still the stable sort's, sign and all."""
    got = fastir.fuse(runs, "med", norm=norm).to_dict()
    want = naive_fuse(runs, "med", {}, norm)
    assert sorted(got) == sorted(want)
    for q, docs in want.items():
        assert got[q] == pytest.approx(docs, rel=1e-12, abs=0), q
        assert {d: math.copysign(1, v) for d, v in got[q].items()} == \
            {d: math.copysign(1, v) for d, v in docs.items()}, q


@pytest.mark.parametrize("n_runs", range(1, 17))
def test_median_network_puts_the_lower_half_in_place(n_runs):
    """Every input of 0s and 1s (so every input, by the 0-1 principle) leaves places 0 to
    ``n_runs // 2`` of the network's output as a sort puts them."""
    network = methods.median_network(n_runs)
    assert all(a < b for a, b in network)
    inputs = (np.arange(2 ** n_runs)[:, None] >> np.arange(n_runs)) & 1
    values = inputs.copy()
    for a, b in network:
        values[:, a], values[:, b] = (np.minimum(values[:, a], values[:, b]),
                                      np.maximum(values[:, a], values[:, b]))
    half = n_runs // 2 + 1
    assert (values[:, :half] == np.sort(inputs, axis=1)[:, :half]).all()


def test_a_run_whose_columns_were_replaced_fuses_by_its_new_rows():
    """Each run keeps what its scores say of its rows' order (Run.score_order), as long as
    its columns are the same arrays: a run given new columns is read anew."""
    a = fastir.Run.from_arrays([1, 1, 1], ["x", "y", "z"], [3.0, 2.0, 1.0])
    b = fastir.Run.from_arrays([1, 1], ["y", "w"], [5.0, 4.0])
    assert fastir.fuse([a, b], "rrf", k=0).to_dict() == {
        1: {"y": 1.5, "x": 1.0, "w": 0.5, "z": 1 / 3}}
    rising = fastir.Run.from_arrays([1, 1, 1], ["x", "y", "z"], [1.0, 2.0, 3.0])
    a.scores = rising.scores  # (rows now rise: they must be ranked, not read in place)
    assert fastir.fuse([a, b], "rrf", k=0).to_dict() == fastir.fuse([rising, b], "rrf",
                                                                   k=0).to_dict()
    assert fastir.fuse([a, b], "rrf", k=0).to_dict()[1]["z"] == 1.0


def test_long_runs_scores_are_joined_in_a_thread_as_numpy_joins_them(monkeypatch):
    """Pairs copies long runs' scores end to end in a thread of its own (Concatenation):
    the same array as np.concatenate, the same fused run, and the copy's error raised in
    the caller."""
    from fastir.analysis.fusion import pairs

    runs = [fastir.Run.from_dict(r) for r in SMALL_RUNS.values()]
    serial = fastir.fuse(runs, "sum").to_dict()
    monkeypatch.setattr(pairs.Concatenation, "THREAD_ROWS", 0)
    threads = []
    monkeypatch.setattr(pairs.threading, "Thread", _recorded(threads, pairs.threading.Thread))
    assert fastir.fuse(runs, "sum").to_dict() == serial
    assert len(threads) == 1
    arrays = [np.arange(5.0), np.arange(3.0)]
    assert np.array_equal(pairs.Concatenation(arrays).result(), np.concatenate(arrays))
    with pytest.raises(ValueError, match="dimensions"):
        pairs.Concatenation([np.zeros(2), np.zeros((2, 2))]).result()


def _recorded(made, cls):
    def make(*args, **kwargs):
        made.append(cls(*args, **kwargs))
        return made[-1]
    return make


def test_fused_rows_are_ranked_and_named():
    a = {"q": {"d1": 3.0, "d2": 2.0}}
    b = {"q": {"d2": 0.9, "d3": 0.1}}
    run = fastir.fuse({"bm25": a, "dense": b}, "sum")
    assert run.name == "sum" and run.source == "fuse"
    assert list(run.to_dict()["q"]) == ["d1", "d2", "d3"]  # rows ranked by fused score
    assert run.to_dict()["q"] == {"d1": 3.0, "d2": 2.9, "d3": 0.1}


# -- ranx ----------------------------------------------------------------------------------
# ranx's kernels warn while numba compiles them (its code, not fastir's)
RANX_WARNINGS = pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")
def distinct_runs(seed, n_runs=3, n_queries=6):
    """Runs with distinct scores within each query (ranx breaks ties arbitrarily), the same
    queries (ranx needs them) and overlapping docs."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_queries):
            docs = rng.choice(30, size=rng.integers(1, 15), replace=False)
            run[f"q{q}"] = {f"d{d}": float(s) for d, s in
                            zip(docs, rng.permutation(len(docs)) + rng.random())}
        runs.append(run)
    return runs


def ranx_params(ranx, qrels, runs, method):
    """Parameters for ranx's ``method`` (trained ones learnt by ranx, from ``qrels``)."""
    weights = [0.2, 0.5, 0.3][:len(runs)]
    rq, rr = ranx.Qrels(qrels), [ranx.Run(r) for r in runs]
    return {"gmnz": lambda: {"gamma": 0.7}, "logn_isr": lambda: {"sigma": 0.3},
            "rbc": lambda: {"phi": 0.8}, "rrf": lambda: {"k": 10},
            "mapfuse": lambda: {"map_scores": ranx.fusion.mapfuse_train(rq, rr)},
            "posfuse": lambda: {"probs": ranx.fusion.posfuse_train(rq, rr)},
            "probfuse": lambda: {"probs": ranx.fusion.probfuse_train(rq, rr, 3)},
            "segfuse": lambda: {"probs": ranx.fusion.segfuse_train(rq, rr)},
            "slidefuse": lambda: {"probs": ranx.fusion.slidefuse_train(rq, rr), "w": 2},
            "bayesfuse": lambda: {"log_odds": ranx.fusion.bayesfuse_train(rq, rr)},
            }.get(method, lambda: {"weights": weights} if method in
                  ("wsum", "mixed", "wmnz", "w_bordafuse", "w_condorcet") else {})()


def judged(runs, seed):
    rng = np.random.default_rng(seed)
    return {q: {d: int(rng.integers(0, 3)) for r in runs for d in r[q]} for q in runs[0]}


@RANX_WARNINGS
@pytest.mark.one_engine
@pytest.mark.parametrize("method", sorted(set(RANX_FUSIONS) - {"condorcet",
                                                                 "w_condorcet"}))
def test_fuse_equals_ranx(method):
    """Every method and normalisation of ranx.fuse, through fastir.fuse and the switch, on
    runs without ties, to 1e-9 (ranx ranks borda-normalised runs in its candidates' set
    order: fastir's rank methods read the runs' own ranks, so those are left out)."""
    ranx = pytest.importorskip("ranx")
    runs = distinct_runs(sum(map(ord, method)) % 1000)
    params = ranx_params(ranx, judged(runs, 0), runs, method)
    ours = RANX_FUSIONS[method][0]
    for norm in NORMS:
        if norm == "borda" and ours in BY_RANK:
            continue
        want = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method,
                         params=params).to_dict()
        for got in (fastir.fuse(runs, ours, norm=norm, **params).to_dict(),
                    shim.fuse([shim.Run(r) for r in runs], norm, method, params).to_dict()):
            assert sorted(got) == sorted(want), norm
            for q in got:
                assert got[q] == pytest.approx(dict(want[q]), rel=1e-9, abs=1e-9), (norm, q)


def condorcet_runs(seed):
    """Odd numbers of runs ranking the same docs (as ranx's sort needs, see below), noisy
    copies of one ranking."""
    rng = np.random.default_rng(seed)
    n_runs = 3 + 2 * (seed % 2)
    base = rng.normal(size=12)
    runs = [{f"q{q}": {f"d{d}": float(base[d] + rng.normal() * 0.5) for d in range(10)}
             for q in range(4)} for _ in range(n_runs)]
    return runs, list(rng.random(n_runs).round(3))


def ranx_order_defined(runs, q, weights):
    """Whether ranx's Condorcet comparator is an order on query ``q``: for every pair one
    doc goes first whichever is asked first, and without cycles (else ranx's result is its
    candidates' set order's)."""
    pos = [{d: i for i, d in enumerate(ranked(r[q]))} for r in runs]
    docs = sorted(runs[0][q])

    def first(x, y):
        x_votes = sum(w for p, w in zip(pos, weights) if p.get(x, 10**6) < p.get(y, 10**6))
        return x_votes >= sum(weights) - x_votes

    wins = dict.fromkeys(docs, 0)
    for i, x in enumerate(docs):
        for y in docs[i + 1:]:
            if first(x, y) == first(y, x):
                return False
            wins[x if first(x, y) else y] += 1
    return sorted(wins.values()) == list(range(len(docs)))


@RANX_WARNINGS
@pytest.mark.one_engine
@pytest.mark.parametrize("method", ["condorcet", "w_condorcet"])
def test_condorcet_equals_ranx_where_ranx_defines_it(method):
    ranx = pytest.importorskip("ranx")
    compared = 0
    for seed in range(6):
        runs, weights = condorcet_runs(seed)
        weights = weights if method == "w_condorcet" else [1] * len(runs)
        params = {"weights": weights} if method == "w_condorcet" else {}
        want = ranx.fuse([ranx.Run(r) for r in runs], norm=None, method=method,
                         params=params).to_dict()
        got = fastir.fuse(runs, method, **params).to_dict()
        for q in want:
            if ranx_order_defined(runs, q, weights):
                assert got[q] == dict(want[q])
                compared += 1
    assert compared >= 12


@RANX_WARNINGS
@pytest.mark.one_engine
@pytest.mark.parametrize("norm", [None, "min-max-inverted"])
def test_training_equals_ranxs(norm):
    ranx = pytest.importorskip("ranx")
    runs = distinct_runs(11)
    qrels = judged(runs, 1)
    normed = [ranx.Run(r) for r in runs]
    if norm:
        normed = [ranx.normalize(r, norm) for r in normed]
    rq = ranx.Qrels(qrels)
    for method, options in [("posfuse", {}), ("slidefuse", {}), ("segfuse", {}),
                            ("bayesfuse", {}), ("mapfuse", {}), ("probfuse", {"n_segments": 1}),
                            ("probfuse", {"n_segments": 4})]:
        want = getattr(ranx.fusion, f"{method}_train")(rq, normed, *options.values())
        got = fastir.train_fusion(qrels, runs, method, norm=norm, **options)
        (values,) = got.values()
        assert len(values) == len(want)
        for ours, theirs in zip(values, want):
            assert np.shape(ours) == np.shape(theirs), method
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12, err_msg=method)


# -- optimize_fusion -----------------------------------------------------------------------
def collection(seed, n_queries=20, depth=15):
    rng = np.random.default_rng(seed)
    qrels, runs = {}, [{}, {}, {}]
    for q in range(n_queries):
        grades = rng.choice([0, 0, 1, 2], size=depth)
        qrels[f"q{q}"] = {f"d{d}": int(g) for d, g in enumerate(grades)}
        for i, run in enumerate(runs):
            docs = rng.choice(depth, size=rng.integers(3, depth), replace=False)
            run[f"q{q}"] = {f"d{d}": float(grades[d] * (i + 1) * 0.3 + rng.normal())
                            for d in docs}
    return qrels, runs


@pytest.mark.one_engine  # (numpy only)
def test_simplex_grid_is_complete():
    grid = search._simplex(3, 0.1)
    assert grid.shape == (66, 3)
    counts = np.rint(grid * 10).astype(int)
    assert (counts.sum(axis=1) == 10).all()
    assert len({tuple(c) for c in counts.tolist()}) == 66
    assert [tuple(c) for c in counts.tolist()] == sorted(tuple(c) for c in counts.tolist())
    assert search._simplex(4, 0.1).shape == (286, 4)
    assert search._simplex(2, 0.25).tolist() == [[0, 1], [0.25, 0.75], [0.5, 0.5],
                                                 [0.75, 0.25], [1, 0]]


@pytest.mark.parametrize("method,norm", [("wsum", "min-max"), ("wsum", "zmuv"),
                                         ("wrrf", None)])
def test_optimize_fusion_table_equals_evaluating_each_fused_run(method, norm):
    qrels, runs = collection(1)
    search = fastir.optimize_fusion(qrels, {"a": runs[0], "b": runs[1], "c": runs[2]},
                                    "nDCG@10", method, norm, step=0.2)
    assert search.names == ["a", "b", "c"] and search.grid.shape == (21, 3)
    for w, value in zip(search.grid, search.values):
        fused = fastir.fuse(runs, method, weights=w, norm=norm)
        assert value == fastir.evaluate(qrels, fused, "nDCG@10").mean["nDCG@10"]
    assert search.best == int(np.flatnonzero(search.values == search.values.max())[0])
    assert search.weights == search.grid[search.best].tolist()
    assert "| a | b | c | nDCG@10 |" in search.to_markdown()


def test_optimize_fusion_with_held_out_queries():
    qrels, runs = collection(2)
    test = [f"q{q}" for q in range(5)]
    search = fastir.optimize_fusion(qrels, runs, "AP", step=0.5, test_queries=test)
    train_qrels = {q: v for q, v in qrels.items() if q not in test}
    test_qrels = {q: v for q, v in qrels.items() if q in test}
    for w, train, held in zip(search.grid, search.values, search.test_values):
        fused = fastir.fuse(runs, "wsum", weights=w, norm="min-max")
        assert train == fastir.evaluate(train_qrels, fused, "AP", missing="zero").mean["AP"]
        assert held == fastir.evaluate(test_qrels, fused, "AP").mean["AP"]
    assert "(test)" in search.to_markdown()


@RANX_WARNINGS
@pytest.mark.one_engine
def test_optimize_fusion_finds_ranxs_best():
    """(One engine: both engines' search values are checked exactly against evaluating each
    fused run above; with the Python engine this was the session's only ranx call, paying
    ranx's kernels' warm-up alone: 84-124 s. Step 0.25: 15 weight vectors, not 66.)"""
    ranx = pytest.importorskip("ranx")
    qrels, runs = collection(3)
    search = fastir.optimize_fusion(qrels, runs, "nDCG@10", step=0.25)
    best = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs],
                                norm="min-max", method="wsum", metric="ndcg@10",
                                step=0.25, show_progress=False)
    want = fastir.evaluate(qrels, fastir.fuse(runs, "wsum", weights=best["weights"],
                                              norm="min-max"), "nDCG@10").mean["nDCG@10"]
    assert search.values[search.best] >= want


@pytest.mark.parametrize("method,norm,options", [
    ("mixed", "min-max", {"step": 0.5}), ("w_condorcet", None, {"step": 0.5}),
    ("w_bordafuse", None, {"step": 0.5}), ("rrf", None, {"values": [1, 10, 60]}),
    ("rbc", "min-max", {"values": [0.5, 0.9]}), ("gmnz", "sum", {"values": [0.0, 1.0]}),
    ("slidefuse", None, {"values": [0, 2]}), ("probfuse", None, {"values": [1, 3]})])
def test_every_method_search_equals_evaluating_each_fused_run(method, norm, options):
    qrels, runs = collection(4)
    test = [f"q{q}" for q in range(5)]
    search = fastir.optimize_fusion(qrels, runs, "nDCG@10", method, norm,
                                    test_queries=test, **options)
    train_qrels = {q: v for q, v in qrels.items() if q not in test}
    for i, value in enumerate(search.values):
        if search.param == "weights":
            params = {"weights": search.grid[i]}
        elif method in ("slidefuse", "probfuse"):
            trained_on = [q for q in qrels if q not in test]
            extra = {"n_segments": int(search.grid[i])} if method == "probfuse" else {}
            params = fastir.train_fusion(train_qrels, runs, method, norm=norm,
                                         queries=trained_on, **extra)
            params |= {"w": search.grid[i]} if method == "slidefuse" else {}
        else:
            params = {search.param: search.grid[i]}
        fused = fastir.fuse(runs, method, norm=norm, **params)
        assert value == fastir.evaluate(train_qrels, fused, "nDCG@10",
                                        missing="zero").mean["nDCG@10"]
    best = fastir.fuse(runs, method, norm=norm, **search.params)
    assert search.values[search.best] == fastir.evaluate(
        train_qrels, best, "nDCG@10", missing="zero").mean["nDCG@10"]
    assert f"| {search.param if search.param != 'weights' else 'a'}" in \
        search.to_markdown().replace("| 0 |", "| a |")


TRAINED_ONLY = ("posfuse", "segfuse", "bayesfuse", "mapfuse")


def setting(method, config, qrels, runs):
    """fastir.fuse's keywords of one of ranx's report configs (``str`` of the setting)."""
    value = eval(config, {"np": np})  # (ranx's str of a number or a tuple of numbers)
    if method == "probfuse":
        return fastir.train_fusion(qrels, runs, method, norm="min-max", n_segments=value)
    if method == "slidefuse":
        return fastir.train_fusion(qrels, runs, method, norm="min-max") | {"w": value}
    return {RANX_SEARCHES[method][0]: value}


def tied(run):
    """Whether a fused run has equal scores within a query (ranx orders those its own way,
    so their measures may differ)."""
    return any(len(set(docs.values())) < len(docs) for docs in run.to_dict().values())


@RANX_WARNINGS
@pytest.mark.one_engine
@pytest.mark.parametrize("method,options", [
    ("wsum", {"step": 0.25}), ("mixed", {"step": 0.5}), ("wmnz", {"step": 0.5}),
    ("w_bordafuse", {"step": 0.5}), ("rrf", {"min_k": 1, "max_k": 41, "step": 20}),
    ("gmnz", {"step": 0.25}), ("logn_isr", {"min_sigma": 0.25, "step": 0.25}),
    ("rbc", {"min_phi": 0.25, "step": 0.25}),
    ("slidefuse", {"max_w": 4}), ("probfuse", {"max_n_segments": 4}),
    ("posfuse", {}), ("segfuse", {}), ("bayesfuse", {}), ("mapfuse", {})])
def test_the_switchs_optimize_fusion_equals_ranxs(method, options):
    """ranx's grid, values and last-best rule; a setting whose fused run has ties is
    compared only when no setting does (ranx orders ties its own way)."""
    ranx = pytest.importorskip("ranx")
    qrels, runs = collection(5, depth=40)
    rng = np.random.default_rng(5)
    runs = [{q: {f"d{d}": float(rng.normal()) for d in range(40)} for q in r}
            for r in runs]  # (every doc in every run, no equal scores)
    ranx_runs = [ranx.Run(r) for r in runs]
    ours, report = shim.optimize_fusion(qrels, [shim.Run(r) for r in runs], method=method,
                                        metric="ndcg@10", return_optimization_report=True,
                                        **options) \
        if method not in TRAINED_ONLY else (shim.optimize_fusion(
            qrels, [shim.Run(r) for r in runs], method=method, **options), None)
    quiet = {"show_progress": False} if report is not None else {}  # (ranx's kwargs)
    theirs = ranx.optimize_fusion(ranx.Qrels(qrels), ranx_runs, method=method,
                                  metric="ndcg@10", **quiet,
                                  return_optimization_report=report is not None, **options)
    if report is None:
        for a, b in zip(*(next(iter(x.values())) for x in (ours, theirs))):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
        return
    theirs, want = theirs
    assert report.configs == want.configs
    any_tied = False
    for config, value, expected in zip(report.configs, report.results, want.results):
        params = setting(method, config, qrels, runs)
        if tied(fastir.fuse(runs, RANX_FUSIONS[method][0], norm="min-max", **params)):
            any_tied = True
        else:
            assert value == pytest.approx(expected, abs=1e-12), config
    if not any_tied:
        assert ours.keys() == theirs.keys()
        for key in ours:
            np.testing.assert_allclose(np.asarray(ours[key], dtype=float),
                                       np.asarray(theirs[key], dtype=float), atol=1e-12)


# -- writing, errors -----------------------------------------------------------------------
def test_write_run_round_trips(tmp_path):
    runs = distinct_runs(7)
    fused = fastir.fuse(runs, "rrf")
    path = tmp_path / "fused.run"
    fastir.write_run(fused, path, tag="rrf60")
    back = fastir.read_run(str(path))
    assert back.name == "rrf60" and back.to_dict() == fused.to_dict()
    out = io.StringIO()
    fastir.write_run({"q": {"a": 1.0, "b": 2.0}}, out, tag="t")
    assert out.getvalue() == "q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n"


@pytest.mark.parametrize("call,message", [
    (lambda r: fastir.fuse(r, "nope"), "method: unknown method 'nope'"),
    (lambda r: fastir.fuse(r, norm="l2"), "norm: unknown norm 'l2'"),
    (lambda r: fastir.fuse(r[:1]), "two or more runs, got 1"),
    (lambda r: fastir.fuse(r, "wsum", weights=[1]), "weights: give 2 finite numbers"),
    (lambda r: fastir.fuse(r, "sum", weights=[1, 1]), "take weights, not 'sum'"),
    (lambda r: fastir.fuse(r, depth=0), "depth: a positive whole number"),
    (lambda r: fastir.fuse([r[0], {}]), "runs: run 1 ('run') is empty"),
    (lambda r: fastir.fuse(r, "rbc"), "phi: 'rbc' needs phi"),
    (lambda r: fastir.fuse(r, "rbc", phi=1.5), "phi: RBC's phi is a number in"),
    (lambda r: fastir.fuse(r, "logn_isr", sigma=-1), "sigma: logn_isr's sigma is a number"),
    (lambda r: fastir.fuse(r, "gmnz", gamma=float("nan")), "gamma: CombGMNZ's exponent"),
    (lambda r: fastir.fuse(r, "slidefuse", probs=[[1], [1]], w=0.5), "w: slidefuse's w"),
    (lambda r: fastir.fuse(r, "posfuse", probs=[[1]]), "probs: give 2 arrays"),
    (lambda r: fastir.fuse(r, "probfuse", probs=[[], [1]]), "probs: 'probfuse' needs one"),
    (lambda r: fastir.fuse(r, "bayesfuse", log_odds=[[], [1]]),
     "log_odds: run 0 ranks query 'q' doc 'a' at 1, beyond its 0 trained positions"),
    (lambda r: fastir.fuse(r, "rbc", phi=0.5, sigma=0.1), "sigma: only 'logn_isr' take"),
    (lambda r: fastir.train_fusion({"x": {"a": 1}}, r, "posfuse"),
     "queries: training query 'q' has no judgments in the qrels"),
    (lambda r: fastir.train_fusion({"q": {"a": 1}}, r, "probfuse"), "n_segments: probfuse's"),
    (lambda r: fastir.train_fusion({"q": {"a": 1}}, r, "rrf"), "method: 'rrf' learns nothing"),
    (lambda r: fastir.optimize_fusion({}, r, "AP", "posfuse"), "'posfuse' has nothing to"),
    (lambda r: fastir.optimize_fusion({}, r, "AP", "rbc", values=[2]), "phi: RBC's phi"),
    (lambda r: fastir.optimize_fusion({}, r, "AP", step=0.3), "step: 1 / step must be"),
    (lambda r: fastir.optimize_fusion({}, r, "AP", "sum"), "searches the weights of"),
    (lambda r: fastir.optimize_fusion({}, r, "AP", grid=[[1]]), "grid: an (n_points, 2)"),
    (lambda r: fastir.write_run(r[0], io.StringIO(), tag="a b"), "tag: a run tag is one"),
])
def test_errors_name_the_argument(call, message):
    runs = [{"q": {"a": 1.0}}, {"q": {"b": 1.0}}]
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(runs)
    with pytest.raises(TypeError, match="runs: give a list of runs"):
        fastir.fuse("one.run")


# -- the command ---------------------------------------------------------------------------
def test_fuse_command(tmp_path, capsys):
    from fastir.cli.commands import COMMANDS

    main = COMMANDS["fuse"][0]
    runs = distinct_runs(9, n_runs=2)
    paths = []
    for i, run in enumerate(runs):
        paths.append(str(tmp_path / f"r{i}.run"))
        fastir.write_run(run, paths[-1], tag=f"r{i}")
    out = str(tmp_path / "fused.run")
    done = subprocess.run([*PROGRAM, "fuse", *paths, "-o", out],
                          capture_output=True, text=True)  # as a user types it
    assert done.returncode == 0, done.stderr
    assert fastir.read_run(out).to_dict() == fastir.fuse(runs, "rrf").to_dict()
    assert main(paths + ["--method", "wsum", "--weights", "0.3", "0.7", "--norm", "zmuv",
                         "-o", out]) == 0
    want = fastir.fuse(runs, "wsum", weights=[0.3, 0.7], norm="zmuv")
    assert fastir.read_run(out).to_dict() == want.to_dict()
    assert main([paths[0], str(tmp_path / "absent.run"), "-o", out]) == 1
    assert "absent.run" in capsys.readouterr().err
    qrels = str(tmp_path / "qrels.txt")
    with open(qrels, "w") as f:
        f.writelines(f"{q} 0 {d} 1\n" for q, docs in runs[0].items() for d in list(docs)[:2])
    assert main(paths + ["--method", "probfuse", "--qrels", qrels, "--n-segments", "2",
                         "-o", out]) == 0
    learnt = fastir.train_fusion(qrels, runs, "probfuse", n_segments=2)
    assert fastir.read_run(out).to_dict() == fastir.fuse(runs, "probfuse", **learnt).to_dict()
    assert main(paths + ["--method", "rbc", "--phi", "0.5", "-o", out]) == 0
    assert fastir.read_run(out).to_dict() == fastir.fuse(runs, "rbc", phi=0.5).to_dict()
    assert main(paths + ["--method", "rbc"]) == 1
    assert "phi: 'rbc' needs phi" in capsys.readouterr().err
    assert main(paths + ["--method", "sum", "--weights", "1", "2"]) == 1
    assert "take weights, not 'sum'" in capsys.readouterr().err
    for bad in (["--bogus"], paths + ["--method", "nope"]):
        with pytest.raises(SystemExit) as exit_:
            main(bad)
        assert exit_.value.code == 2


# -- at the limits of a double, and of the options ---------------------------------------
FA, FB = {"q": {"d1": 3.0, "d2": 2.0}}, {"q": {"d2": 0.9, "d3": 0.1}}


@pytest.mark.one_engine
@pytest.mark.parametrize("k", [-1, -0.5, float("nan"), float("inf"), -float("inf"), "60", None,
                               True])
def test_rrf_refuses_a_constant_that_is_no_finite_number_of_0_or_more(k):
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, FB], "rrf", k=k)
    useful(info.value, "k: ")
    assert fastir.fuse([FA, FB], "rrf", k=0).to_dict() == {"q": {"d2": 1.5, "d1": 1.0,
                                                                 "d3": 0.5}}


@pytest.mark.one_engine
@pytest.mark.parametrize("norm", ["min-max", "zmuv", "sum"])
@pytest.mark.parametrize("method", ["sum", "wsum", "mnz", "max", "med", "anz"])
def test_normalising_huge_scores_does_not_overflow(method, norm):
    """The normalisations are unchanged by a power-of-two scale: 1e308-sized scores give what
    the same scores scaled down give (ranx gives NaN for min-max of -1e308 and 1e308)."""
    huge = {"q": {"d1": 1e308, "d2": -1e308, "d4": 1e307}, "r": {"d1": -1.7e308, "d2": 0.0}}
    small = {q: {d: s * 2.0**-1000 for d, s in docs.items()} for q, docs in huge.items()}
    other = {"q": {"d2": 0.9, "d3": 0.1}, "r": {"d5": 1.0}}
    got = fastir.fuse([huge, other], method, norm=norm).to_dict()
    assert got == fastir.fuse([small, other], method, norm=norm).to_dict()
    assert all(np.isfinite(s) for docs in got.values() for s in docs.values())
    if norm == "min-max":
        assert got["q"]["d1"] >= 1.0 and got["r"]["d1"] == 0.0


@pytest.mark.one_engine
@pytest.mark.parametrize("method, weights", [("sum", None), ("mnz", None), ("wsum", None),
                                             ("wsum", [1e308, 1e308])])
def test_a_fused_score_beyond_a_double_is_refused(method, weights):
    huge = {"q": {"d1": 1e308, "d2": 1.0}}
    runs = [huge, huge] if weights is None else [huge, {"q": {"d1": 1e308}}]
    with pytest.raises(ValueError) as info:
        fastir.fuse(runs, method, weights=weights)
    useful(info.value, "beyond a double")
    assert "'d1'" in str(info.value) and "norm='min-max'" in str(info.value)
    got = fastir.fuse(runs, method, weights=weights, norm="min-max").to_dict()
    assert got["q"]["d1"] > got["q"]["d2"]


@pytest.mark.one_engine
def test_max_normalising_huge_negative_scores_is_refused():
    with pytest.raises(ValueError) as info:  # ranx's max norm divides these by its 1e-9 floor
        fastir.fuse([{"q": {"d1": -1e300, "d2": -2e300}}, FB], "sum", norm="max")
    useful(info.value, "norm: 'max'")


@pytest.mark.one_engine
def test_fusion_refuses_scores_that_are_not_finite():
    run = fastir.Run.from_dict({"q": {"d1": 1.0, "d2": 2.0}})
    bad = fastir.Run(run.query_ids, run.starts, run.stops, run.doc_ids,
                     np.array([np.nan, 1.0]), name="bad")
    for call in (lambda: fastir.fuse([FA, bad], "sum"),
                 lambda: fastir.optimize_fusion({"q": {"d1": 1}}, [FA, bad], "AP")):
        with pytest.raises(ValueError) as info:
            call()
        useful(info.value, "runs: run 1 ('bad')")
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, {"q": {"d1": float("inf")}}])
    useful(info.value, "not finite")


@pytest.mark.one_engine
@pytest.mark.parametrize("weights", [[float("nan"), 1], [1], [1, 2, 3], "ab", [[1, 2]],
                                     [True, 1], [1, None]])
def test_weights_must_be_one_finite_number_per_run(weights):
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, FB], "wsum", weights=weights)
    useful(info.value, "weights: give 2 finite numbers")


@pytest.mark.one_engine
def test_negative_weights_subtract_a_run():
    got = fastir.fuse([FA, FB], "wsum", weights=[-1, 1]).to_dict()
    assert got == {"q": {"d3": 0.1, "d2": -1.1, "d1": -3.0}}


@pytest.mark.one_engine
@pytest.mark.parametrize("step", [float("nan"), 0, -0.1, 2, 0.3, 5e-324, "0.1", True, None])
def test_optimize_fusion_refuses_a_step_that_is_no_grid(step):
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA, FB], "AP", step=step)
    useful(info.value, "step: 1 / step must be a whole number")


@pytest.mark.one_engine
@pytest.mark.parametrize("step, runs", [(1e-9, 2), (1e-300, 2), (0.01, 6)])
def test_optimize_fusion_refuses_a_grid_too_big_up_front(step, runs):
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA] * (runs - 1) + [FB], "AP", step=step)
    useful(info.value, f"step: a step of {step!r} over {runs} runs")
    assert "give grid=" in str(info.value) and time.perf_counter() - start < 10


@pytest.mark.one_engine
def test_optimize_fusion_refuses_weights_beyond_a_double():
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA, FB], "AP", norm=None,
                               grid=[[0.5, 0.5], [1e308, 1e308]])
    useful(info.value, "grid: the weights [1e+308, 1e+308] (point 1)")


FUSE_ODD = st.sampled_from([None, -1, 0, 1, 0.5, 2.5, float("nan"), float("inf"), -1e308, 1e308,
                            2**70, "x", "", True, [], {}, (1,), [1.0, 2.0], [1e308, -1e308],
                            [float("nan"), 1.0], np.int64(3), "rrf", "wsum", "mnz", "min-max",
                            "zmuv", "max", "borda", "sum", [[0.5, 0.5]], ["q1"]])


HUGE_RUNS = [{"q1": {"a": 1e308, "b": -1e308, "c": 0.0}, "q2": {"a": -1e300}},
             {"q1": {"a": 0.5, "d": 0.25}, "q2": {"a": 1.0, "b": 1e-300}}]


@pytest.mark.one_engine
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")
@pytest.mark.parametrize("method, norm, scale, k", [
    ("rrf", None, 1.0, 0), ("rrf", None, 1.0, 0.5), ("rrf", None, 1.0, 1e6),
    ("sum", "min-max", 1e300, 60), ("mnz", "min-max", 1e300, 60), ("wsum", "zmuv", 1e150, 60),
    ("sum", "sum", 1e300, 60), ("max", "max", 1e300, 60)])
def test_fusion_at_the_edges_equals_ranx_where_ranx_is_sane(method, norm, scale, k):
    """Where ranx does not overflow (scores to 1e300: their differences fit a double), the
    scores fastir scales down before normalising give ranx's values."""
    ranx = pytest.importorskip("ranx")
    runs = [{q: {d: s * scale for d, s in docs.items()} for q, docs in run.items()}
            for run in (SMALL_RUNS["x"], SMALL_RUNS["y"],
                        {q: {"a": 3.0, "z": 1.5 + len(q)} for q in SMALL_QRELS})]
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    params = {"k": k} if method == "rrf" else {"weights": weights} if weights else {}
    want = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method,
                     params=params).to_dict()
    got = fastir.fuse(runs, method, norm=norm, k=k, weights=weights).to_dict()
    assert sorted(got) == sorted(want)
    for q in got:
        assert got[q] == pytest.approx(dict(want[q]), rel=1e-12, abs=1e-300)




def _plain(value):
    """An option's value as a plain caller spells it (a numpy scalar as a Python number)."""
    return value.item() if isinstance(value, np.generic) else value


#: The normalisations whose naive form overflows on huge scores (fastir scales them down
#: first: test_normalising_huge_scores_does_not_overflow checks those values).
SCALE_FREE = ("min-max", "min-max-inverted", "zmuv", "sum")
#: Plain values of fuse's and optimize_fusion's options, drawn beside the odd ones.
PLAIN_FUSE = {"method": ["rrf", "sum", "mnz", "wsum", "max", "anz", "med", "borda"],
              "weights": [[1.0, 2.0], [0.5, 0.5], [-1.0, 1.0]],
              "norm": [None, "min-max", "zmuv", "sum", "max", "rank"], "k": [0, 1, 60, 0.5],
              "depth": [1, 2, 3], "name": ["fused"], "step": [0.5],
              "grid": [[[0.5, 0.5], [1.0, 0.0]]], "test_queries": [["q1"], ["q0", "q2"]]}


@pytest.mark.one_engine
@settings(max_examples=150, deadline=None)
@given(odd_options(["method", "weights", "norm", "k", "depth", "name"], PLAIN_FUSE, FUSE_ODD),
       st.booleans())
def test_fuse_takes_any_options(options, huge):
    """Odd options give an error naming one, or the fusion the definitions give
    (naive_fuse) under the options spelled plainly (but huge scores under the
    normalisations whose naive form overflows: finite, checked by the test above)."""
    runs = HUGE_RUNS if huge else list(SMALL_RUNS.values())
    got = odd_call(lambda **kw: fastir.fuse(runs, **kw), options)
    if got is None:
        return
    got = got.to_dict()
    assert all(np.isfinite(s) for docs in got.values() for s in docs.values())
    plain = {name: _plain(value) for name, value in options.items()}
    method, norm = plain.get("method", "rrf"), plain.get("norm")
    if huge and norm in SCALE_FREE:
        return
    params = {"weights": plain.get("weights"), "k": plain.get("k", 60)}
    depth = plain.get("depth")  # (a whole float too: 1e308 docs)
    want = naive_fuse(runs, method, params, norm, None if depth is None else int(depth))
    assert sorted(got) == sorted(want)
    for q, docs in want.items():
        assert got[q] == pytest.approx(docs, rel=1e-12, abs=1e-12), q


@pytest.mark.one_engine
@settings(max_examples=80, deadline=None)
@given(odd_options(["method", "norm", "step", "grid", "k", "depth", "test_queries"],
                   PLAIN_FUSE, FUSE_ODD), st.booleans())
def test_optimize_fusion_takes_any_options(options, huge):
    """Odd options give an error naming one, or a search whose values (first, best, last)
    are the measure of the run fused at their grid points."""
    runs = HUGE_RUNS if huge else list(SMALL_RUNS.values())
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"b": 1}} if huge else SMALL_QRELS
    got = odd_call(lambda **kw: fastir.optimize_fusion(qrels, runs, "AP", **kw), options)
    if got is None:
        return
    assert np.isfinite(got.values).all()
    assert np.isfinite(np.asarray(got.grid, dtype=np.float64)).all()
    plain = {name: _plain(value) for name, value in options.items()}
    fixed = {name: plain[name] for name in ("norm", "k", "depth") if name in plain
             and name != got.param}
    fixed.setdefault("norm", "min-max")  # (optimize_fusion's default)
    test = plain.get("test_queries") or []
    train = {q: judged for q, judged in qrels.items() if q not in test}
    points = sorted({0, got.best, len(got.values) - 1})  # (each point: a fusion and an evaluation)
    grid = np.asarray(got.grid, dtype=np.float64)
    for point, value in zip(grid[points], np.asarray(got.values)[points]):
        params = {got.param: point.tolist() if got.param == "weights" else float(point)}
        fused = fastir.fuse(runs, plain.get("method", "wsum"), **{**fixed, **params})
        assert value == fastir.evaluate(train, fused, "AP", missing="zero").mean["AP"]
