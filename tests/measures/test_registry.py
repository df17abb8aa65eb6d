"""The registry is the one description of a measure: every registered family has a naive
reference, a kernel test against it, an entry in ``fastir measures``, and works wherever its
description says (dense batches, trec_eval names)."""

import subprocess

import naive
import numpy as np
import pytest
from cli_calls import PROGRAM
from conftest import GROUP_MEASURES, MEASURES, PREFS_MEASURES, SUBTOPIC_MEASURES

import fastir
from fastir.measures.registry import FAMILIES, NICKNAMES, TREC_NAMES, TREC_ORDER, parse

pytestmark = pytest.mark.one_engine
TESTED = {parse(name)[0][1].family for name in MEASURES + SUBTOPIC_MEASURES + PREFS_MEASURES
          + GROUP_MEASURES}


def test_the_reference_table_has_exactly_the_registered_families():
    assert set(naive.REFERENCES) == set(FAMILIES)


def test_the_reference_summarises_and_applies_levels_as_the_registry_says():
    for name, family in FAMILIES.items():
        reference = naive.REFERENCES[name]
        assert reference.summary == family.aggregate, name
        assert reference.level_free == family.level_free, name
        assert reference.subtopics == (family.path == "subtopics"), name
        assert reference.judgments == (family.path if family.path in ("prefs", "groups")
                                       else "qrels"), name


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_family_has_a_test_and_a_listing(family, listing):
    assert family in TESTED, f"{family}: no examples (the kernel tests)"
    assert f"| {family} |" in listing, f"{family}: not in `fastir measures`"
    assert FAMILIES[family].doc
    assert FAMILIES[family].formula and FAMILIES[family].formula.replace("|", "\\|") in listing


@pytest.fixture(scope="module")
def listing():
    return subprocess.run([*PROGRAM, "measures"], capture_output=True,
                          text=True, check=True).stdout


def test_trec_names_and_sets_come_from_the_registry():
    assert TREC_ORDER[0] == "runid" and set(TREC_ORDER[1:]) == set(TREC_NAMES)
    for members in NICKNAMES.values():
        assert set(members) <= set(TREC_ORDER)
    for name, (family, trec) in TREC_NAMES.items():
        measures = parse(name)
        assert {m.family for _, m in measures} == {family}
        if trec.style == "cut":
            assert len(measures) == len(trec.defaults)


@pytest.mark.parametrize("family", [f for f in FAMILIES.values() if f.aggregate != "none"],
                         ids=lambda f: f.name)
def test_dense_batches_take_what_needs_no_unjudged_documents(family):
    name = family.examples[0]
    scores, labels = np.array([[0.5, 0.9, 0.1]]), np.array([[1, 0, 2]])
    if family.path in ("prefs", "groups"):
        needs = "preference judgments" if family.path == "prefs" else "judgment groups"
        with pytest.raises(ValueError, match=f"needs {needs}"):
            fastir.evaluate_matrix(scores, labels, name)
        return
    if family.path == "subtopics":
        with pytest.raises(ValueError, match="needs subtopic judgments"):
            fastir.evaluate_matrix(scores, labels, name)
        return
    if family.unjudged:
        with pytest.raises(ValueError, match="needs unjudged documents"):
            fastir.evaluate_matrix(scores, labels, name)
        return
    if family.num_docs == "required":
        with pytest.raises(ValueError, match="needs num_docs"):
            fastir.evaluate_matrix(scores, labels, name)
        return
    got = fastir.evaluate_matrix(scores, labels, name, per_row=True)[1][0, 0]
    run = {"q": {"d3": 0.5, "d2": 0.9, "d1": 0.1}}  # docno order = column order on ties
    want = fastir.evaluate({"q": {"d3": 1, "d2": 0, "d1": 2}}, run, [name]).values[0, 0]
    assert got == want


@pytest.mark.parametrize("name, message", [
    ("ERR@0", r"ERR: cutoff must be an integer from 1"),
    ("ERR(max_grade=0)@5", r"ERR: max_grade must be an integer from 1 to 64"),
    ("alpha_nDCG(alpha=2)@10", r"alpha_nDCG: alpha must be a finite number in \[0, 1\]"),
    ("alpha_nDCG", r"alpha_nDCG needs a cutoff"),
    ("NRBP(beta=-1)", r"NRBP: beta must be a finite number in \[0, 1\]"),
    ("BPM@10", r"BPM needs max_rel \(e\.g\. BPM\(max_rel=3\)@10\)"),
    ("SDCG(max_rel=2,min_rel=2)@5", r"SDCG: min_rel must be less than max_rel"),
    ("INST(T=0,max_rel=2)", r"INST: T must be a finite number in \(0, inf\)"),
    ("Compat(p=1)", r"Compat: p must be a finite number in \(0, 1\)"),
    ("Compat(normalize=maybe)", r"Compat: normalize must be True or False"),
    ("Judged(rel=1)", r"Judged has no parameter 'rel'"),
])
def test_bad_parameters_name_the_measure_and_the_allowed_values(name, message):
    with pytest.raises(ValueError, match=message):
        fastir.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, [name])


def test_inputs_a_measure_is_not_defined_on_are_refused():
    qrels, run = {"q": {"a": 5, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(ValueError, match=r"ERR@5 on query 'q': a judged label is above "
                                         r"max_grade; give the largest label"):
        fastir.evaluate(qrels, run, ["ERR@5"])
    assert fastir.evaluate(qrels, run, ["ERR(max_grade=5)@5"]).mean["ERR(max_grade=5)@5"] > 0
    with pytest.raises(ValueError, match=r"Accuracy needs num_docs, the collection size N"):
        fastir.evaluate(qrels, run, ["Accuracy"])
    with pytest.raises(ValueError, match=r"Accuracy on query 'q': num_docs is smaller"):
        fastir.evaluate(qrels, run, ["Accuracy"], num_docs=1)
    assert fastir.evaluate(qrels, run, ["Accuracy"], num_docs=4).mean["Accuracy"] == 1.0
    for matrix_measure in ("ERR@2", "nERR@2"):
        with pytest.raises(ValueError, match="above max_grade"):
            fastir.evaluate_matrix(np.array([[0.5, 0.2]]), np.array([[0, 7]]), matrix_measure)


def test_diversity_needs_subtopic_judgments_everywhere():
    plain = {"q": {"a": 1}}
    with pytest.raises(ValueError, match=r"alpha_nDCG@10 needs subtopic judgments \(these "
                                         r"qrels have none\): read qrels with read_qrels"):
        fastir.evaluate(plain, {"q": {"a": 1.0}}, ["alpha_nDCG@10", "AP"])
    subtopics = {"q": {"a": {"1": 1, "2": 0}, "b": {"2": 1}}}
    evaluator = fastir.Evaluator(subtopics, ["alpha_nDCG@10", "AP"])
    res = evaluator.evaluate({"q": {"a": 2.0, "b": 1.0}})
    assert res.mean == {"alpha_nDCG@10": 1.0, "AP": 1.0}
    with pytest.raises(ValueError, match="bound candidates have none"):
        evaluator.bind(["q"], ["a"])


def test_subtopic_qrels_files(tmp_path):
    path = tmp_path / "qrels.div"
    path.write_text("# ndeval format\n7 1 a 1\n7 2 a 0\n7 2 b 2\n7 3 c -1\n\n8 1 x 0\n")
    qrels = fastir.read_qrels(path, subtopics=True)
    assert qrels.to_dict() == {"7": {"a": 1, "b": 2, "c": -1}, "8": {"x": 0}}
    assert qrels.subtopics.names == [["1", "2", "3"], ["1"]]
    run = {"7": {"b": 3.0, "c": 2.0, "a": 1.0}, "8": {"x": 1.0}}
    res = fastir.evaluate(qrels, run, ["StRecall@1", "StRecall@3", "P_IA@2"])
    assert res.to_dict()["7"] == {"StRecall@1": 0.5, "StRecall@3": 1.0, "P_IA@2": 0.25}
    assert res.to_dict()["8"]["StRecall@3"] == 0.0  # no intent: 0
    path.write_text("7 1 a 1\n7 1 a 0\n")
    with pytest.raises(fastir.InputError, match=r"query '7' judges doc 'a' twice for "
                                                 r"subtopic '1'"):
        fastir.read_qrels(path, subtopics=True)
    path.write_text("7 1 a 1\n7 a 1\n")
    with pytest.raises(fastir.InputError, match=r"qrels\.div:2: malformed line: expected 4 "
                                                 r"fields"):
        fastir.read_qrels(path, subtopics=True)
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"query_id": ["7", "7"], "iteration": ["1", "2"],
                              "doc_id": ["a", "a"], "relevance": [1, 0]})
    from_frame = fastir.Qrels.from_pandas(frame, subtopic_col="iteration")
    assert from_frame.subtopics.names == [["1", "2"]]
