"""The worked examples of the documents fastir was created from."""

import math

import pytest

import fastir


def test_average_precision_worked_example():
    # relevant documents at ranks 1, 3 and 6, R = 3: (1 + 2/3 + 3/6) / 3
    ranked = ["a", "x1", "b", "x2", "x3", "c"]
    run = {"q": {d: 10.0 - i for i, d in enumerate(ranked)}}
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    ap = fastir.evaluate(qrels, run, ["AP"]).mean["AP"]
    assert ap == pytest.approx((1 + 2 / 3 + 3 / 6) / 3)
    assert round(ap, 3) == 0.722


def test_map_of_two_rankings_is_their_mean_not_their_sum():
    # One seed computes MAP = (0.78 + 0.52) / 2 as 1.3; the definition gives 0.65.
    run = {"r1": {f"d{i}": -i for i in range(10)}, "r2": {f"d{i}": -i for i in range(10)}}
    rel1 = [1, 0, 1, 1, 1, 1, 0, 0, 0, 1]  # precisions 1, .67, .75, .8, .83, .6
    rel2 = [0, 1, 0, 0, 1, 1, 1, 0, 1, 1]  # precisions .5, .4, .5, .57, .56, .6
    qrels = {"r1": {f"d{i}": r for i, r in enumerate(rel1)},
             "r2": {f"d{i}": r for i, r in enumerate(rel2)}}
    res = fastir.evaluate(qrels, run, ["AP"])
    per_query = res.to_dict()
    assert per_query["r1"]["AP"] == pytest.approx(4.65 / 6)  # the seed rounds it to 0.78
    assert round(per_query["r2"]["AP"], 2) == 0.52
    assert res.mean["AP"] == pytest.approx((per_query["r1"]["AP"] + per_query["r2"]["AP"]) / 2)
    assert round(res.mean["AP"], 2) == 0.65


def test_ndcg_at_3_with_exponential_gain():
    # retrieved grades 3, 2, 3; the ideal ordering of the judged documents is 3, 3, 2
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    qrels = {"q": {"a": 3, "b": 2, "c": 3}}
    value = fastir.evaluate(qrels, run, ["nDCG(dcg='exp-log2')@3"]).mean
    value = value["nDCG(dcg='exp-log2')@3"]
    dcg = 7 / 1 + 3 / math.log2(3) + 7 / 2
    idcg = 7 / 1 + 7 / math.log2(3) + 3 / 2
    assert value == pytest.approx(dcg / idcg)
    assert round(value, 2) == 0.96  # the seed's figure


def test_precision_and_recall_at_5():
    # models A [1,1,1,0,0] and B [0,0,1,1,1] both have P@5 = 3/5
    run = {"q": {f"d{i}": -i for i in range(5)}}
    for pattern in ([1, 1, 1, 0, 0], [0, 0, 1, 1, 1]):
        qrels = {"q": {f"d{i}": r for i, r in enumerate(pattern)} | {"unretrieved": 1}}
        res = fastir.evaluate(qrels, run, ["P@5", "R@5"]).mean
        assert res == {"P@5": 0.6, "R@5": 0.75}  # 4 relevant, 3 of them in the top 5


@pytest.mark.parametrize("gains, table", [
    ([5, 2, 4, 0, 1], [5.00, 6.26, 8.26, 8.26, 8.65]),  # model A
    ([2, 0, 5, 1, 4], [2.00, 2.00, 4.50, 4.93, 6.48]),  # model B
    ([5, 4, 2], [5.00, 7.52, 8.52]),  # ideal DCG@k of query A
])
def test_dcg_tables(gains, table):
    run = {"q": {f"d{i}": -i for i in range(len(gains))}}
    qrels = {"q": {f"d{i}": g for i, g in enumerate(gains)}}
    names = [f"DCG@{k}" for k in range(1, len(gains) + 1)]
    res = fastir.evaluate(qrels, run, names).mean
    assert [round(res[n], 2) for n in names] == table


def test_cohen_style_set_measures():
    # Boolean evaluation: precision, recall and balanced F of the retrieved set
    run = {"q": {f"d{i}": 1.0 for i in range(4)}}
    qrels = {"q": {"d0": 1, "d1": 1, "d2": 0, "x": 1}}
    res = fastir.evaluate(qrels, run, ["SetP", "SetR", "SetF"]).mean
    assert res["SetP"] == 0.5 and res["SetR"] == pytest.approx(2 / 3)
    assert res["SetF"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
