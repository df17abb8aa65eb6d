"""The reference table: how the reference computes each family (:data:`REFERENCES`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .base import DEFAULT_RECALLS, _dcg, _gain, _is_rel, _num_judged_nonrel, _num_rel, relstring_of
from .cwl import CWL_FAMILIES, _cwl
from .dcg import _bin_g, _g, _gain_table, _ndcg, _ndcg_rel, _rndcg, _trec_ndcg
from .diversity import DIVERSITY_FAMILIES, diversity
from .err import _err, _nerr
from .own import _bpref, _compat, _infap, _judged_at, _rbp, _rbp_resid
from .precision import (
    _accuracy,
    _ap,
    _hole_at,
    _iprec,
    _iprec_avg,
    _precision_at,
    _recall_at,
    _relative_p,
    _rprec,
    _rprec_mult,
    _rr,
    _set_f,
    _success,
    _unjudged_at,
    _utility,
    _yaap,
)
from .prefs import GROUP_FAMILIES, PREFS_FAMILIES, _groups_value, _prefs_value


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
    resets it after its placeholder, 9.0.8 does not evaluate it). ``anywhere``: the family
    reads the whole qrels, not only the query's: ``p["anywhere"]`` holds the docs that some
    query judges (any label)."""

    compute: Callable
    summary: str = "mean"
    level_free: bool = False
    empty: str = "own"
    subtopics: bool = False
    judgments: str = "qrels"  # "prefs": prefs_measure computes it; "groups": groups_measure
    anywhere: bool = False


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
    "Hole": Reference(lambda r, j, p: _hole_at(r.docs, p["anywhere"], p["cutoff"]),
                      empty="zero", anywhere=True),
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
