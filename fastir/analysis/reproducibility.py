"""How far a reproduced run is from the original (Breuer et al., SIGIR 2020 and ECIR 2021;
repro_eval's measures), on fastir's runs and per-query values, in array form:

- document order, per query, between the original ranking and the reproduced one:
  Kendall's tau Union (:func:`ktu`) and rank-biased overlap (:func:`rbo`);
- effectiveness, per measure, between the per-query values of the two: the root mean square
  error (:func:`rmse`, :func:`nrmse`) and the t-test's p-value (:func:`t_test`: paired for a
  reproduction on the same queries, unpaired for a replication on others);
- overall effects, per measure, of an advanced run over its baseline, original against
  reproduced: the effect ratio (:func:`effect_ratio`) and the delta relative improvement
  (:func:`delta_ri`).

Each equals repro_eval's on the same inputs (:mod:`fastir.peers.repro_eval` answers its
interface): the same sums in the same order, so the same digits, and NaN or inf where
repro_eval divides by zero. Rankings are trec_eval's (score descending, ties by document id
descending): repro_eval's order for a run listed in rank order, as every run file is.

The value matrices are ``(n_queries, n_measures)``: one row per query, one column per
measure.
"""

import math
import weakref
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit, pjit, prange
from fastir.model.data import InputError, Run
from fastir.model.errors import ranked_twice
from fastir.model.ids import _n_digits, common_kind, id_cmp
from fastir.model.ranking import RankKey, rank_sort, ranked_rows

#: repro_eval's defaults: the documents KTU compares, and RBO's depth and persistence.
KTU_DEPTH = 1000
RBO_DEPTH = 1000
RBO_P = 0.95


# -- document order -----------------------------------------------------------------------
#: A run's rankings as the kernels read them: per query (in id order) its rows in ranked
#: order, ``rows[offsets[q]:offsets[q + 1]]``, their number ``lengths[q]`` and the query's
#: first row in the run, ``starts[q]`` (the doc ids apart: numba's parallel loops take no
#: namedtuple within a namedtuple, numba issue 10139).
RankedRows = namedtuple("RankedRows", "rows offsets starts lengths")


class Rankings:
    """A run's rankings, once: per query its rows in ranked order (``rows[offsets[q]:
    offsets[q + 1]]``, queries in id order); ``ranked``: the same as :data:`RankedRows`."""

    def __init__(self, run):
        self.run = run
        self.rows = ranked_rows(run)[0]
        lengths = run.stops - run.starts
        self.offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        self.lengths = lengths.astype(np.int64)
        self.ranked = RankedRows(self.rows, self.offsets, run.starts, self.lengths)


_RANKINGS = weakref.WeakKeyDictionary()


def rankings(run):
    """The :class:`Rankings` of ``run``, kept while the run lives (several measures rank the
    same runs)."""
    found = _RANKINGS.get(run)
    if found is None:
        found = _RANKINGS[run] = Rankings(run)
    return found


def pair_queries(orig, rep, what="reproduced run"):
    """The queries of ``rep`` (a :class:`Run`) in id order and, for each, its index in
    ``orig`` and in ``rep``. Every query of the reproduction must be in the original (as
    repro_eval needs)."""
    orig_ids = {str(q): i for i, q in enumerate(orig.query_ids.tolist())}
    ids = rep.query_ids.tolist()
    missing = [q for q in ids if str(q) not in orig_ids]
    if missing:
        raise InputError(f"{rep.source}: query {missing[0]!r} of the {what} is not in the "
                         f"original run ({orig.source}); compare runs of the same queries")
    return ids, np.array([orig_ids[str(q)] for q in ids], dtype=np.int64), \
        np.arange(len(ids), dtype=np.int64)


def _prepared(orig, rep):
    orig, rep = _as_run(orig, "orig"), _as_run(rep, "rep")
    docs_a, docs_b = common_kind(orig.doc_ids, rep.doc_ids)
    ids, qa, qb = pair_queries(orig, rep)
    return rankings(orig), rankings(rep), docs_a.args(), docs_b.args(), ids, qa, qb


def _as_run(run, name):
    if not isinstance(run, Run):
        raise TypeError(f"{name} must be a fastir Run (fastir.read_run, Run.from_dict), got "
                        f"{type(run).__name__}")
    return run


def ktu(orig, rep, depth=KTU_DEPTH):
    """Kendall's tau Union of each query: Kendall's tau-b between the orders of the two
    rankings' top ``depth`` documents in the union of both, read rank by rank (repro_eval's
    ``KTU``: position i pairs the original's i-th document with the reproduction's, each
    placed by its id in the union), rounded to 14 decimals. NaN for a query of one document.

    Parameters
    ----------
    orig, rep : Run
        The original run and its reproduction; every query of ``rep`` must be in ``orig``
        and rank as many documents there (up to ``depth``).
    depth : int

    Returns
    -------
    query_ids : list
        The queries of ``rep``, in id order.
    values : ndarray of float64
    """
    depth = _depth(depth)
    a, b, docs_a, docs_b, ids, qa, qb = _prepared(orig, rep)
    n_a = np.minimum(a.lengths[qa], depth)
    n_b = np.minimum(b.lengths[qb], depth)
    unequal = np.flatnonzero(n_a != n_b)
    if len(unequal):
        t = int(unequal[0])
        raise InputError(f"KTU compares rankings of equal length, but query {ids[t]!r} ranks "
                         f"{n_a[t]} documents in the original run and {n_b[t]} in the "
                         f"reproduced run (within the top {depth}): as repro_eval (scipy's "
                         "kendalltau), KTU is defined only when they are equal")
    out = np.empty(len(ids))
    twice = np.full((len(ids), 2), -1, dtype=np.int64)
    _jit.launch(_ktu_kernel, a.ranked, docs_a, b.ranked, docs_b, qa, qb, n_a, out, twice)
    _raise_twice(twice, (a, b), ids)
    return ids, np.round(out, 14)


def rbo(orig, rep, p=RBO_P, depth=RBO_DEPTH):
    """Rank-biased overlap of each query at ``depth``, normalised (repro_eval's ``RBO``, after
    Clarke et al.'s code): ``sum_{d<depth} p^d |A_{:d+1} & B_{:d+1}| / (d + 1)`` over
    ``sum_{d<depth} p^d``, ``A`` and ``B`` the two rankings.

    Returns
    -------
    query_ids : list
        The queries of ``rep``, in id order.
    values : ndarray of float64
    """
    depth = _depth(depth)
    if not isinstance(p, (int, float, np.floating, np.integer)) or isinstance(p, bool) or \
            not math.isfinite(p):
        raise ValueError(f"p must be a finite number (0 < p < 1: the searcher's persistence), "
                         f"got {p!r}")
    a, b, docs_a, docs_b, ids, qa, qb = _prepared(orig, rep)
    out = np.empty(len(ids))
    twice = np.full((len(ids), 2), -1, dtype=np.int64)
    _jit.launch(_rbo_kernel, a.ranked, docs_a, b.ranked, docs_b, qa, qb, float(p), depth,
                out, twice)
    _raise_twice(twice, (a, b), ids)
    return ids, out


def _depth(depth):
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"depth must be a positive integer, got {depth!r}")
    return int(depth)


def _raise_twice(twice, rankings, ids):
    found = np.flatnonzero((twice >= 0).any(axis=1))
    if len(found):
        t = int(found[0])
        side = 0 if twice[t, 0] >= 0 else 1
        raise InputError(ranked_twice(rankings[side].run, ids[t], int(twice[t, side])))


@jit
def _id_places(rows, start, length, docs, zeros, places):
    """``places[i]``: the place of the document of ``rows[i]`` (rows of one query, from
    ``start``, ``length`` rows in all) in the ascending id order of the documents of
    ``rows``; returns a row whose document is ranked twice, else -1. Canonical decimal ids
    (a file's MS MARCO ids) are placed by integer keys; others by comparing their bytes."""
    n = len(rows)
    if docs.is_int:
        keys = _decimal_keys(docs.values, rows)
        if len(keys) == n:
            order = np.argsort(keys)
            for j in range(n):
                places[order[j]] = j
                if j > 0 and keys[order[j]] == keys[order[j - 1]]:
                    return rows[order[j]]
            return -1
    order = rows.copy()
    rank_sort(order, RankKey(zeros, None, docs), np.empty(n, dtype=np.int64))  # (descending)
    where = np.empty(length, dtype=np.int64)
    for i in range(n):
        where[rows[i] - start] = i
    for j in range(n):
        places[where[order[j] - start]] = n - 1 - j
        if j > 0 and id_cmp(docs, order[j - 1], docs, order[j]) == 0:
            return order[j]
    return -1


@jit
def _decimal_keys(values, rows):
    """Integer keys ordered as the decimal strings of the non-negative ``values[rows]``: each
    value's digits left-aligned to the longest, then its length (a prefix first); empty when
    a value is negative or the keys would not fit (18 digits)."""
    width = 1
    for row in rows:
        if values[row] < 0:
            return np.empty(0, dtype=np.int64)
        width = max(width, _n_digits(values[row]))
    if width > 17:
        return np.empty(0, dtype=np.int64)
    keys = np.empty(len(rows), dtype=np.int64)
    for i in range(len(rows)):
        digits = _n_digits(values[rows[i]])
        keys[i] = values[rows[i]] * 10 ** (width - digits) * 18 + digits
    return keys


@helper
def _inversions(values, tree):
    """Pairs i < j with values[i] > values[j] of a permutation of 0..n-1, counted with a
    Fenwick tree (``tree``: n + 1 zeros, used as scratch)."""
    n = len(values)
    count = 0
    for i in range(n - 1, -1, -1):
        k = values[i]  # values below it seen so far (they come after it)
        while k > 0:
            count += tree[k]
            k -= k & -k
        k = values[i] + 1
        while k <= n:
            tree[k] += 1
            k += k & -k
    return count


@pjit
def _ktu_kernel(a, docs_a, b, docs_b, qa, qb, n_docs, out, twice):
    """Per compared query ``t`` (query ``qa[t]`` of the rankings ``a``, :data:`RankedRows`,
    and ``qb[t]`` of ``b``; their doc ids ``docs_a``, ``docs_b``), KTU of their top
    ``n_docs[t]`` documents in ``out[t]``; ``twice[t, 0]`` (``twice[t, 1]``): a row of
    that top of ``a``'s (``b``'s) ranking whose document it holds twice, or -1."""
    rows_a, offsets_a, starts_a, lengths_a = a  # (as locals: see fastir.model.join)
    rows_b, offsets_b, starts_b, lengths_b = b
    zeros_a = np.zeros(offsets_a[-1])
    zeros_b = np.zeros(offsets_b[-1])
    for t in prange(len(qa)):
        n = n_docs[t]
        x = np.empty(n, dtype=np.int64)
        y = np.empty(n, dtype=np.int64)
        q = qa[t]
        lo = offsets_a[q]
        twice[t, 0] = _id_places(rows_a[lo:lo + n], starts_a[q], lengths_a[q], docs_a,
                                 zeros_a, x)
        q = qb[t]
        lo = offsets_b[q]
        twice[t, 1] = _id_places(rows_b[lo:lo + n], starts_b[q], lengths_b[q], docs_b,
                                 zeros_b, y)
        # pairs (x[i], y[i]) in x order: the discordant pairs are the inversions of y
        order = np.empty(n, dtype=np.int64)
        for i in range(n):
            order[x[i]] = y[i]
        discordant = _inversions(order, np.zeros(n + 1, dtype=np.int64))
        total = n * (n - 1) // 2
        if total == 0:
            out[t] = np.nan
        else:
            tau = (total - 2 * discordant) / np.sqrt(total) / np.sqrt(total)
            out[t] = min(1.0, max(-1.0, tau))


@pjit
def _rbo_kernel(a, docs_a, b, docs_b, qa, qb, p, depth, out, twice):
    """Per compared query ``t`` (as in :func:`_ktu_kernel`), RBO at ``depth`` with
    persistence ``p`` in ``out[t]``, and ``twice[t]``."""
    rows_a, offsets_a, starts_a, lengths_a = a  # (as locals: see fastir.model.join)
    rows_b, offsets_b, starts_b, lengths_b = b
    zeros_a = np.zeros(offsets_a[-1])
    zeros_b = np.zeros(offsets_b[-1])
    for t in prange(len(qa)):
        n_a = min(lengths_a[qa[t]], depth)
        n_b = min(lengths_b[qb[t]], depth)
        rank_a = np.empty(n_a, dtype=np.int64)
        rank_b = np.empty(n_b, dtype=np.int64)
        longest = max(n_a, n_b)
        q = qa[t]
        lo = offsets_a[q]
        twice[t, 0] = _id_places(rows_a[lo:lo + n_a], starts_a[q], lengths_a[q], docs_a,
                                 zeros_a, rank_a)
        sorted_a = np.empty(n_a, dtype=np.int64)  # place in id order -> rank
        for i in range(n_a):
            sorted_a[rank_a[i]] = i
        q = qb[t]
        lo = offsets_b[q]
        twice[t, 1] = _id_places(rows_b[lo:lo + n_b], starts_b[q], lengths_b[q], docs_b,
                                 zeros_b, rank_b)
        sorted_b = np.empty(n_b, dtype=np.int64)
        for i in range(n_b):
            sorted_b[rank_b[i]] = i
        # documents in both, found by merging the two id orders: each joins the overlap at
        # the deeper of its two ranks
        joins = np.zeros(longest + 1, dtype=np.int64)
        base_a = offsets_a[qa[t]]
        base_b = offsets_b[qb[t]]
        i = 0
        j = 0
        while i < n_a and j < n_b:
            c = id_cmp(docs_a, rows_a[base_a + sorted_a[i]], docs_b,
                       rows_b[base_b + sorted_b[j]])
            if c == 0:
                joins[max(sorted_a[i], sorted_b[j])] += 1
                i += 1
                j += 1
            elif c < 0:
                i += 1
            else:
                j += 1
        score = 0.0
        normalizer = 0.0
        weight = 1.0
        overlap = 0
        for d in range(depth):
            if d < longest:
                overlap += joins[d]
            score += weight * overlap / (d + 1)
            normalizer += weight
            weight *= p
        out[t] = score / normalizer


# -- effectiveness and overall effects, on per-query values ------------------------------
def _sequential_sum(values):
    """Column sums added row after row, as Python's ``sum`` adds a list."""
    if not len(values):
        return np.zeros(values.shape[1])
    return np.add.accumulate(values, axis=0)[-1]


def _means(values):
    """Column means as numpy takes the mean of one column (pairwise sums)."""
    return np.ascontiguousarray(values.T).mean(axis=1)


def rmse(orig, rep):
    """Root mean square error of each measure between the per-query values ``orig`` and
    ``rep`` (the same queries, in the same order)."""
    with np.errstate(all="ignore"):
        return np.sqrt(_sequential_sum(np.square(orig - rep)) / len(orig))


def nrmse(orig, rep):
    """:func:`rmse` over its largest value for ``orig``: the RMSE against values that are
    ``max(x, 1 - x)`` away from each of ``orig``'s."""
    farthest = np.where(1 - orig > orig, 1 - orig, orig)
    with np.errstate(all="ignore"):
        return rmse(orig, rep) / np.sqrt(_sequential_sum(np.square(farthest)) / len(orig))


def mean_improvement(advanced, baseline):
    """Per measure, the mean over queries of advanced - baseline (the same queries)."""
    return _means(advanced - baseline)


def effect_ratio(orig_a, orig_b, rep_a, rep_b):
    """The reproduced mean improvement of the advanced run over the baseline, over the
    original one (1: the same effect; inf or NaN where the original has none)."""
    with np.errstate(all="ignore"):
        return mean_improvement(rep_a, rep_b) / mean_improvement(orig_a, orig_b)


def relative_improvement(advanced, baseline):
    """Per measure, (mean advanced - mean baseline) / mean baseline."""
    mean_b = _means(baseline)
    with np.errstate(all="ignore"):
        return (_means(advanced) - mean_b) / mean_b


def delta_ri(orig_a, orig_b, rep_a, rep_b):
    """The original relative improvement minus the reproduced one (0: the same)."""
    return relative_improvement(orig_a, orig_b) - relative_improvement(rep_a, rep_b)


def t_test(orig, rep, paired=True):
    """Two-sided p-values of Student's t-test, per measure, between ``orig`` and ``rep``:
    paired by row (a reproduction: the same queries in the same order) or, with
    ``paired=False``, of two independent samples with a pooled variance (a replication: other
    queries). NaN where the statistic is 0 / 0 (no variance and no difference), as scipy's
    ``ttest_rel`` and ``ttest_ind``."""
    from fastir.analysis.stats import t_two_sided

    with np.errstate(all="ignore"):
        if paired:
            d = orig - rep
            n = len(d)
            df = n - 1
            t = _means(d) / np.sqrt(_var(d) / n)
        else:
            n1, n2 = len(orig), len(rep)
            df = n1 + n2 - 2
            pooled = ((n1 - 1) * _var(orig, 0.0) + (n2 - 1) * _var(rep, 0.0)) / df
            t = (_means(orig) - _means(rep)) / np.sqrt(pooled * (1.0 / n1 + 1.0 / n2))
    return np.array([math.nan if math.isnan(v) or df < 1 else t_two_sided(v, df)
                     for v in t.tolist()])


def _var(values, single=np.nan):
    """Column variances with one degree of freedom less, as scipy's t-tests take them (the
    second moment times n / (n - 1)); ``single`` for one row (scipy's pooled variance takes
    a lone value's as 0)."""
    n = len(values)
    if n < 2:
        return np.full(values.shape[1], single)
    columns = np.ascontiguousarray(values.T)
    centred = columns - columns.mean(axis=1)[:, None]
    return (centred * centred).mean(axis=1) * (n / (n - 1))
