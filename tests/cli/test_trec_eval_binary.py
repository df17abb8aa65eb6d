"""`fastir trec_eval` against the real trec_eval binaries: identical stdout bytes and exit
status on generated valid inputs under every flag set, or a deviation
docs/guides/trec-eval.md lists.

The binaries come from PATH (``trec_eval`` for 10.0, ``trec_eval-9.0.8``); `.ci/run` builds
them from ../shared/peers. Without them these tests skip.

Documented deviations the comparison allows (docs/guides/trec-eval.md, "Where fastir
differs"): where trec_eval divides 0 by 0 (``iprec_at_recall`` / ``11pt_avg`` on an empty
ranking) it prints nan, fastir 0, so lines where the binary prints nan are left out of the
comparison. Inputs avoid trec_eval's undefined behaviour: a query whose judgments are all
negative, and a ``-Z`` file without a line for some evaluated (query, measure), which crash
it or read garbage.

The drawn-request test (issue 18) draws random subsets, orders and parameters of trec_eval's
measures under random flags, several per input; ``without_known_differences`` says which
listed differences it leaves out.
"""

import re
import shutil
import subprocess

import pytest
from cli_calls import in_process
from hypothesis import given, settings
from hypothesis import strategies as st

from fastir.measures.registry import FAMILIES, MULT, RECALL, TREC_NAMES

BINARIES = {"10.0": shutil.which("trec_eval"), "9.0.8": shutil.which("trec_eval-9.0.8")}
pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not all(BINARIES.values()),
                                 reason="trec_eval binaries not on PATH (.ci/run builds them)")]

QIDS = ["q1", "q2", "q10", "3", "\xe9"]
DOCS = ["d0", "d1", "d2", "d3", "d4", "d10", "D1", "e#5", "\xe9", "doc-7"]
SCORES = ["0.5", "1", "1.5", "2", "0.25", "3", "-1", "1e-3", "2.5e1", "0"]
ZMEASURES = ["map", "P_5", "num_ret", "gm_map", "ndcg", "recip_rank"]

FLAG_SETS = [
    [], ["-q"], ["-c"], ["-q", "-c"], ["-n", "-q"], ["-l", "2", "-q"], ["-l", "0", "-q", "-c"],
    ["-M", "2", "-q"], ["-M", "1", "-q", "-c"], ["-J", "-q"], ["-J", "-c", "-q"],
    ["-N", "20", "-m", "utility.2,-1,0.5,0.25", "-q"], ["-m", "all_trec", "-q"],
    ["-m", "all_trec", "-q", "-c"], ["-m", "all_trec", "-q", "-J", "-l", "2"],
    ["-m", "set", "-q", "-c"], ["-m", "P.1,2", "-m", "ndcg_cut.3", "-q"],
    ["-m", "relstring.0", "-m", "relstring", "-q"], ["-m", "P.1", "-m", "P.2", "-q"],
    ["-m", "ndcg.1=3,2=9", "-q", "-c"], ["-m", "set_F.0.5", "-m", "Rprec_mult.0.5", "-q", "-c"],
    ["-m", "num_q", "-m", "runid"], ["-m", "11pt_avg..25,.5", "-m", "iprec_at_recall..3", "-q"],
    ["-Z", "Z", "-q"], ["-Z", "Z", "-q", "-c"], ["-Z", "Z", "-m", "map", "-m", "gm_map", "-c"],
    ["-q", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "binG", "-m", "G", "-m", "infAP", "-c"],
]
NAN = re.compile(rb"^.*\t *-?nan\n", re.M)


@st.composite
def pairs(draw):
    """(qrels text, run text, -Z text): small, with ties, unjudged and negative labels."""
    qrels, run = [], []
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        labels = [draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3])) for _ in docs]
        labels[0] = max(labels[0], draw(st.sampled_from([0, 1])))  # not all negative
        qrels += [f"{q} 0 {d} {label}\n" for d, label in zip(docs, labels)]
    tag = draw(st.sampled_from(["run1", "STANDARD", "r\xe9"]))
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=4, unique=True)):
        for d in draw(st.lists(st.sampled_from(DOCS), max_size=9, unique=True)):
            run.append(f"{q} Q0 {d} 1 {draw(st.sampled_from(SCORES))} {tag}\n")
    if not run:
        run.append(f"q1 Q0 d1 1 1 {tag}\n")
    z = [f"{q} {m} {draw(st.sampled_from(['0.1', '0.5', '2']))} "
         f"{draw(st.sampled_from(['0', '0.5', '1']))}\n" for q in QIDS for m in ZMEASURES]
    return "".join(qrels), "".join(run), "".join(z)


def run_fastir(args):
    """``fastir trec_eval ARGS``: (status, stdout bytes, stderr text)."""
    return in_process("trec_eval", *args)


def run_binary(version, args):
    done = subprocess.run([BINARIES[version], *args], capture_output=True)
    return done.returncode, done.stdout


def compare(version, args):
    status, expected = run_binary(version, args)
    got_status, got, err = run_fastir(["--compat", version, *args])
    assert "Traceback" not in err
    assert got_status == status, (args, err)
    keep = [i for i, line in enumerate(expected.splitlines(True)) if not NAN.match(line)]
    lines = got.splitlines(True)
    if len(lines) == len(expected.splitlines(True)):
        got = b"".join(lines[i] for i in keep)
    assert got == b"".join(expected.splitlines(True)[i] for i in keep), args


@settings(max_examples=40, deadline=None)
@given(pairs())
def test_identical_to_the_binaries_under_every_flag_set(tmp_path_factory, texts):
    folder = tmp_path_factory.mktemp("pair")
    paths = {}
    for name, text in zip(("qrels", "run", "Z"), texts):
        paths[name] = folder / name
        paths[name].write_bytes(text.encode())
    for flags in FLAG_SETS:
        args = [str(paths["Z"]) if f == "Z" else f for f in flags]
        for version in ("10.0", "9.0.8"):
            compare(version, [*args, str(paths["qrels"]), str(paths["run"])])


@pytest.mark.parametrize("run_text, qrels_text", [
    ("q1 Q0 d1 1 2 r\nq1 Q0 d1 2 1 r\n", "q1 0 d1 1\n"),  # a doc ranked twice
    ("q1 Q0 d1 1 2 r\nq2 Q0 d1 1 1 r\n", "q1 0 d1 1\nq1 0 d1 0\nq2 0 d1 1\n"),  # judged twice
    ("q9 Q0 d1 1 2 r\n", "q1 0 d1 1\n"),  # no query in common
    ("q2 Q0 d1 1 2 r\n", "q1 0 d1 1\nq2 0 d1 1\nq3 0 d2 1\n"),  # judged topics not run
])
@pytest.mark.parametrize("flags", [[], ["-q"], ["-c", "-q"], ["-m", "num_q", "-m", "runid"]])
def test_where_trec_eval_stops(tmp_path, run_text, qrels_text, flags):
    (tmp_path / "run").write_text(run_text)
    (tmp_path / "qrels").write_text(qrels_text)
    for version in ("10.0", "9.0.8"):
        compare(version, [*flags, str(tmp_path / "qrels"), str(tmp_path / "run")])


@pytest.mark.parametrize("flags", [["-q"], ["-q", "-c"], ["-m", "all_trec", "-q"]])
def test_ids_that_are_not_utf8_are_printed_as_bytes(tmp_path, flags):
    (tmp_path / "run").write_bytes(b"q\xe9 Q0 d\xff 1 2 r\xe9\nq\xe9 Q0 d1 1 1 r\xe9\n"
                                   b"q2 Q0 x 1 1 r\xe9\n")
    (tmp_path / "qrels").write_bytes(b"q\xe9 0 d\xff 1\nq\xe9 0 d1 0\nq2 0 x 2\n")
    for version in ("10.0", "9.0.8"):
        compare(version, [*flags, str(tmp_path / "qrels"), str(tmp_path / "run")])


# -- issue 18's reproducers: stdout and exit status as the binaries' ------------------------
QRELS_TEXT = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq2 0 d4 2\n"
RUN_TEXT = "q1 Q0 d1 1 1 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d3 3 2 r\nq2 Q0 d1 1 1 r\n"
#: Scores finite as doubles, beyond float32: 9.0.8 keeps them in a C float (+-inf, tied
#: among themselves and broken by docno), 10.0 in a double.
BEYOND_FLOAT32 = ("q1 Q0 d1 1 2e39 r\nq1 Q0 d2 2 1e39 r\nq1 Q0 d3 3 -1e39 r\n"
                  "q1 Q0 d5 4 -2e39 r\nq2 Q0 d4 1 1e39 r\nq2 Q0 d1 2 3.5e38 r\n")

BLANK_RUN = "\n  \n\t\n\n"
#: q2's documents are all unjudged: -J empties its ranking (q3 is absent: -c zeroes it).
EMPTIED_RUN = "q1 Q0 d1 1 1 r\nq1 Q0 d9 2 0.5 r\nq2 Q0 d7 1 1 r\nq2 Q0 d8 2 0.5 r\n"


@pytest.mark.parametrize("flags, run_text", [
    (["-q"], BEYOND_FLOAT32),
    (["-q", "-c", "-m", "all_trec"], BEYOND_FLOAT32),
    (["-m", "runid"], RUN_TEXT),  # runid alone: no measure, the line all the same
    (["-q", "-c", "-m", "runid"], RUN_TEXT),
    (["-N", "-5", "-m", "utility.1,-1,1,0", "-q"], RUN_TEXT),  # -N negative: as given
    (["-N", "-5", "-m", "utility.1,-1,1,0.5", "-q", "-c"], RUN_TEXT),
    (["-N", "-9007199254740992", "-m", "utility.0,0,0,1"], RUN_TEXT),
    (["-q", "-m", "P.1e1"], RUN_TEXT),  # atol: P_1
    (["-q", "-m", "success.1e1,3", "-m", "P.1e30", "-m", "map_cut.23.9"], RUN_TEXT),
    (["-m", "P."], RUN_TEXT),  # refused as -m is read: exit 1
    (["-m", "official."], RUN_TEXT),
    (["-m", "utility.2,-1"], RUN_TEXT),  # trec_eval stops at the first query: exit 4
    (["-q", "-m", "map", "-m", "utility.2,-1", "-c"], RUN_TEXT),
    (["-m", "utility.2,-1", "-m", "P.5,5"], RUN_TEXT),  # (the set-up fails first: exit 2)
    (["-m", "map_avgjg"], RUN_TEXT),  # judgment groups: with -R qrels, exit 4 likewise
    (["-q", "-c", "-m", "P_avgjg.5,10", "-m", "prefs_simp", "-m", "map_avgjg.5"], RUN_TEXT),
    (["-m", "P_avgjg.5,5"], RUN_TEXT),
    ([], BLANK_RUN),  # only blank lines: a run without results (10.0: exit 4, 9.0.8: 7)
    (["-q", "-m", "utility.2,-1"], BLANK_RUN),
    (["-c", "-q", "-m", "map", "-m", "num_q", "-m", "P.2"], BLANK_RUN),  # (runid: garbage)
    ([], ""),  # an empty file: exit 2
    (["-m", "dcg", "-m", "ideal_dcg", "-q"], RUN_TEXT),  # 10.0 only (9.0.8: exit 1)
    (["-m", "ideal_dcg.1=3", "-m", "map", "-c"], RUN_TEXT),
    (["-q", "-J", "-m", "utility.1,-1,1,0", "-m", "utility.0,-1,-1,1", "-N", "40"],
     EMPTIED_RUN),  # an emptied ranking: utility is c*R + d*(N-R), as trec_eval computes it
    (["-q", "-J", "-c", "-m", "utility", "-m", "P.2", "-N", "40"], EMPTIED_RUN),
])
def test_reproducers(tmp_path, flags, run_text):
    (tmp_path / "qrels").write_text(QRELS_TEXT)
    (tmp_path / "run").write_text(run_text)
    for version in ("10.0", "9.0.8"):
        args = [*flags, str(tmp_path / "qrels"), str(tmp_path / "run")]
        compare(version, args)
        status, _, err = run_fastir(["--compat", version, *args])
        if status:  # one clear line saying why
            assert err.startswith("fastir trec_eval: ") and err.count("\n") == 1, err


# -- drawn requests: a random subset and order of trec_eval's measures, with parameters ------
RANKS = ["1", "2", "3", "4", "7", "12"]  # (mostly within the rankings)
RECALLS = ["0", "0.1", ".25", "0.3", "0.5", "0.75", "1"]
MULTS = ["0.2", "0.5", "1", "1.5", "2"]


def _cutoffs(draw, values):
    return ",".join(draw(st.lists(st.sampled_from(values), min_size=1, max_size=3,
                                  unique=True)))


SINGLE = {  # how a parameterised single measure's parameters are drawn
    "relstring": lambda draw: draw(st.sampled_from(["0", "1", "3", "12"])),
    "utility": lambda draw: ",".join(draw(st.sampled_from(["-1", "0", "0.5", "1", "2"]))
                                     for _ in range(4)),
    "11pt_avg": lambda draw: _cutoffs(draw, RECALLS),
    "set_F": lambda draw: draw(st.sampled_from(["0.25", "0.5", "1", "2"])),
    "rbp": lambda draw: "p=" + draw(st.sampled_from(["0.5", "0.8", "0.95"])),
}


@st.composite
def trec_measure(draw, name):
    """``name`` bare (its defaults) or with drawn parameters, as -m takes it."""
    family, trec = TREC_NAMES[name]
    if trec.style is None or draw(st.integers(0, 2)) == 0:
        return name
    if trec.style == "cut":
        kind = FAMILIES[family].cutoff
        values = RECALLS if kind is RECALL else MULTS if kind is MULT else RANKS
        return f"{name}.{_cutoffs(draw, values)}"
    if name in SINGLE:
        return f"{name}.{SINGLE[name](draw)}"
    labels = draw(st.lists(st.sampled_from(range(4)), min_size=1, max_size=3, unique=True))
    return f"{name}." + ",".join(f"{label}={draw(st.sampled_from([0, 1, 2, 3, 5, 9]))}"
                                 for label in labels)  # (gains apart by 1 or more: README)


@st.composite
def requests(draw):
    """(-m arguments and flags for 10.0, the same for 9.0.8 or None)."""
    names = draw(st.lists(st.sampled_from([*TREC_NAMES, "runid"]), min_size=1, max_size=4,
                          unique=True))
    measures = {n: n if n == "runid" else draw(trec_measure(n)) for n in names}
    flags = [f for f in ("-q", "-c", "-J", "-n") if draw(st.integers(0, 3)) == 0]
    if draw(st.booleans()):
        flags += ["-l", draw(st.sampled_from(["0", "2"]))]
    if draw(st.integers(0, 3)) == 0:
        flags += ["-M", draw(st.sampled_from(["1", "3", "6"]))]
    if "utility" in names and draw(st.booleans()):
        flags += ["-N", draw(st.sampled_from(["0", "12", "-3"]))]

    def args(version):
        kept = [m for n, m in measures.items() if n == "runid" or
                version in FAMILIES[TREC_NAMES[n][0]].versions]
        return [a for m in kept for a in ("-m", m)] + flags if kept else None

    return args("10.0"), args("9.0.8")


@settings(max_examples=150, deadline=None)
@given(pairs(), st.lists(requests(), min_size=1, max_size=16))
def test_drawn_requests_identical_to_the_binaries(tmp_path_factory, texts, drawn):
    """Issue 18: the values of a measure must not depend on what is asked beside it, as
    trec_eval's do not; stdout and exit status as the binaries', for random measure subsets
    (and orders, and parameters) under random flags, several requests per input."""
    folder = tmp_path_factory.mktemp("drawn")
    (folder / "qrels").write_text(texts[0])
    (folder / "run").write_text(texts[1])
    for version, args in [pair for request in drawn for pair in zip(("10.0", "9.0.8"),
                                                                     request)]:
        args = without_known_differences(version, args, *texts[:2])
        if not args:
            continue
        args = [*args, str(folder / "qrels"), str(folder / "run")]
        if run_binary(version, args)[0] < 0:  # the binary crashed: nothing to compare with
            assert shares_a_gain_table(args), args
            continue
        compare(version, args)


def without_known_differences(version, args, qrels_text, run_text):
    """The request (None: no measure) less the measures that meet a difference the README
    lists, on this input:

    - utility or relstring with parameters under 10.0's -c, on a judged query absent from the
      run: trec_eval's clean-up of its placeholder ranking compares names ("utility",
      "relstring"), misses the parameterised ones and prints the placeholder's values
      (utility b + c*R + d*(N-1-R), relstring '-'); fastir gives the intended 0 and ''.
    - rbp beside a measure of gains (G, ndcg, ...): trec_eval's rbp scales its gains with a
      min and max it never initialises, which then hold what the measure before left on the
      stack (undefined behaviour; fastir uses the gains' true min and max).
    """
    if args is None:
        return None
    judged = {line.split()[0] for line in qrels_text.splitlines()}
    ranked = {line.split()[0] for line in run_text.splitlines()}
    dropped = set()
    if version == "10.0" and "-c" in args and judged - ranked:
        dropped |= {"utility", "relstring"}
    bases = {a.split(".")[0] for a in args}
    uninitialised = bool(bases & {"G", "dcg", "ideal_dcg", "ndcg", "ndcg_cut", "ndcg_rel",
                                  "Rndcg"})
    kept, i = [], 0
    while i < len(args):
        base = args[i + 1].split(".")[0] if args[i] == "-m" else None
        if base in dropped and "." in args[i + 1] or base == "rbp" and uninitialised:
            i += 2
            continue
        kept.append(args[i])
        i += 1
    return kept if "-m" in kept else None


def shares_a_gain_table(args):
    """Whether two of ndcg, dcg, ideal_dcg are asked for, one with a gain table: trec_eval
    10.0 keeps their parameters in one static struct and frees it twice (abort or segfault;
    README: trec_eval's undefined behaviour)."""
    names = [a for a in args if a.split(".")[0] in ("ndcg", "dcg", "ideal_dcg")]
    return len(names) > 1 and any("." in a for a in names)
