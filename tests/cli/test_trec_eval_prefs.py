"""`fastir trec_eval -R prefs | qrels_prefs | qrels_jg` against the real trec_eval binaries:
identical stdout and exit status on generated preference and judgment-group files under
every flag set (both binaries from PATH, as tests/cli/test_trec_eval_binary.py; skipped
without them).

The generated files have several queries, judgment groups and subgroups, levels of 0,
negative labels, ties in the run, documents not retrieved, judged queries absent from the
run, run queries without judgments, documents ranked twice, and judgments trec_eval stops
at (a document at two levels of one subgroup, level 0 and another in one group, a cycle).
Two differences docs/guides/trec-eval.md lists are allowed: where a cycle makes trec_eval
abort (SIGABRT, its buffered output lost) fastir stops with exit status 4, printing what
trec_eval printed before it; and where prefs_avgjg_Rnonrel's recount reads past trec_eval's
arrays (negative levels; fastir says so on stderr) those lines are not compared.
"""

import random

import pytest
from test_trec_eval_binary import BINARIES, run_binary, run_fastir

import fastir
from fastir import _jit
from fastir.engine import Plan
from fastir.measures.registry import parse
from fastir.options import Options
from fastir.preferences import evaluate_prefs

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not all(BINARIES.values()),
                                 reason="trec_eval binaries not on PATH (.ci/run builds them)")]

QIDS = ["q1", "q2", "q10", "3", "\xe9"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d10", "D1", "e#5", "\xe9", "doc-7", "d11", "d5"]
SCORES = ["0.5", "1", "1.5", "2", "0.25", "3", "-1", "0"]
LEVELS = ["0", "0", "1", "2", "3", "0.5", "1.0", "2"]

PREFS_FLAGS = [
    [], ["-q"], ["-c", "-q"], ["-n", "-q"], ["-M", "2", "-q"], ["-J", "-l", "2", "-q"],
    ["-m", "all_prefs", "-q"], ["-m", "all_prefs", "-q", "-c"], ["-m", "all_prefs", "-M", "3"],
    ["-m", "prefs", "-c"], ["-m", "prefs_pair_imp", "-m", "prefs_avgjg_Rnonrel_ret",
                            "-m", "prefs_avgjg_Rnonrel", "-m", "prefs_simp_ret", "-q"],
    ["-m", "num_q", "-m", "runid", "-q"], ["-m", "official"], ["-m", "P_avgjg", "-q"],
    ["-m", "all_prefs", "-Z", "Z", "-q"],
]
GROUP_FLAGS = [
    [], ["-q"], ["-c", "-q"], ["-m", "qrels_jg", "-q"], ["-m", "qrels_jg", "-q", "-c"],
    ["-m", "qrels_jg", "-q", "-M", "1"], ["-m", "qrels_jg", "-q", "-J"],
    ["-m", "qrels_jg", "-q", "-J", "-c"], ["-m", "qrels_jg", "-l", "2", "-q"],
    ["-m", "qrels_jg", "-l", "0", "-q", "-n"],
    ["-m", "P_avgjg.1,2,3", "-m", "Rprec_mult_avgjg.0.5,1.5", "-m", "map_avgjg", "-q"],
    ["-m", "prefs_simp"], ["-m", "qrels_jg", "-Z", "Z", "-q", "-c"],
]


def prefs_text(rng, negative, conflicts):
    """A preference file: per group hidden levels its subgroups agree with (``conflicts``:
    any level), a few negative levels (``negative``)."""
    lines = []
    for q in rng.sample(QIDS, rng.randint(1, 4)):
        for g in rng.sample(["u1", "u2", "u10", "A"], rng.randint(1, 3)):
            hidden = {d: rng.choice(LEVELS) for d in DOCS}
            for s in rng.sample(["s1", "s2", "s10"], rng.choice([1, 1, 2, 3])):
                for d in rng.sample(DOCS, rng.randint(1, 5)):
                    level = rng.choice(LEVELS) if conflicts else hidden[d]
                    if negative and rng.random() < 0.15:
                        level = rng.choice(["-1", "-2"])
                    lines.append(f"{q} {g} {s} {d} {level}\n")
    rng.shuffle(lines)
    return "".join(lines)


def qrels_text(rng):
    """Qrels with judgment groups in the second column (also read as preferences)."""
    lines = []
    for q in rng.sample(QIDS, rng.randint(1, 4)):
        for g in rng.sample(["0", "1", "u2"], rng.randint(1, 3)):
            docs = rng.sample(DOCS, rng.randint(1, 6))
            labels = [rng.choice([-1, 0, 0, 1, 1, 2, 3]) for _ in docs]
            labels[0] = max(labels[0], rng.choice([0, 1]))  # (not all negative)
            lines += [f"{q} {g} {d} {label}\n" for d, label in zip(docs, labels)]
    rng.shuffle(lines)
    return "".join(lines)


def run_text(rng, twice):
    tag = rng.choice(["run1", "STANDARD", "r\xe9"])
    lines = []
    for q in rng.sample(QIDS + ["q9"], rng.randint(1, 4)):
        docs = rng.sample(DOCS, rng.randint(0, 9))
        if twice and docs and rng.random() < 0.3:
            docs.append(docs[0])
        lines += [f"{q} Q0 {d} 1 {rng.choice(SCORES)} {tag}\n" for d in docs]
    return "".join(lines) or f"q1 Q0 d1 1 1 {tag}\n"


#: Every measure a -Z flag set prints (a -Z file without one makes trec_eval read past its
#: table: README).
Z_NAMES = [key for nickname in ("all_prefs", "qrels_jg") for key, _ in parse(nickname)]


def z_text(rng):
    return "".join(f"{q} {m} {rng.choice(['0.1', '0.5', '2'])} {rng.choice(['0.5', '1'])}\n"
                   for q in QIDS for m in Z_NAMES)


def case(seed):
    """(format, judgments, run, -Z file) of generated case ``seed``."""
    rng = random.Random(seed)
    fmt = ("prefs", "qrels_prefs", "qrels_jg")[seed % 3]
    judged = prefs_text(rng, seed % 7 == 0, seed % 5 == 0) if fmt == "prefs" else \
        qrels_text(rng)
    return fmt, judged, run_text(rng, seed % 11 == 0), z_text(rng)


def compare(version, args, undefined=False):
    """The binary's stdout and status, but for the README's two differences (``undefined``:
    a Rnonrel recount of the file reads past trec_eval's arrays)."""
    status, expected = run_binary(version, args)
    got_status, got, err = run_fastir(["--compat", version, *args])
    assert "Traceback" not in err
    if status == -6:  # trec_eval aborted on a cycle: fastir stops there (exit 4)
        assert got_status == 4 and "aborts here" in err and got.startswith(expected), args
        return status
    if undefined or "reads past its arrays" in err:
        expected, got = (b"".join(line for line in text.splitlines(True)
                                  if not line.lstrip(b"Z").startswith(b"prefs_avgjg_Rnonrel"))
                         for text in (expected, got))
    assert (got_status, got) == (status, expected), (args, err)
    return status


def undefined_recount(fmt, judged, run):
    """Whether prefs_avgjg_Rnonrel's recount reads past trec_eval's arrays somewhere in the
    file (with or without -M: the lines of those measures are then not compared)."""
    if fmt == "qrels_jg":
        return False
    prefs = fastir.read_prefs(judged, format=fmt)
    plan = Plan(["all_prefs"], judgments="prefs")
    return any(evaluate_prefs(plan, prefs, fastir.read_run(run),
                              Options(max_docs=m)).undefined.any() for m in (None, 2, 3))


@pytest.mark.parametrize("engine_, seeds", [("python", range(0, 40)),
                                            ("python", range(40, 80)),
                                            ("python", range(80, 120)),
                                            ("numba", range(120, 130))])
def test_generated_files_identical_to_the_binaries(tmp_path, engine_, seeds):
    """120 generated files with the kernels as Python and 10 compiled (slower to start per
    call), each under every flag set of its format (13 to 15), through both binaries."""
    statuses = []
    for seed in seeds:
        fmt, judged, run, z = case(seed)
        for name, text in (("judged", judged), ("run", run), ("Z", z)):
            (tmp_path / name).write_text(text)
        paths = [str(tmp_path / "judged"), str(tmp_path / "run")]
        with _jit.forced(engine_):
            undefined = undefined_recount(fmt, *paths)
            for flags in PREFS_FLAGS if fmt != "qrels_jg" else GROUP_FLAGS:
                flags = [str(tmp_path / "Z") if f == "Z" else f for f in flags]
                for version in ("10.0", "9.0.8"):
                    statuses.append(compare(version, ["-R", fmt, *flags, *paths], undefined))
    assert 0 in statuses and 4 in statuses  # (evaluations, and stops, were compared)


@pytest.mark.parametrize("fmt, judged, flags", [
    ("prefs", "q1 u1 s1 d1\n", []),  # malformed: exit 2
    ("prefs", "q1 u1 s1 d1 1\nq1 u1 s1 d2 2 x\n", ["-q"]),
    ("qrels_prefs", "q1 0 d1 1 x\n", []),
    ("qrels_jg", "q1 0 d1 1\nq1 0 d1 0\n", ["-m", "qrels_jg"]),  # judged twice in a group
    ("qrels_jg", "q1 0 d1 1\nq1 1 d1 0\n", ["-m", "qrels_jg", "-q"]),  # (in two: fine)
    ("prefs", "q1 u1 s1 d1 2\nq1 u1 s1 d2 1\n", ["-m", "prefs_simp.5"]),  # (fastir: 2)
    ("prefs", "q1 u1 s1 d1 2\nq1 u1 s1 d2 1\n", ["-m", "P_avgjg.5,5"]),  # set-up: exit 2
    ("qrels_jg", "q1 0 d1 1\n", ["-m", "map_avgjg", "-m", "prefs_avgjg", "-q"]),  # exit 4
    ("qrels_jg", "q1 0 d1 1\n", ["-m", "map_avgjg.5"]),  # (fastir: 2)
    ("prefs", "q1 u1 s1 d1 2\nq1 u1 s1 d2 1\n", ["-m", "relstring", "-q"]),
    ("qrels_prefs", "q1 0 d2 1\nq1 0 d1 0\n", ["-m", "prefs", "-q", "-c", "-M", "0"]),
    ("prefs", "q2 u1 s1 d1 2\nq2 u1 s2 d1 1\nq2 u1 s2 d2 3\n", ["-m", "prefs", "-q"]),
    ("prefs", "q1 u1 s1 d1 1.0000000001\nq1 u1 s1 d2 1\nq1 u1 s1 d3 1e-50\n"
              "q1 u1 s1 d4 0\nq1 u2 s1 d2 1e39\nq1 u2 s1 d1 2e39\n",  # (9.0.8: floats)
     ["-m", "all_prefs", "-q"]),
])
@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_particular_files(tmp_path, fmt, judged, flags, version):
    (tmp_path / "judged").write_text(judged)
    (tmp_path / "run").write_text("q1 Q0 d1 1 1 r\nq1 Q0 d2 2 1 r\nq2 Q0 d2 1 1 r\n")
    args = ["-R", fmt, *flags, str(tmp_path / "judged"), str(tmp_path / "run")]
    if flags in (["-m", "prefs_simp.5"], ["-m", "map_avgjg.5"]):  # trec_eval ignores the
        # parameters; fastir refuses
        assert run_fastir(["--compat", version, *args])[0] == 2  # them (README)
        return
    compare(version, args)
