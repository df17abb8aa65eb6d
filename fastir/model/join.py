"""The join: rank each run query as trec_eval does and give every ranked position its label.

Done once per (qrels, run, options); every measure then reads only the joined arrays.

Ranking is score descending, ties by document id descending in ``strcmp`` order (or, with
``ties="input"``, in the run's own order), then truncation to ``max_docs`` (trec_eval
``-M``). Labels use trec_eval's codes: the qrels label
when it is >= 0, ``UNJUDGED`` (-2) for a pooled doc with a negative label and ``NOT_POOLED``
(-1) for a doc absent from the qrels, or the label ``unjudged`` gives it
(``unjudged=("relevant", label)``: the query's ideal ranking then holds it too,
``Joined.ideals``). With ``judged_only`` (``-J``) docs with a negative code are then
dropped, keeping the order. With ``ties="expected"`` each position also gets its tie
group (``Joined.groups``). On request, each ranked doc also gets its code in the whole
qrels (``Joined.anywhere``: 0 when any query judges it, ``NOT_POOLED`` when none does), for
the measures that count a doc any query judges as judged (BEIR's hole@k).
"""

from collections import namedtuple
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from fastir import _jit
from fastir._jit import chunk_bounds, helper, jit, pjit, prange, python_variant
from fastir.model.data import Ideals, InputError
from fastir.model.errors import ranked_twice
from fastir.model.ids import (
    HASH_KEY,
    _keys,
    common_kind,
    id_equal,
    id_hash,
    merge_sorted_ids,
    order_keys,
)
from fastir.model.ranking import RankKey, python_ranked, rank_rows
from fastir.options import DEFAULT

NOT_POOLED = -1
UNJUDGED = -2
NO_LIMIT = np.iinfo(np.int64).max

#: The run's side of the join: per evaluated query its run query (``query``, -1: absent);
#: per run query its rows ``starts[r]:stops[r]``; per row its ``scores`` (its doc ids are
#: a column of their own: numba's parallel loops take no namedtuple within a namedtuple,
#: numba issue 10139).
RunRows = namedtuple("RunRows", "query starts stops scores")

#: The qrels' side: per evaluated query its qrels query (``query``); per qrels query its
#: judgments ``indptr[q]:indptr[q + 1]``; per judgment its ``labels`` and the ``hashes`` of
#: its doc id (the ids: a column of the run's kind).
Judgments = namedtuple("Judgments", "query indptr labels hashes")

#: What the join writes (see :func:`join`): ``labels`` at the rankings' positions, per
#: evaluated query the labels ``kept`` (with -J), the ``duplicate`` row (-1: none) and the
#: documents ``added`` to its judgments (``unjudged``), with candidates, per position its
#: run row (``rows``) and its ``tie`` position, and with ``ties="expected"`` per position
#: its tie ``group`` (the position, before -J, of its group's first document) and per
#: evaluated query whether it is ``tied`` (:data:`TIED`, :data:`MIXED`, or 0).
JoinOutput = namedtuple("JoinOutput", "labels kept duplicate rows tie group added tied")

#: How the join labels and keeps the ranked documents: with ``judged_only`` (``-J``) it
#: drops those of negative code; with ``candidates`` it keeps the rows in input order (see
#: :func:`join`'s ``as_candidates``); a document absent from the judgments gets the code
#: ``unjudged`` (:data:`NOT_POOLED`, or the label of ``unjudged=("relevant", label)``).
JoinRules = namedtuple("JoinRules", "judged_only candidates unjudged")
TIED = 1  # a query with two documents of equal score
MIXED = 2  # and two of them of different label codes (their order can move a value)


@dataclass(frozen=True, eq=False)
class Joined:
    """Ranked labels of the evaluated queries, in CSR form: one value, every field given at
    construction (by :func:`join`; the views of a join, :meth:`at_positions`,
    :meth:`of_queries`, :func:`judged_anywhere`, take every field alike).

    Attributes
    ----------
    query_ids : Ids
        Evaluated query ids, in trec_eval order.
    indptr : ndarray of int64
        Ranked positions of query ``e`` are ``indptr[e]:indptr[e + 1]``.
    labels : ndarray of int32
        Label code of every ranked position (see module doc).
    qrels_query : ndarray of int64
        Row of each evaluated query in the qrels.
    in_run : ndarray of bool
        Whether each evaluated query has results in the run.
    ignored_run_queries : list
        Run queries without judgments (never scored).
    missing_queries : list
        Judged queries absent from the run (scored 0, or skipped with ``missing="skip"``).
    duplicate : ndarray of int64
        Per evaluated query, the run row it ranks twice, or -1 (``join(...,
        duplicates="mark")``).
    tied : ndarray of int8 or None
        With tie groups: per evaluated query :data:`TIED`, :data:`MIXED` (before
        ``judged_only``) or 0.
    ideals : Ideals or None
        With ``unjudged=("relevant", label)``: the ideal labels of the qrels with every
        unjudged retrieved document at that label (:func:`joined_ideals`).
    groups : ndarray of int32 (int64 for rankings beyond 2**31) or None
        With ``ties="expected"``: per ranked position its tie group, a number shared by
        the adjacent positions of equal score only.
    subtopic_codes : ndarray of int32 or None
        With subtopic qrels: per ranked position, the doc's place in its query's
        :class:`~fastir.model.subtopics.Subtopics` (or -1 / -2, as the labels).
    anywhere : ndarray of int32 or None
        With ``join(..., anywhere=True)``: per ranked position, 0 when some query of the
        qrels judges the doc (any label), ``NOT_POOLED`` when none does.
    rows, tie : ndarray of int64 or None
        With ``as_candidates``: per position its run row and its place in its query's
        docno-descending order.
    """

    query_ids: object
    indptr: np.ndarray
    labels: np.ndarray
    qrels_query: np.ndarray
    in_run: np.ndarray
    ignored_run_queries: list
    missing_queries: list
    duplicate: np.ndarray = None
    tied: np.ndarray = None
    ideals: object = None
    groups: np.ndarray = None
    subtopic_codes: np.ndarray = None
    anywhere: np.ndarray = None
    rows: np.ndarray = None
    tie: np.ndarray = None

    #: The fields with a value per ranked position, and per evaluated query.
    POSITIONS: ClassVar = ("labels", "groups", "subtopic_codes", "anywhere", "rows", "tie")
    QUERIES: ClassVar = ("qrels_query", "in_run", "duplicate", "tied")

    def at_positions(self, index, indptr):
        """The same queries, their rankings now the positions ``index`` (in order; query
        ``e``'s are ``indptr[e]:indptr[e + 1]``): every per-position field taken alike."""
        taken = {name: getattr(self, name)[index] for name in self.POSITIONS
                 if getattr(self, name) is not None}
        return replace(self, indptr=indptr, **taken)

    def of_queries(self, chosen):
        """The evaluated queries ``chosen`` (their positions in this join, in order) alone,
        every per-query and per-position field taken alike (no ignored or missing queries:
        a part of the evaluation)."""
        lengths = np.diff(self.indptr)[chosen]
        indptr = np.zeros(len(chosen) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        taken = {name: getattr(self, name)[chosen] for name in self.QUERIES
                 if getattr(self, name) is not None}
        positions = replace(self, indptr=indptr)  # (no field per position: none to take)
        if any(getattr(self, name) is not None for name in self.POSITIONS):
            positions = self.at_positions(np.repeat(self.indptr[chosen] - indptr[:-1], lengths)
                                          + np.arange(indptr[-1]), indptr)
        return replace(positions, query_ids=self.query_ids.take(chosen),
                       ignored_run_queries=[], missing_queries=[], **taken)


def join(qrels, run, options=DEFAULT, *, as_candidates=False, duplicates="raise",
         groups=False, anywhere=False):
    """Rank ``run`` and look every ranked doc up in ``qrels``.

    Parameters
    ----------
    qrels : Qrels
    run : Run
    options : Options
        The join reads three (:class:`fastir.options.Options`). ``max_docs``: keep only
        the first ``max_docs`` ranked docs of each query (trec_eval ``-M``).
        ``judged_only``: drop ranked docs absent from the qrels or with a negative label
        (trec_eval ``-J``). ``missing``: ``"zero"``, every judged query counts, one absent
        from the run has an empty ranking (trec_eval ``-c``); ``"skip"``, only queries in
        both count (trec_eval's default).
    as_candidates : bool
        Do not rank (the run's scores are ignored): keep each query's rows in input order,
        with their run row (``Joined.rows``) and their position in docno-descending order
        (``Joined.tie``), for re-ranking by other scores later (:class:`fastir.Evaluator`).
    options.ties, options.unjudged
        ``"input"``: equal scores keep the run's order (else doc id descending);
        ``"expected"``: ``Joined.groups`` marks the tie groups.
        ``("relevant", label)``: every retrieved doc absent from the qrels gets ``label``
        (``Joined.ideals``: the judgments with them).
    duplicates : {"raise", "mark"}
        A doc ranked twice in a query's ranking (after ``max_docs``) raises an
        :class:`InputError`, or (trec_eval's mode, which stops at that query) is marked in
        ``Joined.duplicate``: per evaluated query, the repeated run row or -1 (such a
        query's labels are incomplete).
    groups : bool
        Mark the tie groups (``Joined.groups``) whatever ``options.ties`` (which marks them
        when "expected").
    anywhere : bool
        Also look each ranked doc up in the whole qrels (``Joined.anywhere``): a second
        pass, over one table of every judgment.
    """
    limit = depth(options)
    judged_only = options.judged_only
    query_ids, qrels_query, run_query, lengths, ignored, missing_queries = evaluated_queries(
        qrels, run, options.missing)
    bounded = np.minimum(lengths, limit)
    indptr = np.zeros(len(run_query) + 1, dtype=np.int64)
    np.cumsum(bounded, out=indptr[1:])

    q_docs, r_docs, row_hash = qrels.docs_matching(run.doc_ids)
    scratch = int(lengths.max()) if len(lengths) else 0
    bounds = chunk_bounds(bounded, _jit.n_threads())
    rows_out = np.empty(indptr[-1] if as_candidates else 0, dtype=np.int64)
    tie_out = np.empty(indptr[-1] if as_candidates else 0, dtype=np.int64)
    marking = (groups or options.ties == "expected") and not as_candidates
    group_out = np.empty(indptr[-1] if marking else 0,  # (positions: int32 fits them all)
                         dtype=np.int32 if scratch < 2**31 else np.int64)
    added = np.zeros(len(run_query), dtype=np.int64)
    tied = np.zeros(len(run_query) if marking else 0, dtype=np.int8)
    scores = np.zeros(len(run.scores)) if as_candidates else run.scores
    rows = RunRows(run_query, run.starts, run.stops, scores)
    rank_docs = None if options.ties == "input" else r_docs.args()
    unjudged = options.unjudged_label

    def ranked(qrels_labels, main=True, judgments=None):
        """The ranked docs' codes looked up in ``qrels_labels`` of each query's judgments
        (or in ``judgments``), compacted with -J; the ``main`` labels (not subtopics' nor
        the whole qrels') with groups and unjudged documents relabelled."""
        labels = np.empty(indptr[-1], dtype=np.int32)
        kept = np.empty(len(run_query), dtype=np.int64)
        duplicate = np.full(len(run_query), -1, dtype=np.int64)
        if judgments is None:
            judgments = Judgments(qrels_query, qrels.indptr, qrels_labels, row_hash)
        rules = JoinRules(judged_only, as_candidates,
                          NOT_POOLED if unjudged is None or not main else unjudged)
        _jit.launch(_join_kernel, bounds, indptr, rows, r_docs.args(), rank_docs, judgments,
                    q_docs.args(), HASH_KEY, rules, scratch,
                    JoinOutput(labels, kept, duplicate, rows_out, tie_out,
                               group_out if main else group_out[:0], added,
                               tied if main else tied[:0]),
                    n_items=int(indptr[-1]) + len(run_query))
        dup = np.flatnonzero(duplicate >= 0)
        if len(dup) and duplicates == "raise":
            e = int(dup[0])
            raise InputError(ranked_twice(run, query_ids[e], int(duplicate[e])))
        if judged_only:
            if marking and main:  # (the groups of the kept positions)
                joined_groups.append(_jit.select(_compact)(indptr, group_out, kept)[1])
            return (*_jit.select(_compact)(indptr, labels, kept), duplicate)
        return indptr, labels, duplicate

    joined_groups = [group_out]
    ranked_indptr, labels, duplicate = ranked(qrels.labels)
    more = {}
    if marking:
        more["groups"], more["tied"] = joined_groups[-1], tied
    if unjudged is not None:
        more["ideals"] = joined_ideals(qrels, qrels_query, added, unjudged)
    if qrels.subtopics is not None and not as_candidates and unjudged is None:
        # (their -J compacts alike; relabelled unjudged documents would not)
        more["subtopic_codes"] = ranked(qrels.subtopics.codes, main=False)[1]
    if anywhere and judged_only:  # (every doc kept is judged; Hole refuses ``unjudged``)
        more["anywhere"] = np.zeros_like(labels)
    elif anywhere:  # every evaluated query looks its docs up in one table of every judgment
        n_judged = len(qrels.labels)
        every = Judgments(np.zeros_like(qrels_query), np.array([0, n_judged], np.int64),
                          np.zeros(n_judged, np.int32), row_hash)
        more["anywhere"] = ranked(None, main=False, judgments=every)[1]
    if as_candidates:
        more["rows"], more["tie"] = rows_out, tie_out
    return Joined(query_ids, ranked_indptr, labels, qrels_query, run_query >= 0, ignored,
                  missing_queries, duplicate, **more)


def joined_ideals(qrels, qrels_query, added, label):
    """The ideals (:data:`fastir.model.data.Ideals`: each qrels query's labels,
    descending) of ``qrels`` with ``added[e]`` more documents at ``label`` for the qrels
    query ``qrels_query[e]`` of each evaluated query: the judgments augmented with the
    unjudged retrieved documents (``unjudged=("relevant", label)``). The added labels go
    after the query's labels >= ``label`` (one pass, no sort)."""
    extra = np.zeros(len(qrels.indptr) - 1, dtype=np.int64)
    np.add.at(extra, qrels_query, added)
    old = qrels.ideal_labels()
    lengths = np.diff(qrels.indptr)
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths + extra, out=indptr[1:])
    query = np.repeat(np.arange(len(lengths)), lengths)
    at_least = np.bincount(query, weights=old >= label, minlength=len(lengths))
    rank = np.arange(len(old)) - qrels.indptr[query]
    shift = np.where(rank >= at_least[query], extra[query], 0)
    labels = np.full(indptr[-1], label, dtype=old.dtype)
    labels[indptr[query] + rank + shift] = old
    return Ideals(indptr, labels)


def depth(options):
    """How many ranked docs of each query the join keeps: ``options.max_docs``, or
    ``NO_LIMIT``."""
    max_docs = options.max_docs
    return NO_LIMIT if max_docs is None else int(min(max_docs, NO_LIMIT))


def evaluated_queries(qrels, run, missing):
    """The evaluated queries (judged, and with ``missing="skip"`` in the run too): (their
    ids, their qrels queries, their run queries or -1, their run rows (0 for -1), the run's
    queries without judgments, the judged queries absent from the run). ``qrels``: any
    judgments with ``query_ids``."""
    q_qids, r_qids = common_kind(qrels.query_ids, run.query_ids)
    merge = _jit.select(merge_sorted_ids, len(q_qids) + len(r_qids))
    in_qrels, in_run = merge(q_qids.args(), r_qids.args())
    judged = in_qrels >= 0
    ignored = r_qids.take(in_run[~judged]).tolist()
    missing_queries = q_qids.take(in_qrels[judged & (in_run < 0)]).tolist()
    keep = judged if missing == "zero" else judged & (in_run >= 0)
    qrels_query, run_query = in_qrels[keep], in_run[keep]
    lengths = np.zeros(len(run_query), dtype=np.int64)
    present = run_query >= 0
    lengths[present] = run.stops[run_query[present]] - run.starts[run_query[present]]
    return q_qids.take(qrels_query), qrels_query, run_query, lengths, ignored, missing_queries


def judged_anywhere(joined):
    """``joined`` with, for labels, each ranked doc's code in the whole qrels
    (``Joined.anywhere``): the ranking that the measures counting a doc any query judges as
    judged read. The queries are the same."""
    return replace(joined, labels=joined.anywhere)


def only_judged(joined):
    """``joined`` without the ranked documents of negative code (not in the qrels, or pooled
    and unjudged), each ranking's order kept: trec_eval's ``-J`` for the measures that ask
    for it alone (``judged_only=True``). The queries are the same."""
    keep = joined.labels >= 0
    indptr = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))[joined.indptr]
    return joined.at_positions(np.flatnonzero(keep), indptr)


@jit
def _compact(indptr, labels, kept):
    new_indptr = np.zeros_like(indptr)
    for e in range(len(kept)):
        new_indptr[e + 1] = new_indptr[e] + kept[e]
    new_labels = np.empty(new_indptr[-1], dtype=labels.dtype)
    for e in range(len(kept)):
        new_labels[new_indptr[e]:new_indptr[e + 1]] = labels[indptr[e]:indptr[e] + kept[e]]
    return new_indptr, new_labels


@jit
def table_size(n):
    """Slots of an open-addressing table for ``n`` entries: a power of two, at least 16 and
    twice ``n``."""
    size = 16
    while size < 2 * n:
        size *= 2
    return size


@pjit
def _join_kernel(bounds, indptr, run, docs, rank_docs, judgments, j_docs, key, rules, scratch,
                 out):
    """Rank each evaluated query's rows and label them (see :func:`join`): evaluated query
    ``e`` writes its ranking at ``indptr[e]:indptr[e + 1]`` of ``out`` (a
    :data:`JoinOutput`), each chunk ``bounds[c]:bounds[c + 1]`` of queries with its own
    scratch (``scratch``: the longest run query). ``docs`` and ``j_docs`` are the doc ids
    of the run's rows and of the judgments; ``rank_docs`` breaks ties (``docs``, or None:
    the rows' order). ``rules`` (:data:`JoinRules`): a doc absent from the judgments gets
    the code ``rules.unjudged`` (-1, or a label: counted in ``out.added``); with
    ``rules.judged_only`` those of negative code are dropped; with ``rules.candidates`` the
    rows keep their input order and each gets, in ``out.tie``, its position in the tie
    order (``run.scores`` are then all equal) and, in ``out.rows``, its run row. A
    non-empty ``out.group`` gets each kept position's tie group."""
    # The tuples' fields as locals: numba (0.68) drops a write through a namedtuple's field
    # (``out.labels[i] = x``) inside a parallel loop (numba issues 5872, 7135, 10338).
    run_query, r_starts, r_stops, scores = run
    qrels_query, q_indptr, q_labels, row_hash = judgments
    labels, kept, duplicate, rows_out, tie_out, group_out, added, tied = out
    judged_only, candidates, unjudged = rules
    grouping = len(group_out) > 0
    most_judged = 0
    for q in range(len(q_indptr) - 1):
        most_judged = max(most_judged, q_indptr[q + 1] - q_indptr[q])
    judged_size = table_size(most_judged)
    for c in prange(len(bounds) - 1):
        order = np.empty(scratch, dtype=np.int64)
        buf = np.empty(scratch, dtype=np.int64)
        marks = np.empty(table_size(scratch), dtype=np.uint64)  # (see seen_before)
        heads = np.empty(table_size(scratch), dtype=np.int64)
        chain = np.empty(scratch, dtype=np.int64)
        judged = np.full(judged_size, -1, dtype=np.int64)
        ranking = RankKey(scores, None, rank_docs)  # (made in the loop: see RunRows)
        tabled = -1  # (the qrels query in ``judged``: one table serves consecutive queries)
        q_mask = np.uint64(0)
        q_prefixes = np.uint64(0)
        for e in range(bounds[c], bounds[c + 1]):
            at = indptr[e]
            m = indptr[e + 1] - at
            kept[e] = 0
            r = run_query[e]
            if r < 0:
                continue
            start = r_starts[r]
            rank_rows(start, r_stops[r], ranking, order, buf)
            if candidates:
                _input_order(order, buf, start, m, tie_out[at:at + m], rows_out[at:at + m])
            q = qrels_query[e]
            if q != tabled:
                q_mask, q_prefixes = judged_table(judged, row_hash, q_indptr[q], q_indptr[q + 1])
                tabled = q
            q_marks, q_heads = empty_seen(marks, heads, m)
            n_kept = 0
            group = 0
            group_code = 0
            for i in range(m):
                row = order[i]
                h = id_hash(docs, row, key)
                first = seen_before(q_marks, q_heads, chain, order, docs, i, h)
                if first >= 0:
                    duplicate[e] = first
                    break
                code = _label_code(judged, q_mask, q_prefixes, row_hash, q_labels, j_docs, docs,
                                   row, h)
                if code == -1 and unjudged >= 0:
                    code = unjudged
                    added[e] += 1
                if grouping:
                    if i > 0 and scores[row] != scores[order[i - 1]]:
                        group = i
                    if group == i:
                        group_code = code
                    else:
                        tied[e] = max(tied[e], TIED if code == group_code else MIXED)
                if judged_only and code < 0:
                    continue
                labels[at + n_kept] = code
                if grouping:
                    group_out[at + n_kept] = group
                n_kept += 1
            kept[e] = n_kept


@helper
def _input_order(order, buf, start, m, tie, rows):
    """Rows ``start:start + m`` in input order (into ``order``, and ``rows``), each with, in
    ``tie``, its position in the ranking ``order`` held (``buf``: scratch)."""
    for p in range(m):
        buf[order[p] - start] = p
    for p in range(m):
        order[p] = start + p
        tie[p] = buf[p]
        rows[p] = start + p


@helper
def judged_table(judged, row_hash, q_lo, q_hi):
    """Fill ``judged`` with a small table (cache-resident, unlike an index of all the
    qrels) of the judgments ``q_lo:q_hi`` of one query: slot -> qrels row. Returns the
    table's slot mask and its hashes' prefixes: bit ``h >> 58`` set for each judgment's
    hash ``h`` (a doc whose bit is clear is not judged: with a few judgments, most docs
    are rejected without a probe)."""
    q_size = table_size(q_hi - q_lo)
    q_mask = np.uint64(q_size - 1)
    judged[:q_size] = -1
    prefixes = np.uint64(0)
    for j in range(q_lo, q_hi):
        slot = row_hash[j] & q_mask
        while judged[slot] >= 0:
            slot = (slot + np.uint64(1)) & q_mask
        judged[slot] = j
        prefixes |= np.uint64(1) << (row_hash[j] >> _PREFIX_SHIFT)
    return q_mask, prefixes


_PREFIX_SHIFT = np.uint64(58)  # (a hash's top 6 bits: a bit of a 64-bit word)


@jit
def empty_seen(marks, heads, m):
    """The parts of ``marks`` and ``heads`` (as long as the longest ranking's
    :func:`table_size`) of :func:`seen_before` for a ranking of ``m`` docs (its
    :func:`table_size`: at least 128 bits a doc), emptied."""
    size = table_size(m)
    for w in range(size):
        marks[w] = 0
        heads[w] = -1
    return marks[:size], heads[:size]


@helper
def seen_before(marks, heads, chain, order, docs, i, h):
    """The row ranked before position ``i`` with the same doc id as ``order[i]`` (hash
    ``h``), or -1 after adding position ``i`` to the tables (:func:`empty_seen`): a bit
    per value of a hash's low ``6 + log2(len(marks))`` bits (``marks``), and the positions
    chained by hash bucket (``heads``: a bucket's last position, -1: none; ``chain``: per
    position the previous of its bucket). A clear mark says "not seen" without a probe; a
    set one (a doc seen, or another hash with the same low bits: under one in 128) walks
    the positions of the hash's bucket."""
    word = (h >> np.uint64(6)) & np.uint64(len(marks) - 1)
    bit = np.uint64(1) << (h & np.uint64(63))
    bucket = h & np.uint64(len(heads) - 1)
    if marks[word] & bit:
        k = heads[bucket]
        while k >= 0:
            if id_equal(docs, order[k], docs, order[i]):
                return order[k]
            k = chain[k]
    marks[word] |= bit
    chain[i] = heads[bucket]
    heads[bucket] = i
    return -1


@helper
def _label_code(judged, mask, prefixes, row_hash, q_labels, j_docs, docs, row, h):
    """The label code of run row ``row`` (doc hash ``h``) in a query's table ``judged``."""
    j = judged_row(judged, mask, prefixes, row_hash, j_docs, docs, row, h)
    if j < 0:
        return -1
    label = q_labels[j]
    return label if label >= 0 else -2


@helper
def judged_row(judged, mask, prefixes, row_hash, j_docs, docs, row, h):
    """The judgment of run row ``row`` (doc hash ``h``) in a query's table ``judged`` (see
    :func:`judged_table`: its ``mask`` and ``prefixes``), or -1."""
    if not (prefixes >> (h >> _PREFIX_SHIFT)) & np.uint64(1):
        return -1
    slot = h & mask
    while judged[slot] >= 0:
        j = judged[slot]
        if row_hash[j] == h and id_equal(j_docs, j, docs, row):
            return j
        slot = (slot + np.uint64(1)) & mask
    return -1


@python_variant(_join_kernel)
def _join_kernel(bounds, indptr, run, docs, rank_docs, judgments, j_docs, key, rules, scratch,
                 out):
    """The join in Python: a sort per query, judgments in a dict."""
    judged_only, candidates, unjudged = rules
    ranking_keys = order_keys(docs) if rank_docs is not None else [0] * len(run.scores)
    docs = _keys(docs)
    judged_docs = _keys(j_docs)
    score_of, grade = run.scores.tolist(), judgments.labels.tolist()
    starts, stops, bounds_q = run.starts.tolist(), run.stops.tolist(), judgments.indptr.tolist()
    tabled, judgments_of = -1, {}
    for e, (r, q) in enumerate(zip(run.query.tolist(), judgments.query.tolist())):
        out.kept[e] = 0
        if r < 0:
            continue
        at, m = int(indptr[e]), int(indptr[e + 1] - indptr[e])
        rows = range(starts[r], stops[r])
        ranked = python_ranked(rows, score_of, ranking_keys)
        if candidates:  # input order; each row's position in docno-descending order
            for p, row in enumerate(ranked[:m]):
                out.tie[at + row - starts[r]] = p
            ranked = rows[:m]
            out.rows[at:at + m] = ranked
        if q != tabled:
            judgments_of = {judged_docs[j]: grade[j] for j in range(bounds_q[q], bounds_q[q + 1])}
            tabled = q
        seen = {}
        n_kept = 0
        group = 0
        group_code = 0
        for i, row in enumerate(ranked[:m]):
            first = seen.setdefault(docs[row], row)
            if first != row:
                out.duplicate[e] = first
                break
            label = judgments_of.get(docs[row])
            code = NOT_POOLED if label is None else label if label >= 0 else UNJUDGED
            if code == NOT_POOLED and unjudged >= 0:
                code = unjudged
                out.added[e] += 1
            if i > 0 and score_of[row] != score_of[ranked[i - 1]]:
                group = i
            if len(out.tied):
                if group == i:
                    group_code = code
                else:
                    out.tied[e] = max(out.tied[e], TIED if code == group_code else MIXED)
            if judged_only and code < 0:
                continue
            out.labels[at + n_kept] = code
            if len(out.group):
                out.group[at + n_kept] = group
            n_kept += 1
        out.kept[e] = n_kept
