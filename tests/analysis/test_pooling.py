"""fastir.pool against trectools' TrecPoolMaker (the oracle: its depth, RRF and RBP pools, its
check_coverage and its pool file) on drawn runs without ties, and against a naive
reference of each strategy with ties; the statistics and the command."""

import io
import subprocess

import numpy as np
import pytest
from cli_calls import PROGRAM

import fastir

pytestmark = [pytest.mark.one_engine,  # (trectools' pandas calls warn: its code, not ours)
              pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]


def drawn(seed, n_runs=4, n_queries=6):
    """Runs with distinct scores per query (trectools breaks ties its own way), numeric
    query ids (its RRF and RBP pools read them as integers), overlapping docs."""
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in rng.choice(12, size=n_queries - int(rng.integers(0, 2)), replace=False):
            docs = rng.choice(40, size=int(rng.integers(3, 25)), replace=False)
            run[str(q + 1)] = {f"doc{d}": float(s) for d, s in
                               zip(docs, rng.permutation(len(docs)) + rng.random())}
        runs.append(run)
    return runs


def written(runs, tmp_path):
    paths = []
    for i, run in enumerate(runs):
        paths.append(str(tmp_path / f"r{i}.run"))
        fastir.write_run(run, paths[-1], tag=f"r{i}")
    return paths


def rank_values(runs, value):
    """{query: {doc: [value(rank) of each run that ranks it]}}."""
    out = {}
    for run in runs:
        for q, docs in run.items():
            order = sorted(docs, key=lambda d: (-docs[d], d))
            for rank, d in enumerate(order, 1):
                out.setdefault(q, {}).setdefault(d, []).append(value(rank))
    return out


def take_reference(runs, n, value, merge):
    """Per query the docs of the n highest merged values, and the docs tied at the cut
    (the pool may hold any of them)."""
    out = {}
    for q, docs in rank_values(runs, value).items():
        merged = {d: merge(v) for d, v in docs.items()}
        ordered = sorted(merged.values(), reverse=True)
        cut = ordered[min(n, len(ordered)) - 1]
        out[q] = ({d for d, v in merged.items() if v > cut},
                  {d for d, v in merged.items() if v == cut})
    return out


STRATEGIES = [("depth", {}), ("rrf", {"k": 60}), ("rrf", {"k": 5}), ("rbp", {"p": 0.8}),
              ("rbp", {"p": 0.5, "merge": "max"})]


@pytest.mark.parametrize("strategy,options", STRATEGIES)
@pytest.mark.parametrize("depth", [1, 5, 20])
def test_pool_equals_trectools(strategy, options, depth, tmp_path):
    trectools = pytest.importorskip("trectools")
    for seed in range(3):
        runs = drawn(seed * 7 + depth)
        paths = written(runs, tmp_path)
        theirs = trectools.TrecPoolMaker().make_pool(
            [trectools.TrecRun(p) for p in paths], strategy={"depth": "topX"}.get(
                strategy, strategy), topX=depth, rbp_strategy=options.get("merge", "sum"),
            rbp_p=options.get("p", 0.8), rrf_den=options.get("k", 60))
        ours = fastir.pool(paths, depth, strategy, **options)
        want = {str(q): set(docs) for q, docs in theirs.pool.items()}
        got = {q: set(docs) for q, docs in ours.to_dict().items()}
        assert sorted(got) == sorted(want)
        if strategy == "depth":
            assert got == want
            continue
        value = (lambda r: 1 / (options["k"] + r)) if strategy == "rrf" else \
            (lambda r: (1 - options["p"]) * options["p"] ** (r - 1))
        merge = max if options.get("merge") == "max" else sum
        for q, (above, at_cut) in take_reference(runs, depth, value, merge).items():
            assert above <= got[q] <= above | at_cut and len(got[q]) == len(want[q]), q
            if len(above) + len(at_cut) <= depth or len(at_cut) == 1:
                assert got[q] == want[q], q  # (no tie at the cut: trectools decides alike)


@pytest.mark.parametrize("depth,judged_at", [(3, None), (10, 5), (10, 30)])
def test_judged_equals_trectools_check_coverage(depth, judged_at, tmp_path):
    trectools = pytest.importorskip("trectools")
    runs = drawn(depth + (judged_at or 0))
    paths = written(runs, tmp_path)
    trec_runs = [trectools.TrecRun(p) for p in paths]
    theirs = trectools.TrecPoolMaker().make_pool(trec_runs, strategy="topX", topX=depth)
    ours = fastir.pool(paths, depth, judged_at=judged_at)
    for run, stats in zip(trec_runs, ours.stats):
        want = theirs.check_coverage(run, topX=judged_at or depth)
        assert stats.judged == pytest.approx(want, abs=1e-12)


def test_pool_file_is_trectools_relevation_file(tmp_path, capsys):
    trectools = pytest.importorskip("trectools")
    paths = written(drawn(5), tmp_path)
    theirs = trectools.TrecPoolMaker().make_pool([trectools.TrecRun(p) for p in paths],
                                                 strategy="topX", topX=7)
    theirs.export_document_list(str(tmp_path / "theirs.txt"))
    theirs.export_document_list(str(tmp_path / "theirs.docs"), with_format="filelist")
    capsys.readouterr()  # (trectools prints what it wrote)
    ours = fastir.pool(paths, 7)
    ours.write(tmp_path / "ours.txt", tag="trectools")
    ours.write(tmp_path / "ours.docs", format="docs")
    assert (tmp_path / "ours.txt").read_bytes() == (tmp_path / "theirs.txt").read_bytes()
    assert (tmp_path / "ours.docs").read_bytes() == (tmp_path / "theirs.docs").read_bytes()


def naive_stats(runs, depth, judged_at):
    """Per run (contributed, unique, coverage, judged) of a depth pool, by definition."""
    tops = [{q: set(sorted(docs, key=lambda d: (-docs[d], d), reverse=False)[:depth])
             for q, docs in run.items()} for run in runs]
    pooled = {}
    for top in tops:
        for q, docs in top.items():
            pooled.setdefault(q, set()).update(docs)
    n_docs = sum(len(d) for d in pooled.values())
    out = []
    for i, run in enumerate(runs):
        mine = {(q, d) for q, docs in tops[i].items() for d in docs}
        others = {(q, d) for j, top in enumerate(tops) if j != i for q, docs in top.items()
                  for d in docs}
        retrieved = sum(d in pooled.get(q, ()) for q, docs in run.items() for d in docs)
        judged = [sum(d in pooled[q] for d in sorted(run.get(q, {}), key=lambda d: (
            -run[q][d], d))[:judged_at]) for q in pooled]
        out.append((len(mine), len(mine - others), retrieved / n_docs,
                    sum(judged) / len(judged)))
    return out


def test_stats_equal_their_definitions():
    runs = drawn(9, n_runs=3)
    ours = fastir.pool({f"r{i}": r for i, r in enumerate(runs)}, 4, judged_at=6)
    for stats, want in zip(ours.stats, naive_stats(runs, 4, 6)):
        assert (stats.contributed, stats.unique) == want[:2]
        assert stats.coverage == pytest.approx(want[2]) and stats.judged == pytest.approx(
            want[3])
    assert [s.name for s in ours.stats] == ["r0", "r1", "r2"]
    assert "| r0 |" in ours.to_markdown() and "judged@6" in ours.to_markdown()
    assert ours.n_docs == sum(len(d) for d in ours.to_dict().values())


def test_ties_go_to_fastirs_order():
    a = {"q": {"d1": 1.0, "d2": 1.0, "d3": 0.5}}
    b = {"q": {"d9": 2.0}}
    assert fastir.pool([a], 1).to_dict() == {"q": ["d2"]}  # (equal scores: greater id first)
    assert fastir.pool([a, b], 1, "rrf").to_dict() == {"q": ["d9"]}  # (d2 ties d9: d9)
    out = io.StringIO()
    fastir.pool([a, b], 1).write(out, "qrels")
    assert out.getvalue() == "q 0 d2 -1\nq 0 d9 -1\n"


@pytest.mark.parametrize("call,message", [
    (lambda r: fastir.pool(r, 0), "depth: a positive whole number"),
    (lambda r: fastir.pool(r, 2.5), "depth: a positive whole number"),
    (lambda r: fastir.pool(r, 5, "nope"), "strategy: unknown strategy 'nope'"),
    (lambda r: fastir.pool(r, 5, "rbp", p=1.5), "p: RBP's persistence is a number in"),
    (lambda r: fastir.pool(r, 5, "rbp", merge="avg"), "merge: 'sum' or 'max'"),
    (lambda r: fastir.pool(r, 5, "rrf", k=-1), "k: RRF's constant"),
    (lambda r: fastir.pool([], 5), "runs: a pool needs one or more runs, got 0"),
    (lambda r: fastir.pool([{"q": {"d": float("nan")}}], 5), "score nan is not finite"),
    (lambda r: fastir.pool(r, 5).write(io.StringIO(), "xml"), "format: one of trec"),
])
def test_bad_input_is_one_line_naming_it(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        call([{"q": {"d": 1.0}}])


def test_pool_command(tmp_path, capsys):
    from fastir.cli.commands import COMMANDS

    main = COMMANDS["pool"][0]
    runs = drawn(3)
    paths = written(runs, tmp_path)
    out = tmp_path / "pool.txt"
    done = subprocess.run([*PROGRAM, "pool", *paths, "--depth", "5",
                           "-o", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    want = io.StringIO()
    fastir.pool(paths, 5).write(want)
    assert out.read_text() == want.getvalue()
    assert main(paths + ["--depth", "3", "--strategy", "rbp", "--p", "0.7", "--merge", "max",
                         "--format", "qrels", "-o", str(out), "--stats"]) == 0
    printed = capsys.readouterr().out
    pool = fastir.pool({f"r{i}.run": p for i, p in enumerate(paths)}, 3, "rbp", p=0.7,
                       merge="max")
    assert pool.to_markdown() in printed
    want = io.StringIO()
    pool.write(want, "qrels")
    assert out.read_text() == want.getvalue()
    assert main(paths + ["--depth", "0"]) == 1
    assert "depth: a positive whole number" in capsys.readouterr().err
    assert main(paths + ["--stats"]) == 1
    assert "--stats" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(paths + ["--strategy", "nope"])
    assert exit_.value.code == 2
