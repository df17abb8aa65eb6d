"""Tied scores: the expected value of a measure over every order of each group of tied
documents (``ties="expected"``), in one pass over each ranking, and which families have one.

The join marks each ranked position's tie group (:attr:`fastir.model.join.Joined.groups`:
adjacent positions of equal score). Every order of a group being equally likely, a
position of a group of ``g`` documents holding ``r`` relevant ones is relevant with
probability ``r / g``, so the measures that add something per position (precision,
recall, F1 and the other counts at a cutoff, DCG, RBP, Judged) take the group's mean
there. Average precision, reciprocal rank and success at a cutoff are not sums of
independent positions; their expectations are McSherry and Najork's closed forms
("Computing information retrieval performance measures efficiently in the presence of
tied scores", ECIR 2008), linear in the ranking's length:

- AP: a position ``i`` of a group that starts after ``a`` documents holding ``R_a``
  relevant ones adds ``(r / g) (R_a + 1 + (i - a - 1) (r - 1) / (g - 1)) / i``: given that
  it holds a relevant document, each of the ``i - a - 1`` group positions above it holds
  one of the other ``r - 1`` with probability ``(r - 1) / (g - 1)``.
- RR: the first relevant document is in the first group holding one, at its ``x``-th
  position with probability ``C(g - x, r - 1) / C(g, r)``.
- Success@k: 1 unless that group straddles ``k``; then 1 minus the probability that its
  first ``k - a`` positions hold none of its ``r``: ``C(g - r, k - a) / C(g, k - a)``.

The measures read only at the end of the ranking (set measures, counts) do not depend on
the order. A group of one document takes exactly the default's operations, so a ranking
without ties gives the default values bit for bit. The registry says which families have
an expected value, and how (:attr:`fastir.measures.registry.Family.ties`);
:func:`check_options` refuses the others, by name.
"""

import numpy as np

from fastir._jit import helper, pjit, prange
from fastir.measures.common import (
    CUM_AP,
    CUM_REL,
    CUM_UNJ,
    GAIN_EXP,
    GAIN_TABLE,
    IDEAL_GAINS,
    MAX_EXP_LABEL,
    count_at_least,
    gain,
    ideal_gains,
)
from fastir.measures.dcg import dcg_value, ideal_dcg_sum
from fastir.measures.kernels import (
    COMPAT,
    CUTOFF,
    GAIN,
    KIND,
    LEVEL,
    PATH,
    PATH_COUNTS,
    PATH_GAINS,
    PATH_OWN,
    PATH_RANKS,
    PATH_SET,
    ST_BUILT,
    ST_LEVEL,
    ST_QUERY,
    query_value,
)
from fastir.measures.precision import cutoff_value, set_value
from fastir.measures.registry import JUDGED, RBP, RBP_RESID, RR, SUCCESS


def check_options(parsed, options, judgments):
    """A ValueError naming the measures that cannot take ``options.ties`` or
    ``options.unjudged``: with ``ties="expected"``, the families without an expected value
    (``Family.ties`` None); with unjudged documents judged relevant, the diversity measures
    (their subtopic judgments have no label for them) and those counting the documents no
    query judges (Hole); either, with preference
    judgments or judgment groups (``judgments``, not qrels)."""
    if judgments != "qrels" and (options.ties != "trec_eval"
                                 or options.unjudged_label is not None):
        raise ValueError(f"ties={options.ties!r} and unjudged={options.unjudged!r}: only the "
                         "defaults ('trec_eval', 'nonrelevant') are available with "
                         f"{'preference judgments' if judgments == 'prefs' else judgments}")
    if options.ties == "expected":
        refused = [str(m) for m in parsed if m.spec.ties is None]
        if refused:
            raise ValueError(f"{', '.join(refused)}: no expected value over tie orders "
                             "(ties='expected'); give ties='trec_eval' or 'input' for them "
                             "(the measure catalogue lists the families that have one)")
    if options.unjudged_label is not None:
        refused = [str(m) for m in parsed if m.spec.path == "subtopics"]
        if refused:
            raise ValueError(f"{', '.join(refused)}: unjudged={options.unjudged!r} is not "
                             "available for diversity measures (their subtopic judgments "
                             "give unjudged documents no subtopic)")
        refused = [str(m) for m in parsed if m.spec.anywhere]
        if refused:
            raise ValueError(f"{', '.join(refused)}: unjudged={options.unjudged!r} is not "
                             "available for it (it counts the documents no query of the "
                             "qrels judges, whatever they would be judged)")


@helper
def group_end(groups, a, n):
    """The end of the tie group that starts at position ``a`` (of ``n``)."""
    b = a + 1
    while b < n and groups[b] == groups[a]:
        b += 1
    return b


@helper
def _relevant_in(ranked, a, b, level):
    r = 0
    for i in range(a, b):
        if ranked[i] >= level:
            r += 1
    return r


@helper
def _expected_rank_prefixes(ranked, groups, built, level, sc):
    """The cumulative rows of :func:`fastir.measures.kernels._rank_prefixes` (relevant
    documents, AP's sum, unjudged documents in the top i) as expectations over the tie
    orders, down to rank ``built``."""
    n = len(ranked)
    rel = 0
    unjudged = 0
    ap = 0.0
    sc[CUM_REL, 0] = 0.0
    sc[CUM_AP, 0] = 0.0
    sc[CUM_UNJ, 0] = 0.0
    a = 0
    while a < built:
        b = group_end(groups, a, n)
        r = 0
        u = 0
        for i in range(a, b):
            code = ranked[i]
            if code >= level:
                r += 1
            elif code < 0:
                u += 1
        g = b - a
        if g == 1:  # the default's own operations
            if r > 0:
                ap += (rel + 1) / (a + 1)
            sc[CUM_REL, a + 1] = rel + r
            sc[CUM_AP, a + 1] = ap
            sc[CUM_UNJ, a + 1] = unjudged + u
        else:
            share = r / g
            for i in range(a, min(b, built)):
                k = i - a
                sc[CUM_REL, i + 1] = rel + r * (k + 1) / g
                sc[CUM_UNJ, i + 1] = unjudged + u * (k + 1) / g
                if r > 0:
                    ap += share * (rel + 1 + k * (r - 1) / (g - 1)) / (i + 1)
                sc[CUM_AP, i + 1] = ap
        rel += r
        unjudged += u
        a = b


@helper
def _first_relevant_group(ranked, groups, level, top):
    """The first tie group starting within the top ``top`` that holds a relevant document:
    (its start, its end, its relevant documents), or (-1, -1, 0) when none does."""
    n = len(ranked)
    a = 0
    while a < top:
        b = group_end(groups, a, n)
        r = _relevant_in(ranked, a, b, level)
        if r > 0:
            return a, b, r
        a = b
    return -1, -1, 0


@helper
def _expected_rr(ranked, groups, level, top):
    """The expected reciprocal rank of the first relevant document within the top ``top``."""
    a, b, r = _first_relevant_group(ranked, groups, level, top)
    if r == 0:
        return 0.0
    g = b - a
    if g == 1:
        return 1.0 / (a + 1)
    total = 0.0
    none_yet = 1.0  # the first x - 1 positions of the group hold no relevant one
    for x in range(1, min(g, top - a) + 1):
        total += none_yet * r / (g - x + 1) / (a + x)
        none_yet *= (g - r - x + 1) / (g - x + 1)
    return total


@helper
def _expected_success(ranked, groups, level, top):
    """The probability that a relevant document is in the top ``top``."""
    a, b, r = _first_relevant_group(ranked, groups, level, top)
    if r == 0:
        return 0.0
    if b <= top:
        return 1.0
    g = b - a
    none = 1.0
    for t in range(top - a):
        none *= (g - r - t) / (g - t)
    return 1.0 - none


@helper
def _expected_dcg(ranked, groups, top, level, gain_kind, params, log2):
    """The expected DCG of the top ``top``: each position gains its group's mean gain."""
    n = len(ranked)
    dcg = 0.0
    a = 0
    while a < top:
        b = group_end(groups, a, n)
        total = 0.0
        for i in range(a, b):
            total += gain(ranked[i], level, gain_kind, params)
        if b - a == 1:
            if total != 0.0:
                dcg += total / log2[a]
        else:
            mean = total / (b - a)
            if mean != 0.0:
                for i in range(a, min(b, top)):
                    dcg += mean / log2[i]
        a = b
    return dcg


@helper
def _expected_gain_value(spec, m, ranked, groups, ideal, sc):
    """DCG, ideal DCG and nDCG of the top k, the DCG expected over the tie orders."""
    row = spec.table[m]
    kind, cutoff, level, gain_kind = row[KIND], row[CUTOFF], row[LEVEL], row[GAIN]
    params = spec.params[m]
    if gain_kind == GAIN_EXP and len(ideal) > 0 and ideal[0] >= MAX_EXP_LABEL:
        return np.nan  # (as the default: 2**label - 1 overflows)
    n = len(ranked)
    limit = 0 if gain_kind == GAIN_TABLE else cutoff
    count = ideal_gains(ideal, level, gain_kind, params, sc[IDEAL_GAINS], limit)
    idcg = ideal_dcg_sum(sc[IDEAL_GAINS], count, cutoff, spec.log2)
    dcg = _expected_dcg(ranked, groups, n if cutoff == 0 else min(cutoff, n), level,
                        gain_kind, params, spec.log2)
    return dcg_value(kind, dcg, idcg)


@helper
def _expected_rbp(ranked, groups, ideal, p, level, scaled, resid):
    """RBP (:func:`fastir.measures.own.rbp`) or, with ``resid``, its residual
    (:func:`~fastir.measures.own.rbp_resid`), expected over the tie orders."""
    top = np.float64(ideal[0]) if len(ideal) > 0 and ideal[0] > 0 else 0.0
    n = len(ranked)
    total = 0.0
    cur_p = 1.0
    unjudged = 0
    a = 0
    while a < n:
        b = group_end(groups, a, n)
        s = 0.0
        for i in range(a, b):
            label = ranked[i]
            if resid:
                if label < 0:
                    unjudged += 1
                    s += 1.0
            elif label > 0 and label >= level:
                g = np.float64(label)
                if top > 1.0 and scaled != 0.0:
                    g = (g - 0.0) / (top - 0.0)
                s += g
        mean = s if b - a == 1 else s / (b - a)
        for _ in range(a, b):
            if s != 0.0:
                total += mean * cur_p
            cur_p = cur_p * p
        a = b
    if resid:
        return cur_p + (1 - p) * total if unjudged > 0 else 0.0
    return (1.0 - p) * total


@helper
def _expected_judged(ranked, groups, top):
    """Judged@k expected over the tie orders: the judged documents of a group straddling
    k count by the share of the group above k."""
    n = len(ranked)
    total = 0.0
    a = 0
    while a < top:
        b = group_end(groups, a, n)
        judged = 0
        for i in range(a, b):
            if ranked[i] != -1:
                judged += 1
        total += judged if b <= top else judged * (top - a) / (b - a)
        a = b
    return total / top


@helper
def expected_value(e, spec, m, ranked, groups, ideal, sc, state):
    """Measure ``m`` of the spec for query ``e`` (as
    :func:`fastir.measures.kernels.query_value`), expected over every order of each tie
    group (``groups``: per position its group); NaN for a family without one (the plan
    refuses those: :func:`check_options`)."""
    row = spec.table[m]
    n = len(ranked)
    path, kind, cutoff, level = row[PATH], row[KIND], row[CUTOFF], row[LEVEL]
    if path == PATH_COUNTS or n == 0:  # (no order to read)
        return query_value(e, spec, m, ranked, ideal, 0, 0, sc, state)
    top = n if cutoff == 0 else min(cutoff, n)
    if path == PATH_RANKS or path == PATH_SET:
        if kind == RR and path == PATH_RANKS:
            return _expected_rr(ranked, groups, level, top)
        if kind == SUCCESS:
            return _expected_success(ranked, groups, level, top)
        if state[ST_QUERY] != e or state[ST_LEVEL] != level:
            state[ST_BUILT] = n if spec.depth == 0 else min(spec.depth, n)
            _expected_rank_prefixes(ranked, groups, state[ST_BUILT], level, sc)
            state[ST_QUERY] = e
            state[ST_LEVEL] = level
        rows = sc[:, :state[ST_BUILT] + 1]
        n_rel = count_at_least(ideal, level)
        if path == PATH_RANKS:
            return cutoff_value(kind, cutoff, spec.params[m], n, n_rel,
                                count_at_least(ideal, 0) - n_rel, rows)
        return set_value(kind, row[COMPAT], spec.params[m], n, n_rel, rows)
    if path == PATH_GAINS:
        return _expected_gain_value(spec, m, ranked, groups, ideal, sc)
    if path == PATH_OWN:
        params = spec.params[m]
        if kind == RBP:
            return _expected_rbp(ranked, groups, ideal, params[0], level, params[1], False)
        if kind == RBP_RESID:
            return _expected_rbp(ranked, groups, ideal, 0.9, level, 0.0, True)
        if kind == JUDGED:
            return _expected_judged(ranked, groups, top)
    return np.nan


@pjit(nrt=False)
def expected_queries(bounds, rankings, groups, ideals, spec, work, out):
    """:func:`fastir.measures.kernels.evaluate_queries` with every value expected over the
    tie orders (``groups``: per ranked position its tie group)."""
    for c in prange(len(bounds) - 1):
        for e in range(bounds[c], bounds[c + 1]):
            lo, hi = rankings.indptr[e], rankings.indptr[e + 1]
            q = rankings.qrels_query[e]
            ideal = ideals.labels[ideals.indptr[q]:ideals.indptr[q + 1]]
            for m in range(spec.table.shape[0]):
                out[e, m] = expected_value(e, spec, m, rankings.labels[lo:hi], groups[lo:hi],
                                           ideal, work.rows[c], work.state[c])
