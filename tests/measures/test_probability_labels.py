"""Probabilistic labels (``labels="probability"``, issue 42 item 2): each value is the
probability-weighted mean over every assignment of labels, each assignment evaluated here
by ``fastir.evaluate`` on plain integer qrels (every family that takes them, both engines);
a query of more than 1,024 assignments is a Monte Carlo estimate within 4 of its standard
errors, seeded; the readers' one-line refusals; the families and doors that take none,
refused by name; ``fastir eval --labels probability`` and the other doors against
``fastir.evaluate``."""

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from checks import cases, useful
from cli_calls import in_process
from conftest import DOC_IDS, QUERY_IDS, SCORES
from hypothesis import given
from hypothesis import strategies as st

import fastir
from fastir.measures.registry import FAMILIES, parse_all

#: Every example of the families that take probabilistic labels.
NAMES = [name for family in FAMILIES.values() if family.probabilities is None
         for name in family.examples]
PROBABILITIES = st.sampled_from([0.0, 1e-3, 0.1, 0.25, 0.5, 0.75, 1.0])
DISTRIBUTIONS = st.sampled_from([{0: 0.2, 1: 0.5, 2: 0.3}, {1: 0.5, 3: 0.5}, {2: 1.0},
                                 {0: 0.25, 2: 0.75}])


def _distribution(label):
    return label if isinstance(label, dict) else {0: 1.0 - label, 1: label}


def _assignments(labels):
    """[(probability, {doc: integer label})] of every assignment of nonzero probability."""
    docs = list(labels)
    outcomes = [[(k, p) for k, p in _distribution(v).items() if p > 0] for v in labels.values()]
    return [(math.prod(p for _, p in combo), dict(zip(docs, (k for k, _ in combo))))
            for combo in itertools.product(*outcomes)]


def _n_assignments(labels):
    return math.prod(sum(p > 0 for p in _distribution(v).values()) for v in labels.values())


@st.composite
def requests(draw, max_worlds=1024):
    """Probabilistic qrels (probabilities and distributions, up to 10 judged documents and
    ``max_worlds`` assignments a query), a run, names and options."""
    qrels = {}
    for q in draw(st.lists(QUERY_IDS, min_size=1, max_size=3, unique=True)):
        docs = draw(st.lists(DOC_IDS, min_size=1, max_size=10, unique=True))
        labels = {d: draw(DISTRIBUTIONS if draw(st.integers(0, 4)) == 0 else PROBABILITIES)
                  for d in docs}
        while _n_assignments(labels) > max_worlds:
            labels.popitem()
        qrels[q] = labels
    run = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, SCORES, max_size=12),
                               max_size=3))
    ties = draw(st.sampled_from(["trec_eval", "input", "expected"]))
    names = [n for n in NAMES if ties != "expected"
             or FAMILIES[parse_all([n])[1][0].spec.name].ties is not None]
    names = draw(st.lists(st.sampled_from(names), min_size=1, max_size=6, unique=True))
    options = dict(relevance_level=draw(st.integers(1, 2)), ties=ties, num_docs=40,
                   judged_only=draw(st.booleans()),
                   missing=draw(st.sampled_from(["zero", "skip"])))
    return qrels, run, names, options


def expected(qrels, run, names, options):
    """``{query: [value per name]}``: every assignment of each query's labels a query of
    integer labels, all evaluated by one ``fastir.evaluate``, their values weighted by their
    probabilities."""
    world_qrels, world_run, of = {}, {}, {}
    for q, labels in qrels.items():
        for i, (weight, assignment) in enumerate(_assignments(labels)):
            world = f"{q}~{i}"
            world_qrels[world], of[world] = assignment, (q, weight)
            if q in run:
                world_run[world] = run[q]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = fastir.evaluate(world_qrels, world_run, names, **options).to_dict()
    out = {}
    for world, row in values.items():
        q, weight = of[world]
        out[q] = out.get(q, 0.0) + weight * np.array([row[n] for n in names])
    return out


@cases(40)
@given(requests())
def test_each_value_is_the_probability_weighted_mean_over_every_assignment(request):
    qrels, run, names, options = request
    if not any(q in run for q in qrels):
        return
    try:
        want = expected(qrels, run, names, options)
    except ValueError:  # (a measure undefined on some assignment: refused alike)
        with pytest.raises(ValueError):
            fastir.evaluate(qrels, run, names, labels="probability", **options)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = fastir.evaluate(qrels, run, names, labels="probability", **options)
    assert set(got.query_ids) == set(want)
    for q, values in zip(got.query_ids, got.values):
        np.testing.assert_allclose(values, want[q], rtol=1e-9, atol=1e-12, err_msg=str(q))
    assert not got.standard_errors.any()


FIXED = {"q1": {"d1": 0.3, "d2": {0: 0.2, 1: 0.5, 2: 0.3}, "d3": 1.0, "d4": 0.0, "d5": 0.6,
                "d6": {1: 0.5, 3: 0.5}},
         "q2": {"d1": 0.5, "d7": 0.25},
         "q3": {"d2": 0.9}}
FIXED_RUN = {"q1": {"d1": 3.0, "x": 2.5, "d2": 2.0, "d5": 2.0, "d4": 1.0, "d6": 0.5},
             "q2": {"d7": 1.0, "d1": 1.0, "y": 0.5}}


def test_every_example_of_every_family_on_one_request():
    options = dict(num_docs=40)
    for name in NAMES:
        try:
            want = expected(FIXED, FIXED_RUN, [name], options)
        except ValueError:  # (undefined on some assignment: refused alike)
            with pytest.raises(ValueError):
                fastir.evaluate(FIXED, FIXED_RUN, [name], labels="probability", **options)
            continue
        got = fastir.evaluate(FIXED, FIXED_RUN, [name], labels="probability", **options)
        np.testing.assert_allclose(got.values[:, 0], [want[q][0] for q in got.query_ids],
                                   rtol=1e-9, atol=1e-12, err_msg=name)


def top_label(ranked, judged, n_rel):
    """The first ranked document's label (0 when it is not judged)."""
    return float(max(ranked[0], 0)) if len(ranked) else 0.0


@pytest.mark.parametrize("jit", [False, True])
def test_a_user_measure_is_expected_over_the_labels_too(jit):
    fastir.define_measure(top_label, jit=jit)
    qrels = {"q1": {"a": 0.3, "b": {0: 0.5, 2: 0.5}, "c": 0.9}, "q2": {"a": 0.25}}
    run = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"a": 1.0, "b": 0.5}}
    got = fastir.evaluate(qrels, run, ["top_label", "AP"], labels="probability")
    want = expected(qrels, run, ["top_label", "AP"], {})
    np.testing.assert_allclose(got.values, [want["q1"], want["q2"]], rtol=1e-12)
    assert got.values[:, 0].tolist() == [1.0, 0.25]


# -- beyond 1,024 assignments: Monte Carlo ------------------------------------------------
MANY = {"q1": {f"d{i}": p for i, p in enumerate([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
                                                  0.9, 0.15, 0.35, 0.65])},
        "q2": {"d1": {0: 0.2, 1: 0.5, 2: 0.3}, "d2": 0.5}}
MANY_RUN = {"q1": {f"d{i}": float((7 * i) % 12) for i in range(12)} | {"x": 5.5},
            "q2": {"d2": 2.0, "x": 1.0, "d1": 0.5}}
MC_NAMES = ["P@5", "AP", "nDCG@10", "RR", "ERR@5", "NumRel", "Rprec"]


@pytest.mark.parametrize("seed", [0, 7])
def test_a_query_of_more_assignments_is_estimated_within_four_standard_errors(seed):
    with pytest.warns(fastir.FastirWarning, match=r"1 queries \('q1'\).*standard error"):
        got = fastir.evaluate(MANY, MANY_RUN, MC_NAMES, labels="probability", samples=2000,
                              label_seed=seed)
    want = expected(MANY, MANY_RUN, MC_NAMES, {})
    errors = got.standard_errors
    assert (errors[0] > 0).all() and not errors[1].any()  # (q2: 6 assignments, exact)
    assert (np.abs(got.values[0] - want["q1"]) <= 4 * errors[0]).all(), \
        (got.values[0], want["q1"], errors[0])
    np.testing.assert_allclose(got.values[1], want["q2"], rtol=1e-12)


def test_the_estimate_is_seeded():
    def values(**options):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fastir.evaluate(MANY, MANY_RUN, "AP", labels="probability",
                                   **options).values
    assert (values() == values(label_seed=0)).all()
    assert (values(label_seed=3) != values()).any()
    assert (values(samples=50) != values()).any()
    together = values()[0]  # (a query's draws are its own: alone, the same)
    alone = fastir.evaluate({"q1": MANY["q1"]}, MANY_RUN, "AP", labels="probability")
    assert alone.values[0] == together


# -- every door: evaluate's values ------------------------------------------------------
def _write_run(path, run):
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} t\n" for q, docs in run.items()
                            for i, (d, s) in enumerate(docs.items())))
    return str(path)


@cases(15)
@given(requests(max_worlds=4096), st.integers(1, 200), st.integers(1, 3))
def test_every_door_gives_evaluates_values_sampled_queries_too(tmp_path_factory, request,
                                                                 chunk_bytes, partitions):
    dd = pytest.importorskip("dask.dataframe")
    import dask
    import pandas as pd

    import fastir.dask

    qrels, run, names, options = request
    run = {q: docs for q, docs in run.items() if docs}  # (as a file has them)
    if not any(q in run for q in qrels):
        return
    options = dict(options, labels="probability", samples=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = fastir.evaluate(qrels, run, names, **options)
        except ValueError:
            return
        path = _write_run(tmp_path_factory.mktemp("run") / "run.txt", run)
        rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        frame = dd.from_pandas(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
                               npartitions=partitions, sort=False)
        with dask.config.set(scheduler="synchronous"):
            doors = {"evaluate_file": fastir.evaluate_file(qrels, path, names,
                                                           chunk_bytes=chunk_bytes, **options),
                     "Evaluator": fastir.Evaluator(qrels, names, **options).evaluate(run),
                     "dask": fastir.dask.evaluate(frame, qrels, names, per_query=True,
                                                  **options)}
    for door, got in doors.items():
        assert got.query_ids == want.query_ids, door
        np.testing.assert_allclose(got.values, want.values, rtol=1e-12, atol=1e-12,
                                   err_msg=door)
        np.testing.assert_allclose(got.standard_errors, want.standard_errors, rtol=1e-12,
                                   atol=1e-12, err_msg=door)


# -- readers and their refusals -----------------------------------------------------------
QRELS = {"q1": {"a": 0.7, "b": 0.0, "c": 1.0}, "q2": {"x": 0.3}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}, "q2": {"y": 2.0, "x": 1.0}}
MEASURES = ["nDCG@3", "P@2", "AP", "NumRel"]
TEXT = "q1 0 a 0.7\nq1 0 b 0\n# a comment\nq1 0 c 1\nq2 0 x .3\n"


@pytest.mark.one_engine
def test_every_form_and_door_reads_probabilities(tmp_path):
    import pandas as pd
    import pyarrow as pa

    path = tmp_path / "qrels.txt"
    path.write_text(TEXT)
    qrels = fastir.read_qrels(str(path), labels="probability")
    assert qrels.to_dict() == QRELS
    want = fastir.evaluate(QRELS, RUN, MEASURES, labels="probability").values
    rows = [(q, d, v) for q, docs in QRELS.items() for d, v in docs.items()]
    q, d, v = zip(*rows)
    frame = pd.DataFrame({"query_id": q, "doc_id": d, "relevance": v})
    for form in (str(path), qrels, frame, pa.Table.from_pandas(frame), rows,
                 fastir.read_qrels(str(path), labels="float")):
        got = fastir.evaluate(form, RUN, MEASURES, labels="probability")
        np.testing.assert_array_equal(got.values, want)
    assert fastir.Evaluator(str(path), MEASURES, labels="probability").evaluate(RUN) \
        .values.tolist() == want.tolist()
    run_path = tmp_path / "run.txt"
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items()
                                for d, s in docs.items()))
    streamed = fastir.evaluate_file(str(path), str(run_path), MEASURES, labels="probability")
    np.testing.assert_array_equal(streamed.values, want)
    compared = fastir.compare(str(path), {"a": str(run_path), "b": RUN}, "AP",
                              labels="probability")
    assert compared.means.tolist() == [[want[:, 2].mean()]] * 2


@pytest.mark.one_engine
def test_integer_qrels_are_certain_labels():
    integer = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"x": 1}}
    want = fastir.evaluate(integer, RUN, MEASURES).values
    got = fastir.evaluate(fastir.Qrels.from_dict(integer), RUN, MEASURES, labels="probability")
    np.testing.assert_array_equal(got.values, want)
    as_dists = {q: {d: {v: 1.0} for d, v in docs.items()} for q, docs in integer.items()}
    got = fastir.evaluate(as_dists, RUN, MEASURES, labels="probability")
    np.testing.assert_array_equal(got.values, want)


@pytest.mark.one_engine
@pytest.mark.parametrize("label, why", [
    (1.5, "label 1.5 is not a probability in [0, 1]"),
    (-0.1, "label -0.1 is not a probability in [0, 1]"),
    (float("nan"), "label nan is not a probability in [0, 1]"),
    ("0.5", "label '0.5' is not a number"),
    ({0: 0.2, 1: 0.5}, "label distribution {0: 0.2, 1: 0.5}: its probabilities sum to 0.7, "
                       "not 1"),
    ({0: 0.5, 1: 0.5 + 2e-9}, "its probabilities sum to 1.00000000"),
    ({-1: 1.0}, "its labels must be integers >= 0"),
    ({0.5: 1.0}, "its labels must be integers >= 0"),
    ({0: float("nan"), 1: 1.0}, "its probabilities must be numbers in [0, 1]"),
])
def test_a_bad_probability_is_one_line_naming_its_query_and_doc(label, why):
    with pytest.raises(fastir.InputError) as info:
        fastir.evaluate({"q1": {"a": 0.5, "b": label}}, RUN, "P@1", labels="probability")
    message = str(info.value)
    assert message.startswith("qrels dict: query 'q1' doc 'b': ") and why in message and \
        message.endswith("(labels='probability')") and "\n" not in message, message
    useful(info.value, "query 'q1' doc 'b'")


@pytest.mark.one_engine
def test_a_distribution_within_the_tolerance_is_taken():
    near = fastir.evaluate({"q1": {"a": {0: 0.5, 1: 0.5 + 1e-10}}}, RUN, "P@1",
                           labels="probability")
    assert near.values[0, 0] == pytest.approx(0.5, abs=1e-9)


@pytest.mark.one_engine
@pytest.mark.parametrize("token", ["1.5", "-0.5", "nan", "abc"])
def test_a_bad_probability_in_a_file_names_its_line(tmp_path, token):
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 a 0.7\nq1 0 b {token}\n")
    with pytest.raises(fastir.InputError) as info:
        fastir.read_qrels(str(path), labels="probability")
    message = str(info.value)
    assert message.startswith(f"{path}:2: relevance label {token!r}") and "\n" not in message


@pytest.mark.one_engine
def test_probabilistic_qrels_under_other_labels_say_what_to_pass():
    qrels = fastir.Qrels.from_dict(QRELS, labels="probability")
    for labels in ("int", "float"):
        with pytest.raises(ValueError, match="evaluate them with labels='probability'"):
            fastir.evaluate(qrels, RUN, "P@1", labels=labels)


# -- refusals ----------------------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("family", [f for f in FAMILIES.values() if f.probabilities is not None
                                    and f.path not in ("prefs", "groups")])
def test_a_family_that_takes_no_probabilities_is_refused_by_name(family):
    name = family.examples[-1]
    with pytest.raises(ValueError) as info:
        fastir.evaluate(QRELS, RUN, [name], labels="probability")
    message = str(info.value)
    assert message == (f"{parse_all([name])[1][0]}: takes no probabilistic labels "
                       f"(labels='probability'): {family.probabilities}")


@pytest.mark.one_engine
@pytest.mark.parametrize("call", [
    lambda: fastir.pr_curve(QRELS, RUN, labels="probability"),
    lambda: fastir.Evaluator(QRELS, "P@1", labels="probability").bind(["q1"], ["a"]),
    lambda: fastir.evaluate(fastir.Prefs.from_qrels(fastir.Qrels.from_dict({"q1": {"a": 1}})),
                            RUN, "ppref", labels="probability"),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="probability", unjudged="relevant"),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="probability", samples=1),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="probability", label_seed=-1),
    lambda: fastir.compare_judges(QRELS, QRELS, {"A": RUN, "B": RUN}, "P@1",
                                  labels="probability"),
])
def test_what_probabilistic_labels_cannot_do_is_refused_saying_so(call):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and ("probability" in message or "samples" in message or
                                    "seed" in message), message


# -- the command line ----------------------------------------------------------------------
@pytest.mark.one_engine
def test_fastir_eval_labels_probability_equals_the_library(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(TEXT)
    run.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items()
                           for d, s in docs.items()))
    flags = [a for m in MEASURES for a in ("-m", m)]
    status, out, err = in_process("eval", str(qrels), str(run), *flags, "--labels",
                                  "probability", "--format", "json")
    assert status == 0, err
    row = json.loads(out)[0]
    want = fastir.evaluate(str(qrels), str(run), MEASURES, labels="probability").mean
    assert {m: row[m] for m in MEASURES} == want
    status, _, err = in_process("eval", str(qrels), str(run), "-m", "relstring", "--labels",
                                "probability")
    assert status != 0 and "RelString: takes no probabilistic labels" in err
