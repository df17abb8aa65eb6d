"""The join of preference judgments with a run, as trec_eval's form_prefs_counts.c does it.

Each run query is ranked by score descending with ties broken by document id *ascending*
(form_prefs_counts.c's own comparison; the other measures break ties descending: this is
their order, :mod:`fastir.model.ranking`, on the negated scores, read backwards) and cut to
``max_docs``. Every distinct judged document of the query then gets a position: the judged
documents the ranking holds come first, in rank order (0 .. n_retrieved - 1), then the
others in document id order. The preference measures compare documents by these positions
only.
"""

from collections import namedtuple
from typing import NamedTuple

import numpy as np

from fastir import _jit
from fastir._jit import chunk_bounds, helper, pjit, prange, python_variant
from fastir.model.errors import ranked_twice
from fastir.model.ids import (
    HASH_KEY,
    _keys,
    id_hash,
    order_keys,
)
from fastir.model.join import (
    RunRows,
    depth,
    empty_seen,
    evaluated_queries,
    judged_row,
    judged_table,
    seen_before,
    table_size,
)
from fastir.model.ranking import RankKey, rank_rows
from fastir.options import DEFAULT

#: The judged side of :func:`_position_kernel`: per evaluated query its row in the judged
#: documents (``query``); per such row ``q`` its documents ``indptr[q]:indptr[q + 1]``, each
#: with the ``hashes`` of its doc id.
JudgedRows = namedtuple("JudgedRows", "query indptr hashes")

#: What :func:`_position_kernel` writes (see :class:`PrefsJoined`).
PositionOutput = namedtuple("PositionOutput", "position n_retrieved duplicate")


class PrefsJoined(NamedTuple):
    """Positions of the judged documents of the evaluated queries.

    Attributes
    ----------
    query_ids : Ids
        Evaluated query ids, in trec_eval order.
    judged_query : ndarray of int64
        Each evaluated query's row in the judgments.
    in_run : ndarray of bool
    position : ndarray of int64
        Per distinct judged document (the judgments' :data:`~fastir.model.prefs.JudgedDocs`
        order), its position; -1 for queries not evaluated.
    n_retrieved : ndarray of int64
        Per evaluated query, the judged documents its ranking holds.
    duplicate : ndarray of int64
        Per evaluated query, a run row ranking a document the ranking holds already, or -1.
    twice : str or None
        What to say of the first of them (:func:`~fastir.model.errors.ranked_twice`).
    ignored_run_queries, missing_queries : list
    """

    query_ids: object
    judged_query: np.ndarray
    in_run: np.ndarray
    position: np.ndarray
    n_retrieved: np.ndarray
    duplicate: np.ndarray
    twice: str
    ignored_run_queries: list
    missing_queries: list


def join_prefs(judged, run, options=DEFAULT):
    """Rank ``run`` as form_prefs_counts.c does and position the judged documents.

    ``judged`` is a :class:`~fastir.model.data.Qrels` of each query's distinct judged
    documents (:meth:`fastir.model.prefs.Prefs.judged`); ``options``' ``max_docs`` and
    ``missing`` as for :func:`fastir.model.join.join` (``"zero"``: a judged query absent
    from the run is evaluated, with no document retrieved; ``judged_only`` does not apply).
    """
    limit = depth(options)
    query_ids, judged_query, run_query, lengths, ignored, missing_queries = \
        evaluated_queries(judged, run, options.missing)
    q_docs, r_docs, row_hash = judged.docs_matching(run.doc_ids)
    position = np.full(len(judged.labels), -1, dtype=np.int64)
    n_retrieved = np.zeros(len(run_query), dtype=np.int64)
    duplicate = np.full(len(run_query), -1, dtype=np.int64)
    bounds = chunk_bounds(lengths + np.diff(judged.indptr)[judged_query], _jit.n_threads())
    _jit.launch(_position_kernel, bounds, RunRows(run_query, run.starts, run.stops, -run.scores),
                r_docs.args(), JudgedRows(judged_query, judged.indptr, row_hash),
                q_docs.args(), HASH_KEY, limit, int(lengths.max(initial=0)),
                PositionOutput(position, n_retrieved, duplicate))
    first = np.flatnonzero(duplicate >= 0)[:1]
    twice = ranked_twice(run, query_ids[int(first[0])], int(duplicate[first[0]])) \
        if len(first) else None
    return PrefsJoined(query_ids, judged_query, run_query >= 0, position,
                       n_retrieved, duplicate, twice, ignored, missing_queries)


@helper
def rank_rows_ascending(start, stop, reversed_key, order, buf):
    """Write into ``order[:n]`` the rows ``start:stop`` in form_prefs_counts.c's order: score
    descending, then docno ascending. ``reversed_key``: a RankKey of the negated scores, in
    whose ranking order (score ascending, docno descending) the rows are read backwards."""
    n = stop - start
    rank_rows(start, stop, reversed_key, order, buf)
    for i in range(n // 2):
        order[i], order[n - 1 - i] = order[n - 1 - i], order[i]


@pjit
def _position_kernel(bounds, run, docs, judged, j_docs, key, limit, scratch, out):
    """Rank each evaluated query (``run``: a :data:`~fastir.model.join.RunRows` of the
    run's scores negated), find its judged documents (``judged``: :data:`JudgedRows`) in the
    top ``limit`` and give every judged document its position (into ``out``, a
    :data:`PositionOutput`; see :func:`join_prefs`)."""
    # (the tuples' fields as locals: see fastir.model.join._join_kernel)
    run_query, r_starts, r_stops, negated = run
    judged_query, j_indptr, row_hash = judged
    position, n_retrieved, duplicate = out
    most_judged = 0
    for q in range(len(j_indptr) - 1):
        most_judged = max(most_judged, j_indptr[q + 1] - j_indptr[q])
    for c in prange(len(bounds) - 1):
        order = np.empty(scratch, dtype=np.int64)
        buf = np.empty(scratch, dtype=np.int64)
        marks = np.empty(table_size(scratch), dtype=np.uint64)  # (see seen_before)
        heads = np.empty(table_size(scratch), dtype=np.int64)
        chain = np.empty(scratch, dtype=np.int64)
        table = np.full(table_size(most_judged), -1, dtype=np.int64)
        reversed_key = RankKey(negated, None, docs)  # (made in the loop, as the join's)
        for e in range(bounds[c], bounds[c + 1]):
            q = judged_query[e]
            lo, hi = j_indptr[q], j_indptr[q + 1]
            r = run_query[e]
            found = 0
            if r >= 0:
                m = min(r_stops[r] - r_starts[r], limit)
                rank_rows_ascending(r_starts[r], r_stops[r], reversed_key, order, buf)
                t_mask, t_prefixes = judged_table(table, row_hash, lo, hi)
                s_marks, s_heads = empty_seen(marks, heads, m)
                for i in range(m):
                    row = order[i]
                    h = id_hash(docs, row, key)
                    first = seen_before(s_marks, s_heads, chain, order, docs, i, h)
                    if first >= 0:
                        duplicate[e] = first
                        break
                    j = judged_row(table, t_mask, t_prefixes, row_hash, j_docs, docs, row, h)
                    if j >= 0:
                        position[j] = found
                        found += 1
            n_retrieved[e] = found
            for j in range(lo, hi):
                if position[j] < 0:
                    position[j] = found
                    found += 1


@python_variant(_position_kernel)
def _position_kernel(bounds, run, docs, judged, j_docs, key, limit, scratch, out):
    """The same in Python: a sort per query, the judged documents in a dict."""
    run_query, r_starts, r_stops, negated = run
    judged_query, j_indptr, _ = judged
    position, n_retrieved, duplicate = out
    keys = order_keys(docs)
    doc_keys = _keys(docs)
    judged_docs = _keys(j_docs)
    score = (-negated).tolist()
    for e, (r, q) in enumerate(zip(run_query.tolist(), judged_query.tolist())):
        lo, hi = int(j_indptr[q]), int(j_indptr[q + 1])
        where = {judged_docs[j]: j for j in range(lo, hi)}
        found = 0
        if r >= 0:
            rows = sorted(range(int(r_starts[r]), int(r_stops[r])),
                          key=lambda row: (-score[row], keys[row]))[:limit]
            seen = {}
            for row in rows:
                first = seen.setdefault(doc_keys[row], row)
                if first != row:
                    duplicate[e] = first
                    break
                j = where.get(doc_keys[row])
                if j is not None:
                    position[j] = found
                    found += 1
        n_retrieved[e] = found
        for j in range(lo, hi):
            if position[j] < 0:
                position[j] = found
                found += 1
