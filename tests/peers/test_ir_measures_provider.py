"""fastir as an ir_measures provider: first in the default pipeline after ``register()``
(``import fastir.ir_measures``), the values of the provider ir_measures would have chosen,
ir_measures' own providers taking what fastir does not compute. (Cases from ir_measures'
own suite run through the provider: empty and partial runs, gdeval's rounding, measures
given to a provider that does not claim them.)"""

import math
import subprocess
import sys

import numpy as np
import pytest
from test_compat import graded_pair

from fastir.peers import provider as P

pytestmark = pytest.mark.one_engine
ir_measures = pytest.importorskip("ir_measures")
M = ir_measures


@pytest.fixture
def registered():
    P.register()
    yield P.provider
    P.unregister()


def records(qrels, run):
    return ([M.Qrel(q, d, label) for q, docs in qrels.items() for d, label in docs.items()],
            [M.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()])


# (nDCG with a gain table apart: ir_measures' pytrec_eval provider may compute nDCG without
# one in the gain table's call, with its gains, depending on the set's order)
GAINS = M.nDCG(gains={0: 0, 1: 2, 2: 5, 3: 9}) @ 10
TREC_EVAL = [M.P @ 5, M.P(rel=2) @ 10, M.RR, M.Rprec, M.AP, M.AP @ 10, M.nDCG, M.nDCG @ 10,
             M.R @ 20, M.Bpref, M.NumRet, M.NumRet(rel=2), M.NumQ, M.NumRel, M.SetAP,
             M.SetF(beta=0.5), M.SetP, M.SetP(relative=True), M.SetR, M.Success @ 3,
             M.IPrec @ 0.3, M.infAP, M.P(judged_only=True) @ 5, M.AP(judged_only=True)]
OTHERS = [M.RR @ 10, M.Judged @ 10, M.Compat(p=0.8), M.SDCG(max_rel=3) @ 10,
          M.BPM(T=2.0, max_rel=3) @ 10, M.NERR10(max_rel=3), M.INST(max_rel=3)]
GDEVAL = [M.ERR @ 10, M.nDCG(dcg="exp-log2") @ 10]


def numeric(qrels, run):
    """The pair with numeric query ids (gdeval needs them)."""
    ids = {q: str(i) for i, q in enumerate(sorted(set(qrels) | set(run)))}
    return ({ids[q]: docs for q, docs in qrels.items()},
            {ids[q]: docs for q, docs in run.items()})


def per_query(metrics):
    return {(m.query_id, str(m.measure)): m.value for m in metrics}


def test_register_puts_fastir_first_and_unregister_takes_it_out():
    pipeline = M.DefaultPipeline.providers
    assert P.provider not in pipeline
    P.register()
    P.register()
    assert pipeline[0] is P.provider and pipeline.count(P.provider) == 1
    assert M.providers.registry["fastir"] is P.provider
    P.unregister()
    assert P.provider not in pipeline and "fastir" not in M.providers.registry
    code = ("import ir_measures, fastir.ir_measures; "
            "print(ir_measures.DefaultPipeline.providers[0].NAME)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "fastir"


def test_what_fastir_claims():
    claimed = TREC_EVAL + OTHERS + GDEVAL + [M.alpha_nDCG @ 5, M.StRecall @ 5, M.AP_IA]
    assert all(P.provider.supports(m) for m in claimed)
    # ir_measures' Accuracy is another measure than fastir's; RBP is cwl_eval's binary one;
    # a diversity measure without a cutoff fastir lacks; rel=-1 it refuses
    for measure in (M.Accuracy(), M.RBP(rel=1), M.alpha_nDCG, M.P(rel=-1) @ 5):
        assert not P.provider.supports(measure), measure


@pytest.mark.parametrize("seed, gains", [(0, False), (1, False), (2, False), (3, True)])
def test_the_values_of_the_provider_ir_measures_would_choose(registered, seed, gains):
    qrels, run = numeric(*graded_pair(seed, unique_scores=seed > 0))  # (seed 0: ties)
    measures = [GAINS] if gains else TREC_EVAL + (OTHERS + GDEVAL if seed else [])
    P.unregister()
    # (each measure asked alone: given NumRet and NumRet(rel=2) together, ir_measures'
    # pytrec_eval provider answers NumRet with num_rel_ret under some hash seeds)
    theirs, their_means = {}, {}
    for m in measures:
        theirs.update(per_query(M.iter_calc([m], *records(qrels, run))))
        their_means.update(M.calc_aggregate([m], *records(qrels, run)))
    P.register()
    ours = per_query(M.iter_calc(measures, *records(qrels, run)))
    our_means = M.calc_aggregate(measures, *records(qrels, run))
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        tolerance = 6e-6 if key[1] in map(str, GDEVAL) else 1e-12  # (gdeval prints %.5f)
        assert ours[key] == pytest.approx(value, abs=tolerance), key
        if key[1] in map(str, TREC_EVAL):
            assert ours[key] == value, key  # (trec_eval 9.0.8's, to the last bit)
    for m in measures:
        assert our_means[m] == pytest.approx(their_means[m], abs=1e-5 if m in GDEVAL
                                             else 1e-12), m


def test_a_measure_does_not_take_the_gains_of_another(registered):
    qrels, run = graded_pair(1, unique_scores=True)
    alone = M.calc_aggregate([M.nDCG], qrels, run)[M.nDCG]
    for _ in range(5):  # (ir_measures' order of the set, one way or the other)
        assert M.calc_aggregate([GAINS, M.nDCG], qrels, run)[M.nDCG] == alone
        assert M.calc_aggregate([M.nDCG, GAINS], qrels, run)[M.nDCG] == alone


def test_gdeval_rounds_fastir_does_not(registered):
    qrels, run = numeric(*graded_pair(3, unique_scores=True))
    qrels = {q: {d: min(label, 4) for d, label in docs.items()} for q, docs in qrels.items()}
    theirs = per_query(M.gdeval.iter_calc([M.ERR @ 20], *records(qrels, run)))
    ours = per_query(P.provider.iter_calc([M.ERR @ 20], *records(qrels, run)))
    assert all(round(v, 5) == v for v in theirs.values())
    assert any(round(v, 5) != v for v in ours.values())
    assert all(abs(ours[k] - v) <= 5e-6 for k, v in theirs.items())


@pytest.mark.parametrize("seed", [3, 5])
def test_fastir_as_gdeval_gives_gdeval_s_printed_values(seed):
    """``fastir.ir_measures.gdeval``: ERR@k and nDCG@k printed with 5 decimals, per query
    as ``ir_measures.gdeval``; the aggregate is the mean of the printed values (summed in
    fastir's query order: gdeval's numeric order may change its last digit)."""
    qrels, run = numeric(*graded_pair(seed, unique_scores=True))
    qrels = {q: {d: min(label, 4) for d, label in docs.items()} for q, docs in qrels.items()}
    measures = [M.ERR @ 20, M.ERR @ 2, M.nDCG(dcg="exp-log2") @ 10]
    qrel_records, run_records = records(qrels, run)
    assert per_query(P.gdeval.iter_calc(measures, qrel_records, run_records)) == \
        per_query(M.gdeval.iter_calc(measures, qrel_records, run_records))
    want = M.gdeval.calc_aggregate(measures, qrel_records, run_records)
    got = P.gdeval.calc_aggregate(measures, qrel_records, run_records)
    assert got == pytest.approx(want, rel=1e-15, abs=0)


def test_calc_aggregate_aggregates_as_ir_measures(registered):
    qrels, run = graded_pair(4)
    measures = TREC_EVAL + OTHERS
    evaluator = P.provider.evaluator(measures, records(qrels, run)[0])
    fast = evaluator.calc_aggregate(run)
    slow = M.providers.Evaluator.calc_aggregate(evaluator, run)  # (a Metric per value)
    assert fast == slow
    again = evaluator.calc_aggregate({q: {d: -s for d, s in docs.items()}
                                      for q, docs in run.items()})
    assert again != fast  # (one evaluator, many runs)


def test_empty_and_partial_runs_as_ir_measures_suite_has_them(registered):
    qrels = {"0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0}, "1": {"D0": 1, "D3": 2}}
    partial = {"0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1}}
    measures = [M.P @ 5, M.Judged @ 5, M.RR @ 5, M.NumQ, M.NumRel]
    assert set(M.iter_calc(measures, *records(qrels, {}))) == {
        M.Metric(q, m, 0.0) for q in qrels for m in measures}
    got = per_query(M.iter_calc(measures, *records(qrels, partial)))
    assert got == {("0", "P@5"): 0.6, ("0", "Judged@5"): 1.0, ("0", "RR@5"): 0.5,
                   ("0", "NumQ"): 1.0, ("0", "NumRel"): 3.0, ("1", "P@5"): 0.0,
                   ("1", "Judged@5"): 0.0, ("1", "RR@5"): 0.0, ("1", "NumQ"): 0.0,
                   ("1", "NumRel"): 0.0}  # (ir_measures: NumQ and NumRel count run queries)
    assert list(M.iter_calc(measures, *records({}, partial))) == []


def test_every_input_form(registered):
    pd = pytest.importorskip("pandas")
    qrels, run = graded_pair(5)
    rows_q, rows_r = records(qrels, run)
    qrels["empty"] = {}  # (a query without judgments: its DEFAULT, as with pytrec_eval)
    measures = [M.AP, M.nDCG @ 10, M.NumQ, M.Accuracy()]  # (Accuracy: ir_measures' own)
    forms = {"dicts": lambda: (qrels, run),
             "frames": lambda: (pd.DataFrame(rows_q), pd.DataFrame(rows_r)),
             "generators": lambda: ((r for r in rows_q), (r for r in rows_r))}
    for name, form in forms.items():
        P.unregister()
        expected = M.calc_aggregate(measures, *form())
        P.register()
        got = M.calc_aggregate(measures, *form())
        assert got == pytest.approx(expected, abs=1e-12), name


def test_diversity_measures_read_the_iteration_as_the_subtopic(registered):
    rng = np.random.default_rng(0)
    rows = [M.Qrel(q, f"d{d}", int(rng.integers(0, 3)), str(s)) for q in "12"
            for d in range(12) for s in range(3) if rng.random() < 0.6]
    run = {q: dict(zip([f"d{d}" for d in range(10)], map(float, rng.permutation(10))))
           for q in "12"}  # (no ties: pyndeval breaks them by docno ascending)
    measures = [M.alpha_nDCG @ 5, M.nERR_IA @ 5, M.StRecall @ 5, M.AP_IA]
    ours = per_query(P.provider.iter_calc(measures, rows, run))
    theirs = {}
    for m in measures:  # (pyndeval: one measure per call; several, and ir_measures mixes them)
        theirs.update(per_query(M.pyndeval.iter_calc([m], rows, run)))
    assert ours.keys() == theirs.keys()
    for key, value in theirs.items():
        assert math.isclose(ours[key], value, abs_tol=1e-4), key  # (ndeval prints %.6f)


# -- measures defined at runtime: ir_measures' tests/test_runtime.py (0.4.3), answered by
# fastir alone (ir_measures' runtime provider out of the pipeline)
RUNTIME_QRELS = """0 0 D0 0\n0 0 D1 1\n0 0 D2 1\n0 0 D3 2\n0 0 D4 0\n1 0 D0 1\n1 0 D3 0
1 0 D5 2\n"""
RUNTIME_RUN = """0 0 D0 1 0.8 run\n0 0 D2 2 0.7 run\n0 0 D1 3 0.3 run\n0 0 D3 4 0.4 run
0 0 D4 5 0.1 run\n1 0 D1 1 0.8 run\n1 0 D3 2 0.7 run\n1 0 D4 3 0.3 run\n1 0 D2 4 0.4 run\n"""


@pytest.fixture
def fastir_alone(registered):
    """fastir first in the pipeline, ir_measures' runtime provider out of it."""
    pipeline = M.DefaultPipeline.providers
    runtime = [p for p in pipeline if p.NAME == "runtime"]
    for p in runtime:
        pipeline.remove(p)
    yield
    pipeline.extend(runtime)


def runtime_pair():
    return (list(M.read_trec_qrels(RUNTIME_QRELS)), list(M.read_trec_run(RUNTIME_RUN)))


def check_precision_and_success(MyP, MyS):
    qrels, run = runtime_pair()
    assert all(P.provider.supports(m) for m in (MyP @ 1, MyS @ 2))
    for k, first, mean in ((1, 0.0, 0.0), (2, 0.5, 0.25), (3, 2 / 3, 1 / 3)):
        result = list((MyP @ k).iter_calc(qrels, run))
        assert [(r.query_id, r.value) for r in result] == [("0", first), ("1", 0.0)]
        assert (MyP @ k).calc_aggregate(qrels, run) == mean
    result = list((MyS @ 2).iter_calc(qrels, run))
    assert [(r.query_id, r.value) for r in result] == [("0", 1.0), ("1", 0.0)]
    assert (MyS @ 2).calc_aggregate(qrels, run) == 0.5


def test_define_byquery(fastir_alone):
    def my_p(qrels, run):
        run = run.merge(qrels, "left", on=["doc_id"])
        return (run["relevance"] > 0).sum() / len(run)

    def my_s(qrels, run):
        run = run.merge(qrels, "left", on=["doc_id"])
        return 1. if (run["relevance"] > 0).sum() else 0.

    check_precision_and_success(M.define_byquery(my_p), M.define_byquery(my_s))


def test_define(fastir_alone):
    def my_p(qrels, run):
        run = run.merge(qrels, "left", on=["query_id", "doc_id"])
        for qid, df in run.groupby("query_id"):
            yield qid, (df["relevance"] > 0).sum() / len(df)

    def my_s(qrels, run):
        run = run.merge(qrels, "left", on=["query_id", "doc_id"])
        for qid, df in run.groupby("query_id"):
            yield qid, 1. if (df["relevance"] > 0).sum() else 0.

    MyS = M.define(my_s)
    check_precision_and_success(M.define(my_p), MyS)
    qrels, run = runtime_pair()
    for pair in ((qrels, []), ([], run), ([], [])):  # (empty lists)
        list((MyS @ 2).iter_calc(*pair))


def test_non_doc_qrels(fastir_alone):
    pd = pytest.importorskip("pandas")

    def common_prefix(a, b):
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return a[:n]

    def length(qrels, run):
        return len(run.iloc[0]["qanswer"])

    def prefix_length(qrels, run):
        return len(common_prefix(qrels.iloc[0]["gold_answer"], run.iloc[0]["qanswer"]))

    prefix = "professor proton mixed the "
    answers = pd.DataFrame([["q1", prefix + "reactants"]], columns=["query_id", "qanswer"])
    gold = pd.DataFrame([["q1", prefix + "chemicals"]], columns=["query_id", "gold_answer"])
    # (ir_measures' test defines both as lambdas: one measure, <lambda>, the first's value)
    lambdas = [M.define_byquery(lambda q, r: length(q, r)),
               M.define_byquery(lambda q, r: prefix_length(q, r))]
    assert [m.value for m in M.iter_calc(lambdas, gold, answers)] == [len(answers.qanswer[0])]
    Length, Prefix = M.define_byquery(length), M.define_byquery(prefix_length)
    got = {str(m.measure): m.value for m in M.iter_calc([Length, Prefix], gold, answers)}
    assert got == {"length": len(prefix + "reactants"), "prefix_length": len(prefix)}


def test_run_qrel_inputs(fastir_alone):
    A = M.define(lambda qrels, run: iter(()), run_inputs=["query_id"],
                 qrel_inputs=["query_id", "doc_id", "x"])
    B = M.define(lambda qrels, run: iter(()))
    for answering in (P.provider, M.DefaultPipeline):
        assert set(answering.run_inputs([A, B])) == {"query_id", "doc_id", "score"}
        assert set(answering.run_inputs([A])) == {"query_id"}
        assert set(answering.qrel_inputs([A, B])) == {"query_id", "doc_id", "relevance", "x"}
        assert set(answering.qrel_inputs([A])) == {"query_id", "doc_id", "x"}
    assert set(M.DefaultPipeline.run_inputs([A, M.P @ 5])) == {"query_id", "doc_id", "score"}
    assert set(M.DefaultPipeline.qrel_inputs([A, M.P @ 5])) == {"query_id", "doc_id",
                                                                "relevance", "x"}


def test_runtime_measures_beside_fastir_s_own(fastir_alone):
    qrels, run = runtime_pair()
    MyP = M.define_byquery(lambda q, r: (r.merge(q, "left", on=["doc_id"])["relevance"] > 0)
                           .sum() / len(r), name="MyP")
    got = M.calc_aggregate([MyP @ 2, M.P @ 2], qrels, run)
    assert got == {MyP @ 2: 0.25, M.P @ 2: 0.25}


def test_iter_calc_yields_what_the_base_class_yields():
    """fastir's ``iter_calc`` (each measure's judged queries counted by sets) yields the
    metrics, and then the defaults of the judged queries a measure did not score, in the
    order ir_measures' base class yields them."""
    from ir_measures.providers.base import Evaluator as Base

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"d": 1}, "q0": {"z": 1}}
    measures = [M.AP, M.nDCG @ 10, M.P @ 1, M.RR, M.RR @ 10, M.R @ 5]  # (two fastir parts)
    evaluator = P.provider.evaluator(measures, qrels)
    for run in ({"q1": {"a": 0.5, "b": 0.7}, "q3": {"x": 1.0}, "q9": {"a": 1.0}}, {}):
        assert list(evaluator.iter_calc(run)) == list(Base.iter_calc(evaluator, run))
