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
from conftest import matrix_to_dicts, qrels_and_runs, run_rows
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
