"""The measures beyond trec_eval against their reference implementations, through
ir_measures' providers: gdeval (ERR; nERR as gdeval's ERR over its ERR of the ideal run),
judged, compat, cwl_eval (the C/W/L family) and pyndeval (the diversity measures).

The references break score ties in other ways (gdeval as trec_eval; ir_measures' judged,
compat and pyndeval by docno ascending; cwl_eval in input order), so the runs here have no
ties: each ranked doc gets its own score.
"""

import logging
import math
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir

ir_measures = pytest.importorskip("ir_measures")
pytestmark = pytest.mark.one_engine
logging.getLogger("ir_measures").setLevel(logging.ERROR)  # (cwl_eval's gain-range notes)

QIDS = ("1", "2", "3")  # gdeval needs numeric query ids


LABELS = st.integers(-1, 4)  # (gdeval refuses labels above 4)


@st.composite
def judged_runs(draw):
    """Qrels {qid: {doc: label}} and a tie-free run {qid: {doc: score}} over them (ranked
    docs may be unjudged; judged docs may be unretrieved)."""
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        n = draw(st.integers(0, 14))
        docs = [f"d{i:02d}" for i in draw(st.permutations(range(20)))[:n]]
        kinds = draw(st.lists(LABELS | st.none(), min_size=n, max_size=n))
        qrels[qid] = {doc: label for doc, label in zip(docs, kinds) if label is not None}
        for j, label in enumerate(draw(st.lists(LABELS, max_size=4))):
            qrels[qid][f"u{j}"] = label
        if not qrels[qid]:
            qrels[qid]["u9"] = 0
        if n and draw(st.booleans()):
            run[qid] = {doc: float(n - i) + 0.5 for i, doc in enumerate(docs)}
    return qrels, run


def reference(provider, name, qrels, run):
    """{qid: value} from one ir_measures provider (every qrels query; 0 when not scored)."""
    measure = ir_measures.parse_measure(name) if isinstance(name, str) else name
    rows = [ir_measures.Qrel(q, d, label) for q, docs in qrels.items()
            for d, label in docs.items()]
    values = {q: 0.0 for q in qrels}
    for m in provider.iter_calc([measure], rows, run):
        values[m.query_id] = m.value
    return values


def assert_close(got, want, name, tolerance):
    for qid, value in want.items():
        assert math.isclose(got[qid], value, rel_tol=0, abs_tol=tolerance), (
            f"{name} on query {qid}: fastir {got[qid]!r}, reference {value!r}")


def fastir_values(qrels, run, name, **options):
    res = fastir.evaluate(qrels, run, [name], **options)
    return {q: row[name] for q, row in res.to_dict().items()}


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval needs perl")
@settings(max_examples=25, deadline=None)
@given(judged_runs(), st.integers(1, 12))
def test_err_and_nerr_match_gdeval(data, k):
    qrels, run = data
    want = reference(ir_measures.gdeval, f"ERR@{k}", qrels, run)
    assert_close(fastir_values(qrels, run, f"ERR@{k}"), want, "ERR", 6e-6)  # gdeval: %.5f
    # nERR: gdeval's ERR of the run over its ERR of the ideal run (labels > 0, descending)
    ideal_run = {q: {d: float(label) for d, label in docs.items() if label > 0}
                 for q, docs in qrels.items()}
    best = reference(ir_measures.gdeval, f"ERR@{k}", qrels,
                     {q: r for q, r in ideal_run.items() if r})
    got = fastir_values(qrels, run, f"nERR@{k}")
    for qid in qrels:
        if best[qid] > 1e-4:  # (5 decimals: the ratio is only meaningful away from 0)
            assert math.isclose(got[qid], want[qid] / best[qid], abs_tol=6e-6 / best[qid] * 4)
        elif best[qid] == 0.0:
            assert got[qid] == 0.0


@settings(max_examples=60, deadline=None)
@given(judged_runs(), st.one_of(st.none(), st.integers(1, 15)))
def test_judged_matches_ir_measures(data, k):
    qrels, run = data
    name = "Judged" if k is None else f"Judged@{k}"
    run = {q: r for q, r in run.items() if r}  # (ir_measures divides 0 by 0 on empty ones)
    assert_close(fastir_values(qrels, run, name),
                 reference(ir_measures.judged, name, qrels, run), name, 1e-12)


@settings(max_examples=60, deadline=None)
@given(judged_runs(), st.sampled_from([0.5, 0.8, 0.95, 0.99]), st.booleans())
def test_compat_matches_ir_measures(data, p, normalize):
    qrels, run = data
    name = f"Compat(p={p},normalize={normalize})"
    assert_close(fastir_values(qrels, run, name),
                 reference(ir_measures.compat, name, qrels, run), name, 1e-12)


CWL = [  # (fastir name, ir_measures name): ir_measures wants float T and p, integer rels
    ("BPM(max_rel=3)@{k}", "BPM(max_rel=3)@{k}"),
    ("BPM(T=2,max_rel=4)@{k}", "BPM(T=2.0,max_rel=4)@{k}"),
    ("SDCG(max_rel=3)@{k}", "SDCG(max_rel=3)@{k}"),
    ("NERR8(max_rel=4)@{k}", "NERR8(max_rel=4)@{k}"),
    ("NERR9(min_rel=1,max_rel=3)@{k}", "NERR9(min_rel=1,max_rel=3)@{k}"),
    ("NERR10(p=0.7,max_rel=4)", "NERR10(p=0.7,max_rel=4)"),
    ("NERR11(T=2,max_rel=3)", "NERR11(T=2.0,max_rel=3)"),
    ("INST(T=1.5,max_rel=4)", "INST(T=1.5,max_rel=4)"),
    ("INSQ(min_rel=-1,max_rel=2)", None),  # (ir_measures' parser takes no negative value)
]


@settings(max_examples=25, deadline=None)
@given(judged_runs(), st.integers(1, 15))
def test_cwl_family_matches_cwl_eval(data, k):
    pytest.importorskip("cwl")
    qrels, run = data
    for ours, theirs in CWL:
        name = ours.format(k=k)
        measure = ir_measures.INSQ(min_rel=-1, max_rel=2) if theirs is None else \
            theirs.format(k=k)
        assert_close(fastir_values(qrels, run, name),
                     reference(ir_measures.cwl_eval, measure, qrels, run), name, 1e-12)


@st.composite
def subtopic_runs(draw):
    """Subtopic qrels {qid: {doc: {subtopic: label}}} and a tie-free run."""
    qrels, run = {}, {}
    for qid in draw(st.lists(st.sampled_from(QIDS), min_size=1, max_size=3, unique=True)):
        docs = [f"d{i:02d}" for i in draw(st.permutations(range(16)))]
        judged = draw(st.lists(st.dictionaries(st.sampled_from(["1", "2", "3", "4"]),
                                               st.integers(-1, 2), min_size=1, max_size=3),
                               min_size=1, max_size=10))
        qrels[qid] = dict(zip(docs, judged))
        n = draw(st.integers(0, 12))
        if n:
            run[qid] = {doc: float(n - i) for i, doc in enumerate(docs[:n])}
    return qrels, run


DIVERSITY = ["alpha_nDCG@{k}", "alpha_DCG@{k}", "ERR_IA@{k}", "nERR_IA@{k}", "P_IA@{k}",
             "StRecall@{k}", "NRBP", "nNRBP", "AP_IA"]


@settings(max_examples=40, deadline=None)
@given(subtopic_runs(), st.integers(2, 20), st.sampled_from([(0.5, 0.5), (0.3, 0.8)]),
       st.integers(1, 2))
def test_diversity_matches_pyndeval(data, k, alpha_beta, rel):
    """k from 2: ndeval leaves alpha-DCG@1 and ERR-IA@1 undivided (fastir divides)."""
    pytest.importorskip("pyndeval")
    qrels, run = data
    alpha, beta = alpha_beta
    rows = [ir_measures.Qrel(q, d, label, s) for q, docs in qrels.items()
            for d, pairs in docs.items() for s, label in pairs.items()]
    for pattern in DIVERSITY:
        family = pattern.split("@")[0]
        params = [f"rel={rel}"] + ([f"alpha={alpha}"] if family not in ("P_IA", "StRecall")
                                   and (family.startswith("alpha") or "NRBP" in family)
                                   else [])
        params += [f"beta={beta}"] if "NRBP" in family else []
        theirs = f"{family}({','.join(params)})" + ("@" + str(k) if "@" in pattern else "")
        want = {q: 0.0 for q in qrels}  # (one parameter group per call: ir_measures bug)
        for m in ir_measures.pyndeval.iter_calc([ir_measures.parse_measure(theirs)], rows,
                                                run):
            want[m.query_id] = m.value
        ours = theirs if family not in ("ERR_IA", "nERR_IA") else \
            f"{family}(rel={rel},alpha=0.5)@{k}"  # (ir_measures runs ERR-IA at alpha 0.5)
        got = fastir_values(qrels, run, ours)
        for qid, value in want.items():
            if math.isnan(value):  # nNRBP without intents: ndeval divides 0 by 0
                assert got[qid] == 0.0
                continue
            assert math.isclose(got[qid], value, abs_tol=1e-12), (ours, qid, got[qid], value)


def beir_recall_cap(qrels, run, k):
    """BEIR's ``recall_cap`` (beir.retrieval.custom_metrics), per query of the run: of the
    top k by score, the relevant (label > 0) over min(k, the query's relevant)."""
    values = {}
    for qid, scores in run.items():
        relevant = {doc for doc, label in qrels.get(qid, {}).items() if label > 0}
        top = sorted(scores, key=scores.get, reverse=True)[:k]
        values[qid] = sum(doc in relevant for doc in top) / min(len(relevant), k)
    return values


@settings(max_examples=40, deadline=None)
@given(judged_runs(), st.integers(1, 12))
def test_r_cap_is_beirs_recall_cap(data, k):
    qrels, run = data
    run = {q: r for q, r in run.items() if r and any(v > 0 for v in qrels[q].values())}
    if not run:  # (BEIR divides by zero on a query without relevant documents)
        return
    got = fastir.evaluate(qrels, run, [f"R_cap@{k}"], missing="skip")
    assert_close({q: row[f"R_cap@{k}"] for q, row in got.to_dict().items()},
                 beir_recall_cap(qrels, run, k), f"R_cap@{k}", 1e-12)


def beir_hole(qrels, run, k):
    """BEIR's ``hole`` (beir.retrieval.custom_metrics, reimplemented from its source), per
    query of the run, with BEIR's summary: the docs of the top k by score that no query of
    the qrels judges (its annotated corpus: every doc of the qrels, any label) over k; the
    mean over the run's queries, rounded to 5 decimals."""
    annotated = {doc for docs in qrels.values() for doc in docs}
    values = {}
    for qid, scores in run.items():
        top = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:k]
        values[qid] = len([doc for doc, _ in top if doc not in annotated]) / k
    return values, round(sum(values.values()) / len(run), 5)


@settings(max_examples=40, deadline=None)
@given(judged_runs(), st.integers(1, 12))
def test_hole_is_beirs_hole(data, k):
    qrels, run = data
    if not run:  # (BEIR divides by the run's queries)
        return
    for name in (f"Hole@{k}", f"hole@{k}"):
        got = fastir.evaluate(qrels, run, [name], missing="skip")
        want, mean = beir_hole(qrels, run, k)
        assert {q: row[name] for q, row in got.to_dict().items()} == want
        assert round(got.mean[name], 5) == mean
