"""Independent naive reference implementation of fastir's measures.

Every measure is written straight from its definition in plain Python (standard library
only, nothing imported from ``fastir``), one query at a time, so the fast numba kernels can
be checked against it. Clarity and exactness matter more than speed.

The authority is trec_eval 10.0 (usnistgov/trec_eval, files ``m_*.c``,
``form_res_rels.c``, ``meas_avg.c``). Where it matters for last-bit agreement the
floating-point operations are done in trec_eval's order: sums are sequential in rank
order starting from 0.0, the same divisions are made (``a / b``, never ``a * (1 / b)``),
the discount is ``gain / log2(rank + 1)`` with the C library's ``log2``, and summaries are
a sequential sum divided by the count.

Relevance codes (as in ``form_res_rels.c``): a retrieved doc gets its qrels label when
the label is >= 0, ``-2`` (RELVALUE_UNJUDGED, "pooled but unjudged") when it is in the
qrels with a negative label, and ``-1`` (RELVALUE_NONPOOL) when it is absent from the
qrels. Codes -1 and -2 are never relevant.
"""

from __future__ import annotations

import math

__all__ = ["rank", "judge", "measure", "aggregate", "evaluate"]

#: trec_eval's RELVALUE_NONPOOL: retrieved doc absent from the qrels.
NONPOOL = -1
#: trec_eval's RELVALUE_UNJUDGED: retrieved doc in the qrels with a negative label.
UNJUDGED = -2
#: trec_eval's MIN_GEO_MEAN, the floor applied before the log in gm_map.
MIN_GEO_MEAN = 0.00001

#: Families whose summary is a sum over queries instead of a mean.
SUM_FAMILIES = frozenset({"NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"})

FAMILIES = frozenset(
    {
        "NumRet",
        "NumRel",
        "NumRelRet",
        "NumNonRelJudgedRet",
        "AP",
        "GMAP",
        "Rprec",
        "Bpref",
        "RR",
        "IPrec",
        "P",
        "R",
        "nDCG",
        "DCG",
        "Success",
        "SetP",
        "SetR",
        "SetF",
    }
)

#: Families for which a cutoff is mandatory.
_NEEDS_CUTOFF = frozenset({"P", "R", "Success"})


# --------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------


def rank(run_q: dict[str, float]) -> list[str]:
    """Docs of one query in trec_eval order: score descending, ties by docno descending
    comparing the UTF-8 bytes (strcmp order).

    This is ``comp_sim_docno`` of form_res_rels.c: higher sim first, then
    ``strcmp(p2->docno, p1->docno)`` (the larger docno first). Python compares ``bytes``
    as unsigned chars with a proper prefix sorting first, exactly like strcmp.
    """
    return sorted(run_q, key=lambda doc: (run_q[doc], doc.encode("utf-8")), reverse=True)


def judge(qrels_q: dict[str, int], ranked: list[str]) -> list[int]:
    """Relevance code per ranked doc: the qrels label if label >= 0; -2 if in qrels with
    label < 0; -1 if absent from qrels."""
    codes = []
    for doc in ranked:
        if doc not in qrels_q:
            codes.append(NONPOOL)
        elif qrels_q[doc] < 0:
            codes.append(UNJUDGED)
        else:
            codes.append(qrels_q[doc])
    return codes


def _lround(x: float) -> int:
    """C ``lround``: round to nearest, halfway cases away from zero.

    Python's ``round`` rounds half to even, and ``floor(x + 0.5)`` is wrong for
    0.49999999999999994 (the addition rounds up to 1.0), so compare the exact
    fractional part instead: ``x - floor(x)`` is exact for every finite double.
    """
    if x < 0:
        return -_lround(-x)
    whole = math.floor(x)
    if x - whole >= 0.5:
        return int(whole) + 1
    return int(whole)


def _is_rel(code: int, rel: int) -> bool:
    """A ranked doc is relevant iff it is judged (code >= 0) with label >= rel."""
    return code >= 0 and code >= rel


def _num_rel(qrels_q: dict[str, int], rel: int) -> int:
    """R: qrels entries with a judged label (>= 0) that is >= rel."""
    return sum(1 for label in qrels_q.values() if label >= 0 and label >= rel)


def _num_judged_nonrel(qrels_q: dict[str, int], rel: int) -> int:
    """Judged non-relevant qrels entries: 0 <= label < rel."""
    return sum(1 for label in qrels_q.values() if 0 <= label < rel)


def _gain(label: int, rel: int, gain: str) -> float:
    """nDCG gain of a label: 0 unless label >= rel and label > 0; then the label itself
    (linear, trec_eval's default) or 2**label - 1 (exponential, Burges et al.)."""
    if label >= rel and label > 0:
        if gain == "linear":
            return float(label)
        if gain == "exponential":
            return float(2**label - 1)
        raise ValueError(f"gain must be 'linear' or 'exponential', got {gain!r}")
    return 0.0


def _dcg(gains: list[float], k: int | None = None) -> float:
    """DCG of a gain sequence over ranks 1..min(k, len(gains)).

    Sequential sum in rank order starting at 0.0; zero gains are skipped (m_ndcg.c:
    ``if (results_gain != 0) results_dcg += results_gain / log2((double) (i + 2));``).
    """
    depth = len(gains) if k is None else min(k, len(gains))
    total = 0.0
    for i in range(depth):
        g = gains[i]
        if g != 0:
            total += g / math.log2(i + 2)
    return total


def _prepare(
    qrels_q: dict[str, int],
    run_q: dict[str, float],
    max_docs: int | None,
    judged_only: bool,
) -> list[int]:
    """Relevance codes of the ranking after -M truncation and then -J filtering."""
    ranked = rank(run_q)
    if max_docs is not None:
        if max_docs < 0:
            raise ValueError(f"max_docs must be >= 0, got {max_docs}")
        ranked = ranked[:max_docs]
    codes = judge(qrels_q, ranked)
    if judged_only:
        codes = [c for c in codes if c >= 0]
    return codes


# --------------------------------------------------------------------------------------
# Measures, one function per family. `codes` is the final ranked list of relevance codes.
# --------------------------------------------------------------------------------------


def _ap(codes: list[int], R: int, rel: int, k: int | None) -> float:
    """m_map.c / m_map_cut.c: sum of precision at each relevant rank (top k only if a
    cutoff is given), divided by R; 0 when nothing relevant was counted."""
    depth = len(codes) if k is None else min(k, len(codes))
    rel_so_far = 0
    total = 0.0
    for i in range(depth):
        if _is_rel(codes[i], rel):
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    if rel_so_far == 0 or R == 0:
        return 0.0
    return total / R


def _rprec(codes: list[int], R: int, rel: int) -> float:
    """m_Rprec.c: relevant in the top min(n, R), divided by R."""
    look = min(len(codes), R)
    if look == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:look] if _is_rel(c, rel))
    return rel_so_far / R


def _bpref(codes: list[int], R: int, num_nonrel: int, rel: int) -> float:
    """m_bpref.c, line by line: unjudged docs (-1, -2) are skipped; judged docs with
    0 <= code < rel are non-relevant; every other judged doc is relevant and adds
    1 - min(nonrel_so_far, R) / min(num_nonrel, R), or 1 when no non-relevant is above."""
    nonrel_so_far = 0
    bpref = 0.0
    for c in codes:
        if c == NONPOOL or c == UNJUDGED:
            continue
        if 0 <= c < rel:
            nonrel_so_far += 1
        else:
            if nonrel_so_far > 0:
                bpref += 1.0 - (min(nonrel_so_far, R) / min(num_nonrel, R))
            else:
                bpref += 1.0
    if R:
        bpref /= R
    return bpref


def _rr(codes: list[int], rel: int, k: int | None) -> float:
    """m_recip_rank.c: 1 / rank of the first relevant doc (within the top k if given)."""
    depth = len(codes) if k is None else min(k, len(codes))
    for i in range(depth):
        if _is_rel(codes[i], rel):
            return 1.0 / (i + 1)
    return 0.0


def _iprec(codes: list[int], R: int, rel: int, recall: float) -> float:
    """m_iprec_at_recall.c (10.0): c = lround(recall * R); 0 if c > num_rel_ret;
    otherwise the largest precision at any rank at or after the c-th relevant doc
    (c == 0: at or after the first relevant doc, or the precision at n if none).

    An empty ranking scores 0 (trec_eval's formula would give 0/0 there; its 10.0
    output for a -c topic missing from the run prints 0.0000)."""
    n = len(codes)
    if n == 0:
        return 0.0
    cut = _lround(recall * R)
    num_rel_ret = sum(1 for c in codes if _is_rel(c, rel))
    if cut > num_rel_ret:
        return 0.0
    # Precision at each rank i (1-based), computed exactly as trec_eval does:
    # (double) rel_so_far / (double) i with rel_so_far = relevant docs in the top i.
    precisions = []
    rel_so_far = 0
    rank_of = {}  # j -> rank of the j-th relevant doc
    for i in range(1, n + 1):
        if _is_rel(codes[i - 1], rel):
            rel_so_far += 1
            rank_of[rel_so_far] = i
        precisions.append(rel_so_far / i)
    if num_rel_ret == 0:
        # Nothing relevant (then cut == 0): trec_eval returns num_rel_ret / num_ret.
        return num_rel_ret / n
    start = rank_of[max(cut, 1)]
    return max(precisions[start - 1 :])


def _precision_at(codes: list[int], rel: int, k: int) -> float:
    """m_P.c: relevant in the top k divided by k (missing ranks are non-relevant)."""
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / k


def _recall_at(codes: list[int], R: int, rel: int, k: int) -> float:
    """m_recall.c: relevant in the top k divided by R (0 when R == 0)."""
    if R == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / R


def _ndcg(codes: list[int], qrels_q: dict[str, int], rel: int, gain: str, k: int | None) -> float:
    """m_ndcg.c / m_ndcg_cut.c: DCG of the retrieved list over the top k divided by the
    DCG of the ideal list (ALL qrels entries with positive gain, retrieved or not, gains
    sorted descending) over the top k; 0 when the ideal DCG is 0."""
    # -2 / -1 codes are negative, so _gain gives them 0 (get_gain finds no level for them).
    run_gains = [_gain(c, rel, gain) for c in codes]
    ideal_gains = sorted(
        (g for g in (_gain(label, rel, gain) for label in qrels_q.values()) if g > 0),
        reverse=True,
    )
    dcg = _dcg(run_gains, k)
    idcg = _dcg(ideal_gains, k)
    if idcg > 0.0:
        return dcg / idcg
    return 0.0


def _success(codes: list[int], rel: int, k: int) -> float:
    """m_success.c: 1 if a relevant doc is in the top k."""
    return 1.0 if any(_is_rel(c, rel) for c in codes[:k]) else 0.0


def _set_f(num_rel_ret: int, n: int, R: int, beta: float) -> float:
    """m_set_F.c: (x + 1) * P * R / (x * P + R) with x = beta; 0 when num_rel_ret == 0
    (which covers n == 0 and R == 0)."""
    if num_rel_ret == 0:
        return 0.0
    P = num_rel_ret / n
    Rc = num_rel_ret / R
    x = beta
    return (x + 1.0) * P * Rc / (x * P + Rc)


# --------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------


def measure(
    family: str,
    qrels_q: dict[str, int],
    run_q: dict[str, float],
    *,
    cutoff: int | None = None,
    rel: int = 1,
    gain: str = "linear",
    recall: float | None = None,
    beta: float = 1.0,
    max_docs: int | None = None,
    judged_only: bool = False,
) -> float:
    """Value of one measure for one query.

    Steps: rank the run (trec_eval order), truncate to ``max_docs`` (-M), drop docs with a
    negative code if ``judged_only`` (-J, order kept), then compute. R counts qrels labels
    >= rel; a ranked doc is relevant iff its code >= rel (codes -1/-2 never are).
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown measure family {family!r}")
    if family in _NEEDS_CUTOFF and cutoff is None:
        raise ValueError(f"{family} needs a cutoff")
    if cutoff is not None and cutoff <= 0:
        raise ValueError(f"cutoff must be a positive integer, got {cutoff}")
    if family == "IPrec" and recall is None:
        raise ValueError("IPrec needs a recall level")

    codes = _prepare(qrels_q, run_q, max_docs, judged_only)
    n = len(codes)
    R = _num_rel(qrels_q, rel)
    k = cutoff

    if family == "NumRet":
        return float(n)
    if family == "NumRel":
        return float(R)
    if family == "NumRelRet":
        return float(sum(1 for c in codes if _is_rel(c, rel)))
    if family == "NumNonRelJudgedRet":
        return float(sum(1 for c in codes if 0 <= c < rel))
    if family in ("AP", "GMAP"):
        return _ap(codes, R, rel, k)
    if family == "Rprec":
        return _rprec(codes, R, rel)
    if family == "Bpref":
        return _bpref(codes, R, _num_judged_nonrel(qrels_q, rel), rel)
    if family == "RR":
        return _rr(codes, rel, k)
    if family == "IPrec":
        return _iprec(codes, R, rel, recall)
    if family == "P":
        return _precision_at(codes, rel, k)
    if family == "R":
        return _recall_at(codes, R, rel, k)
    if family == "nDCG":
        return _ndcg(codes, qrels_q, rel, gain, k)
    if family == "DCG":
        return _dcg([_gain(c, rel, gain) for c in codes], k)
    if family == "Success":
        return _success(codes, rel, k)
    num_rel_ret = sum(1 for c in codes if _is_rel(c, rel))
    if family == "SetP":
        return num_rel_ret / n if n else 0.0
    if family == "SetR":
        return num_rel_ret / R if R else 0.0
    if family == "SetF":
        return _set_f(num_rel_ret, n, R, beta)
    raise AssertionError(family)  # unreachable: FAMILIES checked above


def aggregate(family: str, values: list[float]) -> float:
    """The summary over queries: arithmetic mean (sequential left-to-right sum divided by
    the count), except NumRet/NumRel/NumRelRet/NumNonRelJudgedRet which are sums and GMAP
    which is exp(mean(log(max(v, 1e-5)))) computed as in trec_eval meas_avg.c
    (sum of logs sequentially, divide, exp). Empty list -> 0.0."""
    if not values:
        return 0.0
    if family in SUM_FAMILIES:
        total = 0.0
        for v in values:
            total += v
        return total
    if family == "GMAP":
        # m_gm_map.c stores log(MAX(ap, MIN_GEO_MEAN)) per query; te_acc_meas_s sums
        # them; te_calc_avg_meas_s_gm takes exp(sum / num_queries).
        total = 0.0
        for v in values:
            total += math.log(max(v, MIN_GEO_MEAN))
        return math.exp(total / len(values))
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def evaluate(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    measures: list[tuple[str, dict]],
    *,
    missing: str = "zero",
    max_docs: int | None = None,
    judged_only: bool = False,
) -> dict[str, dict[int, float]]:
    """Per-query values {qid: {measure_index: value}} for the queries that count:
    missing="zero": every qrels query (a qrels query absent from the run is evaluated
    with an empty ranking); missing="skip": queries in both. Run-only queries never count.
    Each measure is (family, params) where params are the keyword arguments of measure().
    ``max_docs`` / ``judged_only`` apply to every measure unless its params override them.
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', got {missing!r}")
    out: dict[str, dict[int, float]] = {}
    for qid in qrels:
        if qid not in run and missing == "skip":
            continue
        run_q = run.get(qid, {})
        per_q: dict[int, float] = {}
        for idx, (family, params) in enumerate(measures):
            kwargs = {"max_docs": max_docs, "judged_only": judged_only}
            kwargs.update(params)
            per_q[idx] = measure(family, qrels[qid], run_q, **kwargs)
        out[qid] = per_q
    return out


# --------------------------------------------------------------------------------------
# Self-check
# --------------------------------------------------------------------------------------


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
    v = measure("nDCG", qrels, run, cutoff=3, gain="exponential")
    dcg = 7.0 + 3.0 / math.log2(3) + 7.0 / 2.0
    idcg = 7.0 + 7.0 / math.log2(3) + 3.0 / 2.0
    assert v == dcg / idcg and abs(v - 0.960) < 1e-3, v  # 0.95945...
    # Same ideal when the third grade-3 doc is not retrieved at all.
    run2 = {"a": 3.0, "b": 2.0, "x": 1.0}
    v2 = measure("nDCG", qrels, run2, cutoff=3, gain="exponential")
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
    assert measure("IPrec", {"a": 1}, {}, recall=0.0) == 0.0
    assert measure("NumRet", {"a": 1}, {}) == 0.0
    assert aggregate("AP", []) == 0.0
    assert aggregate("NumRel", [3.0, 4.0]) == 7.0
    assert close(aggregate("GMAP", [0.5, 0.0]), math.sqrt(0.5 * 1e-5))
    per_q = evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q3": {}}, [("AP", {})])
    assert per_q == {"q1": {0: 1.0}, "q2": {0: 0.0}}, per_q
    per_q = evaluate(
        {"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, [("AP", {})], missing="skip"
    )
    assert per_q == {"q1": {0: 1.0}}, per_q
    print("OK")


if __name__ == "__main__":
    _self_check()
