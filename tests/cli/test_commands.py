"""The command line for people, run as a user runs it (a subprocess): every format, values
equal to the library's, exit statuses, pictures, and progress only on a terminal."""

import csv
import io
import json
import math
import os
import pty
import shutil
import subprocess

import numpy as np
import pytest
from cli_calls import PROGRAM, cli

import fastir

pytestmark = pytest.mark.one_engine

INPUTS = os.path.join(os.path.dirname(__file__), os.pardir, "data", "trec_eval", "inputs")
QRELS = os.path.join(INPUTS, "qrels.test")
RUN = os.path.join(INPUTS, "results.test")


def fastir_cli(*args, check=True):
    done = cli(*args, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def second_run(tmp_path_factory):
    """results.test with its scores reversed within each query: a worse run."""
    path = tmp_path_factory.mktemp("runs") / "reversed.run"
    with open(RUN) as f, open(path, "w") as out:
        for line in f:
            q, it, doc, rank, score, tag = line.split()
            out.write(f"{q} {it} {doc} {rank} {-float(score)} reversed\n")
    return str(path)


def test_every_format_holds_the_librarys_values(second_run):
    measures = ["nDCG@10", "AP", "P@5", "NumRet"]
    want = {name: fastir.evaluate(QRELS, path, measures).mean
            for name, path in (("results.test", RUN), ("reversed.run", second_run))}
    flags = [a for m in measures for a in ("-m", m)]
    rows = json.loads(fastir_cli("eval", QRELS, RUN, second_run, *flags,
                                 "--format", "json").stdout)
    assert [r["run"] for r in rows] == ["results.test", "reversed.run"]
    for row in rows:
        assert {k: row[k] for k in measures} == want[row["run"]]
    lines = fastir_cli("eval", QRELS, RUN, second_run, *flags, "--format", "jsonl").stdout
    assert [json.loads(line) for line in lines.splitlines()] == rows
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        table = list(csv.reader(io.StringIO(fastir_cli("eval", QRELS, RUN, second_run, *flags,
                                                       "--format", fmt).stdout),
                               delimiter=delimiter))
        assert table[0] == ["run"] + measures and len(table) == 3
        assert float(table[1][1]) == pytest.approx(want["results.test"]["nDCG@10"], abs=5e-5)
        assert table[1][4] == "1500"  # counts print as integers
    text = fastir_cli("eval", QRELS, RUN, second_run, *flags).stdout.splitlines()
    assert text[0].split() == ["run"] + measures and len(text) == 3
    markdown = fastir_cli("eval", QRELS, RUN, *flags, "--format", "markdown").stdout
    assert markdown.startswith("| run | nDCG@10 |") and "|---|" in markdown
    latex = fastir_cli("eval", QRELS, RUN, second_run, *flags, "--format", "latex").stdout
    assert r"\toprule" in latex and r"\textbf{" in latex


def test_per_query_rows_and_names(second_run):
    rows = json.loads(fastir_cli("eval", QRELS, RUN, second_run, "-q", "-m", "P@5", "--name",
                                 "bm25", "--name", "worse", "--format", "json").stdout)
    per_query = fastir.evaluate(QRELS, RUN, ["P@5"]).to_dict()
    bm25 = {r["query"]: r["P@5"] for r in rows if r["run"] == "bm25"}
    assert bm25 == {**{q: v["P@5"] for q, v in per_query.items()},
                    "all": fastir.evaluate(QRELS, RUN, ["P@5"]).mean["P@5"]}


def test_standard_input_gzip_and_globs(tmp_path):
    import gzip

    with open(RUN, "rb") as f:
        content = f.read()
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(content))
    want = fastir.evaluate(QRELS, RUN, ["AP"]).mean["AP"]
    out = fastir_cli("eval", QRELS, str(gz), "-m", "AP", "--format", "json").stdout
    assert json.loads(out)[0]["AP"] == want
    piped = cli("eval", QRELS, "-", "-m", "AP", "--format", "json", stdin=content)
    assert json.loads(piped.stdout)[0] == {"run": "stdin", "AP": want}
    (tmp_path / "b.run").write_bytes(content)
    (tmp_path / "a.run").write_bytes(content)
    rows = json.loads(fastir_cli("eval", QRELS, str(tmp_path / "*.run"), "--format",
                                 "json").stdout)
    assert [r["run"] for r in rows] == ["a.run", "b.run"]


def test_compare_prints_the_significance_table(second_run):
    out = fastir_cli("eval", QRELS, RUN, second_run, "-m", "AP", "--compare", "--baseline",
                     "results.test", "--resamples", "999", "--format", "json").stdout
    report = json.loads(out)
    assert report["baseline"] == "results.test" and report["pairs"][0]["system"] == \
        "reversed.run"
    c = fastir.compare(QRELS, {"results.test": RUN, "reversed.run": second_run}, ["AP"],
                       baseline="results.test", n_resamples=999)
    assert report["pairs"][0]["p_value"] == c.p_value[0, 0]
    table = fastir_cli("eval", QRELS, RUN, second_run, "--compare").stdout
    assert "paired randomization test" in table


def test_exit_statuses_and_messages(tmp_path):
    done = fastir_cli("eval", QRELS, str(tmp_path / "missing.run"), check=False)
    assert done.returncode == 1 and "missing.run: cannot read" in done.stderr
    done = fastir_cli("eval", QRELS, RUN, "-m", "nDCG@0", check=False)
    assert done.returncode == 1 and "nDCG: cutoff must be an integer from 1" in done.stderr
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 0.5 tag\n1 Q0 d2 1\n")
    done = fastir_cli("eval", QRELS, str(bad), check=False)
    assert done.returncode == 1 and "bad.run:2:" in done.stderr
    assert fastir_cli("eval", QRELS, check=False).returncode == 2
    assert fastir_cli("eval", QRELS, RUN, "--format", "yaml", check=False).returncode == 2
    assert fastir_cli(check=False).returncode == 2
    assert fastir_cli("nonsense", check=False).returncode == 2
    for command in ("eval", "stats", "agree", "judges", "plot"):
        help_text = fastir_cli(command, "-h").stdout
        assert "example:\n  fastir " + command in help_text
    assert "commands:" in fastir_cli("--help").stdout


def test_stats_and_agree(tmp_path):
    out = json.loads(fastir_cli("stats", QRELS, RUN, "--format", "json").stdout)
    assert out[QRELS]["queries"] == 3 and out[QRELS]["judgments"] == 3681
    assert out[QRELS]["judgments per label"] == {"0": 3120, "1": 561}
    assert out[RUN]["depth"] == {"min": 500, "median": 500.0, "max": 500}
    assert out[RUN]["unjudged share of the top 10"] == 0.0
    other = tmp_path / "other.qrels"
    with open(QRELS) as f:
        lines = f.read().splitlines()
    other.write_text("\n".join(line[:-1] + ("0" if i % 7 == 0 else line[-1])
                               for i, line in enumerate(lines)) + "\n")
    text = fastir_cli("agree", QRELS, str(other)).stdout
    agree = fastir.agreement(QRELS, str(other))
    assert f"| {agree.pairs[0]['kappa']:.3f} |" in text
    runs = []
    for k in range(3):  # (three systems: the test run with its scores bent)
        runs.append(tmp_path / f"sys{k}.run")
        with open(RUN) as f:
            runs[-1].write_text("".join(
                " ".join(p[:4] + [str(float(p[4]) * ((i * (k + 3)) % 5)), p[5]]) + "\n"
                for i, p in enumerate(line.split() for line in f)))
    picture = tmp_path / "means.png"  # (named without its extension: matplotlib adds it)
    done = fastir_cli("agree", QRELS, str(other), "--runs", *map(str, runs), "-m", "P@10",
                      "--plot", str(tmp_path / "means"))
    pair = fastir.agreement(QRELS, str(other), runs={f"sys{k}.run": str(p) for k, p in
                                                      enumerate(runs)}, measure="P@10").tau[0]
    assert "tau-AP" in done.stdout and f"| {pair['tau_ap']:.3f} |" in done.stdout
    assert picture.stat().st_size > 0 and f"wrote {picture}\n" in done.stderr
    refused = fastir_cli("agree", QRELS, str(other), "--plot", str(picture), check=False)
    assert refused.returncode == 1 and "--runs" in refused.stderr
    real = tmp_path / "real.qrels"
    real.write_text("q1 0 d1 0.7\nq1 0 d2 0\nq2 0 d3 2.5\nq3 0 d4 0.25\n")
    out = json.loads(fastir_cli("stats", str(real), RUN, "--labels", "float", "--rel-level",
                                "0.5", "--format", "json").stdout)
    assert out[str(real)]["judgments per label"] == {"0.0": 1, "0.25": 1, "0.7": 1, "2.5": 1}
    assert out[str(real)]["queries with no relevant document"] == 1
    refused = fastir_cli("agree", str(real), str(real), "--labels", "float", check=False)
    assert refused.returncode == 2 and "unrecognized arguments: --labels" in refused.stderr


def test_large_runs_stream_with_the_same_output(tmp_path, second_run):
    args = ["eval", QRELS, RUN, second_run, "-m", "AP", "-m", "nDCG@10", "-m", "NumRet", "-q"]
    whole = fastir_cli(*args).stdout
    env = dict(os.environ, FASTIR_STREAM_BYTES="1")  # every run file streams
    streamed = cli(*args, text=True, env=env)
    assert streamed.returncode == 0 and streamed.stdout == whole
    mixed = tmp_path / "mixed.run"  # one query's lines apart: read whole instead, with a note
    with open(RUN) as f:
        lines = f.readlines()
    mixed.write_text("".join(lines[:10] + lines[-10:] + lines[10:-10]))
    args[2:4] = [str(mixed)]
    done = cli(*args, text=True, env=env)
    assert done.returncode == 0 and done.stdout == fastir_cli(*args).stdout
    assert "comes back after other queries" in done.stderr and "reading it whole" in done.stderr


def test_the_examples_files_hold_the_example(tmp_path):
    from fastir.cli.example import MEASURES, collection

    printed = fastir_cli("example", "--write", str(tmp_path)).stdout.split()
    assert printed == [str(tmp_path / f) for f in ("qrels.txt", "weak.run", "strong.run")]
    qrels, runs = collection()
    for name, run in runs.items():
        from_files = fastir.evaluate(str(tmp_path / "qrels.txt"), str(tmp_path / f"{name}.run"),
                                     MEASURES)
        assert from_files.mean == fastir.evaluate(qrels, run, MEASURES).mean
    assert fastir_cli("example", "--bad", check=False).returncode == 2


def test_pictures(tmp_path, second_run):
    pytest.importorskip("matplotlib")
    for kind, extra in (("pr", []), ("cutoff", ["-k", "20"]), ("delta", ["-m", "AP"])):
        path = tmp_path / f"{kind}.png"
        fastir_cli("plot", kind, QRELS, RUN, second_run, "-o", str(path), *extra)
        assert path.stat().st_size > 10_000
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_curve_data_are_the_kernels_values():
    curve = fastir.pr_curve(QRELS, RUN)
    res = fastir.evaluate(QRELS, RUN, ["iprec_at_recall", "11pt_avg", "map", "num_rel",
                                       "num_rel_ret"])
    eleven = curve.eleven_point()
    for r, value in eleven.items():
        assert value == pytest.approx(res.mean[f"iprec_at_recall_{r:.2f}"], abs=1e-15)
    assert sum(eleven.values()) / 11 == pytest.approx(res.mean["11pt_avg"], abs=1e-12)
    per_query = res.to_dict()
    for i, qid in enumerate(curve.query_ids):
        assert curve.precision[i, 50] == per_query[qid]["iprec_at_recall_0.50"]
        recall, precision = curve.raw[qid]
        values = per_query[qid]  # the raw points: one per relevant document retrieved
        assert np.all(np.diff(recall) > 0) and len(recall) == values["num_rel_ret"]
        assert math.isclose(recall[-1], values["num_rel_ret"] / values["num_rel"])
        assert math.isclose(precision.sum() / values["num_rel"], values["map"])
    cutoffs = fastir.cutoff_curve(QRELS, RUN, k=12)
    assert cutoffs.means["P"][9] == fastir.evaluate(QRELS, RUN, ["P@10"]).mean["P@10"]


@pytest.mark.slow
def test_progress_shows_on_a_terminal_and_never_in_a_pipe(tmp_path):
    run = tmp_path / "big.run"  # ~250 MB: 10,000 queries x 1,000 documents
    suffixes = [f" Q0 doc{d} {d + 1} {1000 - d} tag\n" for d in range(1000)]
    with open(run, "w") as f:
        for q in range(10_000):
            f.write("".join(f"query{q}{rest}" for rest in suffixes))
    qrels = tmp_path / "big.qrels"
    qrels.write_text("".join(f"query{q} 0 doc{q % 1000} 1\n" for q in range(10_000)))
    args = ["eval", str(qrels), str(run), "-m", "AP"]
    piped = cli(*args, text=True)
    assert piped.returncode == 0 and piped.stderr == ""
    main, child = pty.openpty()  # (a terminal: the one call not made through cli_calls)
    process = subprocess.Popen([*PROGRAM, *args], stdout=subprocess.DEVNULL, stderr=child)
    os.close(child)
    seen = b""
    try:  # read while it runs (a full terminal buffer would block the bar)
        while chunk := os.read(main, 65536):
            seen += chunk
    except OSError:  # the terminal closed with the process
        pass
    os.close(main)
    assert process.wait(timeout=600) == 0
    assert b"big.run" in seen and (b"B/s" in seen or b"%" in seen), seen[-500:]


# -- help, bad flags, the comparison table, a run judged nowhere -----------------------------
COMMANDS = ["eval", "stats", "agree", "plot", "fuse", "pool", "trec_eval", "measures",
            "example", "warmup"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_helps_and_refuses_bad_flags(command):
    helped = cli(command, "-h", text=True)
    assert helped.returncode == 0 and "usage" in helped.stdout.lower(), helped.stderr
    bad = cli(command, "--no-such-flag", text=True)
    assert bad.returncode in (1, 2) and "Traceback" not in bad.stderr, bad.stderr
    assert any(line.startswith(f"fastir {command}: ") for line in bad.stderr.splitlines()), \
        bad.stderr


def test_compare_as_a_table_is_text_not_markdown(data_dir, tmp_path):

    qrels, run = (str(data_dir / "inputs" / n) for n in ("qrels.test", "results.test"))
    other = str(tmp_path / "other.test")
    shutil.copy(run, other)
    args = ["eval", qrels, run, other, "--name", "a", "--name", "b", "--compare",
            "--resamples", "99", "-m", "AP"]
    table = cli(*args, text=True).stdout
    markdown = cli(*args, "--format", "markdown", text=True).stdout
    assert "|" not in table and "| a) a |" in markdown
    assert table.splitlines()[0].split() == ["system", "AP"]


def test_a_run_with_nothing_judged_in_its_top_10_says_so(data_dir, tmp_path):
    run = tmp_path / "unjudged.run"
    run.write_text("".join(f"{q} Q0 nowhere{d} {d + 1} {1 - d / 100} t\n"
                           for q in ("301", "302") for d in range(20)))
    done = cli("eval", str(data_dir / "inputs" / "qrels.test"), str(run), "-m", "AP", text=True)
    assert done.returncode == 0 and "no document of its top 10 is judged" in done.stderr


