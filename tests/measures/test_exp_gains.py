"""Exponential gains (dcg='exp-log2') refuse labels whose gain 2**label - 1 overflows,
naming the measure and the query (or row); one label below, the value is finite."""

import numpy as np
import pytest
from checks import useful

import fastir
from fastir.measures.common import MAX_EXP_LABEL

pytestmark = pytest.mark.one_engine

EXP_NDCG = "nDCG(dcg='exp-log2')@3"


@pytest.mark.parametrize("names", [[EXP_NDCG], ["DCG(dcg='exp-log2')"], ["IDCG(dcg='exp-log2')@2"]])
def test_exponential_gains_refuse_labels_that_overflow(names):
    qrels = {"q1": {"a": MAX_EXP_LABEL + 76, "b": 1}, "q2": {"a": 2}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"a": 1.0}}
    with pytest.raises(ValueError) as info:
        fastir.evaluate(qrels, run, names)
    useful(info.value, "q1")
    assert "1024" in str(info.value) and names[0] in str(info.value)
    # one label below: the gain is finite, and so is the value
    qrels["q1"]["a"] = MAX_EXP_LABEL - 1
    assert np.isfinite(fastir.evaluate(qrels, run, names).values).all()


@pytest.mark.parametrize("ties", ["column", "average"])
def test_exponential_gains_refuse_overflowing_labels_in_dense_batches(ties):
    scores, labels = np.array([[0.5, 0.9, 0.1]]), np.array([[MAX_EXP_LABEL, 0, 2]])
    with pytest.raises(ValueError) as info:
        fastir.evaluate_matrix(scores, labels, EXP_NDCG, ties=ties)
    useful(info.value, "row 0")


