"""A self-check of the reference on hand-computed values (``python -m naive`` from tests/)."""

from __future__ import annotations

import math

from .base import DEFAULT_RECALLS, _dcg, _lround, _prepare, _recall_count, judge, rank
from .dcg import _gain_table
from .entry import aggregate, evaluate, measure, parse, relstring
from .own import INFAP_EPSILON


def _self_check() -> None:
    def close(a: float, b: float, tol: float = 1e-12) -> bool:
        return abs(a - b) <= tol

    # Ranking: ties by docno descending (bytes), then the rank column never matters.
    assert rank({"dA": 1.0, "dB": 1.0, "dC": 1.0}) == ["dC", "dB", "dA"]
    assert rank({"a": 0.5, "b": 2.0, "ab": 0.5}) == ["b", "ab", "a"]
    assert judge({"x": 1, "y": -1}, ["x", "y", "z"]) == [1, -2, -1]

    # AP: relevant at ranks 1, 3, 6 and R = 3.
    run = {f"d{i}": 10.0 - i for i in range(1, 7)}
    qrels = {"d1": 1, "d3": 1, "d6": 1, "d2": 0}
    ap = measure("AP", qrels, run)
    assert ap == (1.0 + 2.0 / 3.0 + 3.0 / 6.0) / 3, ap
    assert close(ap, 0.7222222222222222)
    assert close(measure("AP", qrels, run, cutoff=3), (1.0 + 2.0 / 3.0) / 3)

    # nDCG@3, exponential gain: retrieved grades 3, 2, 3; qrels grades exactly {3, 3, 2}.
    run = {"a": 3.0, "b": 2.0, "c": 1.0}
    qrels = {"a": 3, "b": 2, "c": 3}
    v = measure("nDCG", qrels, run, cutoff=3, dcg="exp-log2")
    dcg = 7.0 + 3.0 / math.log2(3) + 7.0 / 2.0
    idcg = 7.0 + 7.0 / math.log2(3) + 3.0 / 2.0
    assert v == dcg / idcg and abs(v - 0.960) < 1e-3, v  # 0.95945...
    # Same ideal when the third grade-3 doc is not retrieved at all.
    run2 = {"a": 3.0, "b": 2.0, "x": 1.0}
    v2 = measure("nDCG", qrels, run2, cutoff=3, dcg="exp-log2")
    assert v2 == (7.0 + 3.0 / math.log2(3)) / idcg, v2

    # P@5 = 0.6 for [1,1,1,0,0]; R@5 = 0.75 with R = 4 and 3 relevant in the top 5.
    run = {f"d{i}": 10.0 - i for i in range(1, 6)}
    qrels = {"d1": 1, "d2": 1, "d3": 1, "d4": 0, "d5": 0, "other": 1}
    assert measure("P", qrels, run, cutoff=5) == 0.6
    assert measure("R", qrels, run, cutoff=5) == 0.75
    # P fills missing ranks with non-relevant; Success and RR@k.
    assert measure("P", qrels, run, cutoff=10) == 0.3
    assert measure("Success", qrels, run, cutoff=1) == 1.0
    assert measure("RR", {"d4": 1}, run, cutoff=3) == 0.0
    assert measure("RR", {"d4": 1}, run) == 0.25

    # DCG of the classic sequences (linear gain).
    assert round(_dcg([5, 2, 4, 0, 1], 5), 2) == 8.65
    assert round(_dcg([2, 0, 5, 1, 4], 5), 2) == 6.48
    # ... and through nDCG, dividing back by the ideal DCG.
    grades = [2, 0, 5, 1, 4]
    run = {f"d{i}": 10.0 - i for i in range(5)}
    qrels = {f"d{i}": g for i, g in enumerate(grades)}
    nd = measure("nDCG", qrels, run, cutoff=5)
    assert close(nd * _dcg([5, 4, 2, 1, 0], 5), _dcg(grades, 5)), nd
    assert round(nd * _dcg([5, 4, 2, 1, 0], 5), 2) == 6.48, nd

    # lround: halves away from zero, unlike Python's round().
    assert [_lround(x) for x in (0.5, 1.5, 2.5, 0.49999999999999994, -0.5)] == [1, 2, 3, 0, -1]

    # Empty ranking and aggregates.
    assert measure("IPrec", {"a": 1}, {}, cutoff=0.0) == 0.0
    assert measure("NumRet", {"a": 1}, {}) == 0.0
    assert aggregate("AP", []) == 0.0
    assert aggregate("NumRel", [3.0, 4.0]) == 7.0
    assert close(aggregate("GMAP", [0.5, 0.0]), math.sqrt(0.5 * 1e-5))
    per_q = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q3": {}}, ["AP"])
    assert per_q == {"q1": [1.0], "q2": [0.0]}, per_q
    per_q = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["AP"],
                     missing="skip")
    assert per_q == {"q1": [1.0]}, per_q
    assert parse("nDCG(dcg='exp-log2')@5") == ("nDCG", {"cutoff": 5, "dcg": "exp-log2"})
    assert parse("Utility(a=2,b=-1)") == ("Utility", {"a": 2.0, "b": -1.0})
    assert parse("IPrec@0.5") == ("IPrec", {"cutoff": 0.5})

    # --- the additional trec_eval families -------------------------------------------
    # Ranking d1..d6; d2 is absent from the qrels (-1), d4 pooled but unjudged (-2).
    run = {f"d{i}": 10.0 - i for i in range(1, 7)}
    qrels = {"d1": 1, "d3": 0, "d4": -1, "d5": 1, "d6": 0, "x": 1, "y": 2}
    assert judge(qrels, rank(run)) == [1, -1, 0, -2, 1, 0]
    # infAP: d1 at j=0 adds 1; d5 at j=4 (rel_above 1, nonrel_above 1, unjudged_above 1).
    eps = INFAP_EPSILON
    d5 = 1 / 5 + (4 / 5) * (3 / 4) * ((1 + eps) / (2 + 2 * eps))
    assert measure("infAP", qrels, run) == (1.0 + d5) / 4
    # Rprec_mult: c = (long) (0.2 * 4 + 0.9) = 1 -> P@1; c = (long) (0.5 * 4 + 0.9) = 2.
    assert measure("RprecMult", qrels, run, cutoff=0.2) == 1.0
    assert measure("RprecMult", qrels, run, cutoff=0.5) == 0.5
    assert measure("RprecMult", qrels, run, cutoff=2.0) == 2 / 8  # c = 8 > 6 retrieved
    # utility with the default (1, -1, 0, 0) and with a collection size.
    assert measure("Utility", qrels, run) == 2 - 4
    assert measure("Utility", qrels, run, a=0, b=0, c=0, d=1, num_docs=100) == 100 + 2 - 6 - 4
    assert measure("Utility", qrels, {}, a=0, b=0, c=1, d=0, in_run=False) == 0.0  # missing
    assert measure("Utility", qrels, run, a=0, b=0, c=1, d=0, max_docs=0) == 4.0  # emptied
    # 11pt_avg is the mean of iprec_at_recall at ascending levels.
    ip = [measure("IPrec", qrels, run, cutoff=x) for x in DEFAULT_RECALLS]
    assert close(measure("IPrecAvg", qrels, run), sum(ip) / 11)
    # binG: 1 / log2(2 + nonrel above) at d1 (0 above) and d5 (3 above), over R = 4.
    assert measure("BinG", qrels, run) == (1.0 + 1.0 / math.log2(5)) / 4
    # relative_P, set_relative_P, set_map, unj, yaap.
    assert measure("RelP", qrels, run, cutoff=2) == 0.5
    assert measure("RelP", qrels, run, cutoff=6) == 2 / 4
    assert measure("SetRelP", qrels, run) == 2 / 4
    assert measure("SetAP", qrels, run) == 4 / 24
    assert measure("Unj", qrels, run, cutoff=5) == 2 / 5
    assert measure("Unj", qrels, run, cutoff=20) == 2 / 20
    s_ = 1.0 + 2 / 5
    assert measure("YAAP", qrels, run) == math.log((1 + s_) / (1 + 4 - s_))
    # rbp / rbp_resid: labels up to 2, so gains are normalised to label / 2.
    p_ = 0.9
    assert close(measure("RBP", qrels, run), (1 - p_) * (0.5 + 0.5 * p_**4))
    assert close(measure("RBPResid", qrels, run), p_**6 + (1 - p_) * (p_ + p_**3))
    assert measure("RBPResid", qrels, run, judged_only=True) == 0.0
    assert relstring(qrels, run) == "1-0.10"
    assert relstring(qrels, run, cutoff=3, judged_only=True) == "101"
    assert relstring({"a": 12, "b": 3}, {"a": 2.0, "b": 1.0}) == ">3"

    # trec_eval's gain-table ndcg equals the direct nDCG with default gains.
    for q_ in (qrels, {"d1": 3, "d2": 0, "d6": 2, "z": 3}):
        for r_ in (run, {}, {"d6": 1.0}):
            for fam in ("nDCG",):
                direct = measure(fam, q_, r_)
                assert measure(fam, q_, r_, gains={}) == direct, (q_, r_)
        # dcg / ideal_dcg split of the same computation.
        dcg = measure("DCG", q_, run, gains={})
        idcg = measure("IDCG", q_, run, gains={})
        assert dcg / idcg == measure("nDCG", q_, run), (dcg, idcg)
    # Binary labels: G equals binG (cost = rank, results gain = relevant so far).
    qb = {"d1": 1, "d3": 0, "d5": 1, "x": 1}
    assert close(measure("G", qb, run), measure("BinG", qb, run))
    # Gain overrides: only the order of gains matters for the ideal; scaling cancels out.
    assert close(measure("nDCG", qb, run, gains={1: 3.0, 2: 9.0, 4: 4.5}), measure("nDCG", qb, run))
    # The truncating comparator: 0.5 vs 0.0 compare equal, glibc's merge sort keeps the
    # input order (override first), so the gain-0 level ends on top of the 0.5 one and the
    # ideal stops there: no ideal gain at all, ndcg 0 instead of the correct value.
    graded = {"d1": 1, "d3": 0, "y": 2}
    assert [e[0] for e in _gain_table(graded, {1: 0.5}, True)] == [1, 0, 2]
    assert [e[0] for e in _gain_table(graded, {1: 0.5}, False)] == [0, 1, 2]
    good = measure("nDCG", graded, run, gains={1: 0.5})
    bad = measure("nDCG", graded, run, gains={1: 0.5}, sort_bug=True)
    assert close(good, 0.5 / (2.0 + 0.5 / math.log2(3))) and bad == 0.5 / 2.0, (good, bad)
    # ndcg_rel / Rndcg on a perfect ranking are 1.
    perfect = {"a": 3.0, "b": 2.0, "c": 1.0}
    q_perfect = {"a": 2, "b": 1, "c": 0}
    assert close(measure("nDCGRel", q_perfect, perfect), 1.0)
    assert close(measure("RnDCG", q_perfect, perfect), 1.0)

    # compat="9.0.8": float32 scores (new ties broken by docno) and (long)(x*R + 0.9).
    tie = {"a": 1.0000000001, "b": 1.0}
    assert _prepare({"a": 1}, tie, None, False) == [1, -1]
    assert _prepare({"a": 1}, tie, None, False, "9.0.8") == [-1, 1]
    assert _recall_count(0.1, 6, "10.0") == 1 and _recall_count(0.1, 6, "9.0.8") == 1
    assert _recall_count(0.2, 3, "10.0") == 1 and _recall_count(0.2, 3, "9.0.8") == 1
    assert _recall_count(0.1, 2, "10.0") == 0 and _recall_count(0.1, 2, "9.0.8") == 1
    assert measure("YAAP", {"a": 1}, {}, compat="9.0.8") == 0.0
    assert measure("YAAP", {"a": 1}, {}) == math.log(1 / 2)
    assert close(aggregate("GMBpref", [0.5, 0.0]), math.sqrt(0.5 * 1e-5))
    per_q = evaluate({"q1": qrels}, {"q1": run}, ["Unj@5", "GMBpref"])
    assert per_q == {"q1": [0.4, measure("Bpref", qrels, run)]}, per_q
    print("OK")
