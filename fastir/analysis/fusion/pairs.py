"""The union of the runs' (query, doc) pairs: each run's rows ranked, numbered by pair.

Every method and normalisation is a few array operations over ``(n_runs, n_pairs)`` arrays
built from these rows (absent where a run did not retrieve a pair's doc).
"""

import numpy as np

from fastir import _jit
from fastir._jit import jit
from fastir.model.data import Run
from fastir.model.ids import Ids, intern_blocks
from fastir.model.ranking import rank_segments, sort_ids


class Pairs:
    """The union of the runs' (query, doc) pairs, and each run's rows in ranked order.

    Per row (a run's doc for a query, grouped by run then query, ranked): ``run_of``,
    ``score``, ``rank`` (from 1), ``segment`` (its (run, query) numbered densely),
    ``length`` (docs of its run and query) and ``pair``. Per pair: ``pair_query`` and
    ``pair_doc`` (ranks of the ids in ``query_ids`` and ``docs``, trec_eval's order); pairs
    are numbered query by query, so a query's pairs are ``pair_bounds[q]:pair_bounds[q+1]``.
    """

    def __init__(self, runs, depth):
        self.n_runs = len(runs)
        queries = one_kind([r.query_ids for r in runs])
        q_codes, q_first = _codes(queries)
        self.query_ids, q_rank = _id_ranks(queries, q_first)
        q_offset = np.cumsum([0] + [r.n_queries for r in runs])
        row_query, row_run, row_src = [], [], []
        for i, r in enumerate(runs):
            lengths = r.stops - r.starts
            row_query.append(q_rank[q_codes[q_offset[i]:q_offset[i + 1]]].repeat(lengths))
            row_src.append(rows_of(r.starts, lengths))
            row_run.append(np.full(int(lengths.sum()), i))
        docs = one_kind([r.doc_ids.take(s) for r, s in zip(runs, row_src)])
        d_codes, d_first = _codes(docs)
        self.docs, d_rank = _id_ranks(docs, d_first)
        query, run = np.concatenate(row_query), np.concatenate(row_run)
        score = np.concatenate([r.scores[s] for r, s in zip(runs, row_src)])
        doc = d_rank[d_codes]  # each row's doc as its rank in id order
        n_queries = len(self.query_ids)
        group = run * n_queries + query  # rows come run by run, query by query
        bounds = _bounds(group, self.n_runs * n_queries)
        order = _jit.launch(rank_segments, bounds, score, self.tie(doc))
        score, doc = score[order], doc[order]
        position = np.arange(len(group)) - bounds[group]
        if depth is not None:
            keep = position < depth
            run, score, doc, group, position = (a[keep] for a in (run, score, doc, group,
                                                                  position))
            bounds = _bounds(group, self.n_runs * n_queries)
        self.rank = position + 1
        new = np.concatenate(([True], group[1:] != group[:-1])) if len(group) else group > 0
        self.segment = np.cumsum(new) - 1  # rows' (run, query) numbered densely
        self.segment_starts = np.flatnonzero(new)
        self.run_of, self.score, self.row_query = run, score, group % max(n_queries, 1)
        self.pair, self.pair_query, self.pair_doc = _jit.select(_pair_ids, len(doc))(
            bounds, self.n_runs, n_queries, doc, len(self.docs))
        self.n_pairs = len(self.pair_query)
        self.candidates = np.bincount(self.pair_query, minlength=n_queries)
        self.pair_bounds = np.concatenate(([0], np.cumsum(self.candidates)))
        self.length = np.diff(bounds)[group]  # docs of the row's run and query

    def spread(self, row_values, fill=0.0, dtype=np.float64):
        """(n_runs, n_pairs): per-row values placed at their run and pair, ``fill``
        elsewhere."""
        out = np.full((self.n_runs, self.n_pairs), fill, dtype=dtype)
        out[self.run_of, self.pair] = row_values
        return out

    def run_lengths(self):
        """(n_runs, n_pairs): docs each run retrieved for each pair's query."""
        counts = np.zeros((self.n_runs, len(self.query_ids)))
        np.add.at(counts, (self.run_of, self.row_query), 1)
        return counts[:, self.pair_query]

    def candidate_arrays(self):
        """Query ids and doc ids of every pair, as arrays for :meth:`Evaluator.bind`."""
        def array(ids, index):
            if ids.is_int and not ids.text:
                return ids.values[index]
            return np.array(ids.take(index).tolist(), dtype=object)
        return array(self.query_ids, self.pair_query), array(self.docs, self.pair_doc)

    def tie(self, doc):
        """Docs (ranks in id order) as tie positions: their places in docno-descending
        order (see :data:`fastir.model.ranking.RankKey`)."""
        return len(self.docs) - 1 - doc

    def ranks_by(self, values):
        """Each row's rank (from 1) within its (run, query) by ``values`` descending, ties
        as fastir ranks them (doc id descending)."""
        bounds = np.append(self.segment_starts, len(values))
        order = _jit.launch(rank_segments, bounds, values, self.tie(self.pair_doc[self.pair]))
        rank = np.empty(len(values), dtype=np.int64)
        rank[order] = np.arange(len(values)) - self.segment_starts[self.segment[order]] + 1
        return rank

    def where(self, row=None, pair=None):
        """``run r, query 'q' doc 'd'`` of a row (or ``query 'q' doc 'd'`` of a pair), for
        messages."""
        p = self.pair[row] if pair is None else pair
        query = self.query_ids.take([self.pair_query[p]]).tolist()[0]
        doc = self.docs.take([self.pair_doc[p]]).tolist()[0]
        return (f"run {self.run_of[row]}, " if row is not None else "") + \
            f"query {query!r} doc {doc!r}"

    def run(self, scores, name):
        """The fused run: rows ranked within each query."""
        counts = self.candidates
        order = _jit.launch(rank_segments, self.pair_bounds, scores, self.tie(self.pair_doc))
        starts = self.pair_bounds[:-1]
        keep = counts > 0
        return Run(self.query_ids.take(np.flatnonzero(keep)), starts[keep],
                   (starts + counts)[keep], self.docs.take(self.pair_doc[order]),
                   scores[order], name=name, source="fuse")


def one_kind(columns):
    """Id columns as one column of one kind (integers match text by decimal strings)."""
    if not all(c.is_int for c in columns):
        ints = [c.as_canonical_ints() for c in columns]
        columns = ints if all(c is not None for c in ints) else [c.as_text() for c in columns]
    if columns[0].is_int:
        return Ids(values=np.concatenate([c.values for c in columns]),
                   text=any(c.text for c in columns))
    shift = np.cumsum([0] + [int(c.offsets[-1]) for c in columns])
    offsets = np.concatenate([c.offsets[:-1] + s for c, s in zip(columns, shift)] +
                             [shift[-1:]])
    return Ids(np.concatenate([c.data for c in columns]), offsets)


def _codes(column):
    """Per row, the code of its id (codes in first-seen order), and each code's first row."""
    block_first, block_code, first = intern_blocks(column.args())
    lengths = np.diff(np.append(block_first, len(column)))
    return np.repeat(block_code, lengths), first


def _id_ranks(column, first):
    """The distinct ids sorted in trec_eval's order, and each code's rank among them
    (``first``: each code's first row in ``column``)."""
    unique = column.take(first)
    order = _jit.select(sort_ids, len(unique))(unique.args())
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return unique.take(order), rank


def rows_of(starts, lengths):
    """The rows ``starts[q]:starts[q] + lengths[q]`` of every query, in query order."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


def _bounds(group, n_groups):
    """Row bounds of each group of rows sorted by group."""
    return np.concatenate(([0], np.cumsum(np.bincount(group, minlength=n_groups))))


@jit
def _pair_ids(bounds, n_runs, n_queries, doc, n_docs):
    """Number the distinct (query, doc) pairs of rows grouped by run then query (group
    ``r * n_queries + q`` is ``bounds[g]:bounds[g + 1]``): query by query, each query's
    docs in the order the runs first retrieve them. Returns each row's pair, and each
    pair's query and doc."""
    pair = np.empty(len(doc), dtype=np.int64)
    pair_query = np.empty(len(doc), dtype=np.int64)
    pair_doc = np.empty(len(doc), dtype=np.int64)
    slot = np.full(n_docs, -1, dtype=np.int64)
    n = 0
    for q in range(n_queries):
        first = n
        for r in range(n_runs):
            g = r * n_queries + q
            for i in range(bounds[g], bounds[g + 1]):
                if slot[doc[i]] < 0:
                    slot[doc[i]] = n
                    pair_doc[n] = doc[i]
                    pair_query[n] = q
                    n += 1
                pair[i] = slot[doc[i]]
        for p in range(first, n):
            slot[pair_doc[p]] = -1
    return pair, pair_query[:n].copy(), pair_doc[:n].copy()
