"""Real-valued labels (``labels="float"``, issue 42 item 1): integer labels given as reals give
the values of ``labels="int"`` bit for bit, for every family that takes reals; real labels
against the naive reference (its gains the labels) and nDCG's formula written out; a real
relevance level as the integer evaluation of the labels it thresholds; the readers of every
form and their one-line refusals; the families that take integer labels only refused by
name; ``fastir eval --labels float`` against the library."""

import json
import math

import naive
import numpy as np
import pytest
from checks import cases, useful
from cli_calls import in_process
from conftest import DOC_IDS, QUERY_IDS, SCORES
from hypothesis import given
from hypothesis import strategies as st

import fastir
from fastir.measures.registry import FAMILIES, REALS, parse_all

#: Every example of the families that take real labels, but gain tables (integer labels).
REAL_NAMES = [name for family in FAMILIES.values() if family.reals in REALS
              for name in family.examples
              if getattr(parse_all([name])[1][0], "gains", None) is None]
#: Those that compare labels with the level only, without a rel= of their own.
COMPARED = [name for name in REAL_NAMES if FAMILIES[parse_all([name])[1][0].spec.name].reals
            == "compared" and "rel=" not in name]
#: Those the naive reference computes from real labels (its gain tables count labels 0..max).
NAIVE = ["nDCG@3", "nDCG", "DCG@2", "IDCG@3", "nDCG(dcg='exp-log2')@4", "nDCG(rel=2)@3", "P@2",
         "AP", "R@3", "RR", "Bpref", "NumRel", "NumRelRet", "Rprec", "SetF", "Success@2"]
REAL_LABELS = st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0, 1.5, 2.5, 3.0, 1e-9])


def _drawn(draw, labels):
    qrels = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, labels, max_size=10),
                                 min_size=1, max_size=4))
    run = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, SCORES, max_size=12),
                               max_size=4))
    return qrels, run


@st.composite
def integer_requests(draw):
    """Integer qrels, a run, a subset of the real-label families' names in a drawn order, and
    options."""
    qrels, run = _drawn(draw, st.integers(0, 3))
    ties = draw(st.sampled_from(["trec_eval", "input", "expected"]))
    names = [n for n in REAL_NAMES if ties != "expected"
             or FAMILIES[parse_all([n])[1][0].spec.name].ties is not None]
    names = draw(st.lists(st.sampled_from(names), min_size=1, max_size=8, unique=True))
    options = dict(relevance_level=draw(st.integers(0, 4)), ties=ties, num_docs=40,
                   judged_only=draw(st.booleans()), missing=draw(st.sampled_from(["zero",
                                                                                  "skip"])))
    return qrels, run, names, options


def _as_floats(qrels):
    return {q: {d: float(v) for d, v in docs.items()} for q, docs in qrels.items()}


def _nonempty(qrels, run):
    return any(q in run for q in qrels)


@cases(60)
@given(integer_requests())
def test_integer_labels_as_reals_give_the_integer_values_bit_for_bit(request):
    qrels, run, names, options = request
    if not _nonempty(qrels, run):
        return
    want = fastir.evaluate(qrels, run, names, **options)
    got = fastir.evaluate(_as_floats(qrels), run, names, labels="float", **options)
    assert got.query_ids == want.query_ids
    np.testing.assert_array_equal(got.values, want.values)


@cases(60)
@given(st.data())
def test_real_labels_equal_the_naive_reference(data):
    qrels, run = _drawn(data.draw, REAL_LABELS)
    if not _nonempty(qrels, run):
        return
    names = data.draw(st.lists(st.sampled_from(NAIVE), min_size=1, max_size=6, unique=True))
    level = data.draw(st.sampled_from([0, 0.5, 1, 1.5, 2.5]))
    got = fastir.evaluate(qrels, run, names, labels="float", relevance_level=level).to_dict()
    want = naive.evaluate(qrels, run, names, relevance_level=level, labels="float")
    assert set(got) == set(want)
    for qid, values in want.items():
        assert [got[qid][name] for name in names] == values, (qid, names)


def test_ndcg_of_one_real_labelled_query_is_its_formula():
    labels = {"a": 0.7, "b": 0.0, "c": 2.5, "d": 1.25, "e": 0.3}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.5, "x": 0.4, "e": 0.1}}  # (x: unjudged)
    gains = [0.7, 0.0, 2.5, 0.0, 0.3]
    ideal = [2.5, 1.25, 0.7, 0.3]
    for k in (1, 3, 5):
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
        got = fastir.evaluate({"q": labels}, run, f"nDCG@{k}", labels="float").mean
        assert got[f"nDCG@{k}"] == pytest.approx(dcg / idcg, rel=1e-15)
    exp = fastir.evaluate({"q": labels}, run, "nDCG(dcg='exp-log2')@3", labels="float")
    dcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(gains[:3]))
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal[:3]))
    assert exp.mean["nDCG(dcg='exp-log2')@3"] == pytest.approx(dcg / idcg, rel=1e-15)


@cases(60)
@given(st.data())
def test_a_real_level_is_the_integer_evaluation_of_the_labels_it_thresholds(data):
    qrels, run = _drawn(data.draw, REAL_LABELS)
    if not _nonempty(qrels, run):
        return
    level = data.draw(st.sampled_from([0.5, 0.7, 1e-9, 2.0]))
    names = data.draw(st.lists(st.sampled_from(COMPARED), min_size=1, max_size=8, unique=True))
    thresholded = {q: {d: int(v >= level) for d, v in docs.items()} for q, docs in qrels.items()}
    want = fastir.evaluate(thresholded, run, names, num_docs=40)
    got = fastir.evaluate(qrels, run, names, labels="float", relevance_level=level,
                          num_docs=40)
    np.testing.assert_array_equal(got.values, want.values)


# -- readers ---------------------------------------------------------------------------
QRELS = {"q1": {"a": 0.7, "b": 0.0, "c": 2.5}, "q2": {"x": 0.3}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.1}, "q2": {"y": 2.0, "x": 1.0}}
MEASURES = ["nDCG@3", "P@2", "AP", "NumRel"]
TEXT = "q1 0 a 0.7\nq1 0 b 0\n# a comment\nq1 0 c 2.5e0\nq2 0 x .3\n"


def _rows(qrels):
    return [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()]


@pytest.mark.one_engine
def test_every_form_reads_real_labels(tmp_path):
    import pandas as pd
    import pyarrow as pa

    path = tmp_path / "qrels.txt"
    path.write_text(TEXT)
    qrels = fastir.read_qrels(str(path), labels="float")
    assert qrels.to_dict() == QRELS and list(qrels.label_values) == [0.0, 0.3, 0.7, 2.5]
    want = fastir.evaluate(QRELS, RUN, MEASURES, labels="float", relevance_level=0.5).values
    q, d, v = zip(*_rows(QRELS))
    frame = pd.DataFrame({"query_id": q, "doc_id": d, "relevance": v})
    for form in (str(path), qrels, frame, pa.Table.from_pandas(frame), _rows(QRELS),
                 fastir.Qrels.from_arrays(q, d, v, kind="float")):
        got = fastir.evaluate(form, RUN, MEASURES, labels="float", relevance_level=0.5)
        np.testing.assert_array_equal(got.values, want)
    assert fastir.Evaluator(str(path), MEASURES, labels="float", relevance_level=0.5) \
        .evaluate(RUN).values.tolist() == want.tolist()
    run_path = tmp_path / "run.txt"
    run_path.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items()
                                for d, s in docs.items()))
    streamed = fastir.evaluate_file(str(path), str(run_path), MEASURES, labels="float",
                                    relevance_level=0.5)
    np.testing.assert_array_equal(streamed.values, want)


@pytest.mark.one_engine
@pytest.mark.parametrize("token,line", [("-0.5", 2), ("nan", 2), ("inf", 2), ("1e999", 2),
                                        ("abc", 2), ("1_0", 2)])
def test_a_bad_real_label_in_a_file_is_one_line_naming_it(tmp_path, token, line):
    path = tmp_path / "qrels.txt"
    path.write_text(f"q1 0 a 0.7\nq1 0 b {token}\n")
    with pytest.raises(fastir.InputError) as info:
        fastir.read_qrels(str(path), labels="float")
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: relevance label {token!r}") and \
        "\n" not in message, message


@pytest.mark.one_engine
@pytest.mark.parametrize("value", [-0.5, float("nan"), float("inf"), "0.7", None])
def test_a_bad_real_label_in_a_dict_frame_or_table_names_its_query_and_doc(value):
    import pandas as pd
    import pyarrow as pa

    qrels = {"q1": {"a": 0.7, "b": value}}
    forms = [qrels, _rows(qrels)]
    if not isinstance(value, str) and value is not None:
        frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                              "relevance": [0.7, value]})
        forms += [frame, pa.Table.from_pandas(frame)]
    for form in forms:
        with pytest.raises(fastir.InputError) as info:
            fastir.evaluate(form, RUN, "P@1", labels="float")
        useful(info.value, "query 'q1' doc 'b'")
        assert "\n" not in str(info.value) and "labels='float'" in str(info.value)


@pytest.mark.one_engine
def test_integer_labels_still_refuse_a_real_one_and_say_what_to_pass(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text(TEXT)
    with pytest.raises(fastir.InputError) as info:
        fastir.read_qrels(str(path))
    assert str(info.value) == (f"{path}:1: relevance label '0.7' is not a 32-bit integer "
                               "(real-valued labels: read them with labels='float')")
    with pytest.raises(fastir.InputError) as info:
        fastir.evaluate(QRELS, RUN, "P@1")
    assert str(info.value) == ("qrels dict: query 'q1' doc 'a': label 0.7 is not a 32-bit "
                               "integer (real-valued labels: read them with labels='float')")
    with pytest.raises(fastir.InputError) as info:  # (not a number: no hint)
        fastir.evaluate({"q1": {"a": "x"}}, RUN, "P@1")
    assert str(info.value).endswith("label 'x' is not a 32-bit integer")
    real = fastir.read_qrels(str(path), labels="float")
    with pytest.raises(ValueError, match="labels='float'"):
        fastir.evaluate(real, RUN, "P@1")


# -- refusals ----------------------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("family", [f for f in FAMILIES.values() if f.reals not in REALS
                                    and f.path not in ("prefs", "groups")])
def test_a_family_of_integer_labels_is_refused_by_name_with_its_reason(family):
    name = family.examples[-1]
    with pytest.raises(ValueError) as info:
        fastir.evaluate(QRELS, RUN, [name], labels="float")
    message = str(info.value)
    assert f"takes integer labels only (labels='float'): {family.reals}" in message, message
    useful(info.value, str(parse_all([name])[1][0]))


@pytest.mark.one_engine
@pytest.mark.parametrize("call", [
    lambda: fastir.evaluate(QRELS, RUN, "nDCG(gains='1=3,2=9')@3", labels="float"),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="float", unjudged="relevant"),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="float", relevance_level=-0.5),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="float", relevance_level=math.inf),
    lambda: fastir.evaluate(QRELS, RUN, "P@1", labels="real"),
    lambda: fastir.evaluate({"q1": {"a": 1}}, RUN, "P@1", relevance_level=0.5),
    lambda: fastir.evaluate({"q1": {"a": {"s1": 1}}}, RUN, "P_IA@1", labels="float"),
    lambda: fastir.compare_judges(QRELS, QRELS, {"A": RUN, "B": RUN}, "P@1", labels="float"),
])
def test_what_real_labels_cannot_do_is_refused_saying_so(call):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and ("labels" in message or "relevance_level" in message), \
        message


# -- the command line ------------------------------------------------------------------
@pytest.mark.one_engine
def test_fastir_eval_labels_float_equals_the_library(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(TEXT)
    run.write_text("".join(f"{q} Q0 {d} 1 {s} t\n" for q, docs in RUN.items()
                           for d, s in docs.items()))
    flags = [a for m in MEASURES for a in ("-m", m)]
    status, out, err = in_process("eval", str(qrels), str(run), *flags, "--labels", "float",
                                  "--rel-level", "0.5", "--format", "json")
    assert status == 0, err
    row = json.loads(out)[0]
    want = fastir.evaluate(str(qrels), str(run), MEASURES, labels="float",
                           relevance_level=0.5).mean
    assert {m: row[m] for m in MEASURES} == want
    status, _, err = in_process("eval", str(qrels), str(run), "-m", "P@2")
    assert status != 0 and "labels='float'" in err
    status, _, err = in_process("eval", str(qrels), str(run), "-m", "ERR@10", "--labels",
                                "float")
    assert status != 0 and "ERR@10: takes integer labels only" in err
