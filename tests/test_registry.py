"""The registry is the one description of a measure: every registered family has a naive
reference, a kernel test against it, an entry in ``fastir measures``, and works wherever its
description says (dense batches, trec_eval names)."""

import subprocess
import sys

import naive
import numpy as np
import pytest
from conftest import MEASURES, SUBTOPIC_MEASURES

import fastir
from fastir.measures import FAMILIES, NICKNAMES, TREC_NAMES, TREC_ORDER, parse

pytestmark = pytest.mark.one_engine
TESTED = {parse(name)[0][1].family for name in MEASURES + SUBTOPIC_MEASURES}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_family_has_a_reference_a_test_and_a_listing(family, listing):
    assert family in naive.FAMILIES, f"{family}: no naive reference (tests/naive.py)"
    assert family in TESTED, f"{family}: no examples (the kernel tests)"
    assert f"| {family} |" in listing, f"{family}: not in `fastir measures`"
    assert FAMILIES[family].doc


@pytest.fixture(scope="module")
def listing():
    return subprocess.run([sys.executable, "-m", "fastir", "measures"], capture_output=True,
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
