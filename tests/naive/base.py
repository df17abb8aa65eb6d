"""The building blocks: trec_eval's ranking and relevance codes, counts, gains, its
C-library arithmetic, the run prepared as -M / -J say."""

from __future__ import annotations

import math
import struct

#: trec_eval's RELVALUE_NONPOOL: retrieved doc absent from the qrels.
NONPOOL = -1


#: trec_eval's RELVALUE_UNJUDGED: retrieved doc in the qrels with a negative label.
UNJUDGED = -2


#: trec_eval's MIN_GEO_MEAN, the floor applied before the log in gm_map.
MIN_GEO_MEAN = 0.00001


#: Supported trec_eval behaviours for ``compat``.
COMPATS = ("10.0", "9.0.8")


#: Default recall levels of iprec_at_recall / 11pt_avg (the C array literals).
DEFAULT_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


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
