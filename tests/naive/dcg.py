"""The gain measures: nDCG from the labels, and trec_eval's gain table (m_ndcg.c and the
G family's loops: ndcg_rel, Rndcg, G, binG), an entry being [rel_level, gain,
num_at_level]."""

from __future__ import annotations

import math

from .base import _cdiv, _clog2, _dcg, _gain


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
