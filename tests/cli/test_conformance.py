"""trec_eval's own test suite: every command of tests/data/trec_eval/README.md must print the
expected file byte for byte, as trec_eval 10.0 (default) and 9.0.8 (``--compat 9.0.8``)."""

import re
import shlex

import pytest
from cli_calls import cli, in_process
from conftest import DATA


def readme_cases():
    """(expected file, argument list, versions) for every row of the suite's README."""
    cases = []
    for line in (DATA / "README.md").read_text().splitlines():
        m = re.match(r"^\| (out[\w.]+)( \(10\.0 only\))? \| `([^`]+)`(.*)\|$", line)
        if not m:
            continue
        out, only_10, args, rest = m.groups()
        versions = ["10.0"] if only_10 else ["10.0", "9.0.8"]
        for version in versions:
            argv = shlex.split(args)
            if version == "9.0.8" and "9.0.8:" in rest:
                argv = [a.replace("zscores_file", "zscores_file.9.0.8") for a in argv]
            cases.append((out, argv, version))
            alt = re.search(r"the same with `([^`]+)`", rest)
            if alt:  # (another judgments file)
                cases.append((out, [*argv[:-2], alt.group(1), argv[-1]], version))
    return cases


CASES = readme_cases()


def test_the_readme_lists_the_whole_suite():
    assert len(CASES) == 29  # out.test, .prefs, .qrels_jg twice (with comments), out.comment.test
    # 10.0 only
    assert {out for out, _, _ in CASES} == {p.name for p in (DATA / "expected-10.0").iterdir()}


@pytest.mark.parametrize("out, argv, version", CASES,
                         ids=[f"{v}-{o}-{i}" for i, (o, _, v) in enumerate(CASES)])
def test_byte_identical(monkeypatch, out, argv, version):
    monkeypatch.chdir(DATA)
    code, text, err = in_process("trec_eval", "--compat", version, *argv)
    assert code == 0, err
    assert text == (DATA / f"expected-{version}" / out).read_bytes()


def test_python_dash_m_entry_point():
    result = cli("trec_eval", "inputs/qrels.test", "inputs/results.test", cwd=DATA, text=True)
    assert result.returncode == 0
    assert result.stdout == (DATA / "expected-10.0" / "out.test").read_text()


def run_cli(args, stdin=None):
    """``fastir trec_eval ARGS``: (status, stdout text, stderr text)."""
    code, out, err = in_process("trec_eval", *args, stdin=stdin)
    return code, out.decode("utf-8", "surrogateescape"), err


def test_run_from_standard_input():
    data = (DATA / "inputs" / "results.test").read_bytes()
    code, text, _ = run_cli([str(DATA / "inputs" / "qrels.test"), "-"], stdin=data)
    assert code == 0 and text == (DATA / "expected-10.0" / "out.test").read_text()


def test_gzipped_inputs(tmp_path):
    import gzip

    paths = []
    for name in ("qrels.test", "results.test"):
        path = tmp_path / f"{name}.gz"
        path.write_bytes(gzip.compress((DATA / "inputs" / name).read_bytes()))
        paths.append(str(path))
    code, text, _ = run_cli(paths)
    assert code == 0 and text == (DATA / "expected-10.0" / "out.test").read_text()


@pytest.mark.parametrize("args, status, message", [
    (["-m", "nosuch"], 1, "illegal measure 'nosuch'"),  # trec_eval: 1 for an unknown name
    (["-m", "P.x"], 2, "parameters must be numbers"),  # 2 when a measure's set-up fails
    (["-m", "P.5,5"], 2, "given twice"),
    (["-m", "map.5"], 2, "takes no parameters"),  # (trec_eval ignores them: README)
    (["-m", "utility.1,2"], 4, "utility needs 4 coefficients"),  # (at the first query)
    (["-m", "map_avgjg"], 4, "needs -R qrels_jg"),  # (a measure of another -R format)
    (["-m", "P."], 1, "nothing after the '.'"),
    (["--compat", "9.0.8", "-m", "rbp"], 1, "not in trec_eval 9.0.8"),
    (["--compat", "9.0.8", "-m", "dcg"], 1, "not in trec_eval 9.0.8"),  # (10.0's)
    (["--compat", "9.0.8", "-m", "ideal_dcg.1=3"], 1, "not in trec_eval 9.0.8"),
])
def test_cli_measure_errors(args, status, message):
    code, text, err = run_cli([*args, str(DATA / "inputs" / "qrels.test"),
                               str(DATA / "inputs" / "results.test")])
    assert code == status and text == "" and message in err


@pytest.mark.parametrize("run_text, status, message", [
    ("301 Q0 doc 1 2.0 tag\n301 Q0 doc2 x\n", 2, ":2: malformed line"),
    ("301 Q0 doc 1 2.0 tag\n301 Q0 doc 2 1.0 tag\n", 4,
     ":2: query '301' ranks doc 'doc' a second time (first on line 1): trec_eval stops"),
    ("999 Q0 doc 1 2.0 tag\n", 4, "judged query '301' is absent from the run"),
])
def test_cli_input_errors(tmp_path, run_text, status, message):
    """trec_eval's exit statuses: 2 for a file it cannot read, 4 where it stops."""
    run = tmp_path / "run"
    run.write_text(run_text)
    code, text, err = run_cli([str(DATA / "inputs" / "qrels.test"), str(run)])
    assert code == status and text == ""
    assert message in err and "Traceback" not in err


def test_cli_stops_where_trec_eval_stops(tmp_path):
    """10.0 prints the queries before a judged query absent from the run, then exits 4;
    9.0.8 skips that query; 9.0.8 with no query in common exits 7."""
    inputs = DATA / "inputs"
    run = tmp_path / "run"
    run.write_text("".join(line for line in (inputs / "results.test").read_text().splitlines(
        keepends=True) if line.startswith("301")) + "303 Q0 x 1 1.0 t\n")
    code, text, err = run_cli(["-q", "-m", "map", str(inputs / "qrels.test"), str(run)])
    assert code == 4 and text.splitlines() == [text.splitlines()[0]] and "\t301\t" in text
    code, text, _ = run_cli(["--compat", "9.0.8", "-q", "-m", "map", str(inputs / "qrels.test"),
                             str(run)])
    assert code == 0 and "\t303\t" in text and "\tall\t" in text
    run.write_text("999 Q0 doc 1 2.0 tag\n")
    code, text, err = run_cli(["--compat", "9.0.8", str(inputs / "qrels.test"), str(run)])
    assert code == 7 and text == "" and "no queries with both" in err
    code, text, err = run_cli(["-c", "-m", "map", str(inputs / "qrels.test"), str(run)])
    assert code == 0 and text == "map                   \tall\t0.0000\n"


def test_cli_bad_zscore_file(tmp_path):
    z = tmp_path / "z"
    z.write_text("301 map 0.1\n")
    code, _, err = run_cli(["-Z", str(z), str(DATA / "inputs" / "qrels.test"),
                            str(DATA / "inputs" / "results.test")])
    assert code == 255 and "z:1: malformed line" in err  # trec_eval returns -1 from main


@pytest.mark.parametrize("args", [["-q"], ["-x", "a", "b"], ["-l", "two", "a", "b"],
                                  ["--compat", "8", "a", "b"], ["a", "b", "c"]])
def test_cli_usage_errors_exit_nonzero(args):
    code, _, err = in_process("trec_eval", *args)
    assert code == 1 and "usage: fastir trec_eval" in err  # trec_eval's status for bad usage
    assert in_process("nosuchcommand")[0] == 2


def test_options_are_read_as_getopt_reads_them():
    inputs = DATA / "inputs"
    code, text, _ = run_cli([str(inputs / "qrels.test"), "-mP.5", str(inputs / "results.test"),
                             "--measure", "map"])
    assert code == 0 and text.splitlines()[0].startswith("map") and "P_5" in text


def test_cli_notes_what_trec_eval_leaves_out():
    code, text, err = run_cli(["--compat", "9.0.8", str(DATA / "inputs" / "qrels.test"),
                               str(DATA / "inputs" / "results.trunc")])
    assert code == 0 and text.startswith("runid")
    assert "1 judged topic(s) absent from the run are not averaged" in err and "302" in err
    code, _, err = run_cli(["-c", str(DATA / "inputs" / "qrels.test"),
                            str(DATA / "inputs" / "results.trunc")])
    assert code == 0 and err == ""


# -- issue 18's reproducers, as the binaries answer them (tests/test_trec_eval_binary.py
# compares the same with the binaries themselves when they are on PATH) ----------------------
REPRO_QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 2\n"
REPRO_RUN = "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d3 3 2 r\nq2 Q0 d1 1 1 r\n"
BEYOND_FLOAT32 = ("q1 Q0 d1 1 2e39 r\nq1 Q0 d2 2 1e39 r\nq1 Q0 d3 3 -1e39 r\n"
                  "q1 Q0 d5 4 -2e39 r\nq2 Q0 d4 1 1e39 r\nq2 Q0 d1 2 3.5e38 r\n")
UTILITY = "utility_1,-1,1,0.5    \t"
P_1 = "P_1                   \t"
MAP = "map                   \t"


@pytest.mark.parametrize("version, args, run_text, status, expected", [
    *[(v, ["-m", "runid"], REPRO_RUN, 0, "runid                 \tall\tr\n")
      for v in ("10.0", "9.0.8")],
    *[(v, ["-N", "-5", "-m", "utility.1,-1,1,0.5", "-q"], REPRO_RUN, 0,
       f"{UTILITY}q1\t-3.0000\n{UTILITY}q2\t-1.5000\n{UTILITY}all\t-2.2500\n")
      for v in ("10.0", "9.0.8")],
    *[(v, ["-q", "-m", "P.1e1"], REPRO_RUN, 0,
       f"{P_1}q1\t1.0000\n{P_1}q2\t1.0000\n{P_1}all\t1.0000\n") for v in ("10.0", "9.0.8")],
    ("10.0", ["-q", "-m", "P.1", "-m", "map"], BEYOND_FLOAT32, 0,
     f"{MAP}q1\t0.8333\n{P_1}q1\t1.0000\n{MAP}q2\t1.0000\n{P_1}q2\t1.0000\n"
     f"{MAP}all\t0.9167\n{P_1}all\t1.0000\n"),
    ("9.0.8", ["-q", "-m", "P.1", "-m", "map"], BEYOND_FLOAT32, 0,  # 2e39 == 1e39 == inf
     f"{MAP}q1\t0.5000\n{P_1}q1\t0.0000\n{MAP}q2\t1.0000\n{P_1}q2\t1.0000\n"
     f"{MAP}all\t0.7500\n{P_1}all\t0.5000\n"),
    ("10.0", [], "\n  \n\t\n\n", 4, ""),  # blank lines only: a run without results
    ("9.0.8", [], "\n  \n\t\n\n", 7, ""),
    ("10.0", ["-c", "-m", "num_q", "-m", "P.2"], "\n\n", 0,
     "num_q                 \tall\t2\nP_2                   \tall\t0.0000\n"),
    ("10.0", [], "", 2, ""),  # an empty file: trec_eval cannot read it
    *[(v, ["-m", flag], REPRO_RUN, 4, "") for v in ("10.0", "9.0.8")
      for flag in ("utility.2,-1", "map_avgjg", "P_avgjg.5", "prefs_simp")],
    *[(v, ["-m", "P."], REPRO_RUN, 1, "") for v in ("10.0", "9.0.8")],
])
def test_issue_18_reproducers(tmp_path, version, args, run_text, status, expected):
    (tmp_path / "qrels").write_text(REPRO_QRELS)
    (tmp_path / "run").write_text(run_text)
    code, text, err = run_cli(["--compat", version, *args, str(tmp_path / "qrels"),
                               str(tmp_path / "run")])
    assert (code, text) == (status, expected), err
    if status:
        assert err.startswith("fastir trec_eval: ") and err.count("\n") == 1, err
