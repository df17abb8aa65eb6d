"""The preference measures' kernel (trec_eval's ``prefs_*``: form_prefs_counts.c and
m_prefs_*.c), over :class:`~fastir.model.prefs.Prefs` and the positions of
:func:`~fastir.model.prefs_join.join_prefs`.

Per query, each judgment group (JG) is counted apart, as trec_eval counts it:

- a JG of one subgroup is a list of equivalence classes (ECs: the documents of one level,
  levels descending); every document of a class is preferred to every document of the
  classes below. Pairs are counted from the classes' sizes, and the fulfilled ones (both
  retrieved, the preferred one ranked first) with a Fenwick tree over positions: no pair
  is enumerated. A document in two classes is an error (:data:`ERROR_LEVELS`).
- a JG of several subgroups is a preference graph: each subgroup adds its pairs, the graph
  is closed transitively (Warshall's algorithm on bit rows), and its pairs are counted by
  ranges of bits. A document with level 0 in one subgroup and another level in another is
  an error (:data:`ERROR_ZERO`); a cycle (A > B and B > A) too (:data:`ERROR_CYCLE`:
  trec_eval aborts there).

Pairs are "retrieved" (both retrieved), "implied" (one retrieved) or "not occurring";
a pair is fulfilled when the preferred document is retrieved and ranked above the other
(or the other is not retrieved). ``prefs_avgjg_Rnonrel`` and its ``_ret`` form recount a JG
with as many non-relevant documents as relevant ones, with trec_eval's own recount (its
choices are kept: the first R documents of the lowest class, R counted over the whole
group in the ``_ret`` form's preference graphs).

The pair measures (``prefs_pair*``) average, over the pairs of documents, the share of the
JGs stating the pair that prefer the document ranked first. When no pair can be stated
twice (no document in two JGs of the query, none twice in a JG of one subgroup) every
share is 0 or 1 and the averages are the simple measures' counts (:func:`_distinct_pairs`,
nothing enumerated, the usual case). Otherwise, and only when one of them is asked for,
the pairs are counted into a matrix over the query's judged documents, trec_eval's count
matrix: 16-bit cells that wrap at 65536 as its do, or 8-bit ones (n^2 bytes, half its size)
where no count can reach 256 (a document in at most 15 rows), and summed in trec_eval's
order (:func:`_pair_sums`).

Sums run in trec_eval's order (judgment groups in name order, pairs by position), so values
are bit-identical to trec_eval 10.0.
"""

from collections import namedtuple

import numpy as np

from fastir._jit import helper, jit, pjit, prange

# Measure kinds (the registry's Family.kind of its "prefs" families).
NUM_POSS, NUM_FUL, NUM_FUL_RET, SIMP, PAIR, AVGJG, AVGJG_RNONREL, SIMP_RET, PAIR_RET, \
    AVGJG_RET, AVGJG_RNONREL_RET, SIMP_IMP, PAIR_IMP, AVGJG_IMP = range(100, 114)
PAIR_KINDS = (PAIR, PAIR_RET, PAIR_IMP)

# A query's statistics (one row of ``stats``).
FUL_RET, FUL_IMP, POSS_RET, POSS_IMP, NOT_OCCUR, N_JGS, AVG, AVG_RET, AVG_IMP, RNONREL, \
    RNONREL_RET, PAIR_SUM_RET, PAIR_N_RET, PAIR_SUM_IMP, PAIR_N_IMP, PAIR_N, UNDEFINED = \
    range(17)
N_STATS = 17

# A judgment group's counts (``g``). POSS_* include the fulfilled pairs; RN_* are the
# Rnonrel recount's (fulfilled, possible) pairs, RNR_* its _ret form's.
G_FUL_RET, G_FUL_IMP, G_POSS_RET, G_POSS_IMP, G_NOT_OCCUR, G_REL, G_REL_RET, G_NONREL, \
    G_NONREL_RET, G_RN_FUL, G_RN_POSS, G_RNR_FUL, G_RNR_POSS, G_UNDEFINED = range(14)
# (a judgment group of classes: the pairs whose other document is in its lowest class)
G_LAST_FUL, G_LAST_ALL, G_LAST_FUL_RET, G_LAST_RET = range(14, 18)
N_G = 18

# Why a query cannot be evaluated (trec_eval stops there).
ERROR_LEVELS = 1  # a document in two levels of one subgroup
ERROR_ZERO = 2  # a document of level 0 and of another level in one judgment group
ERROR_CYCLE = 3  # inconsistent preferences in one judgment group (trec_eval aborts)


#: The judgments :func:`prefs_queries` reads: per query ``q`` its rows
#: ``indptr[q]:indptr[q + 1]``, per row its ``levels``, judgment group (``groups``),
#: subgroup (``subgroups``) and document (``row_doc``: its place among the query's judged
#: documents, which are ``j_indptr[q]:j_indptr[q + 1]``).
PrefsRows = namedtuple("PrefsRows", "indptr levels groups subgroups row_doc j_indptr")

#: One query's judgments for :func:`_query_groups`: its rows ``lo:hi`` (their ``levels``,
#: ``groups``, ``subgroups``), its documents' positions by row (``d``, from row ``lo``) and
#: the judged documents its ranking holds (``n_ret``).
QueryRows = namedtuple("QueryRows", "lo hi levels groups subgroups d n_ret")

#: A chunk's scratch for :func:`_judgment_group` (see :func:`_ec_group`, :func:`_graph_group`)
#: and the group's counts ``g``.
GroupScratch = namedtuple("GroupScratch", "ec tree mark local stamp g")

@pjit
def prefs_queries(bounds, judged_query, n_retrieved, judgments, position, want_pairs, stats,
                  errors, stop_rows):
    """Fill ``stats[e]`` of every evaluated query ``e`` (parallel over chunks ``bounds``), or
    ``errors[e]`` (why trec_eval stops there) and ``stop_rows[e]`` (the first row of the
    judgment group it stops at): its judgments (a :data:`PrefsRows`) are rows
    ``indptr[q]:indptr[q + 1]`` of query ``q = judged_query[e]``, a row's document has
    position ``position[j_indptr[q] + row_doc[row]]``."""
    # (the tuple's fields as locals: see fastir.model.join._join_kernel)
    indptr, levels, groups, subgroups, row_doc, j_indptr = judgments
    most_rows = 1
    most_docs = 1
    for q in range(len(indptr) - 1):
        most_rows = max(most_rows, indptr[q + 1] - indptr[q])
        most_docs = max(most_docs, j_indptr[q + 1] - j_indptr[q])
    for c in prange(len(bounds) - 1):
        d = np.empty(most_rows, dtype=np.int64)
        ec = np.empty(most_rows + 1, dtype=np.int64)
        tree = np.zeros(most_docs + 1, dtype=np.int64)
        mark = np.full(most_docs, -1, dtype=np.int64)
        local = np.zeros(most_docs, dtype=np.int64)
        owner = np.full(most_docs, -1, dtype=np.int64)
        times = np.zeros(most_docs, dtype=np.int64)
        stamp = np.zeros(1, dtype=np.int64)
        g = np.zeros(N_G)
        scratch = GroupScratch(ec, tree, mark, local, stamp, g)  # (made in the loop: see RunRows)
        for e in range(bounds[c], bounds[c + 1]):
            q = judged_query[e]
            lo, hi = indptr[q], indptr[q + 1]
            for r in range(lo, hi):
                d[r - lo] = position[j_indptr[q] + row_doc[r]]
            repeats, most = _pair_repeats(lo, hi, groups, subgroups, row_doc, owner, times)
            # (pair counts only where a pair may be stated twice, else 0 x 0; in 8 bits where
            # no count can reach 256: a pair's count is at most its documents' rows' product)
            size = j_indptr[q + 1] - j_indptr[q] if want_pairs and repeats else 0
            rows = QueryRows(lo, hi, levels, groups, subgroups, d, n_retrieved[e])
            if most * most < 256:
                err, stop = _query_groups(rows, scratch, want_pairs, stats[e],
                                          np.zeros((size, size), dtype=np.uint8))
            else:
                err, stop = _query_groups(rows, scratch, want_pairs, stats[e],
                                          np.zeros((size, size), dtype=np.uint16))
            errors[e], stop_rows[e] = err, stop


@jit
def _query_groups(rows, scratch, want_pairs, s, counts):
    """Count a query's judgment groups (``rows``: a :data:`QueryRows`) into its statistics
    ``s``, in group order, and its pairs into ``counts`` (unless empty: then no pair is
    stated twice); returns (error code, the first row of the group it stops at)."""
    lo, hi, levels, groups, subgroups, d, n_ret = rows
    start = lo
    while start < hi:
        end = start + 1
        while end < hi and groups[end] == groups[start]:
            end += 1
        err = _judgment_group(start, end, levels, subgroups, d[start - lo:], n_ret, scratch,
                              counts)
        if err:
            return err, start
        _add_group(scratch.g, s)
        start = end
    if want_pairs and counts.shape[0] > 0:
        _pair_sums(counts, n_ret, s)
    elif want_pairs:
        _distinct_pairs(s)
    return 0, 0


@jit
def _pair_repeats(lo, hi, groups, subgroups, row_doc, owner, times):
    """(whether query rows ``lo:hi`` may state a pair of documents twice: a document in two
    judgment groups, or twice in a group of one subgroup, as a preference graph states each
    of its pairs once; the most rows a document has). ``owner`` and ``times``: -1 and 0 for
    each of the query's documents (left so)."""
    repeats = False
    most = 0
    start = lo
    while start < hi:
        end = start + 1
        while end < hi and groups[end] == groups[start]:
            end += 1
        single = subgroups[start] == subgroups[end - 1]  # (rows by subgroup in a group)
        for r in range(start, end):
            k = row_doc[r]
            times[k] += 1
            most = max(most, times[k])
            if owner[k] < 0:
                owner[k] = groups[r]
            elif owner[k] != groups[r] or single:
                repeats = True
        start = end
    for r in range(lo, hi):
        owner[row_doc[r]] = -1
        times[row_doc[r]] = 0
    return repeats, most


@jit
def _judgment_group(start, end, levels, subgroups, d, n_ret, scratch, counts):
    """Count judgment group rows ``start:end`` (positions ``d[:end - start]``) into
    ``scratch.g`` (``scratch``: a :data:`GroupScratch`), and its pairs into ``counts``
    (unless it is empty); returns an error code."""
    ec, tree, mark, local, stamp, g = scratch
    g[:] = 0.0
    single = True
    for r in range(start + 1, end):
        if subgroups[r] != subgroups[start]:
            single = False
            break
    if single:
        err = _ec_group(start, end, levels, d, n_ret, ec, tree, mark, stamp, g)
        if err == 0 and counts.shape[0] > 0:
            _ec_pairs(end - start, d, ec, counts)
        return err
    err, bits, docs = _graph_group(start, end, levels, subgroups, d, n_ret, local, mark,
                                   stamp, g)
    if err == 0 and counts.shape[0] > 0:
        _graph_pairs(bits, docs, counts)
    return err


@helper
def _add_group(g, s):
    """A judgment group's counts into its query's statistics, in group order."""
    ful, poss = g[G_FUL_RET] + g[G_FUL_IMP], g[G_POSS_RET] + g[G_POSS_IMP] + g[G_NOT_OCCUR]
    s[FUL_RET] += g[G_FUL_RET]
    s[FUL_IMP] += g[G_FUL_IMP]
    s[POSS_RET] += g[G_POSS_RET]
    s[POSS_IMP] += g[G_POSS_IMP]
    s[NOT_OCCUR] += g[G_NOT_OCCUR]
    s[N_JGS] += 1.0
    if poss > 0.0:
        s[AVG] += ful / poss
    if g[G_POSS_RET] > 0.0:
        s[AVG_RET] += g[G_FUL_RET] / g[G_POSS_RET]
    if g[G_POSS_RET] + g[G_POSS_IMP] > 0.0:
        s[AVG_IMP] += ful / (g[G_POSS_RET] + g[G_POSS_IMP])
    s[RNONREL] += _ratio(g[G_RN_FUL], g[G_RN_POSS])
    s[RNONREL_RET] += _ratio(g[G_RNR_FUL], g[G_RNR_POSS])
    s[UNDEFINED] = max(s[UNDEFINED], g[G_UNDEFINED])


@helper
def _ratio(a, b):
    """``a / b`` as C divides doubles: 0 / 0 is NaN (which then keeps trec_eval's sum at NaN,
    and its ``sum > 0`` test false: the query scores 0)."""
    if b == 0.0:
        return np.nan if a == 0.0 else np.inf
    return a / b


# -- equivalence classes (a judgment group of one subgroup) ---------------------------------
@jit
def _ec_group(start, end, levels, d, n_ret, ec, tree, mark, stamp, g):
    """Count a judgment group of one subgroup: classes of equal level (``ec[k]:ec[k + 1]``
    of ``d``, each sorted by position). Returns an error code."""
    n = end - start
    n_ec = 0
    ec[0] = 0
    for i in range(1, n + 1):
        if i == n or levels[start + i] != levels[start + i - 1]:
            d[ec[n_ec]:i].sort()
            n_ec += 1
            ec[n_ec] = i
    base = stamp[0]
    stamp[0] += n_ec
    above_ret, above_not = 0.0, 0.0
    for k in range(n_ec):
        lo, hi = ec[k], ec[k + 1]
        for i in range(lo, hi):
            if mark[d[i]] >= base and mark[d[i]] != base + k:
                _undo(tree, d, ec[k], n_ret)
                return ERROR_LEVELS
            mark[d[i]] = base + k
        ret = _count_below(d, lo, hi, n_ret)
        not_ret = (hi - lo) - ret
        inversions = 0.0
        for i in range(lo, lo + ret):
            inversions += _prefix(tree, d[i])
        g[G_FUL_RET] += inversions
        g[G_POSS_RET] += above_ret * ret
        g[G_FUL_IMP] += above_ret * not_ret
        g[G_POSS_IMP] += above_ret * not_ret + above_not * ret
        g[G_NOT_OCCUR] += above_not * not_ret
        if k == n_ec - 1:
            g[G_LAST_FUL] = inversions + above_ret * not_ret
            g[G_LAST_ALL] = (above_ret + above_not) * (hi - lo)
            g[G_LAST_FUL_RET] = inversions
            g[G_LAST_RET] = above_ret * ret
        which = G_REL if levels[start + lo] > 0.0 else G_NONREL
        g[which] += hi - lo
        g[which + 1] += ret
        for i in range(lo, lo + ret):
            _add(tree, d[i], 1, n_ret)
        above_ret += ret
        above_not += not_ret
    _undo(tree, d, n, n_ret)
    _ec_rnonrel(d, ec, n_ec, n_ret, g)
    return 0


@helper
def _undo(tree, d, n, n_ret):
    """Take the retrieved positions of ``d[:n]`` out of the Fenwick tree again."""
    for i in range(n):
        if d[i] < n_ret:
            _add(tree, d[i], -1, n_ret)


@helper
def _add(tree, i, v, n):
    """Add ``v`` at position ``i`` of a Fenwick tree over positions ``0 .. n - 1``."""
    i += 1
    while i <= n:
        tree[i] += v
        i += i & -i


@helper
def _prefix(tree, i):
    """The Fenwick tree's sum over positions ``0 .. i - 1``."""
    total = 0
    while i > 0:
        total += tree[i]
        i -= i & -i
    return total


@helper
def _count_below(d, lo, hi, bound):
    """How many of the sorted ``d[lo:hi]`` are below ``bound``."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if d[mid] < bound:
            a = mid + 1
        else:
            b = mid
    return a - lo


@helper
def _above_count(d, lo, hi, a):
    """How many of the sorted ``d[lo:hi]`` are above ``a``."""
    return (hi - lo) - _count_below(d, lo, hi, a + 1)


@jit
def _ec_rnonrel(d, ec, n_ec, n_ret, g):
    """prefs_avgjg_Rnonrel's and its _ret form's counts of a judgment group of classes:
    as counted when there are at least as many relevant documents (R) as non-relevant ones
    (N), else recounted with the first R documents of the lowest class as the non-relevant
    ones (m_prefs_avgjg_Rnonrel*.c's recalculate)."""
    n = ec[n_ec]
    total = g[G_POSS_RET] + g[G_POSS_IMP] + g[G_NOT_OCCUR]
    rel, nonrel = g[G_REL], g[G_NONREL]
    if rel >= nonrel:
        g[G_RN_FUL] = g[G_FUL_RET] + g[G_FUL_IMP] + g[G_REL_RET] * (rel - nonrel)
        g[G_RN_POSS] = total + rel * (rel - nonrel)
    else:
        lo = ec[n_ec - 1]
        size = min(np.int64(rel), n - lo)
        g[G_UNDEFINED] = max(g[G_UNDEFINED], 1.0 if rel > n - lo else 0.0)
        ful = g[G_FUL_RET] + g[G_FUL_IMP] - g[G_LAST_FUL]
        for i in range(n):
            if d[i] < n_ret:
                ful += _above_count(d, lo, lo + size, d[i])
        g[G_RN_FUL] = ful
        g[G_RN_POSS] = total - g[G_LAST_ALL] + n * size
    rel_ret, nonrel_ret = g[G_REL_RET], g[G_NONREL_RET]
    if rel_ret >= nonrel_ret:
        g[G_RNR_FUL] = g[G_FUL_RET] + rel_ret * (rel_ret - nonrel_ret)
        g[G_RNR_POSS] = g[G_POSS_RET] + rel * (rel_ret - nonrel_ret)
    else:
        lo = ec[n_ec - 1]
        g[G_UNDEFINED] = max(g[G_UNDEFINED], 1.0 if rel_ret > n - lo else 0.0)
        size = min(np.int64(rel_ret), _count_below(d, lo, n, n_ret))
        ful = g[G_FUL_RET] - g[G_LAST_FUL_RET]
        for i in range(n):
            if d[i] < n_ret:
                ful += _above_count(d, lo, lo + size, d[i])
        g[G_RNR_FUL] = ful
        g[G_RNR_POSS] = g[G_POSS_RET] - g[G_LAST_RET] + (rel_ret + nonrel_ret) * size


@jit
def _ec_pairs(n, d, ec, counts):
    """Count every (preferred, other) pair of a judgment group of classes into ``counts``
    (by position)."""
    k = 0
    while ec[k] < n:
        for i in range(ec[k], ec[k + 1]):  # (a row at a time: 5x faster than a column)
            for j in range(ec[k + 1], n):
                _count_pair(counts, d[i], d[j])
        k += 1


@helper
def _distinct_pairs(s):
    """The pair measures' sums and counts of a query stating each pair once: a pair's share
    is 1 when fulfilled, else 0, so the sums are the fulfilled pairs (exact in any order)."""
    s[PAIR_SUM_RET] = s[FUL_RET]
    s[PAIR_N_RET] = s[POSS_RET]
    s[PAIR_SUM_IMP] = s[FUL_RET] + s[FUL_IMP]
    s[PAIR_N_IMP] = s[POSS_RET] + s[POSS_IMP]
    s[PAIR_N] = s[POSS_RET] + s[POSS_IMP] + s[NOT_OCCUR]


@jit
def _pair_sums(counts, n_ret, s):
    """The pair measures' sums and counts from the pair counts (``counts[x, y]``: the
    groups preferring position x to y), as m_prefs_pair*.c's three loops sum them: the pairs
    x < y both retrieved, then x retrieved and y not, then neither."""
    n = counts.shape[0]
    total = 0.0
    stated = np.zeros(3)
    for x in range(n_ret):
        total, stated[0] = _row_pairs(counts, x, x + 1, n_ret, total, stated[0])
    s[PAIR_SUM_RET] = total
    for x in range(n_ret):
        total, stated[1] = _row_pairs(counts, x, n_ret, n, total, stated[1])
    s[PAIR_SUM_IMP] = total
    for x in range(n_ret, n):
        _, stated[2] = _row_pairs(counts, x, x + 1, n, 0.0, stated[2])
    s[PAIR_N_RET] = stated[0]
    s[PAIR_N_IMP] = stated[0] + stated[1]
    s[PAIR_N] = stated[0] + stated[1] + stated[2]


@helper
def _row_pairs(counts, x, lo, hi, total, stated):
    """(``total`` plus the shares of the pairs (x, y), ``lo <= y < hi``, stated by some
    group, and ``stated`` plus their number): a pair's share c[x][y] / (c[x][y] +
    c[y][x])."""
    for y in range(lo, hi):
        forward, backward = np.int64(counts[x, y]), np.int64(counts[y, x])
        if forward + backward > 0:
            stated += 1.0
            total += forward / (forward + backward)
    return total, stated


@helper
def _count_pair(counts, a, b):
    """One more group prefers position a to b (16-bit counts wrap at 65536 to 0, as
    trec_eval's; 8-bit counts are used where no count reaches 256)."""
    counts[a, b] = (np.int64(counts[a, b]) + 1) & 0xFFFF


# -- preference graphs (a judgment group of several subgroups) ------------------------------
@jit
def _graph_group(start, end, levels, subgroups, d, n_ret, local, mark, stamp, g):
    """Count a judgment group of several subgroups (see the module doc); returns (error
    code, the closed graph's bit rows, its documents' positions)."""
    docs = _graph_docs(end - start, d, mark, stamp, local)
    m = len(docs)
    t = _count_below(docs, 0, m, n_ret)
    rel = np.full(m, -1.0)
    bits = np.zeros((0, 0), dtype=np.uint64)
    for r in range(start, end):
        i = local[d[r - start]]
        if (rel[i] > 0.0 and levels[r] == 0.0) or (rel[i] == 0.0 and levels[r] > 0.0):
            return ERROR_ZERO, bits, docs
        rel[i] = levels[r]
    bits = _graph_edges(start, end, levels, subgroups, d, local, m)
    _close(bits)
    for i in range(m):
        if (bits[i, i >> 6] >> np.uint64(i & 63)) & np.uint64(1):
            return ERROR_CYCLE, bits, docs
    _graph_counts(bits, rel, t, g)
    _graph_rnonrel(bits, rel, t, g)
    return 0, bits, docs


@jit
def _graph_pairs(bits, docs, counts):
    """Count every (preferred, other) pair of a closed graph into ``counts`` (by
    position)."""
    m = len(docs)
    for i in range(m):
        for j in range(m):
            if (bits[i, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
                _count_pair(counts, docs[i], docs[j])


@jit
def _graph_docs(n, d, mark, stamp, local):
    """The distinct positions of ``d[:n]``, sorted; ``local[p]`` their index."""
    here = stamp[0]
    stamp[0] += 1
    docs = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if mark[d[i]] != here:
            mark[d[i]] = here
            docs[m] = d[i]
            m += 1
    docs = np.sort(docs[:m])
    for i in range(m):
        local[docs[i]] = i
    return docs


@jit
def _graph_edges(start, end, levels, subgroups, d, local, m):
    """Bit rows of the preferences each subgroup states: ``bits[i]`` holds j when i is
    preferred to j (a document is never its own)."""
    bits = np.zeros((m, (m + 63) // 64), dtype=np.uint64)
    for r in range(start, end):
        i = local[d[r - start]]
        j = r + 1
        while j < end and subgroups[j] == subgroups[r] and levels[j] == levels[r]:
            j += 1
        while j < end and subgroups[j] == subgroups[r]:
            k = local[d[j - start]]
            if k != i:
                bits[i, k >> 6] |= np.uint64(1) << np.uint64(k & 63)
            j += 1
    return bits


@jit
def _close(bits):
    """The transitive closure of the bit rows, in place (Warshall)."""
    m, words = bits.shape
    for k in range(m):
        word, bit = k >> 6, np.uint64(k & 63)
        for i in range(m):
            if (bits[i, word] >> bit) & np.uint64(1):
                for w in range(words):
                    bits[i, w] |= bits[k, w]


@helper
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@helper
def _bits_in(row, keep, lo, hi):
    """How many bits of ``row & keep`` lie in ``lo:hi``."""
    total = 0
    for w in range(lo >> 6, (hi + 63) >> 6):
        word = row[w] & keep[w]
        first, past = w << 6, (w + 1) << 6
        if lo > first:
            word &= ~np.uint64(0) << np.uint64(lo - first)
        if hi < past:
            word &= (np.uint64(1) << np.uint64(hi - first)) - np.uint64(1)
        total += _popcount(word)
    return total


@jit
def _graph_counts(bits, rel, t, g):
    """The pair counts of a closed graph whose documents ``0 .. t - 1`` are retrieved (in
    rank order), and its relevant and non-relevant documents."""
    m = len(rel)
    every = np.full(bits.shape[1], ~np.uint64(0))
    for i in range(m):
        row = bits[i]
        if i < t:
            g[G_POSS_RET] += _bits_in(row, every, 0, t)
            g[G_FUL_RET] += _bits_in(row, every, i + 1, t)
            implied = _bits_in(row, every, t, m)
            g[G_FUL_IMP] += implied
            g[G_POSS_IMP] += implied
        else:
            g[G_POSS_IMP] += _bits_in(row, every, 0, t)
            g[G_NOT_OCCUR] += _bits_in(row, every, t, m)
        if rel[i] > 0.0:
            g[G_REL] += 1.0
            g[G_REL_RET] += 1.0 if i < t else 0.0
        elif rel[i] == 0.0:
            g[G_NONREL] += 1.0
            g[G_NONREL_RET] += 1.0 if i < t else 0.0


@jit
def _graph_rnonrel(bits, rel, t, g):
    """prefs_avgjg_Rnonrel's and its _ret form's counts of a preference graph: recounted
    without the non-relevant documents after the first R (by position) when they
    outnumber the relevant ones (_ret: among the retrieved ones, R being the whole group's
    relevant count, as trec_eval's recount takes it)."""
    m = len(rel)
    rel_n, nonrel_n = g[G_REL], g[G_NONREL]
    if rel_n >= nonrel_n:
        g[G_RN_FUL] = g[G_FUL_RET] + g[G_FUL_IMP] + g[G_REL_RET] * (rel_n - nonrel_n)
        g[G_RN_POSS] = g[G_POSS_RET] + g[G_POSS_IMP] + g[G_NOT_OCCUR] + rel_n * (rel_n -
                                                                                 nonrel_n)
    else:
        keep = _kept(rel, m, rel_n)
        for i in range(m):
            if (keep[i >> 6] >> np.uint64(i & 63)) & np.uint64(1):
                g[G_RN_POSS] += _bits_in(bits[i], keep, 0, m)
                if i < t:
                    g[G_RN_FUL] += _bits_in(bits[i], keep, i + 1, m)
    rel_ret, nonrel_ret = g[G_REL_RET], g[G_NONREL_RET]
    if rel_ret >= nonrel_ret:
        g[G_RNR_FUL] = g[G_FUL_RET] + rel_ret * (rel_ret - nonrel_ret)
        g[G_RNR_POSS] = g[G_POSS_RET] + rel_n * (rel_ret - nonrel_ret)
    else:
        keep = _kept(rel, t, rel_n)
        for i in range(t):
            if (keep[i >> 6] >> np.uint64(i & 63)) & np.uint64(1):
                g[G_RNR_POSS] += _bits_in(bits[i], keep, 0, t)
                g[G_RNR_FUL] += _bits_in(bits[i], keep, i + 1, t)


@jit
def _kept(rel, scan, rel_n):
    """Bits of the documents a recount keeps: all but the non-relevant ones from the
    (R + 1)-th non-relevant one among the first ``scan`` documents on."""
    m = len(rel)
    keep = np.zeros((m + 63) // 64, dtype=np.uint64)
    seen = 0
    cut = scan
    for i in range(scan):
        if rel[i] == 0.0:
            seen += 1
            if seen == rel_n + 1:
                cut = i
                break
    for i in range(m):
        if not (i >= cut and rel[i] == 0.0):
            keep[i >> 6] |= np.uint64(1) << np.uint64(i & 63)
    return keep


# -- values -------------------------------------------------------------------------------
@helper
def prefs_value(kind, s):
    """Measure ``kind`` of a query's statistics ``s``, as m_prefs_*.c compute it."""
    ful, ful_ret = s[FUL_RET] + s[FUL_IMP], s[FUL_RET]
    poss = s[POSS_RET] + s[POSS_IMP] + s[NOT_OCCUR]
    if kind == NUM_POSS:
        return poss
    if kind == NUM_FUL:
        return ful
    if kind == NUM_FUL_RET:
        return ful_ret
    if kind == SIMP:
        return ful / poss if poss > 0.0 else 0.0
    if kind == SIMP_RET:
        return ful_ret / s[POSS_RET] if s[POSS_RET] > 0.0 else 0.0
    if kind == SIMP_IMP:
        imp = s[POSS_RET] + s[POSS_IMP]
        return ful / imp if imp > 0.0 else 0.0
    if kind == PAIR:
        return s[PAIR_SUM_IMP] / s[PAIR_N] if s[PAIR_N] > 0.0 else 0.0
    if kind == PAIR_RET:
        return s[PAIR_SUM_RET] / s[PAIR_N_RET] if s[PAIR_N_RET] > 0.0 else 0.0
    if kind == PAIR_IMP:
        return s[PAIR_SUM_IMP] / s[PAIR_N_IMP] if s[PAIR_N_IMP] > 0.0 else 0.0
    if kind == AVGJG:
        total = s[AVG]
    elif kind == AVGJG_RET:
        total = s[AVG_RET]
    elif kind == AVGJG_IMP:
        total = s[AVG_IMP]
    elif kind == AVGJG_RNONREL:
        total = s[RNONREL]
    elif kind == AVGJG_RNONREL_RET:
        total = s[RNONREL_RET]
    else:
        return np.nan
    return total / s[N_JGS] if total > 0.0 else 0.0  # (a NaN sum: 0, as trec_eval's test)


@jit
def prefs_values(stats, kinds, out):
    """``out[e, m]``: measure ``kinds[m]`` of query ``e``'s statistics."""
    for e in range(stats.shape[0]):
        for m in range(len(kinds)):
            out[e, m] = prefs_value(kinds[m], stats[e])
