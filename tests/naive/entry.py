"""The public entry points: one measure on one query, summaries, canonical names, whole
evaluations (qrels, preferences, judgment groups)."""

from __future__ import annotations

import math
import re

from .base import MIN_GEO_MEAN, NONPOOL, _check_compat, _ranked_docs, judge
from .prefs import GROUP_FAMILIES, PREFS_FAMILIES, prefs_values
from .table import REFERENCES, Ranking


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
    labels: str = "int",
) -> dict[str, list]:
    """Per-query values {qid: [value per name]} of fastir's measure ``names`` for the queries
    that count: missing="zero": every qrels query (a qrels query absent from the run is
    evaluated with an empty ranking); missing="skip": queries in both. Run-only queries
    never count. ``relevance_level`` applies to every measure without its own ``rel=`` but
    the level-free ones; RelString values are its text. ``labels="float"``: the labels are
    real numbers >= 0, and a level-free measure's labels count when > 0 (its level 0: among
    integers, > 0 is >= 1, the level it has otherwise).
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
        elif labels == "float":
            params.setdefault("rel", 0)
        if ref.subtopics and subtopic_qrels is None:
            raise ValueError(f"{family} needs subtopic qrels")
        if ref.anywhere:  # (BEIR's annotated corpus: every doc of the qrels, any label)
            params["anywhere"] = {doc for judged in qrels.values() for doc in judged}
        measures.append((family, params, subtopic_qrels if ref.subtopics else qrels))
    options = {"max_docs": max_docs, "num_docs": num_docs, "compat": compat}
    return {qid: [measure(family, judged[qid], run.get(qid, {}), in_run=qid in run, **options,
                          **params)
                  for family, params, judged in measures]
            for qid in qrels if qid in run or missing == "zero"}
