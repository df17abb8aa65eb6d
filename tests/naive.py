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

The less common trec_eval measures (infAP, binG, G, ndcg_rel, Rndcg, dcg / ideal_dcg, ndcg
with gain overrides, rbp, ...) are line-by-line ports of their ``m_*.c`` loops, since their
exact value depends on details of those loops (gain table order, early loop exits). An
empty ``run_q`` stands for a topic missing from the run (trec_eval ``-c``) and scores what
trec_eval prints for it. ``compat="9.0.8"`` selects trec_eval 9.0.8 behaviour: scores
rounded to float32 before ranking and ``(long)(x * R + 0.9)`` recall counts.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["REFERENCES", "rank", "judge", "measure", "aggregate", "evaluate", "parse",
           "relstring"]

#: trec_eval's RELVALUE_NONPOOL: retrieved doc absent from the qrels.
NONPOOL = -1
#: trec_eval's RELVALUE_UNJUDGED: retrieved doc in the qrels with a negative label.
UNJUDGED = -2
#: trec_eval's MIN_GEO_MEAN, the floor applied before the log in gm_map.
MIN_GEO_MEAN = 0.00001
#: trec_eval's INFAP_EPSILON (trec_eval.h).
INFAP_EPSILON = 0.00001


#: Supported trec_eval behaviours for ``compat``.
COMPATS = ("10.0", "9.0.8")

#: Default recall levels of iprec_at_recall / 11pt_avg (the C array literals).
DEFAULT_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: The C/W/L measures of cwl_eval (ir_measures' cwl_eval provider).
CWL_FAMILIES = ("BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ")
CWL_DEPTH = 1000  # cwl_eval's ranking length (cut or padded with gain-0 documents)


#: ndeval's intent-aware measures (TREC Web track; pyndeval, ir_measures' diversity).
DIVERSITY_FAMILIES = ("alpha_nDCG", "alpha_DCG", "ERR_IA", "nERR_IA", "NRBP", "nNRBP",
                      "P_IA", "StRecall")


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


def _float32(x: float) -> float:
    """``x`` rounded to the nearest float32 (C ``(float) x``: overflow gives +-inf)."""
    try:
        return struct.unpack("f", struct.pack("f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _check_compat(compat: str) -> None:
    if compat not in COMPATS:
        raise ValueError(f"compat must be one of {COMPATS}, got {compat!r}")


def _recall_count(x: float, R: int, compat: str) -> int:
    """Number of relevant docs for recall level x (iprec_at_recall, 11pt_avg):
    ``lround(x * R)`` in 10.0, ``(long) (x * R + 0.9)`` (truncation) in 9.0.8."""
    if compat == "9.0.8":
        return int(x * R + 0.9)  # int() truncates toward zero like the C cast
    return _lround(x * R)


def _cdiv(a: float, b: float) -> float:
    """C double division: +-inf or nan on a zero divisor instead of an exception."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _clog2(x: float) -> float:
    """C ``log2``: -inf at 0 and nan below 0 instead of an exception."""
    if x > 0:
        return math.log2(x)
    if x == 0:
        return -math.inf
    return math.nan


def _prepare(
    qrels_q: dict[str, int],
    run_q: dict[str, float],
    max_docs: int | None,
    judged_only: bool,
    compat: str = "10.0",
) -> list[int]:
    """Relevance codes of the ranking after -M truncation and then -J filtering.
    With compat="9.0.8" the scores are first rounded to float32 (9.0.8 stores them as
    ``float``), which can create new ties; ties then break by docno as usual."""
    return judge(qrels_q, _ranked_docs(qrels_q, run_q, max_docs, judged_only, compat))


def _ranked_docs(qrels_q, run_q, max_docs, judged_only, compat="10.0") -> list[str]:
    """The ranked doc ids behind :func:`_prepare`'s codes."""
    if compat == "9.0.8":
        run_q = {doc: _float32(score) for doc, score in run_q.items()}
    ranked = rank(run_q)
    if max_docs is not None:
        if max_docs < 0:
            raise ValueError(f"max_docs must be >= 0, got {max_docs}")
        ranked = ranked[:max_docs]
    if judged_only:
        ranked = [doc for doc in ranked if qrels_q.get(doc, -1) >= 0]
    return ranked


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


def _iprec(codes: list[int], R: int, rel: int, recall: float, compat: str = "10.0") -> float:
    """m_iprec_at_recall.c (10.0): c = lround(recall * R) (9.0.8: see _recall_count);
    0 if c > num_rel_ret;
    otherwise the largest precision at any rank at or after the c-th relevant doc
    (c == 0: at or after the first relevant doc, or the precision at n if none).

    An empty ranking scores 0 (trec_eval's formula would give 0/0 there; its 10.0
    output for a -c topic missing from the run prints 0.0000)."""
    n = len(codes)
    if n == 0:
        return 0.0
    cut = _recall_count(recall, R, compat)
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
# trec_eval's gain table (gain_init.c), shared by ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg,
# G and rbp. An entry is [rel_level, gain, num_at_level].
# --------------------------------------------------------------------------------------


def _trec_comp_rel_gain(a: list, b: list) -> int:
    """gain_init.c's comparator, bug included: ``return (ptr1->gain - ptr2->gain);`` in a
    function returning int, so the double difference is truncated toward zero and gains
    less than 1 apart compare equal (and the relation is not even transitive)."""
    return int(a[1] - b[1])


def _glibc_msort(items: list, cmp) -> list:
    """glibc's qsort for small arrays: the top-down merge sort of msort.c
    (``msort_with_tmp``): n1 = n / 2 first elements and the n - n1 others are sorted
    recursively, then merged taking the left element when ``cmp(left, right) <= 0``.
    Every released glibc qsort sorts this way when the temporary buffer can be allocated
    (the introsort rewrite of 2.37 development was replaced by the merge sort again before
    2.37 / 2.39 shipped), so with an inconsistent comparator the result is still a
    deterministic function of the input order."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    left = _glibc_msort(items[:n1], cmp)
    right = _glibc_msort(items[n1:], cmp)
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


def _gain_table(
    qrels_q: dict[str, int], gains: dict[int, float] | None, sort_bug: bool
) -> list[list]:
    """setup_gains of gain_init.c: one entry per override (in the given order; count 0),
    then for every level 0..max label of the query's qrels either the count is put on the
    override of that level or a new entry with gain = level is added; finally the table is
    sorted by increasing gain. ``sort_bug=False`` sorts correctly (ties keep their order,
    which never changes a value); ``sort_bug=True`` reproduces trec_eval's truncating
    comparator under glibc's merge sort."""
    counts: dict[int, int] = {}
    for label in qrels_q.values():
        if label >= 0:
            counts[label] = counts.get(label, 0) + 1
    # rel_levels has max_rel + 1 entries and num_rel_levels = highest non-empty level + 1.
    # (With only negative labels trec_eval leaves num_rel_levels stale from the previous
    # topic; zero levels is the sane value.)
    num_rel_levels = max(counts) + 1 if counts else 0
    table: list[list] = []
    for level, gain in (gains or {}).items():
        table.append([int(level), float(gain), 0])
    for level in range(num_rel_levels):
        for entry in table:
            if entry[0] == level:
                entry[2] = counts.get(level, 0)
                break
        else:
            table.append([level, float(level), counts.get(level, 0)])
    if sort_bug:
        return _glibc_msort(table, _trec_comp_rel_gain)
    return sorted(table, key=lambda entry: entry[1])


def _get_gain(code: int, table: list[list]) -> float:
    """get_gain: gain of the first entry with that level, else 0 (codes -1 / -2 normally)."""
    for entry in table:
        if entry[0] == code:
            return entry[1]
    return 0.0


class _IdealWalk:
    """The ideal ranking as walked by m_ndcg.c & co: from the end of the sorted gain table
    (highest gain) down, ``num_at_level`` docs per entry. ``gain`` is the current ideal
    gain; trec_eval stops the ideal at the first gain <= 0."""

    def __init__(self, table: list[list]) -> None:
        self.table = table
        self.cur_level = len(table) - 1
        self.gain = table[self.cur_level][1] if self.cur_level >= 0 else 0.0
        self.num_at_level = 0

    def step(self) -> None:
        """One more ideal doc (``num_at_level++`` and the level-change loop)."""
        self.num_at_level += 1
        while self.cur_level >= 0 and self.num_at_level > self.table[self.cur_level][2]:
            self.num_at_level = 1
            self.cur_level -= 1
            self.gain = self.table[self.cur_level][1] if self.cur_level >= 0 else 0.0


def _trec_ndcg(codes: list[int], table: list[list], which: str, k: int | None = None) -> float:
    """m_ndcg.c (te_calc_ndcg, shared by ndcg / dcg / ideal_dcg): the run's DCG over the
    whole ranking; the ideal DCG over the walk while its gain is > 0. With a cutoff ``k``
    (fastir's nDCG(gains=...)@k; trec_eval has none): both over the top k only."""
    if k is not None:
        results_dcg = _dcg([_get_gain(c, table) for c in codes], k)
        walk = _IdealWalk(table)
        ideal = []
        while len(ideal) < k:
            walk.step()
            if walk.gain <= 0.0:
                break
            ideal.append(walk.gain)
        return _dcg_ratio(which, results_dcg, _dcg(ideal, k))
    results_dcg = 0.0
    ideal_dcg = 0.0
    walk = _IdealWalk(table)
    n = len(codes)
    i = 0
    while i < n and walk.gain > 0.0:
        results_gain = _get_gain(codes[i], table)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        walk.step()
        if walk.gain > 0.0:
            ideal_dcg += walk.gain / math.log2(i + 2)
        i += 1
    while i < n:
        results_gain = _get_gain(codes[i], table)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        i += 1
    while walk.gain > 0.0:
        walk.step()
        if walk.gain > 0.0:
            ideal_dcg += walk.gain / math.log2(i + 2)
        i += 1
    return _dcg_ratio(which, results_dcg, ideal_dcg)


def _dcg_ratio(which: str, results_dcg: float, ideal_dcg: float) -> float:
    if which == "dcg":
        return results_dcg
    if which == "ideal_dcg":
        return ideal_dcg
    return results_dcg / ideal_dcg if ideal_dcg > 0.0 else 0.0


def _ndcg_rel(codes: list[int], table: list[list]) -> float:
    """m_ndcg_rel.c: ndcg averaged over the relevant docs (gain > 0): at each retrieved one
    the ndcg at its rank, and for each one not retrieved the ndcg at the end."""
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    num_rel_ret = 0
    num_rel = 0
    walk = _IdealWalk(table)
    n = len(codes)
    i = 0
    while i < n and walk.gain > 0.0:
        results_gain = _get_gain(codes[i], table)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        walk.step()
        if walk.gain > 0.0:
            num_rel += 1
            ideal_dcg += walk.gain / math.log2(i + 2)
        if results_gain > 0:
            total += _cdiv(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while i < n:
        results_gain = _get_gain(codes[i], table)
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        if results_gain > 0:
            total += _cdiv(results_dcg, ideal_dcg)
            num_rel_ret += 1
        i += 1
    while walk.gain > 0.0:
        walk.step()
        if walk.gain > 0.0:
            num_rel += 1
            ideal_dcg += walk.gain / math.log2(i + 2)
        i += 1
    # C: sum += ((double) (num_rel - num_rel_ret)) * results_dcg / ideal_dcg;
    total += _cdiv(float(num_rel - num_rel_ret) * results_dcg, ideal_dcg)
    if total > 0.0:  # false for nan
        return total / num_rel
    return 0.0


def _rndcg(codes: list[int], table: list[list], R: int) -> float:
    """m_Rndcg.c: mean of the ndcg values taken where the ideal gain changes (and at the
    end of the retrieved list when the ideal goes beyond it). 0 when R == 0 (R uses the
    relevance level). trec_eval divides 0.0 by 0 when no point was taken (possible only
    when no ideal gain is positive): nan here too."""
    if R == 0:
        return 0.0
    results_dcg = 0.0
    ideal_dcg = 0.0
    total = 0.0
    walk = _IdealWalk(table)
    old_ideal_gain = walk.gain
    num_changed = 0
    n = len(codes)
    i = 0
    while i < n and walk.gain > 0.0:
        results_gain = _get_gain(codes[i], table)
        walk.step()
        if old_ideal_gain != walk.gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changed += 1
            old_ideal_gain = walk.gain
        if results_gain != 0:
            results_dcg += results_gain / math.log2(i + 2)
        if walk.gain > 0.0:
            ideal_dcg += walk.gain / math.log2(i + 2)
        i += 1
    if i < n:
        while i < n:
            results_gain = _get_gain(codes[i], table)
            if results_gain != 0:
                results_dcg += results_gain / math.log2(i + 2)
            i += 1
        if ideal_dcg > 0.0:
            total += results_dcg / ideal_dcg
            num_changed += 1
    while walk.gain > 0.0:
        walk.step()
        if old_ideal_gain != walk.gain:
            if ideal_dcg > 0.0:
                total += results_dcg / ideal_dcg
                num_changed += 1
            old_ideal_gain = walk.gain
        if walk.gain > 0.0:
            ideal_dcg += walk.gain / math.log2(i + 2)
        i += 1
    # trec_eval divides 0 by 0 (NaN) when no boundary had a positive ideal DCG (only
    # possible with -l0 or gain overrides); fastir's convention is 0.
    return total / num_changed if num_changed else 0.0


def _g(codes: list[int], table: list[list]) -> float:
    """m_G.c: sum of gain(doc) / log2(2 + cost(i) - results_gain(i)) over the retrieved
    docs, where cost(i) adds max(ideal gain, 1) per rank (1 beyond the ideal), divided by
    the total ideal gain; 0 when that is not positive."""
    results_g = 0.0
    sum_results = 0.0
    sum_ideal = 0.0
    sum_cost = 0.0
    min_cost = 1.0
    walk = _IdealWalk(table)
    n = len(codes)
    i = 0
    while i < n and walk.gain > 0.0:
        results_gain = _get_gain(codes[i], table)
        sum_results += results_gain
        walk.step()
        if walk.gain > 0.0:
            sum_ideal += walk.gain
        if walk.gain >= min_cost:
            sum_cost += walk.gain
        else:
            sum_cost += min_cost
        if results_gain != 0:
            results_g += _cdiv(results_gain, _clog2(2 + sum_cost - sum_results))
        i += 1
    while i < n:
        results_gain = _get_gain(codes[i], table)
        sum_results += results_gain
        sum_cost += min_cost
        if results_gain != 0:
            results_g += _cdiv(results_gain, _clog2(2 + sum_cost - sum_results))
        i += 1
    while walk.gain > 0.0:
        walk.step()
        if walk.gain > 0.0:
            sum_ideal += walk.gain
        i += 1
    if sum_ideal > 0.0:
        return results_g / sum_ideal
    return 0.0


def _rbp(codes: list[int], table: list[list], p: float) -> float:
    """m_rbp.c: (1 - p) * sum of gain(rank i) * p**(i-1), p**i built by repeated products.
    Gains are first normalised to [0, 1] as (g - min) / (max - min) when some gain lies
    outside [0, 1]. trec_eval declares ``double sum, min, max;`` and never initialises min
    and max before ``if (gain < min) min = gain; if (gain > max) max = gain;`` (undefined
    behaviour); here they are the true minimum and maximum over the gain table (all levels
    0..max label plus overrides, whatever their counts)."""
    if table:
        lo = min(entry[1] for entry in table)
        hi = max(entry[1] for entry in table)
        if lo < 0 or hi > 1:
            table = [[lvl, _cdiv(g - lo, hi - lo), cnt] for lvl, g, cnt in table]
    total = 0.0
    cur_p = 1.0
    for code in codes:
        gain = _get_gain(code, table)
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * p
    return (1.0 - p) * total


def _rbp_resid(codes: list[int], p: float) -> float:
    """m_rbp_resid.c: p**n + (1 - p) * sum of p**(i-1) over the unjudged ranks (code < 0),
    0 when no retrieved doc is unjudged."""
    unj = 0
    total = 0.0
    cur_p = 1.0
    for code in codes:
        if code < 0:
            unj += 1
            total += cur_p
        cur_p = cur_p * p
    if unj:
        return cur_p + (1 - p) * total
    return 0.0


def _infap(codes: list[int], R: int, rel: int) -> float:
    """m_infap.c: docs absent from the pool (-1) are skipped; pooled unjudged (-2) are
    counted; at each judged relevant doc of 0-based rank j add 1 if j == 0, else
    1/(j+1) + (j/(j+1)) * ((rel_above + nonrel_above + unjudged_above) / j)
    * ((rel_above + eps) / (rel_above + nonrel_above + 2 eps)); divide by R if R > 0."""
    nonrel_so_far = 0
    rel_so_far = 0
    pool_unjudged_so_far = 0
    inf_ap = 0.0
    for j, c in enumerate(codes):
        if c == NONPOOL:
            continue
        if c == UNJUDGED:
            pool_unjudged_so_far += 1
            continue
        if 0 <= c < rel:
            nonrel_so_far += 1
        else:
            rel_so_far += 1
            if j == 0:
                inf_ap += 1.0
            else:
                fj = float(j)
                inf_ap += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * (
                    (rel_so_far - 1 + nonrel_so_far + pool_unjudged_so_far) / fj
                ) * (
                    (rel_so_far - 1 + INFAP_EPSILON)
                    / (rel_so_far - 1 + nonrel_so_far + 2 * INFAP_EPSILON)
                )
    if R:
        inf_ap /= R
    return inf_ap


def _rprec_mult(codes: list[int], rel: int, R: int, mult: float) -> float:
    """m_Rprec_mult.c: precision at rank c = (long) (mult * R + 0.9) (truncation, in 10.0
    as in 9.0.8); beyond the ranking num_rel_ret / c; 0 when c == 0."""
    n = len(codes)
    c = int(mult * R + 0.9)
    num_rel_ret = sum(1 for code in codes if _is_rel(code, rel))
    if c > n:
        return num_rel_ret / c
    # Reverse loop of the C: stops once no relevant doc is left above rank i.
    rel_so_far = num_rel_ret
    for i in range(n, 0, -1):
        if rel_so_far <= 0:
            break
        if i == c:
            return rel_so_far / i
        if codes[i - 1] >= rel:
            rel_so_far -= 1
    return 0.0


def _iprec_avg(codes: list[int], R: int, rel: int, recalls, compat: str) -> float:
    """m_11pt_avg.c: the interpolated precisions at the recall levels, summed in the C's
    order (its loop assumes the levels ascending, as trec_eval's defaults are; user levels
    are not sorted by trec_eval and are taken as given), divided by their number.
    An empty ranking scores 0 (see _iprec)."""
    n = len(codes)
    if n == 0:
        return 0.0
    cutoffs = [_recall_count(x, R, compat) for x in recalls]
    num_rel_ret = sum(1 for c in codes if c >= rel)
    current_cut = len(cutoffs) - 1
    while current_cut >= 0 and cutoffs[current_cut] > num_rel_ret:
        current_cut -= 1
    total = 0.0
    int_precis = num_rel_ret / n
    rel_so_far = num_rel_ret
    i = n
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if codes[i - 1] >= rel:
            while current_cut >= 0 and rel_so_far == cutoffs[current_cut]:
                total += int_precis
                current_cut -= 1
            rel_so_far -= 1
        i -= 1
    while current_cut >= 0:
        total += int_precis
        current_cut -= 1
    return total / len(recalls)


def _bin_g(codes: list[int], R: int, rel: int) -> float:
    """m_binG.c: sum over retrieved relevant docs of 1 / log2(2 + nonrel docs above it),
    divided by R (0 when nothing relevant was retrieved)."""
    rel_so_far = 0
    total = 0.0
    for i, c in enumerate(codes):
        if c >= rel:
            rel_so_far += 1
            total += 1.0 / math.log2(3 + i - rel_so_far)
    if rel_so_far:
        return total / R
    return 0.0


def _relative_p(codes: list[int], R: int, rel: int, k: int) -> float:
    """m_rel_P.c: relevant in the top k divided by min(k, R); 0 when R == 0."""
    if R == 0:
        return 0.0
    rel_so_far = sum(1 for c in codes[:k] if _is_rel(c, rel))
    return rel_so_far / min(k, R)


def _unjudged_at(codes: list[int], k: int) -> float:
    """m_unjudged.c (unj): docs with code -1 or -2 in the top k, divided by k."""
    return sum(1 for c in codes[:k] if c in (NONPOOL, UNJUDGED)) / k


def _yaap(codes: list[int], R: int, rel: int) -> float:
    """m_yaap.c: log((1 + s) / (1 + R - s)), s = sum of precisions at the relevant docs."""
    rel_so_far = 0
    total = 0.0
    for i, c in enumerate(codes):
        if c >= rel:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    return math.log((1.0 + total) / (1.0 + R - total))


def _err(codes: list[int], k: int | None, max_grade: float) -> float:
    """gdeval.pl's ERR@k (Chapelle et al. 2009): the user stops at rank i with probability
    R_i = (2^g - 1) / 2^max_grade (g = the label, 0 when not > 0);
    ERR = sum_i R_i / i * prod_{j < i} (1 - R_j), summed in rank order as gdeval does."""
    score = 0.0
    decay = 1.0
    for i, c in enumerate(codes[:k]):
        r = (2.0 ** c - 1.0) / (2.0 ** max_grade) if c > 0 else 0.0
        score += r * decay / (i + 1)
        decay *= 1 - r
    return score


def _nerr(codes: list[int], qrels_q: dict[str, int], k: int | None, max_grade: float) -> float:
    """ERR@k over the ERR@k of the ideal ranking (the labels > 0, descending); 0 when the
    query has no positive label."""
    ideal = sorted((label for label in qrels_q.values() if label > 0), reverse=True)
    best = _err(ideal, k, max_grade)
    return _err(codes, k, max_grade) / best if best > 0 else 0.0


def _judged_at(codes: list[int], k: int | None) -> float:
    """ir_measures' Judged@k: docs of the top k that have a qrels line (whatever its
    label), divided by the number of docs there, min(k, n); 0 for an empty ranking."""
    top = codes[:k]
    return sum(1 for c in top if c != NONPOOL) / len(top) if top else 0.0


def _accuracy(codes: list[int], R: int, rel: int, k: int | None, num_docs: int) -> float:
    """Boolean accuracy of the top k as the retrieved set: (TP + TN) / N, N the collection
    size; TP relevant retrieved, FP the other retrieved, FN relevant not retrieved,
    TN = N - TP - FP - FN."""
    retrieved = codes[:k]
    tp = sum(1 for c in retrieved if c >= rel)
    fp = len(retrieved) - tp
    fn = R - tp
    tn = num_docs - tp - fp - fn
    if num_docs <= 0 or tn < 0:
        raise ValueError(f"Accuracy: num_docs={num_docs} is smaller than TP + FP + FN")
    return (tp + tn) / num_docs


def _compat(ranked: list[str], qrels_q: dict[str, int], p: float, normalize: bool) -> float:
    """ir_measures' Compat (Clarke et al. 2021): RBO of the ranking with the ideal ranking I
    (docs labelled > 0, label descending, equal labels in ranking order, unretrieved last),
    to depth D = max(n, |I|): sum_i p^(i-1) |ranking[:i] & I[:i]| / i over sum_i p^(i-1);
    normalised by the same of I with itself."""
    position = {doc: i for i, doc in enumerate(ranked)}
    ideal = sorted((doc for doc, label in qrels_q.items() if label > 0),
                   key=lambda doc: (-qrels_q[doc], position.get(doc, len(ranked))))

    def rbo(a, b, depth):
        score = norm = 0.0
        weight = 1.0
        for i in range(depth):
            overlap = len(set(a[:i + 1]) & set(b[:i + 1]))
            score += weight * overlap / (i + 1)
            norm += weight
            weight *= p
        return score / norm if norm else 0.0

    depth = max(len(ranked), len(ideal))
    if not ideal:
        return 0.0
    value = rbo(ranked, ideal, depth)
    best = rbo(ideal, ideal, depth)
    return value / best if normalize and best > 0 else value


def _cwl(family: str, codes: list[int], k: int | None, min_rel: int, max_rel: int,
         T: float, p: float) -> float:
    """cwl_eval's expected utility per item: C(i) is the probability of going on from rank
    i, P(i) = C(1)...C(i-1), W(i) = P(i) / sum_j P(j) over ranks 1..1000, EU = sum W(i) g(i).
    Gains: (clip(max(label, 0), min_rel, max_rel) - min_rel) / (max_rel - min_rel), 0 for
    a doc not in the qrels; the ranking is cut or padded to 1000 ranks."""
    gains = []
    for c in codes[:CWL_DEPTH]:
        if c == NONPOOL:
            gains.append(0.0)
        else:
            label = min(max(max(c, 0), min_rel), max_rel)
            gains.append((label - min_rel) / (max_rel - min_rel))
    gains += [0.0] * (CWL_DEPTH - len(gains))
    cont = []
    so_far = 0.0
    for i, g in enumerate(gains, start=1):
        so_far += g
        before_k = k is not None and i < k
        if family == "BPM":  # stop at the target gain T, or at rank K
            c = 1.0 if so_far < T and before_k else 0.0
        elif family == "SDCG":  # DCG's discount 1/log2(i+1) as continuation
            c = math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if before_k else 0.0
        elif family == "NERR8":
            c = 1.0 - g if before_k else 0.0
        elif family == "NERR9":
            c = (1.0 * i / (i + 1.0)) * (1.0 - g) if before_k else 0.0
        elif family == "NERR10":
            c = p * (1 - g)
        elif family == "NERR11":
            c = (i + 2.0 * T - 1.0) / (i + 2.0 * T)
            c = c * c * (1.0 - g)
        elif family == "INST":  # T_i = T - gain so far
            c = (i + T + (T - so_far) - 1.0) / (i + T + (T - so_far))
            c = c * c
        else:  # INSQ
            c = (i + 2.0 * T - 1.0) / (i + 2.0 * T)
            c = c * c
        cont.append(c)
    reach = [1.0]
    for c in cont[:-1]:
        reach.append(reach[-1] * c)
    utility = 0.0
    total = 0.0
    for r, g in zip(reach, gains):
        utility += r * g
        total += r
    return utility / total


def _utility(num_ret: int, num_rel: int, num_rel_ret: int, coeffs, num_docs: int) -> float:
    """m_utility.c: p1*a + p2*b + p3*c + p4*d over the contingency table (a relevant
    retrieved, b nonrelevant retrieved, c relevant not retrieved, d = N - a - b - c)."""
    p1, p2, p3, p4 = (float(x) for x in coeffs)
    return (
        p1 * num_rel_ret
        + p2 * (num_ret - num_rel_ret)
        + p3 * (num_rel - num_rel_ret)
        + p4 * (num_docs + num_rel_ret - num_ret - num_rel)
    )


# --------------------------------------------------------------------------------------
# The reference table: one function per family
# --------------------------------------------------------------------------------------


class Ranking(NamedTuple):
    """One query's ranking after -M and -J: the relevance ``codes`` in rank order and the
    ranked doc ids ``docs``."""

    codes: list
    docs: list


class Reference(NamedTuple):
    """How the reference computes a family: ``compute(ranking, judged, p)`` is its value on
    one query (``judged``: {doc: label}, or {doc: {subtopic: label}} for ``subtopics``
    families; ``p``: the parameters by their registry names, ``rel`` always set, and the
    options ``num_docs`` and ``compat``). ``summary``: "mean", "sum", "gmean" (trec_eval's
    gm_*: exp of the mean log of values floored at 1e-5) or "none" (text). ``level_free``:
    the evaluation's relevance level does not apply (the gains are the labels): ``rel`` is
    1 unless given. ``empty``: how trec_eval evaluates an empty ranking (a query missing
    from the run with -c, or one emptied by -M / -J): "own" (the function's value on no
    documents), "placeholder" (trec_eval 10.0 evaluates a one-document ranking of a doc
    outside the pool; 9.0.8 gives 0), "zero" (10.0 resets the value: 0) or "emptied" (the
    function's value on a ranking -M / -J emptied, 0 on a query missing from the run: 10.0
    resets it after its placeholder, 9.0.8 does not evaluate it)."""

    compute: Callable
    summary: str = "mean"
    level_free: bool = False
    empty: str = "own"
    subtopics: bool = False
    judgments: str = "qrels"  # "prefs": prefs_measure computes it; "groups": groups_measure


def _R(judged, p):
    return _num_rel(judged, p["rel"])


def _rel_ret(codes, p):
    return sum(1 for c in codes if _is_rel(c, p["rel"]))


def _table_for(judged, p):
    return _gain_table(judged, p.get("gains"), p.get("sort_bug", False))


def _hits(r, j, p):
    """ranx's hits: relevant docs in the top k (all without k)."""
    return float(sum(1 for c in r.codes[:p.get("cutoff")] if _is_rel(c, p["rel"])))


def _f1(r, j, p):
    """ranx's f1: P = hits / k (k as given, else n), R = hits / R."""
    depth, R = p.get("cutoff") or len(r.codes), _R(j, p)
    if R == 0 or depth == 0:
        return 0.0
    hits = sum(1 for c in r.codes[:depth] if _is_rel(c, p["rel"]))
    precision, recall = hits / depth, hits / R
    return 0.0 if precision + recall == 0 else 2 * (precision * recall / (precision + recall))


def _rbp_value(r, j, p):
    """trec_eval's rbp (gain table, labels over the largest); with ``rel`` or unscaled
    (ranx's rbp: the labels themselves) the direct sum."""
    persistence = p.get("p", 0.9)
    if p.get("scaled", True) and p["rel"] == 1:
        return _rbp(r.codes, _table_for(j, p), persistence)
    top = max(j.values(), default=0)
    total, cur_p = 0.0, 1.0
    for c in r.codes:
        if c > 0 and c >= p["rel"]:
            total += (c / top if p.get("scaled", True) and top > 1 else float(c)) * cur_p
        cur_p *= persistence
    return (1.0 - persistence) * total


def _gain_name(p):
    return {"log2": "linear", "exp-log2": "exponential"}[p.get("dcg", "log2")]


def _ndcg_value(which):
    """nDCG, DCG or IDCG: from the labels, or trec_eval's gain table when ``gains`` is
    given (m_ndcg.c)."""
    def compute(r, j, p):
        k = p.get("cutoff")
        if p.get("gains") is not None:
            return _trec_ndcg(r.codes, _table_for(j, p), which, k)
        gain = _gain_name(p)
        if which == "ndcg":
            return _ndcg(r.codes, j, p["rel"], gain, k)
        if which == "dcg":
            return _dcg([_gain(c, p["rel"], gain) for c in r.codes], k)
        return _dcg(sorted((_gain(label, p["rel"], gain) for label in j.values()),
                           reverse=True), k)  # the ideal: every judged doc, gains descending
    return compute


def _err_value(normalised):
    def compute(r, j, p):
        max_grade = p.get("max_grade", 4)
        if max(j.values(), default=0) > max_grade:
            raise ValueError(f"ERR: a label is above max_grade={max_grade}")
        if normalised:
            return _nerr(r.codes, j, p.get("cutoff"), max_grade)
        return _err(r.codes, p.get("cutoff"), max_grade)
    return compute


def _cwl_value(family):
    def compute(r, j, p):
        return _cwl(family, r.codes, p.get("cutoff"), int(p.get("min_rel", 0)),
                    int(p["max_rel"]), p.get("T", 1.0), p.get("p", 0.9))
    return compute


def _diversity_value(family):
    def compute(r, j, p):
        return diversity(family, {doc: pairs for doc, pairs in j.items() if pairs}, r.docs,
                         cutoff=p.get("cutoff"), rel=p["rel"], alpha=p.get("alpha", 0.5),
                         beta=p.get("beta", 0.5))
    return compute


def _fall_out(r, j, p):
    """torchmetrics' fall-out: the judged non-relevant docs (0 <= label < rel) of the top k
    over all judged non-relevant docs of the query; 0 without any."""
    nonrel = _num_judged_nonrel(j, p["rel"])
    top = r.codes[:p.get("cutoff")]
    return sum(1 for c in top if 0 <= c < p["rel"]) / nonrel if nonrel else 0.0


def _set_f_value(r, j, p):
    return _set_f(_rel_ret(r.codes, p), len(r.codes), _R(j, p), p.get("beta", 1.0))


def _set_rel_p(r, j, p):
    """m_set_rel_P.c: num_rel_ret / min(num_ret, R) when both are non-zero."""
    n, R = len(r.codes), _R(j, p)
    return _rel_ret(r.codes, p) / min(n, R) if n and R else 0.0


def _set_ap(r, j, p):
    """m_set_map.c: num_rel_ret**2 / (num_ret * R) when both are non-zero."""
    n, R, hits = len(r.codes), _R(j, p), float(_rel_ret(r.codes, p))
    return (hits * hits) / (float(n) * float(R)) if n and R else 0.0


def _utility_value(r, j, p):
    coeffs = tuple(p.get(name, default) for name, default in zip("abcd", (1.0, -1.0, 0.0, 0.0)))
    return _utility(len(r.codes), _R(j, p), _rel_ret(r.codes, p), coeffs, p["num_docs"])


def _relstring_value(r, j, p):
    return relstring_of(r.codes, p.get("cutoff", 10))


# --------------------------------------------------------------------------------------
# Preference judgments and judgment groups (trec_eval -R prefs / qrels_prefs / qrels_jg)
# --------------------------------------------------------------------------------------

#: The preference families and their m_prefs_*.c name (less the "prefs_" prefix).
PREFS_FAMILIES = {
    "PrefsPoss": "num_prefs_poss", "PrefsFul": "num_prefs_ful",
    "PrefsFulRet": "num_prefs_ful_ret", "PrefsSimp": "simp", "PrefsPair": "pair",
    "PrefsAvgJG": "avgjg", "PrefsAvgJGRnonrel": "avgjg_Rnonrel", "PrefsSimpRet": "simp_ret",
    "PrefsPairRet": "pair_ret", "PrefsAvgJGRet": "avgjg_ret",
    "PrefsAvgJGRnonrelRet": "avgjg_Rnonrel_ret", "PrefsSimpImp": "simp_imp",
    "PrefsPairImp": "pair_imp", "PrefsAvgJGImp": "avgjg_imp",
}
#: The judgment-group families (m_*_avgjg.c) and the family each averages over the groups.
GROUP_FAMILIES = {"APAvgJG": "AP", "PAvgJG": "P", "RprecMultAvgJG": "RprecMult"}


class PrefsError(ValueError):
    """Where trec_eval's form_prefs_counts.c stops (or aborts) on a query."""


class _JG:
    """One judgment group's counts, as form_prefs_counts.c's JG struct holds them."""

    def __init__(self):
        self.ful_ret = self.poss_ret = self.ful_imp = self.poss_imp = self.notoccur = 0
        self.num_rel = self.num_rel_ret = self.num_nonrel = self.num_nonrel_ret = 0
        self.ecs = None  # [(level, [docid ranks ascending])] or None (a preference array)
        self.pa = None  # the closed preference array (list of lists of 0/1)
        self.rel_array = None
        self.undefined = False  # the Rnonrel recount read past the lowest class


def _docid_ranks(prefs_q, run_q, max_docs, compat):
    """form_prefs_and_ranks: (docid rank of each judged doc, num_judged, num_judged_ret).
    The run is ranked by score descending, ties by docno *ascending* (its comp_sim_docno),
    cut to max_docs; retrieved judged docs get 0.. in rank order, the others follow in docno
    order."""
    scores = {d: (_float32(v) if compat == "9.0.8" else v) for d, v in run_q.items()}
    ranked = sorted(scores, key=lambda d: (-scores[d], d.encode("utf-8")))
    if max_docs is not None:
        ranked = ranked[:max_docs]
    judged = sorted({doc for _, _, doc, _ in prefs_q}, key=lambda d: d.encode("utf-8"))
    retrieved = [d for d in ranked if d in set(judged)]
    order = retrieved + [d for d in judged if d not in set(retrieved)]
    return {d: i for i, d in enumerate(order)}, len(judged), len(retrieved)


def prefs_counts(prefs_q, run_q, max_docs=None, compat="10.0"):
    """form_prefs_counts.c on one query: (JGs in jg order, pref_counts {(i, j): count},
    num_judged, num_judged_ret). ``prefs_q``: [(jg, jsg, doc, level)]. Raises PrefsError
    where trec_eval stops."""
    rank, nj, njr = _docid_ranks(prefs_q, run_q, max_docs, compat)
    if compat == "9.0.8":  # (its levels are C floats)
        prefs_q = [(jg, jsg, doc, _float32(level)) for jg, jsg, doc, level in prefs_q]
    rows = sorted(((jg, jsg, level, rank[doc], doc) for jg, jsg, doc, level in prefs_q),
                  key=lambda r: (r[0].encode("utf-8"), r[1].encode("utf-8"), -r[2], r[3]))
    counts = {}
    jgs = []
    for jg in dict.fromkeys(r[0] for r in rows):
        mine = [r for r in rows if r[0] == jg]
        if len({r[1] for r in mine}) > 1:
            jgs.append(_pa_jg(mine, nj, njr, counts))
        else:
            jgs.append(_ec_jg(mine, njr, counts))
    return jgs, counts, nj, njr


def _ec_jg(rows, njr, counts):
    """form_jg_ec + add_ec_pref_to_jg."""
    jg = _JG()
    jg.ecs = []
    for _, _, level, r, _ in rows:
        if not jg.ecs or jg.ecs[-1][0] != level:
            jg.ecs.append((level, []))
        jg.ecs[-1][1].append(r)
    for k, (level, ranks) in enumerate(jg.ecs):
        ret = sum(1 for r in ranks if r < njr)
        if level > 0.0:
            jg.num_rel_ret += ret
            jg.num_rel += len(ranks)
        else:
            jg.num_nonrel_ret += ret
            jg.num_nonrel += len(ranks)
        for _, lower in jg.ecs[k + 1:]:
            for r1 in ranks:
                for r2 in lower:
                    counts[(r1, r2)] = counts.get((r1, r2), 0) + 1
                    if r1 == r2:
                        raise PrefsError("docid occurs with different rel_level in same jsg")
                    if r1 < r2:
                        if r2 < njr:
                            jg.ful_ret += 1
                        elif r1 < njr:
                            jg.ful_imp += 1
                        else:
                            jg.notoccur += 1
                    elif r1 < njr:
                        jg.poss_ret += 1
                    elif r2 < njr:
                        jg.poss_imp += 1
                    else:
                        jg.notoccur += 1
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _pa_jg(rows, nj, njr, counts):
    """form_jg_pa + add_transitives + add_pa_pref_to_jg."""
    jg = _JG()
    pa = [[0] * nj for _ in range(nj)]
    jg.rel_array = rel = [-1.0] * nj
    for i, (_, jsg, level, r, _) in enumerate(rows):
        if (rel[r] > 0.0 and level == 0.0) or (rel[r] == 0.0 and level > 0.0):
            raise PrefsError("doc has both 0 and non-0 rel_level assigned")
        rel[r] = level
        j = i + 1
        while j < len(rows) and rows[j][1] == jsg and rows[j][2] == level:
            j += 1
        while j < len(rows) and rows[j][1] == jsg:
            pa[r][rows[j][3]] = 1
            j += 1
    for i in range(nj):
        pa[i][i] = 1
    while True:  # multiply by itself until nothing changes
        product = [[1 if any(pa[i][k] and pa[k][j] for k in range(nj)) else 0
                    for j in range(nj)] for i in range(nj)]
        if product == pa:
            break
        pa = product
    for i in range(nj):
        pa[i][i] = 0
    if any(pa[i][j] and pa[j][i] for i in range(nj) for j in range(nj) if i != j):
        raise PrefsError("Pref inconsistency found")  # (trec_eval aborts)
    jg.pa = pa
    for i in range(nj):
        target = ("num_rel" if rel[i] > 0.0 else "num_nonrel") if rel[i] >= 0.0 else None
        if target is not None:
            setattr(jg, target, getattr(jg, target) + 1)
            if i < njr:
                setattr(jg, target + "_ret", getattr(jg, target + "_ret") + 1)
    for i in range(nj):
        for j in range(nj):
            if not pa[i][j]:
                continue
            counts[(i, j)] = counts.get((i, j), 0) + 1
            if i < njr and j < njr:
                jg.poss_ret += 1
                jg.ful_ret += j > i
            elif i < njr:
                jg.ful_imp += 1
                jg.poss_imp += 1
            elif j < njr:
                jg.poss_imp += 1
            else:
                jg.notoccur += 1
    return jg


def _recount(jg, nj, njr, retrieved_only):
    """m_prefs_avgjg_Rnonrel(_ret).c's recalculate(): (fulfilled, possible) with only the
    first R non-relevant docs (R: num_rel, or num_rel_ret for _ret)."""
    ful = poss = 0
    if jg.ecs is not None:
        R = jg.num_rel_ret if retrieved_only else jg.num_rel
        last = jg.ecs[-1][1]
        jg.undefined = jg.undefined or R > len(last)  # (trec_eval reads past the class)
        nonrel = last[:R]
        ok = (lambda r: r < njr) if retrieved_only else (lambda r: True)
        for k, (_, ranks) in enumerate(jg.ecs):
            pairs = [(a, b) for later in jg.ecs[k + 1:-1] for a in ranks for b in later[1]]
            pairs += [(a, b) for a in ranks for b in nonrel]
            for a, b in pairs:
                if retrieved_only and not (ok(a) and ok(b)):
                    continue
                if a < b and (retrieved_only or a < njr):
                    ful += 1
                else:
                    poss += 1
        return ful, poss + ful
    rel, pa = jg.rel_array, jg.pa
    scan = njr if retrieved_only else nj
    seen, first = 0, scan
    for i in range(scan):
        if rel[i] == 0.0:
            seen += 1
            if seen == jg.num_rel + 1:
                first = i
                break
    gone = [i >= first and rel[i] == 0.0 for i in range(nj)]
    for i in range(scan):
        for j in range(scan):
            if i == j or gone[i] or gone[j] or not pa[i][j]:
                continue
            if i < njr and j > i:
                ful += 1
            else:
                poss += 1
    return ful, poss + ful


def prefs_values(prefs_q, run_q, names, max_docs=None, compat="10.0"):
    """m_prefs_*.c: {name: value} of the preference measures ``names`` (m_prefs_ names less
    "prefs_") on one query, and whether a Rnonrel recount read past trec_eval's arrays."""
    jgs, counts, nj, njr = prefs_counts(prefs_q, run_q, max_docs, compat)
    out = {}
    for name in names:
        if name.startswith("num_prefs") or name.startswith("simp"):
            out[name] = _simple(name, jgs)
        elif name.startswith("pair"):
            out[name] = _pair(name, counts, nj, njr)
        else:
            out[name] = _avgjg(name, jgs, nj, njr)
    return out, any(jg.undefined for jg in jgs)


def _simple(name, jgs):
    """prefs_num_prefs_*, prefs_simp*: sums over the JGs."""
    ful_ret = sum(jg.ful_ret for jg in jgs)
    ful = ful_ret + sum(jg.ful_imp for jg in jgs)
    poss_ret = sum(jg.poss_ret for jg in jgs)
    poss_imp = poss_ret + sum(jg.poss_imp for jg in jgs)
    poss = poss_imp + sum(jg.notoccur for jg in jgs)
    ratio = {"num_prefs_poss": poss, "num_prefs_ful": ful, "num_prefs_ful_ret": ful_ret,
             "simp": (ful, poss), "simp_ret": (ful_ret, poss_ret), "simp_imp": (ful, poss_imp)}
    value = ratio[name]
    if isinstance(value, tuple):
        return value[0] / value[1] if value[1] else 0.0
    return float(value)


def _pair(name, counts, nj, njr):
    """prefs_pair*: the three loops of m_prefs_pair.c (counts are unsigned short)."""
    def c(i, j):
        return counts.get((i, j), 0) % 65536

    total, pairs = 0.0, 0
    loops = [(i, j) for i in range(njr) for j in range(i + 1, njr)]
    if name != "pair_ret":
        loops += [(i, j) for i in range(njr) for j in range(njr, nj)]
    for i, j in loops:
        if c(i, j) or c(j, i):
            pairs += 1
            total += c(i, j) / (c(i, j) + c(j, i))
    if name == "pair":
        pairs += sum(1 for i in range(njr, nj) for j in range(i + 1, nj) if c(i, j) or c(j, i))
    return total / pairs if pairs else 0.0


def _avgjg(name, jgs, nj, njr):
    """prefs_avgjg*: a ratio per JG summed in JG order, over the number of JGs when the
    sum is above 0 (a NaN sum is not)."""
    total = 0.0
    for jg in jgs:
        if name.startswith("avgjg_Rnonrel"):
            ret = name.endswith("_ret")
            R, N = (jg.num_rel_ret, jg.num_nonrel_ret) if ret else (jg.num_rel, jg.num_nonrel)
            if R >= N:
                ful = jg.ful_ret + (0 if ret else jg.ful_imp) + jg.num_rel_ret * (R - N)
                poss = jg.poss_ret + (0 if ret else jg.poss_imp + jg.notoccur) + \
                    jg.num_rel * (R - N)
            else:
                ful, poss = _recount(jg, nj, njr, ret)
            total += _cdiv(float(ful), float(poss))
            continue
        ful = jg.ful_ret + (0 if name == "avgjg_ret" else jg.ful_imp)
        poss = jg.poss_ret + (0 if name == "avgjg_ret" else jg.poss_imp) + \
            (jg.notoccur if name == "avgjg" else 0)
        if poss:
            total += ful / poss
    return total / len(jgs) if total > 0.0 else 0.0


def _prefs_value(name):
    def compute(r, j, p):
        raise ValueError(f"prefs_{name} reads preference judgments: use evaluate_prefs")
    return compute


def _groups_value(inner):
    def compute(r, j, p):
        raise ValueError(f"{inner} over judgment groups: use evaluate_groups")
    return compute


def evaluate_prefs(prefs, run, names, *, missing="zero", max_docs=None, compat="10.0"):
    """Per-query values {qid: [value per name]} of fastir names (``PrefsSimp``, ``NumQ``) on
    preference judgments ``{qid: [(jg, jsg, doc, level)]}``, and the queries where a
    Rnonrel recount read past trec_eval's arrays. A query absent from the run is evaluated
    with nothing retrieved (missing="zero"; 9.0.8: 0), or left out (missing="skip").
    Raises PrefsError where trec_eval stops."""
    out, undefined = {}, set()
    families = [parse(name)[0] for name in names]
    wanted = [PREFS_FAMILIES[f] for f in families if f in PREFS_FAMILIES]
    for qid in sorted(prefs, key=lambda q: q.encode("utf-8")):
        if qid not in run and missing == "skip":
            continue
        values, bad = prefs_values(prefs[qid], run.get(qid, {}), wanted, max_docs, compat)
        if bad:
            undefined.add(qid)
        absent = qid not in run and compat == "9.0.8"
        out[qid] = [1.0 if f == "NumQ" else 0.0 if absent else values[PREFS_FAMILIES[f]]
                    for f in families]
    return out, undefined


def evaluate_groups(groups, run, names, *, relevance_level=1, missing="zero", max_docs=None,
                    judged_only=False, compat="10.0"):
    """Per-query values of fastir names (``PAvgJG@5``, ``APAvgJG``, ``NumQ``) on judgment
    groups ``{qid: {jg: {doc: label}}}``: the family's per-group measure on every group (in
    jg order), summed and divided by the number of groups when there are several."""
    out = {}
    for qid in sorted(groups, key=lambda q: q.encode("utf-8")):
        if qid not in run and missing == "skip":
            continue
        row = []
        for name in names:
            family, params = parse(name)
            if family == "NumQ":
                row.append(1.0)
                continue
            params.setdefault("rel", relevance_level)
            total = 0.0
            by_group = groups[qid]
            for jg in sorted(by_group, key=lambda g: g.encode("utf-8")):
                total += measure(GROUP_FAMILIES[family], by_group[jg], run.get(qid, {}),
                                 max_docs=max_docs, judged_only=judged_only, compat=compat,
                                 in_run=qid in run, **params)
            row.append(total / len(by_group) if len(by_group) > 1 else total)
        out[qid] = row
    return out


REFERENCES: dict[str, Reference] = {
    "NumQ": Reference(lambda r, j, p: 1.0, "sum"),
    "NumRet": Reference(lambda r, j, p: float(len(r.codes)), "sum"),
    "NumRel": Reference(lambda r, j, p: float(_R(j, p)), "sum"),
    "NumRelRet": Reference(lambda r, j, p: float(_rel_ret(r.codes, p)), "sum"),
    "NumNonRelJudgedRet": Reference(
        lambda r, j, p: float(sum(1 for c in r.codes if 0 <= c < p["rel"])), "sum"),
    "AP": Reference(lambda r, j, p: _ap(r.codes, _R(j, p), p["rel"], p.get("cutoff"))),
    "GMAP": Reference(lambda r, j, p: _ap(r.codes, _R(j, p), p["rel"], None), "gmean"),
    "Rprec": Reference(lambda r, j, p: _rprec(r.codes, _R(j, p), p["rel"])),
    "Bpref": Reference(lambda r, j, p: _bpref(r.codes, _R(j, p),
                                              _num_judged_nonrel(j, p["rel"]), p["rel"])),
    "GMBpref": Reference(lambda r, j, p: _bpref(r.codes, _R(j, p),
                                                _num_judged_nonrel(j, p["rel"]), p["rel"]),
                         "gmean"),
    "RR": Reference(lambda r, j, p: _rr(r.codes, p["rel"], p.get("cutoff"))),
    "IPrec": Reference(lambda r, j, p: _iprec(r.codes, _R(j, p), p["rel"], p["cutoff"],
                                              p["compat"])),
    "IPrecAvg": Reference(lambda r, j, p: _iprec_avg(r.codes, _R(j, p), p["rel"],
                                                     p.get("recalls", DEFAULT_RECALLS),
                                                     p["compat"]), empty="placeholder"),
    "P": Reference(lambda r, j, p: _precision_at(r.codes, p["rel"], p["cutoff"])),
    "R": Reference(lambda r, j, p: _recall_at(r.codes, _R(j, p), p["rel"], p["cutoff"])),
    "Hits": Reference(_hits),
    "F1": Reference(_f1),
    "FallOut": Reference(_fall_out),
    "Success": Reference(lambda r, j, p: _success(r.codes, p["rel"], p["cutoff"])),
    "RelP": Reference(lambda r, j, p: _relative_p(r.codes, _R(j, p), p["rel"], p["cutoff"]),
                      empty="placeholder"),
    "Unj": Reference(lambda r, j, p: _unjudged_at(r.codes, p["cutoff"]), empty="zero"),
    "nDCG": Reference(_ndcg_value("ndcg"), level_free=True),
    "DCG": Reference(_ndcg_value("dcg"), level_free=True, empty="placeholder"),
    "IDCG": Reference(_ndcg_value("ideal_dcg"), level_free=True, empty="placeholder"),
    "nDCGRel": Reference(lambda r, j, p: _ndcg_rel(r.codes, _table_for(j, p)),
                         empty="placeholder"),
    "RnDCG": Reference(lambda r, j, p: _rndcg(r.codes, _table_for(j, p), _R(j, p)),
                       empty="placeholder"),
    "G": Reference(lambda r, j, p: _g(r.codes, _table_for(j, p)), level_free=True,
                   empty="placeholder"),
    "RBP": Reference(_rbp_value, level_free=True, empty="placeholder"),
    "RBPResid": Reference(lambda r, j, p: _rbp_resid(r.codes, p.get("p", 0.9)), empty="zero"),
    "infAP": Reference(lambda r, j, p: _infap(r.codes, _R(j, p), p["rel"]),
                       empty="placeholder"),
    "RprecMult": Reference(lambda r, j, p: _rprec_mult(r.codes, p["rel"], _R(j, p),
                                                       p["cutoff"]), empty="placeholder"),
    "BinG": Reference(lambda r, j, p: _bin_g(r.codes, _R(j, p), p["rel"]),
                      empty="placeholder"),
    "YAAP": Reference(lambda r, j, p: _yaap(r.codes, _R(j, p), p["rel"]), empty="placeholder"),
    "Utility": Reference(_utility_value, empty="emptied"),
    "SetP": Reference(lambda r, j, p: _rel_ret(r.codes, p) / len(r.codes) if r.codes else 0.0),
    "SetR": Reference(lambda r, j, p: _rel_ret(r.codes, p) / _R(j, p) if _R(j, p) else 0.0),
    "SetF": Reference(_set_f_value),
    "SetRelP": Reference(_set_rel_p, empty="placeholder"),
    "SetAP": Reference(_set_ap, empty="placeholder"),
    "ERR": Reference(_err_value(False), level_free=True),
    "nERR": Reference(_err_value(True), level_free=True),
    "Judged": Reference(lambda r, j, p: _judged_at(r.codes, p.get("cutoff"))),
    "Accuracy": Reference(lambda r, j, p: _accuracy(r.codes, _R(j, p), p["rel"],
                                                    p.get("cutoff"), p["num_docs"])),
    "Compat": Reference(lambda r, j, p: _compat(r.docs, j, p.get("p", 0.95),
                                                p.get("normalize", True)), level_free=True),
    "RelString": Reference(_relstring_value, "none"),
    **{family: Reference(_cwl_value(family), level_free=True) for family in CWL_FAMILIES},
    **{family: Reference(_diversity_value(family), subtopics=True)
       for family in DIVERSITY_FAMILIES},
    **{family: Reference(_prefs_value(name), "sum" if name.startswith("num_prefs") else "mean",
                         judgments="prefs") for family, name in PREFS_FAMILIES.items()},
    **{family: Reference(_groups_value(inner), judgments="groups")
       for family, inner in GROUP_FAMILIES.items()},
}


# --------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------


def measure(family: str, judged: dict, run_q: dict[str, float], *, max_docs: int | None = None,
            judged_only: bool = False, num_docs: int = 0, compat: str = "10.0",
            in_run: bool = True, **params) -> float:
    """Value of one measure for one query: ``judged`` is the query's {doc: label} (or
    {doc: {subtopic: label}} for the diversity families), ``params`` the measure's
    parameters by their registry names (``cutoff``, ``rel``, ``dcg``, ``gains``,
    ``recalls``, ``a``..``d``, ``beta``, ``p``, ``max_grade``, ``normalize``, ``scaled``,
    ``min_rel``, ``max_rel``, ``T``, ``alpha``; ``sort_bug``: sort a gain table with
    trec_eval's truncating comparator under glibc's merge sort; ``in_run``: whether the
    query is in the run, with ``run_q`` as its documents, or absent from it).

    Steps: rank the run (trec_eval order; 9.0.8: float32 scores), truncate to ``max_docs``
    (-M), drop docs with a negative code if ``judged_only`` (-J, order kept), then compute.
    R counts labels >= rel; a ranked doc is relevant iff its code >= rel (codes -1/-2 never
    are). An empty ranking is evaluated as the family's ``empty`` says (gain tables: as
    "placeholder", trec_eval's gain-table code path)."""
    ref = REFERENCES[family]
    _check_compat(compat)
    p = {"rel": 1, **params, "num_docs": num_docs, "compat": compat}
    labels = judged
    if ref.subtopics:  # a doc's label is its largest over the subtopics
        labels = {doc: max(pairs.values()) for doc, pairs in judged.items() if pairs}
    docs = _ranked_docs(labels, run_q, max_docs, judged_only, compat)
    ranking = Ranking(judge(labels, docs), docs)
    if ref.empty == "emptied" and not in_run:
        return 0.0
    if not docs and ref.empty != "emptied" and (ref.empty != "own" or p.get("gains")
                                                 is not None):
        if compat == "9.0.8" or ref.empty == "zero":  # (9.0.8 does not evaluate it)
            return 0.0
        ranking = Ranking([NONPOOL], ["ceci_nest_pas_un_docno"])  # 10.0's placeholder
    return ref.compute(ranking, judged, p)


def relstring_of(codes: list[int], cutoff: int) -> str:
    """m_relstring.c: one character per doc of the top ``cutoff`` (``(long)`` of the
    parameter): the label if 0..9, '>' above 9, '-' for -1 (not in the pool), '.' for -2
    (pooled, unjudged). trec_eval prints it between single quotes (not included here); a
    topic missing from the run gives ''."""
    chars = []
    for code in codes[:max(0, int(cutoff))]:
        if code > 9:
            chars.append(">")
        elif code >= 0:
            chars.append(str(code))
        elif code == NONPOOL:
            chars.append("-")
        elif code == UNJUDGED:
            chars.append(".")
        else:
            chars.append("<")
    return "".join(chars)


def relstring(qrels_q: dict[str, int], run_q: dict[str, float], *, cutoff: int = 10,
              max_docs: int | None = None, judged_only: bool = False,
              compat: str = "10.0") -> str:
    """:func:`relstring_of` a query's ranking (after -M and -J)."""
    return measure("RelString", qrels_q, run_q, cutoff=cutoff, max_docs=max_docs,
                   judged_only=judged_only, compat=compat)


def aggregate(family: str, values: list[float]) -> float:
    """The summary over queries, as the family's ``summary`` says: a sequential
    left-to-right sum, divided by the count for a mean; a geometric mean as trec_eval's
    meas_avg.c (sum of logs sequentially, divide, exp). Empty list -> 0.0."""
    if not values:
        return 0.0
    summary = REFERENCES[family].summary
    total = 0.0
    for v in values:
        # m_gm_map.c / m_gm_bpref.c store log(MAX(ap, MIN_GEO_MEAN)) per query;
        # te_calc_avg_meas_s_gm takes exp(sum / num_queries).
        total += math.log(max(v, MIN_GEO_MEAN)) if summary == "gmean" else v
    if summary == "sum":
        return total
    if summary == "gmean":
        return math.exp(total / len(values))
    return total / len(values)


_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\((.*)\))?(?:@([0-9.]+))?$")
_PARAM = re.compile(r"\s*(\w+)\s*=\s*('[^']*'|\"[^\"]*\"|[^,]+)\s*(?:,|$)")
_FLOAT_CUTOFF = ("IPrec", "RprecMult", "RprecMultAvgJG")  # @: a recall level, a multiple of R


def _param_value(key: str, text: str):
    """A parameter of a canonical name, read by its name."""
    if key in ("rel", "min_rel", "max_rel"):
        return int(text)
    if key == "gains":
        pairs = (item.split("=") for item in text.split(","))
        return {int(label): float(gain) for label, gain in pairs}
    if key == "recalls":
        return tuple(float(r) for r in text.split(","))
    if key in ("normalize", "scaled", "judged_only"):
        return text == "True"
    if key == "dcg":
        return text
    return float(text)  # a..d, beta, p, max_grade, T, alpha


def parse(name: str) -> tuple[str, dict]:
    """A fastir measure name in its canonical form (``AP@3``, ``P(rel=2)@5``,
    ``nDCG(dcg='exp-log2')@5``, ``IPrec@0.3``, ``Utility(a=2,b=-1)``, ``nDCG(gains='1=3')``)
    as the family and its parameters for :func:`measure`."""
    match = _NAME.match(name)
    if not match or match.group(1) not in REFERENCES:
        raise ValueError(f"not a canonical measure name: {name!r}")
    family, text, at = match.groups()
    params = {key: _param_value(key, value.strip("'\""))
              for key, value in _PARAM.findall(text or "")}
    if at is not None:
        params["cutoff"] = float(at) if family in _FLOAT_CUTOFF else int(at)
    return family, params


def _subtopic_order(names) -> list:
    """A query's subtopics by number when they are integers, else by their bytes (the
    order gains are summed in)."""
    try:
        return sorted(names, key=int)
    except (TypeError, ValueError):
        return sorted(names, key=lambda s: str(s).encode("utf-8"))


def diversity(family: str, judged: dict, ranked: list, *, cutoff: int | None = None,
              rel: int = 1, alpha: float = 0.5, beta: float = 0.5) -> float:
    """ndeval's measures on one query: ``judged`` is {doc: {subtopic: label}}, ``ranked``
    the ranked doc ids. A doc is relevant to a subtopic when its label there is >= rel; the
    intents S are the subtopics some doc is relevant to (0 intents: 0). The doc at rank i
    gains sum over its relevant subtopics s of (1 - alpha)^(docs above relevant to s).

    - alpha_DCG@k: sum_{i<k} gain_i / log2(i + 2), over the same for a ranking with every
      doc relevant to all S intents ("ideal ideal"); ERR_IA@k: the same with 1 / (i + 1).
      (ndeval leaves k = 1 undivided: fastir divides there too.)
    - alpha_nDCG@k, nERR_IA@k: the run's over the greedy ideal's, 0 when the run gains 0.
      The greedy ideal takes, rank after rank, the judged doc of the largest gain (ties:
      the greatest docno in byte order).
    - NRBP: (1 - (1 - alpha) beta) / S * sum_i beta^i gain_i over the whole ranking;
      nNRBP: over the greedy ideal's (0 when that is 0; ndeval gives NaN).
    - P_IA@k: relevant (doc, subtopic) pairs in the top k over k S; StRecall@k: subtopics
      with a relevant doc in the top k over S.
    """
    subtopics = _subtopic_order({s for pairs in judged.values() for s in pairs})
    relevant = {doc: [s for s in subtopics if pairs.get(s, rel - 1) >= rel]
                for doc, pairs in judged.items()}
    intents = len({s for doc in relevant for s in relevant[doc]})
    if intents == 0:
        return 0.0
    k = cutoff
    top = ranked[:k]

    def gains(docs):
        gain = {s: 1.0 for s in subtopics}
        out = []
        for doc in docs:
            score = 0.0
            for s in relevant.get(doc, []):
                score += gain[s]
                gain[s] *= 1.0 - alpha
            out.append(score)
        return out

    def greedy_ideal(depth):
        gain = {s: 1.0 for s in subtopics}
        left = sorted(judged, key=lambda d: str(d).encode("utf-8"))
        out = []
        while left and (depth is None or len(out) < depth):
            chosen, best = None, 0.0
            for doc in left:
                score = 0.0
                for s in relevant[doc]:
                    score += gain[s]
                if chosen is None or score >= best:
                    chosen, best = doc, score
            if best == 0.0:
                break
            left.remove(chosen)
            out.append(best)
            for s in relevant[chosen]:
                gain[s] *= 1.0 - alpha
        return out

    def discounted(g, i):
        if family in ("ERR_IA", "nERR_IA"):
            return g / (i + 1.0)
        return g * (math.log(2.0) / math.log(i + 2.0) if i > 0 else 1.0)

    if family == "P_IA":
        return sum(len(relevant.get(doc, [])) for doc in top) / (k * intents)
    if family == "StRecall":
        return len({s for doc in top for s in relevant.get(doc, [])}) / intents
    if family in ("NRBP", "nNRBP"):
        def nrbp(values):
            total, decay = 0.0, 1.0
            for g in values:
                total += g * decay
                decay *= beta
            return total * ((1 - (1 - alpha) * beta) / intents)

        value = nrbp(gains(ranked))
        if family == "NRBP":
            return value
        best = nrbp(greedy_ideal(None))
        return value / best if best > 0 else 0.0
    score = 0.0
    for i, g in enumerate(gains(top)):
        score += discounted(g, i)
    most = 0.0
    weight = 1.0 * intents
    for i in range(k):
        most += discounted(weight, i)
        weight *= 1.0 - alpha
    if family in ("alpha_DCG", "ERR_IA"):
        return score / most
    if score == 0.0:
        return 0.0
    best = 0.0
    for i, g in enumerate(greedy_ideal(k)):
        best += discounted(g, i)
    return (score / most) / (best / most)


def evaluate(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    names: list[str],
    *,
    relevance_level: int = 1,
    missing: str = "zero",
    max_docs: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    compat: str = "10.0",
) -> dict[str, list]:
    """Per-query values {qid: [value per name]} of fastir's measure ``names`` for the queries
    that count: missing="zero": every qrels query (a qrels query absent from the run is
    evaluated with an empty ranking); missing="skip": queries in both. Run-only queries
    never count. ``relevance_level`` applies to every measure without its own ``rel=`` but
    the level-free ones; RelString values are its text.
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', got {missing!r}")
    subtopic_qrels = None
    if any(isinstance(v, dict) for judged in qrels.values() for v in judged.values()):
        subtopic_qrels = qrels  # {qid: {doc: {subtopic: label}}}: a doc's label is its largest
        qrels = {qid: {doc: max(pairs.values()) for doc, pairs in judged.items() if pairs}
                 for qid, judged in qrels.items()}
    measures = []
    for name in names:
        family, params = parse(name)
        params["judged_only"] = judged_only or params.get("judged_only", False)  # -J, or its own
        ref = REFERENCES[family]
        if not ref.level_free:
            params.setdefault("rel", relevance_level)
        if ref.subtopics and subtopic_qrels is None:
            raise ValueError(f"{family} needs subtopic qrels")
        measures.append((family, params, subtopic_qrels if ref.subtopics else qrels))
    options = {"max_docs": max_docs, "num_docs": num_docs, "compat": compat}
    return {qid: [measure(family, judged[qid], run.get(qid, {}), in_run=qid in run, **options,
                          **params)
                  for family, params, judged in measures]
            for qid in qrels if qid in run or missing == "zero"}


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


if __name__ == "__main__":
    _self_check()
