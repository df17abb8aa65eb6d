"""fastir.fuse against a naive reference written from the definitions
(fastir.analysis.fusion's module doc) and against ranx.fuse; optimize_fusion against
evaluating each fused run."""

import io
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir.analysis.fusion import methods, search

METHODS = ["rrf", "wrrf", "sum", "mnz", "max", "min", "med", "anz", "wsum", "borda", "isr",
           "log_isr"]
NORMS = [None, "min-max", "zmuv", "sum", "max", "rank", "borda"]


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
            if norm is None:
                normed[q] = dict(docs)
            elif norm == "min-max":
                normed[q] = {d: (docs[d] - min(s)) / max(max(s) - min(s), 1e-9) for d in docs}
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


def naive_fuse(runs, method, weights=None, norm=None, k=60, depth=None):
    """{query: {doc: fused score}} from the definitions, in plain Python."""
    if depth is not None:
        runs = [{q: {d: docs[d] for d in ranked(docs)[:depth]} for q, docs in r.items()}
                for r in runs]
    weights = weights or [1.0] * len(runs)
    by_rank = method in ("rrf", "wrrf", "isr", "log_isr", "borda")
    normed = runs if by_rank else naive_norm(runs, norm)
    fused = {}
    for q in sorted({q for r in runs for q in r}):
        cands = {d for r in runs for d in r.get(q, {})}
        fused[q] = {}
        for d in cands:
            got = [(i, r[q][d]) for i, r in enumerate(normed) if d in r.get(q, {})]
            values = [v for _, v in got]
            ranks = [ranked(runs[i][q]).index(d) + 1 for i, _ in got] if by_rank else []
            total = 0.0
            if method in ("sum", "mnz", "anz"):
                for v in values:
                    total += v
            if method == "sum":
                score = total
            elif method == "mnz":
                score = total * len(values)
            elif method == "anz":
                score = total / len(values)
            elif method == "max":
                score = max(values)
            elif method == "min":
                score = min(values)
            elif method == "med":
                s = sorted(values)
                score = (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2
            elif method == "wsum":
                for i, r in enumerate(normed):
                    total += weights[i] * r.get(q, {}).get(d, 0.0)
                score = total
            elif method in ("rrf", "wrrf"):
                for (i, _), rank in zip(got, ranks):
                    total += weights[i] * (1 / (k + rank))
                score = total
            elif method in ("isr", "log_isr"):
                for rank in ranks:
                    total += 1 / (rank * rank)
                score = total * (len(ranks) if method == "isr" else math.log(len(ranks)))
            elif method == "borda":
                n = len(cands)
                for r in runs:
                    docs = r.get(q, {})
                    total += n - ranked(docs).index(d) if d in docs else \
                        (n - len(docs) + 1) / 2
                score = total
            fused[q][d] = score
    return fused


# -- data ----------------------------------------------------------------------------------
DOCS = st.sampled_from(["d1", "d10", "d2", "d3", "e", "d4", "d5", "x"])
SCORES = st.sampled_from([-2.0, -0.5, 0.0, 0.25, 1.0, 1.5, 3.0, 7.0])
RUN = st.dictionaries(st.sampled_from(["q1", "q2", "q10"]),
                      st.dictionaries(DOCS, SCORES, min_size=1, max_size=6),
                      min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(st.lists(RUN, min_size=2, max_size=4), st.sampled_from(METHODS),
       st.sampled_from(NORMS), st.one_of(st.none(), st.integers(1, 4)),
       st.sampled_from([0, 1, 60]), st.data())
def test_fuse_equals_the_naive_reference(runs, method, norm, depth, k, data):
    weights = None
    if method in ("wsum", "wrrf"):
        weights = data.draw(st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5]),
                                     min_size=len(runs), max_size=len(runs)))
    if k == 0 and method in ("rrf", "wrrf"):
        k = 1
    got = fastir.fuse(runs, method, weights=weights, norm=norm, k=k, depth=depth).to_dict()
    assert got == naive_fuse(runs, method, weights, norm, k, depth)


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
RANX = {"rrf": "rrf", "sum": "sum", "mnz": "mnz", "max": "max", "min": "min", "med": "med",
        "anz": "anz", "wsum": "wsum", "borda": "bordafuse", "isr": "isr",
        "log_isr": "log_isr"}


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


@RANX_WARNINGS
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("method", sorted(RANX))
def test_fuse_equals_ranx(method, norm):
    ranx = pytest.importorskip("ranx")
    runs = distinct_runs(hash((method, str(norm))) % 1000)
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    params = {"weights": weights} if weights else {}
    if norm == "borda" and method in methods.BY_RANK:
        pytest.skip("ranx ranks borda-normalised runs in set order; fastir's rank methods "
                    "read the runs' own ranks")
    want = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=RANX[method],
                     params=params).to_dict()
    got = fastir.fuse(runs, method, weights=weights, norm=norm).to_dict()
    assert sorted(got) == sorted(want)
    for q in got:
        assert sorted(got[q]) == sorted(want[q])
        for d, v in got[q].items():
            assert v == pytest.approx(want[q][d], rel=1e-9, abs=1e-9)
        ours = [d for d, _ in sorted(got[q].items(), key=lambda x: -x[1])]
        theirs = [d for d, _ in sorted(want[q].items(), key=lambda x: -x[1])]
        scores = sorted(got[q].values(), reverse=True)
        if len(set(scores)) == len(scores):  # (ties: ranx's order is arbitrary)
            assert ours == theirs


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
def test_optimize_fusion_finds_ranxs_best():
    ranx = pytest.importorskip("ranx")
    qrels, runs = collection(3)
    search = fastir.optimize_fusion(qrels, runs, "nDCG@10", step=0.1)
    best = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs],
                                norm="min-max", method="wsum", metric="ndcg@10",
                                show_progress=False)
    want = fastir.evaluate(qrels, fastir.fuse(runs, "wsum", weights=best["weights"],
                                              norm="min-max"), "nDCG@10").mean["nDCG@10"]
    assert search.values[search.best] >= want


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
    done = subprocess.run([sys.executable, "-m", "fastir", "fuse", *paths, "-o", out],
                          capture_output=True, text=True)  # as a user types it
    assert done.returncode == 0, done.stderr
    assert fastir.read_run(out).to_dict() == fastir.fuse(runs, "rrf").to_dict()
    assert main(paths + ["--method", "wsum", "--weights", "0.3", "0.7", "--norm", "zmuv",
                         "-o", out]) == 0
    want = fastir.fuse(runs, "wsum", weights=[0.3, 0.7], norm="zmuv")
    assert fastir.read_run(out).to_dict() == want.to_dict()
    assert main([paths[0], str(tmp_path / "absent.run"), "-o", out]) == 1
    assert "absent.run" in capsys.readouterr().err
    assert main(paths + ["--method", "sum", "--weights", "1", "2"]) == 1
    assert "take weights, not 'sum'" in capsys.readouterr().err
    for bad in (["--bogus"], paths + ["--method", "nope"]):
        with pytest.raises(SystemExit) as exit_:
            main(bad)
        assert exit_.value.code == 2
