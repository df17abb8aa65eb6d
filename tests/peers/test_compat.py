"""Side by side with the peers, as their users switch: pytrec_eval's RelevanceEvaluator,
ir_measures' calc_aggregate / iter_calc with measure objects, ranx's evaluate with every
metric name, and the forms their users pass (DataFrames, ranx objects, several runs)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir

pytestmark = pytest.mark.one_engine


def graded_pair(seed, n_queries=25, unique_scores=False):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(40)]
        qrels[f"q{q}"] = {d: int(rng.choice([0, 0, 1, 2, 3]))
                          for d in rng.choice(docs, 15, replace=False)}
        if q % 9 == 4:
            continue  # a judged query the run misses
        if unique_scores:
            scores = rng.permutation(1000)[:25] / 7.0
        else:
            scores = rng.integers(0, 30, 25) / 4.0  # ties
        run[f"q{q}"] = {d: float(s) for d, s in zip(rng.choice(docs, 25, replace=False), scores)}
    run["unjudged"] = {"d1": 1.0}
    return qrels, run


# -- pytrec_eval ----------------------------------------------------------------------------
PYTREC_MEASURES = {"map", "P.5,10", "ndcg_cut.10", "recall", "gm_map", "bpref", "set_F.0.5",
                   "Rprec", "recip_rank", "iprec_at_recall", "ndcg", "infAP", "num_rel_ret",
                   "11pt_avg", "Rprec_mult", "success", "map_cut", "relative_P", "G", "binG",
                   "Rndcg", "ndcg_rel", "num_q", "num_ret", "num_rel", "set_P", "gm_bpref",
                   "set_map", "set_recall", "set_relative_P", "num_nonrel_judged_ret"}


@pytest.mark.parametrize("seed, level, judged_only", [(0, 1, False), (1, 2, False),
                                                      (2, 1, True), (3, 2, True)])
def test_relevance_evaluator_gives_pytrec_evals_dict(seed, level, judged_only):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = graded_pair(seed)
    expected = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=level,
                                              judged_docs_only_flag=judged_only).evaluate(run)
    got = fastir.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=level,
                                    judged_docs_only_flag=judged_only).evaluate(run)
    assert got == expected  # the same queries, keys and floats


# Scores finite as doubles but beyond float32: 9.0.8 (and pytrec_eval) store them in a C float,
# so 2e39 and 1e39 are both +inf and tie (broken by docno: d2 before d1); 10.0 keeps doubles.
BEYOND_FLOAT32_QRELS = {"q": {"d1": 1, "d2": 0, "d3": 0}}
BEYOND_FLOAT32_RUN = {"q": {"d1": 2e39, "d2": 1e39, "d3": -1e39, "d4": -2e39}}
RANKED_AS_FLOAT32 = {"P_1": 0.0, "map": 0.5}  # d2 d1 d4 d3
RANKED_AS_DOUBLE = {"P_1": 1.0, "map": 1.0}  # d1 d2 d3 d4


def test_scores_beyond_float32_rank_as_infinities_under_9_0_8():
    qrels, run = BEYOND_FLOAT32_QRELS, BEYOND_FLOAT32_RUN
    names = list(RANKED_AS_FLOAT32)
    assert fastir.evaluate(qrels, run, names, compat="9.0.8").mean == RANKED_AS_FLOAT32
    assert fastir.evaluate(qrels, run, names).mean == RANKED_AS_DOUBLE
    assert fastir.evaluate(qrels, run, names, compat="10.0").mean == RANKED_AS_DOUBLE
    assert fastir.RelevanceEvaluator(qrels, set(names)).evaluate(run) == \
        {"q": RANKED_AS_FLOAT32}
    evaluator = fastir.Evaluator(qrels, names, compat="9.0.8")
    assert evaluator.evaluate(run).mean == RANKED_AS_FLOAT32
    docs = list(run["q"])
    bound = evaluator.bind(["q"] * len(docs), docs)
    assert bound.evaluate(np.array(list(run["q"].values()))).mean == RANKED_AS_FLOAT32
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert pytrec_eval.RelevanceEvaluator(qrels, set(names)).evaluate(run) == \
        {"q": RANKED_AS_FLOAT32}


def test_scores_beyond_float32_in_a_streamed_file(tmp_path):
    from fastir.scale.streaming import evaluate_file

    path = tmp_path / "run"
    path.write_text("".join(f"q Q0 {d} 1 {s!r} r\n" for d, s in BEYOND_FLOAT32_RUN["q"].items()))
    names = list(RANKED_AS_FLOAT32)
    for compat, expected in (("9.0.8", RANKED_AS_FLOAT32), (None, RANKED_AS_DOUBLE)):
        assert evaluate_file(BEYOND_FLOAT32_QRELS, path, names, compat=compat).mean == expected
        assert fastir.evaluate(BEYOND_FLOAT32_QRELS, path, names, compat=compat).mean == \
            expected


def test_supported_measures_cover_pytrec_evals():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    # (trec_eval 9.0.8's yaap is newer than pytrec_eval's trec_eval: asked by name, it is
    # computed all the same; dcg and ideal_dcg are trec_eval 10.0's only)
    assert fastir.supported_measures == set(pytrec_eval.supported_measures)
    got = fastir.RelevanceEvaluator({"q": {"a": 1}}, {"yaap", "map"}).evaluate({"q": {"a": 1.0}})
    assert list(got["q"]) == ["map", "yaap"]


# pytrec_eval's edge behaviours (its own tests show them), side by side with it. (Its bpref
# crashes the interpreter when the run's first query has an empty ranking, and its runid
# alone reads uninitialised memory: the inputs here avoid both.)
SMALL_QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
SMALL_RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}


def both(qrels, measures, run, **options):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(run)
    return fastir.RelevanceEvaluator(qrels, measures, **options).evaluate(run), expected


def some_values(results):
    """Whether a comparison had something to compare: queries, each with values."""
    return len(results) > 3 and all(results.values())


@pytest.mark.parametrize("qrels, run", [(SMALL_QRELS, SMALL_RUN), (SMALL_QRELS, {}),
                                        ({}, SMALL_RUN), ({}, {}),
                                        (SMALL_QRELS, {"q2": {"d1": 1.0}, "q9": {"d1": 1.0}})])
def test_an_empty_request_gives_the_queries_with_no_values(qrels, run):
    got, expected = both(qrels, set(), run)
    assert got == expected
    if qrels and run is SMALL_RUN:
        assert got == {"q1": {}, "q2": {}}


@pytest.mark.parametrize("measures", [{"all_trec"}, "supported_measures", {"official"},
                                      {"set"}, {"official", "set", "ndcg"},
                                      {"official", "P.5"}, {"relstring", "map"},
                                      {"relstring.5", "runid", "map"}])
def test_nicknames_and_pytrec_evals_supported_measures(measures):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    if measures == "supported_measures":
        measures = pytrec_eval.supported_measures
    qrels, run = graded_pair(8)
    got, expected = both(qrels, measures, run)
    assert some_values(got) and got == expected
    for text in ("runid", "relstring"):  # (text in trec_eval: 0.0 in pytrec_eval)
        assert {values.get(text, 0.0) for values in got.values()} == {0.0}
    if measures in ({"all_trec"}, {"official"}, pytrec_eval.supported_measures):
        assert all("runid" in values for values in got.values())


def test_runid_alone_is_zero():
    # pytrec_eval reads uninitialised memory for it (a value near 1e-310)
    assert fastir.RelevanceEvaluator(SMALL_QRELS, {"runid"}).evaluate(SMALL_RUN) == {
        "q1": {"runid": 0.0}, "q2": {"runid": 0.0}}


@pytest.mark.parametrize("measures", [
    ["ndcg_cut", "ndcg_cut.1,4", "ndcg_cut_20,4", "ndcg_cut_15", "recall.1000", "P"],
    ["P.5", "P_5"], ["P.5", "P_10", "P.2,5"], ["P", "P.2"], ["P.2", "P"], ["ndcg_cut.3,1"],
    ["iprec_at_recall.0.5", "iprec_at_recall_0.25,0.5", "iprec_at_recall"],
    ["Rprec_mult_0.5", "Rprec_mult.2.0"], ["success.1,3", "success_3,2", "success"],
    ["map_cut.3", "map_cut_30", "relative_P_7", "relative_P.3"],
    ["set_F", "set_F_0.5"], ["set_F.0.5", "set_F"],
])
def test_overlapping_cutoff_lists_are_merged(measures):
    qrels, run = graded_pair(9)
    got, expected = both(qrels, measures, run)
    assert some_values(got) and got == expected


@given(st.lists(st.tuples(
    st.sampled_from(["P", "recall", "ndcg_cut", "map_cut", "success", "relative_P",
                     "iprec_at_recall", "Rprec_mult", "official", "set", "map", "set_F"]),
    st.sampled_from([None, ".", "_"]),
    st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True)), min_size=1, max_size=5))
@settings(max_examples=60, deadline=None)
def test_drawn_pytrec_eval_requests(items):
    """Bare names, nicknames and cutoff lists in both spellings, merged as pytrec_eval merges
    them (integer cutoffs as text that no two spell alike: pytrec_eval aborts on 5 with 5.0)."""
    requests = set()
    for base, sep, cutoffs in items:
        if sep is None or base in ("official", "set", "map"):
            requests.add(base)
        elif base == "set_F":
            requests.add(f"set_F{sep}0.5")  # (one parameter set: see the refusals below)
        elif base in ("iprec_at_recall", "Rprec_mult"):
            requests.add(base + sep + ",".join(f"{c / 12:.2f}" for c in cutoffs))
        else:
            requests.add(base + sep + ",".join(map(str, cutoffs)))
    qrels, run = graded_pair(10, n_queries=6)
    got, expected = both(qrels, requests, run)
    assert some_values(got) and got == expected, sorted(requests)


def test_a_judged_query_without_judgments_is_not_scored():
    qrels = dict(SMALL_QRELS, q3={}, q4={})
    run = dict(SMALL_RUN, q3={"d1": 1.0})
    for measures in ({"map", "P.5"}, set()):
        got, expected = both(qrels, measures, run)
        assert got == expected and "q3" not in got and "q1" in got


def test_what_pytrec_eval_cannot_do_is_refused():
    with pytest.raises(ValueError, match="given twice"):  # pytrec_eval aborts the interpreter
        fastir.RelevanceEvaluator(SMALL_QRELS, {"P.5", "P.5.0"})
    with pytest.raises(ValueError, match="2 parameter sets"):  # pytrec_eval keeps one
        fastir.RelevanceEvaluator(SMALL_QRELS, {"set_F.0.5", "set_F.1"})


def test_the_key_rule():
    res = fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}},
                          ["P.5", "ndcg_cut.10", "P.1,2", "nDCG@10", "ndcg@10", "rbp.95"])
    assert list(res.mean) == ["P_5", "ndcg_cut_10", "P_1", "P_2", "nDCG@10", "ndcg@10",
                              "rbp.95"]


# -- ir_measures ----------------------------------------------------------------------------
def ir_measures_set():
    """(Not NumQ, NumRel: ir_measures sums them over the run's queries while its means count
    every judged query; fastir counts the judged queries in both.)"""
    im = pytest.importorskip("ir_measures")
    return [im.nDCG @ 10, im.AP, im.P(rel=2) @ 5, im.RR @ 10, im.NumRet(rel=1), im.NumRet,
            im.R @ 20, im.Bpref, im.SetP, im.SetP(relative=True), im.Judged @ 10, im.nDCG,
            im.AP @ 5, im.Rprec, im.Success @ 3, im.infAP, im.SetR, im.SetF]


def test_calc_aggregate_and_iter_calc_with_measure_objects():
    im = pytest.importorskip("ir_measures")
    measures = ir_measures_set()
    qrels, run = graded_pair(5, unique_scores=True)  # (some of its providers order ties
    # otherwise than trec_eval: RR@k, Judged@k)
    expected = im.calc_aggregate(measures, qrels, run)
    got = fastir.calc_aggregate(measures, qrels, run)
    assert list(got) == measures  # keyed by the objects passed
    for m in measures:
        assert got[m] == pytest.approx(expected[m], abs=1e-12), str(m)
    ours = sorted((r.query_id, str(r.measure), r.value)
                  for r in fastir.iter_calc(measures, qrels, run))
    theirs = sorted((r.query_id, str(r.measure), r.value)
                    for r in im.iter_calc(measures, qrels, run))
    assert [r[:2] for r in ours] == [r[:2] for r in theirs]
    assert np.allclose([r[2] for r in ours], [r[2] for r in theirs], atol=1e-12, rtol=0)


def test_measure_objects_and_ir_measures_spellings_in_evaluate():
    im = pytest.importorskip("ir_measures")
    qrels, run = graded_pair(6)
    res = fastir.evaluate(qrels, run, [im.nDCG @ 10, "NumRet(rel=1)", "SetP(relative=True)"])
    same = fastir.evaluate(qrels, run, ["nDCG@10", "NumRelRet", "SetRelP"])
    assert list(res.mean.values()) == list(same.mean.values())
    assert list(res.mean) == ["nDCG@10", "NumRet(rel=1)", "SetP(relative=True)"]


def test_dataframes_with_the_peers_column_names():
    pd = pytest.importorskip("pandas")
    qrels, run = graded_pair(7)
    rows = [(q, d, label) for q, docs in qrels.items() for d, label in docs.items()]
    ranked = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    expected = fastir.evaluate(qrels, run, ["AP", "nDCG@10"]).mean
    for qcol, lcol in (("query_id", "relevance"), ("q_id", "score")):
        q = pd.DataFrame(rows, columns=[qcol, "doc_id", lcol])
        r = pd.DataFrame(ranked, columns=[qcol, "doc_id", "score"])
        assert fastir.evaluate(q, r, ["AP", "nDCG@10"]).mean == expected
    with pytest.raises(fastir.InputError, match="query column"):
        fastir.evaluate(pd.DataFrame(rows, columns=["qid", "doc_id", "relevance"]), run, ["AP"])


# -- ranx -----------------------------------------------------------------------------------
RANX_NAMES = ["hits@5", "hits", "hit_rate@5", "precision@5", "precision", "recall@10", "f1@10",
              "f1", "r-precision", "mrr", "mrr@5", "map", "map@10", "dcg@10", "dcg",
              "dcg_burges@10", "ndcg@10", "ndcg", "ndcg_burges@10", "rbp.95", "rbp.8",
              "precision@5-l2", "ndcg@10-l2", "map-l2", "mrr-l3", "recall@10-l2", "rbp.95-l2",
              "hits@10-l2", "f1@5-l2", "r-precision-l2", "recall-l2", "precision-l2"]


@pytest.mark.parametrize("seed", [0, 1])
def test_every_ranx_metric_name_as_ranx_computes_it(seed):
    ranx = pytest.importorskip("ranx")
    qrels, run = graded_pair(seed, unique_scores=True)  # (ranx breaks ties otherwise)
    run = {q: docs for q, docs in run.items() if q in qrels}
    qrels = {q: labels for q, labels in qrels.items() if q in run}  # ranx needs the same ids
    got = fastir.evaluate(qrels, run, RANX_NAMES).mean
    expected = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX_NAMES)
    for name in RANX_NAMES:
        assert got[name] == pytest.approx(expected[name], abs=1e-12), name


def test_bpref_agrees_with_ranx_on_binary_judgments():
    # (on graded judgments ranx 0.3 counts only label 1 as relevant in bpref)
    ranx = pytest.importorskip("ranx")
    qrels, run = graded_pair(3, unique_scores=True)
    qrels = {q: {d: min(label, 1) for d, label in docs.items()} for q, docs in qrels.items()
             if q in run}
    run = {q: docs for q, docs in run.items() if q in qrels}
    assert fastir.evaluate(qrels, run, ["bpref"]).mean["bpref"] == pytest.approx(
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "bpref"), abs=1e-12)


def test_several_runs_and_ranx_objects():
    ranx = pytest.importorskip("ranx")
    qrels, run = graded_pair(4)
    other = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    results = fastir.evaluate(ranx.Qrels(qrels), {"bm25": ranx.Run(run, name="x"),
                                                  "reversed": other}, ["ndcg@10", "map"])
    assert isinstance(results, fastir.ResultsByRun) and list(results) == ["bm25", "reversed"]
    assert results.mean["bm25"] == fastir.evaluate(qrels, run, ["ndcg@10", "map"]).mean
    assert results.mean["reversed"] == fastir.evaluate(qrels, other, ["ndcg@10", "map"]).mean
    table = str(results).splitlines()
    assert table[0].split() == ["run", "ndcg@10", "map"] and len(table) == 3
    frame = results.to_pandas()
    assert list(frame.index) == ["bm25", "reversed"]
    assert frame.loc["bm25", "map"] == results.mean["bm25"]["map"]
