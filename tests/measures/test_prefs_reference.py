"""The preference and judgment-group measures against the naive reference (tests/naive/prefs.py:
form_prefs_counts.c, m_prefs_*.c and m_*_avgjg.c written out plainly), on generated
judgments with ties, several groups and subgroups, documents not retrieved, levels of 0,
conflicts trec_eval stops at, and drawn subsets and orders of the measures."""

import naive
import pytest
from conftest import GROUP_MEASURES, PREFS_MEASURES
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir.model.errors import InputError

DOCS = ["d1", "d10", "d2", "d20", "d3", "D3", "e", "é", "d5#x", "d6"]
QIDS = ["q1", "q2", "q10", "3"]
SCORES = [0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 1e-3]
LEVELS = [0.0, 0.0, 1.0, 2.0, 3.0, 0.5, 1.0000000001, 1e-50, 1e39]  # (9.0.8: 1, 0, inf)


@st.composite
def preferences(draw, conflicts=False):
    """{qid: [(jg, jsg, doc, level)]}: each group ranks its documents by hidden levels its
    subgroups agree with (unless ``conflicts``: then any level, and documents twice)."""
    prefs = {}
    for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        rows = []
        for g in draw(st.lists(st.sampled_from(["u1", "u2", "u10"]), min_size=1, max_size=3,
                               unique=True)):
            hidden = {d: draw(st.sampled_from(LEVELS)) for d in DOCS}
            for s in draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=1,
                                   max_size=3, unique=True)):
                docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6,
                                     unique=not conflicts))
                for d in docs:
                    level = draw(st.sampled_from(LEVELS)) if conflicts else hidden[d]
                    rows.append((g, s, d, level))
        prefs[q] = rows
    return prefs


RUNS = st.dictionaries(st.sampled_from(QIDS + ["q9"]), st.dictionaries(
    st.sampled_from(DOCS + ["x1", "x2"]), st.sampled_from(SCORES), max_size=9), max_size=4)
OPTIONS = st.fixed_dictionaries({"max_docs": st.sampled_from([None, 0, 1, 3]),
                                 "missing": st.sampled_from(["zero", "skip"]),
                                 "compat": st.sampled_from(["10.0", "9.0.8"])})


def as_prefs(prefs):
    rows = [(q, *row) for q, judged in prefs.items() for row in judged]
    return fastir.Prefs.from_arrays(*[[r[k] for r in rows] for k in range(5)])


def check_prefs(prefs, run, names, options):
    try:
        want, undefined = naive.evaluate_prefs(prefs, run, names, **options)
    except naive.PrefsError:
        with pytest.raises(InputError, match="judgment group|subgroup"):
            fastir.evaluate(as_prefs(prefs), run, names, **options)
        return
    got = fastir.evaluate(as_prefs(prefs), run, names, **options)
    assert got.query_ids == list(want)
    for qid, row in zip(got.query_ids, got.values.tolist()):
        for name, value, expected in zip(names, row, want[qid]):
            if qid in undefined and "Rnonrel" in name:
                continue  # (trec_eval reads past its arrays: README)
            assert value == expected, (qid, name, value, expected)


@settings(max_examples=120, deadline=None)
@given(preferences(), RUNS, OPTIONS, st.permutations(PREFS_MEASURES + ["NumQ"]))
def test_preference_measures_as_the_reference(prefs, run, options, order):
    check_prefs(prefs, run, order, options)


@settings(max_examples=60, deadline=None)
@given(preferences(), RUNS, OPTIONS, st.data())
def test_drawn_requests_of_preference_measures(prefs, run, options, data):
    """A measure's value does not depend on what is asked beside it (the pair measures
    enumerate pairs only when asked for)."""
    names = data.draw(st.lists(st.sampled_from(PREFS_MEASURES), min_size=1, max_size=4,
                               unique=True))
    check_prefs(prefs, run, names, options)


@settings(max_examples=80, deadline=None)
@given(preferences(conflicts=True), RUNS, OPTIONS)
def test_conflicting_preferences_stop_where_trec_eval_stops(prefs, run, options):
    check_prefs(prefs, run, PREFS_MEASURES, options)


def test_a_cycle_and_levels_trec_eval_stops_at():
    run = {"q": {"a": 2.0, "b": 1.0}}
    cycle = {"q": {"u": {"s1": {"a": 2, "b": 1}, "s2": {"b": 2, "a": 1}}}}
    with pytest.raises(InputError, match=r"prefs dict: query 'q' judgment group 'u': its "
                                         r"subgroups' preferences contradict each other"):
        fastir.evaluate(fastir.Prefs.from_dict(cycle), run, ["prefs_simp"])
    zero = {"q": {"u": {"s1": {"a": 2, "b": 0}, "s2": {"b": 2, "c": 1}}}}
    with pytest.raises(InputError, match="query 'q' judgment group 'u': doc 'b' has level 0 in "
                                         "subgroup 's1' and level 2 in subgroup 's2'"):
        fastir.evaluate(fastir.Prefs.from_dict(zero), run, ["prefs_simp"])
    fine = {"q": {"u": {"s1": {"a": 2, "b": 0}}, "v": {"s1": {"b": 2, "a": 1}}}}
    res = fastir.evaluate(fastir.Prefs.from_dict(fine), run, ["prefs_simp", "prefs_pair"])
    assert res.mean == {"prefs_simp": 0.5, "prefs_pair": 0.5}


@pytest.mark.parametrize("n_groups", [15, 300])
def test_pairs_stated_by_many_groups_as_the_reference(n_groups):
    """A pair stated by 300 groups counts past 255 (the 16-bit counts; 15 groups: 8 bits),
    its share of groups a fraction."""
    rows = []
    for g in range(n_groups):
        first, second = ("a", "b") if g % 30 else ("b", "a")
        rows += [(f"u{g}", "s", first, 2.0), (f"u{g}", "s", second, 1.0)]
        if g % 7 == 0:
            rows.append((f"u{g}", "s", "c", 0.0 if g % 2 else 3.0))
    run = {"q": {"b": 2.0, "a": 1.5, "x": 1.0}}
    for options in ({"max_docs": None}, {"max_docs": 1}):
        check_prefs({"q": rows}, run, PREFS_MEASURES, dict(options, missing="zero",
                                                           compat="10.0"))


@st.composite
def judgment_groups(draw):
    return {q: {g: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3),
                                        min_size=1, max_size=7))
                for g in draw(st.lists(st.sampled_from(["0", "1", "u2"]), min_size=1,
                                       max_size=3, unique=True))}
            for q in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3,
                                   unique=True))}


GROUP_NAMES = GROUP_MEASURES + ["PAvgJG@2", "PAvgJG(rel=2)@3", "RprecMultAvgJG@0.5",
                                "APAvgJG(rel=2)", "NumQ"]


@settings(max_examples=150, deadline=None)
@given(judgment_groups(), RUNS, OPTIONS, st.sampled_from([0, 1, 2]), st.booleans(),
       st.permutations(GROUP_NAMES))
def test_judgment_group_measures_as_the_reference(groups, run, options, level, judged_only,
                                                  names):
    want = naive.evaluate_groups(groups, run, names, relevance_level=level,
                                 judged_only=judged_only, **options)
    got = fastir.evaluate(fastir.JudgmentGroups.from_dict(groups), run, names,
                          relevance_level=level, judged_only=judged_only, **options)
    assert got.query_ids == list(want)
    assert {q: row for q, row in zip(got.query_ids, got.values.tolist())} == want


def test_one_group_is_the_measure_itself():
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 0, "d": 1}}
    run = {"q1": {"a": 1.0, "b": 2.0, "x": 0.5}, "q2": {"d": 1.0}}
    groups = fastir.JudgmentGroups.from_dict({q: {"0": j} for q, j in qrels.items()})
    got = fastir.evaluate(groups, run, ["map_avgjg", "P_avgjg.2", "Rprec_mult_avgjg.1.0"])
    want = fastir.evaluate(qrels, run, ["map", "P.2", "Rprec_mult.1.0"])
    assert got.values.tolist() == want.values.tolist()


def test_measures_refuse_judgments_they_cannot_read():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(ValueError, match=r"PrefsSimp needs preference judgments: "
                                         r"fastir.read_prefs"):
        fastir.evaluate(qrels, run, ["prefs_simp"])
    with pytest.raises(ValueError, match="PAvgJG@5 needs judgment groups"):
        fastir.evaluate(qrels, run, ["P_avgjg_5"])
    prefs = fastir.Prefs.from_qrels(fastir.Qrels.from_dict(qrels))
    with pytest.raises(ValueError, match=r"AP needs qrels .* these are prefs"):
        fastir.evaluate(prefs, run, ["map"])
    with pytest.raises(ValueError, match="do not apply to preference judgments"):
        fastir.evaluate(prefs, run, ["prefs_simp"], judged_only=True)
    for entry in (lambda: fastir.Evaluator(qrels, ["prefs_simp"]),
                  lambda: fastir.RelevanceEvaluator(qrels, {"prefs_simp"})):
        with pytest.raises(ValueError, match="needs preference judgments"):
            entry()
    assert fastir.evaluate(prefs, run, ["prefs_simp", "num_q"]).mean == {
        "prefs_simp": 0.0, "num_q": 1.0}  # (one level: no preference at all)


def test_several_runs_and_results():
    prefs = fastir.Prefs.from_dict({"q": {"u": {"s": {"a": 2, "b": 1, "c": 0}}}})
    runs = {"good": {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, "bad": {"q": {"c": 3.0, "b": 2.0}}}
    by_run = fastir.evaluate(prefs, runs, ["prefs_simp", "prefs_num_prefs_ful"])
    assert by_run["good"].mean == {"prefs_simp": 1.0, "prefs_num_prefs_ful": 3.0}
    assert by_run["bad"].mean == {"prefs_simp": 0.0, "prefs_num_prefs_ful": 0.0}
    assert by_run["bad"].to_dict() == {"q": {"prefs_simp": 0.0, "prefs_num_prefs_ful": 0.0}}
