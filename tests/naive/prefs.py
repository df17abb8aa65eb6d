"""Preference judgments and judgment groups (trec_eval -R prefs / qrels_prefs / qrels_jg)."""

from __future__ import annotations

from .base import _cdiv, _float32

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
