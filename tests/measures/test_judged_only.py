"""``judged_only``, a parameter of every measure (ir_measures' ``P(judged_only=True)@4``):
trec_eval's ``-J`` for that measure alone, among measures without it."""

import pytest
from conftest import MEASURES, naive_values, qrels_and_runs
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir


def judged(name):
    """``name`` with judged_only=True (its parameters kept)."""
    family, _, at = name.partition("@")
    if family.endswith(")"):
        family = family[:-1] + ",judged_only=True)"
    else:
        family += "(judged_only=True)"
    return family + ("@" + at if at else "")


@given(qrels_and_runs(), st.lists(st.sampled_from(MEASURES), min_size=1, max_size=4,
                                  unique=True), st.data())
@settings(max_examples=40, deadline=None)
def test_judged_only_per_measure_is_dash_j_for_that_measure(data, names, draw):
    qrels, run = data
    flags = draw.draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    request = [judged(n) if flag else n for n, flag in zip(names, flags)]
    got = fastir.evaluate(qrels, run, request, num_docs=50).to_dict()
    assert got == {q: dict(zip(request, row)) for q, row in
                   naive_values(qrels, run, request, num_docs=50).items()}
    everywhere = fastir.evaluate(qrels, run, names, judged_only=True, num_docs=50).to_dict()
    for q, values in got.items():
        for name, flag in zip(names, flags):
            if flag:
                assert values[judged(name)] == everywhere[q][name], (q, name)


def test_the_name_and_where_it_is_refused():
    assert str(fastir.Measure("P", 5, judged_only=True)) == "P(judged_only=True)@5"
    qrels = {"q": {"a": 1, "b": 0}}
    res = fastir.evaluate(qrels, {"q": {"u": 2.0, "a": 1.0}},
                          ["P@1", "P(judged_only=True)@1", "RR(judged_only=True)"])
    assert res.mean == {"P@1": 0.0, "P(judged_only=True)@1": 1.0, "RR(judged_only=True)": 1.0}
    ev = fastir.Evaluator(qrels, ["P(judged_only=True)@1", "AP"])
    with pytest.raises(ValueError, match="judged_only for some measures only"):
        ev.bind(["q", "q"], ["a", "u"])
    ev = fastir.Evaluator(qrels, ["P(judged_only=True)@1", "AP"], judged_only=True)
    assert ev.bind(["q", "q"], ["a", "u"]).evaluate([1.0, 2.0]).mean == {
        "P(judged_only=True)@1": 1.0, "AP": 1.0}


def test_ir_measures_objects_with_judged_only_as_pytrec_eval_computes_them():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, RR, IPrec, P, R, Rprec, SetAP, SetF, SetP, Success, nDCG

    measures = [P(judged_only=True) @ 4, RR(judged_only=True), Rprec(judged_only=True),
                AP(judged_only=True), AP(judged_only=True) @ 3, nDCG(judged_only=True),
                nDCG(judged_only=True) @ 3, R(judged_only=True) @ 4, SetAP(judged_only=True),
                SetF(judged_only=True), SetP(judged_only=True), Success(judged_only=True) @ 2,
                IPrec(judged_only=True) @ 0.5, P @ 4]
    qrels = {"0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0},
             "1": {"D0": 1, "D3": 2, "D5": 2}}
    run = {"0": {"D0": 0.8, "D9": 0.75, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
           "1": {"D1": 0.8, "D3": 0.7, "D8": 0.5, "D4": 0.3, "D2": 0.4}}
    expected = ir_measures.pytrec_eval.calc_aggregate(measures, qrels, run)
    got = fastir.calc_aggregate(measures, qrels, run, compat="9.0.8")
    assert got == pytest.approx(expected, abs=1e-15)
