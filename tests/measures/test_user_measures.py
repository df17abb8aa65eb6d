"""User-defined measures (fastir.define_measure): the oracle comes free. The same function,
run as plain Python on the naive reference's ranking (tests/naive), is the test of the
compiled one, on drawn runs, parameters, cutoffs and options, on both engines; and every
entry point gives the values evaluate gives."""

import math
import pickle
import statistics
import types

import naive.base as naive
import numpy as np
import pytest
from conftest import matrix_to_dicts, qrels_and_runs, run_rows, sigint_default
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir.measures import registry, user
from fastir.measures.registry import parse


def discounted(ranked, judged, n_rel, cutoff, base=2.0, exponential=False):
    """nDCG with a discount of the user's: log_base(i + base - 1)."""
    dcg = 0.0
    for i in range(len(ranked)):
        if ranked[i] > 0:
            gain = 2.0 ** ranked[i] - 1.0 if exponential else ranked[i]
            dcg += gain / (math.log(i + base) / math.log(base))
    depth = len(judged) if cutoff == 0 else min(cutoff, len(judged))
    ideal = 0.0
    for i in range(depth):
        if judged[i] > 0:
            gain = 2.0 ** judged[i] - 1.0 if exponential else judged[i]
            ideal += gain / (math.log(i + base) / math.log(base))
    return dcg / ideal if ideal > 0 else 0.0


def unjudged_share(ranked, judged, n_rel, rel, weight=1):
    """Reads the codes of documents not judged (-1) and judged negative (-2), the level,
    an int parameter."""
    score = 0
    for code in ranked:
        if code == -1:
            score += weight
        elif code == -2:
            score += 2 * weight
        elif code >= rel:
            score -= 1
    return score / len(ranked) + n_rel


def first_hit(ranked, judged, n_rel, rel, strict=False):
    """A bool parameter; summarised by the geometric mean."""
    for i in range(len(ranked)):
        if ranked[i] > rel if strict else ranked[i] >= rel:
            return 1.0 / (i + 1)
    return 0.0


DEFINED = {"UDiscounted": dict(function=discounted, cutoff=True, aliases=("udisc",)),
           "UUnjudged": dict(function=unjudged_share, aggregate="sum"),
           "UFirstHit": dict(function=first_hit, cutoff="required", aggregate="gmean")}


@pytest.fixture(scope="module", autouse=True)
def defined():
    for name, definition in DEFINED.items():
        fastir.define_measure(name=name, **definition)
    yield
    for name in DEFINED:
        fastir.undefine_measure(name)


def oracle(qrels, run, names, relevance_level=1, missing="zero", max_docs=None,
           judged_only=False):
    """{qid: [value per name]}: the plain functions on the naive reference's rankings."""
    out = {}
    for qid, labels in qrels.items():
        if qid not in run and missing == "skip":
            continue
        ranking = np.array(naive.judge(labels, naive._ranked_docs(
            labels, run.get(qid, {}), max_docs, judged_only)), dtype=np.int32)
        judged = np.array(sorted(labels.values(), reverse=True), dtype=np.int32)
        values = []
        for name in names:
            ((_, measure),) = parse(name)
            family = measure.spec
            level = relevance_level if measure.rel is None else measure.rel
            cut = measure.cutoff or 0
            ranked = ranking[:cut] if cut else ranking
            arguments = {"cutoff": cut, "rel": level}
            arguments.update({p: getattr(measure, p) for p in family.params
                              if p not in ("rel", "judged_only")})
            extra = [arguments[a] for a in family.arguments]
            values.append(family.function(ranked, judged, int((judged >= level).sum()), *extra)
                          if len(ranking) else 0.0)
        out[qid] = values
    return out


NAMES = st.lists(st.one_of(
    st.builds(lambda k, base, exp: f"UDiscounted(base={base},exponential={exp})" +
              (f"@{k}" if k else ""), st.integers(0, 6), st.sampled_from([2.0, 3.0, 1.5]),
              st.booleans()),
    st.builds(lambda w, rel: f"UUnjudged(weight={w}" + (f",rel={rel})" if rel else ")"),
              st.integers(-2, 3), st.sampled_from([None, 0, 2])),
    st.builds(lambda k, strict: f"UFirstHit(strict={strict})@{k}", st.integers(1, 5),
              st.booleans())), min_size=1, max_size=4, unique=True)


@settings(max_examples=40, deadline=None)
@given(qrels_and_runs(), NAMES, st.integers(0, 2), st.sampled_from(["zero", "skip"]),
       st.sampled_from([None, 3]), st.booleans())
def test_compiled_equals_the_plain_function_on_the_naive_ranking(pair, names, level, missing,
                                                                  max_docs, judged_only):
    qrels, run = pair
    options = dict(relevance_level=level, missing=missing, max_docs=max_docs,
                   judged_only=judged_only)
    results = fastir.evaluate(qrels, run, names, **options)
    expected = oracle(qrels, run, names, **options)
    got = {q: list(row) for q, row in zip(results.query_ids, results.values.tolist())}
    assert got == expected


@settings(max_examples=15, deadline=None)
@given(qrels_and_runs(), NAMES)
def test_every_entry_point_gives_evaluate_s_values(pair, names):
    qrels, run = pair
    qrels = {q: d for q, d in qrels.items() if d}
    whole = fastir.evaluate(qrels, run, names)
    evaluator = fastir.Evaluator(qrels, names)
    assert evaluator.evaluate(run).mean == whole.mean
    qids, docs, scores = run_rows({q: d for q, d in run.items() if q in qrels})
    if qids:
        bound = evaluator.bind(qids, docs).evaluate(scores)
        kept = {q: row for q, row in zip(whole.query_ids, whole.values.tolist())}
        assert {q: row for q, row in zip(bound.query_ids, bound.values.tolist())} == \
            {q: kept[q] for q in bound.query_ids}
        twice = evaluator.bind(qids, docs).evaluate(np.stack([scores, -scores]))
        assert twice[0].tolist() == list(bound.mean.values())


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(0, 10**6))
def test_a_dense_batch_is_the_run_it_stands_for(batch, width, seed):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3, (batch, width)).astype(float)  # (ties: column order)
    labels = rng.integers(0, 3, (batch, width))
    valid = rng.random((batch, width)) < 0.8
    valid[:, 0] = True
    n_relevant = rng.integers(0, 4, batch)
    names = ["UDiscounted@3", "UDiscounted(base=3.0)", "UFirstHit@2", "nDCG@3"]
    means, rows = fastir.evaluate_matrix(scores, labels, names, valid=valid,
                                         n_relevant=n_relevant, per_row=True)
    qrels, run = matrix_to_dicts(scores, labels, valid, n_relevant)
    expected = fastir.evaluate(qrels, run, names)
    assert rows.tolist() == expected.values.tolist()
    assert means == pytest.approx(expected.mean, rel=1e-15)


def test_compare_and_files(tmp_path):
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1, "x": 1}}
    runs = {"one": {"q1": {"a": 1.0, "b": 2.0, "c": 0.5}, "q2": {"x": 1.0}},
            "two": {"q1": {"c": 3.0, "a": 2.0}, "q2": {"b": 1.0}}}
    comparison = fastir.compare(qrels, runs, ["UDiscounted@2", "nDCG@2"])
    assert "UDiscounted@2" in str(comparison)
    qrels_path, run_path = tmp_path / "qrels", tmp_path / "run"
    qrels_path.write_text("".join(f"{q} 0 {d} {label}\n" for q, docs in qrels.items()
                                  for d, label in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in runs["one"].items()
                                for d, s in docs.items()))
    streamed = fastir.evaluate_file(qrels_path, run_path, ["udisc@2", "UUnjudged"])
    assert streamed.mean == fastir.evaluate(qrels, runs["one"], ["udisc@2", "UUnjudged"]).mean


def test_a_measure_travels_by_pickle_and_is_defined_again_where_it_lands():
    measure = fastir.Measure("UDiscounted", 5, base=3.0)
    sent = pickle.dumps(measure)
    fastir.undefine_measure("UDiscounted")  # (a process that lacks it)
    with pytest.raises(ValueError, match="unknown measure"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "UDiscounted@5")
    back = pickle.loads(sent)
    assert back == measure and str(back) == "UDiscounted(base=3)@5"
    assert fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, back).mean == {
        "UDiscounted(base=3)@5": 1.0}


# -- errors: one line naming the measure and the query ----------------------------------
QRELS = {"q1": {"a": 1}, "q2": {"b": 0}}
RUN = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}


def over_relevant(ranked, judged, n_rel):
    return 1.0 / n_rel  # q2 has none: ZeroDivisionError (numba raises it too)


def nan_on_two(ranked, judged, n_rel):
    return math.nan if n_rel == 0 else 1.0


def text_value(ranked, judged, n_rel):
    return "high"


def with_statistics(ranked, judged, n_rel):
    return statistics.fmean([1.0, 1.0])  # (a module numba does not compile)


@pytest.fixture
def measures():
    names = []

    def define(function, **options):
        fastir.define_measure(function, **options)
        names.append(options.get("name", function.__name__))
    yield define
    for name in names:
        fastir.undefine_measure(name)


def test_a_function_that_raises_is_named_with_the_query(measures):
    measures(over_relevant)
    with pytest.raises(ValueError) as error:
        fastir.evaluate(QRELS, RUN, "over_relevant")
    text = str(error.value)
    assert text.startswith("over_relevant on query 'q2': ") and "ZeroDivisionError" in text
    assert "\n" not in text


def test_nan_is_refused_naming_the_query(measures):
    measures(nan_on_two)
    with pytest.raises(ValueError, match=r"^nan_on_two on query 'q2': the function returned NaN"):
        fastir.evaluate(QRELS, RUN, "nan_on_two")


def test_a_value_that_is_not_a_number(measures, engine):
    measures(text_value)
    if engine == "python":
        pattern = r"^text_value on query 'q1': .*text_value returned str 'high', not a number$"
    else:  # (numba refuses it as it compiles)
        pattern = r"^text_value: numba cannot compile .*text_value: "
    with pytest.raises(ValueError, match=pattern):
        fastir.evaluate(QRELS, RUN, "text_value")


def test_numba_s_reason_in_one_line_or_plain_python_when_asked(measures, engine):
    measures(with_statistics)
    if engine == "numba":
        with pytest.raises(user.FunctionError) as error:
            fastir.evaluate(QRELS, RUN, "with_statistics")
        text = str(error.value)
        assert "with_statistics" in text and "jit=False" in text and "\n" not in text
    fastir.define_measure(with_statistics, jit=False, replace=True)
    assert fastir.evaluate(QRELS, RUN, "with_statistics").mean == {"with_statistics": 1.0}


@pytest.mark.one_engine
def test_definitions_are_checked():
    with pytest.raises(ValueError, match="'nDCG' names a built-in measure"):
        fastir.define_measure(discounted, name="nDCG")
    with pytest.raises(ValueError, match=r"must take \(ranked, judged, n_rel"):
        fastir.define_measure(lambda ranked, judged: 0.0, name="short")
    with pytest.raises(ValueError, match="parameter p's default must be a number"):
        fastir.define_measure(lambda ranked, judged, n_rel, p="x": 0.0, name="texty")
    with pytest.raises(ValueError, match="defined already"):
        fastir.define_measure(first_hit, name="UDiscounted")
    again = types.FunctionType(discounted.__code__, discounted.__globals__, "discounted",
                               discounted.__defaults__)  # (a cell run again)
    fastir.define_measure(again, name="UDiscounted", cutoff=True, aliases=("udisc",))
    assert parse("UDiscounted@3")[0][1].spec.function is again
    fastir.define_measure(discounted, name="UDiscounted", cutoff=True, aliases=("udisc",))
    with pytest.raises(fastir.UnknownMeasureError, match="UFirstHit needs a cutoff"):
        fastir.evaluate(QRELS, RUN, "UFirstHit")
    with pytest.raises(fastir.UnknownMeasureError, match="weight must be an integer"):
        fastir.evaluate(QRELS, RUN, "UUnjudged(weight=0.5)")


# -- the command line ----------------------------------------------------------------------
DEFINITION = '''
import fastir


@fastir.define_measure(cutoff=True)
def top_gain(ranked, judged, n_rel, cutoff):
    total = 0.0
    for code in ranked:
        total += max(code, 0)
    return total


def plain(ranked, judged, n_rel):
    return float(n_rel)
'''


@pytest.mark.one_engine
def test_the_command_line_defines_measures_from_a_module(tmp_path):
    """(Python kernels in the subprocesses: the tests above compile the loops.)"""
    import os

    from cli_calls import cli

    env = {**os.environ, "FASTIR_JIT": "python"}

    (tmp_path / "mine.py").write_text(DEFINITION)
    (tmp_path / "qrels").write_text("q1 0 a 2\nq1 0 b 1\nq2 0 c 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq2 Q0 d 1 1 r\n")
    done = cli("eval", "qrels", "run", "--define", "mine:top_gain", "--define",
               "mine.py:plain", "-m", "top_gain@1", "-m", "plain", "--format", "tsv",
               cwd=tmp_path, env=env, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split("\t")[1:] == ["1.0000", "1.5000"]
    listed = cli("measures", "--define", "mine.py:plain", cwd=tmp_path, env=env, text=True)
    assert "| plain |" in listed.stdout and "mine.plain(ranked, judged, n_rel)" in listed.stdout
    wrong = cli("eval", "qrels", "run", "--define", "mine:absent", cwd=tmp_path, env=env,
                text=True)
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        "fastir eval: error: --define 'mine:absent': AttributeError: module 'mine' has no "
        "attribute 'absent'"]


def test_dask_gives_evaluate_s_values_and_its_plan_travels():
    dask = pytest.importorskip("dask")
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import fastir.dask as fdask
    from fastir.engine import Plan

    rng = np.random.default_rng(3)
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.integers(0, 3))) for q in range(12)
                          for d in range(8) if rng.random() < 0.6],
                         columns=["query_id", "doc_id", "relevance"])
    run = pd.DataFrame([(f"q{q}", f"d{d}", float(rng.integers(0, 4))) for q in range(12)
                        for d in range(10)], columns=["query_id", "doc_id", "score"])
    names = ["UDiscounted@5", "UUnjudged", "nDCG@5"]
    want = fastir.evaluate(qrels, run, names)
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(dd.from_pandas(run, npartitions=3, sort=False), qrels, names,
                             per_query=True)
    assert got.values.tolist() == want.values.tolist()
    plan = pickle.loads(pickle.dumps(Plan(names)))  # (what a worker process receives)
    assert [str(m) for m in plan.parsed] == names and len(plan.user) == 2


@pytest.mark.one_engine
def test_an_installed_package_s_measures_are_defined_when_first_named(tmp_path, monkeypatch):
    package = tmp_path / "ud_measures_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import fastir\n\n\n"
        "@fastir.define_measure\n"
        "def pkg_depth(ranked, judged, n_rel):\n"
        "    return float(len(ranked))\n\n\n"
        "def define_more():\n"
        "    fastir.define_measure(lambda ranked, judged, n_rel: float(n_rel), name='pkg_rel')\n")
    info = tmp_path / "ud_measures_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ud-measures-pkg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[fastir.measures]\npkg_depth = ud_measures_pkg:pkg_depth\n"
        "more = ud_measures_pkg:define_more\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_installed_loaded", False)
    try:
        got = fastir.evaluate(QRELS, RUN, ["pkg_depth", "pkg_rel"]).values.tolist()
        assert got == [[1.0, 1.0], [1.0, 0.0]]
    finally:
        for name in ("pkg_depth", "pkg_rel"):
            fastir.undefine_measure(name)


# -- a compiled measure is what its Python says (issue 41) ---------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("name", ["P_5", "ndcg_cut_10", "runid", "map", "hits", "P_x",
                                  "recall_1000", "ndcg", "NumRet", "iprec_at_recall_0"])
def test_a_name_that_names_a_built_in_in_any_dialect_is_refused(name):
    """``P_5`` was accepted, and evaluate(..., "P_5") then gave the user's number."""
    before = fastir.evaluate(QRELS, RUN, ["P_5"]).mean
    with pytest.raises(ValueError, match=f"'{name}' names a built-in measure"):
        fastir.define_measure(lambda ranked, judged, n_rel: 7.0, name=name)
    with pytest.raises(ValueError, match="'P_5' names a built-in measure"):
        fastir.define_measure(lambda ranked, judged, n_rel: 7.0, name="mine", aliases=("P_5",))
    assert fastir.evaluate(QRELS, RUN, ["P_5"]).mean == before
    assert set(registry.user_families()) == set(DEFINED)


def _closure(value):
    def closure_value(ranked, judged, n_rel):
        return float(value)
    return closure_value


def test_each_closure_is_its_own_measure(measures):
    """make(2) gave make(1)'s value once make(1) was compiled (one loop per code)."""
    for value in (1, 2, 1, 3):
        fastir.define_measure(_closure(value), name="closure_value", replace=True)
        assert fastir.evaluate(QRELS, RUN, "closure_value").mean == {"closure_value": value}
    fastir.undefine_measure("closure_value")


SCALE = 1.0
LEVELS = np.array([1.0, 10.0])


def scaled(ranked, judged, n_rel):
    return SCALE * n_rel + LEVELS[0]


def test_a_global_it_reads_is_read_as_it_is_now(measures, monkeypatch):
    """numba compiles a global in as it is: a later value makes another loop."""
    measures(scaled)
    assert fastir.evaluate(QRELS, RUN, "scaled").mean == {"scaled": 1.5}
    monkeypatch.setattr(f"{__name__}.SCALE", 3.0)
    monkeypatch.setattr(f"{__name__}.LEVELS", np.array([2.0, 10.0]))
    assert fastir.evaluate(QRELS, RUN, "scaled").mean == {"scaled": 3.5}


WEIGHTS = {"a": 1.0}


def reads_a_dict(ranked, judged, n_rel):
    return WEIGHTS["a"] * n_rel


@pytest.mark.one_engine
def test_a_global_numba_cannot_be_trusted_with_is_refused_unless_plain_python(measures):
    with pytest.raises(user.FunctionError, match=r"its global 'WEIGHTS' is a dict, .*jit=False"):
        fastir.define_measure(reads_a_dict)
    measures(reads_a_dict, jit=False)
    assert fastir.evaluate(QRELS, RUN, "reads_a_dict").mean == {"reads_a_dict": 0.5}


def past_the_end(ranked, judged, n_rel):
    return float(ranked[7])


def test_a_read_past_the_ranking_raises_as_in_python(measures):
    """Compiled, it returned garbage (0.0, 2.0, -909862144.0 seen)."""
    measures(past_the_end)
    with pytest.raises(ValueError) as error:
        fastir.evaluate(QRELS, RUN, "past_the_end")
    assert str(error.value) == (
        f"past_the_end on query 'q1': {__name__}.past_the_end raised IndexError: index 7 is "
        "out of bounds for axis 0 with size 1")


SPIN = '''
def spin(ranked, judged, n_rel, forever=0):
    """Never ends when forever is not 0 (its compiled loop is the same)."""
    turns = 0
    while forever != 0 or turns < 3:
        turns += 1
    return 1.0
'''


@pytest.mark.one_engine
def test_ctrl_c_ends_a_compiled_loop_that_never_ends(tmp_path):
    """The command: 130 and its line; the library: KeyboardInterrupt (both: compiled, the
    loop once cached). It ran on, ignoring Ctrl-C."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from cli_calls import PROGRAM

    (tmp_path / "spinning.py").write_text(SPIN)
    data = os.path.join(os.path.dirname(__file__), os.pardir, "data", "trec_eval", "inputs")
    pair = [os.path.join(data, "qrels.test"), os.path.join(data, "results.test")]
    env = {**os.environ, "FASTIR_JIT": "numba", "FASTIR_WORKER": "off",
           "FASTIR_CACHE_DIR": str(tmp_path / "cache")}
    command = [*PROGRAM, "eval", *pair, "--define", "spinning.py:spin", "-m"]
    done = subprocess.run([*command, "spin"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    spinning = subprocess.Popen([*command, "spin(forever=1)"], env=env, cwd=tmp_path,
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                preexec_fn=sigint_default)
    try:
        time.sleep(5)
        spinning.send_signal(signal.SIGINT)
        _, err = spinning.communicate(timeout=60)
    finally:  # (a loop that Ctrl-C did not end spins on, loading every later test)
        if spinning.poll() is None:
            spinning.kill()
            spinning.wait()
    assert spinning.returncode == 130 and err.splitlines()[-1:] == [
        "fastir eval: interrupted (Ctrl-C)"], err
    script = (f"import os, signal, threading, fastir, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              "import spinning\nfastir.define_measure(spinning.spin)\n"
              f"pair = {pair!r}\nfastir.evaluate(*pair, ['spin'])\n"
              "threading.Timer(3, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
              "try:\n    fastir.evaluate(*pair, ['spin(forever=1)'])\n"
              "except KeyboardInterrupt:\n    print('KeyboardInterrupt')\n")
    library = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                             text=True, timeout=120, preexec_fn=sigint_default)
    assert library.returncode == 0 and library.stdout == "KeyboardInterrupt\n", library.stderr


@pytest.mark.one_engine
def test_each_closure_is_its_own_measure_in_a_new_process_too(tmp_path):
    """The disk cache: a new process defining make(2) got make(1)'s compiled loop."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "FASTIR_JIT": "numba", "FASTIR_CACHE_DIR": str(tmp_path)}
    script = ("import sys, fastir\n"
              "def make(value):\n"
              "    def closure_value(ranked, judged, n_rel):\n"
              "        return float(value)\n"
              "    return closure_value\n"
              "fastir.define_measure(make(float(sys.argv[1])), name='closure_value')\n"
              "print(fastir.evaluate({'q': {'a': 1}}, {'q': {'a': 1.0}}, 'closure_value')"
              ".mean['closure_value'])\n")
    for value in ("1.0", "2.0", "1.0"):
        done = subprocess.run([sys.executable, "-c", script, value], env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.stdout.strip() == value, done.stderr


@pytest.mark.one_engine
@pytest.mark.parametrize("damaged", [".nbi", ".nbc"])
def test_a_damaged_cache_entry_is_rebuilt(tmp_path, damaged):
    """A truncated index or data file: every later run failed with 'gave NaN where it
    gives a number as Python', the entry never rewritten."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "FASTIR_JIT": "numba", "FASTIR_CACHE_DIR": str(tmp_path)}
    script = ("import fastir\n"
              "def counted(ranked, judged, n_rel):\n"
              "    return float(n_rel) + 0.5\n"
              "fastir.define_measure(counted)\n"
              "print(fastir.evaluate({'q': {'a': 1, 'b': 2}}, {'q': {'a': 1.0}}, 'counted')"
              ".mean['counted'])\n")

    def run():
        done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0 and done.stdout == "2.5\n", done.stderr

    run()
    entries = sorted(tmp_path.rglob(f"*{damaged}"))
    assert entries
    for entry in entries:
        entry.write_bytes(entry.read_bytes()[:len(entry.read_bytes()) // 2])
    run()  # (rebuilt)
    sizes = {entry: entry.stat().st_size for entry in sorted(tmp_path.rglob(f"*{damaged}"))}
    run()  # (loaded: written once, whole)
    assert {entry: entry.stat().st_size for entry in sorted(tmp_path.rglob(f"*{damaged}"))} \
        == sizes
