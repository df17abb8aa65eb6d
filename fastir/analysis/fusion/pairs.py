"""The union of the runs' (query, doc) pairs: each run's rows ranked per query and matched
with the other runs' docs, query by query in one parallel kernel.

The runs' columns are concatenated once (``docs``, ``scores``: one row per run row, run
after run); nothing else is copied per input row. Per query, each run's rows are ranked
(:mod:`fastir.model.ranking`), cut at the depth, and their docs matched in a hash table of
the query's own docs: no global numbering of the doc ids. A run's rows of a query that are
in ranking order already (as a run file has them) are read where they are (:data:`Sources`);
whether they are is known from :meth:`Run.score_order`, which each run computes once.
"""

import threading
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import helper, pjit, prange, python_variant
from fastir.model.data import Run
from fastir.model.errors import ranked_twice
from fastir.model.ids import (
    HASH_KEY,
    Ids,
    _keys,
    id_equal,
    id_hash,
    intern_blocks,
    order_keys,
    rows_of,
)
from fastir.model.join import table_size
from fastir.model.ranking import (
    DESCENDING,
    LEVEL,
    RankKey,
    python_ranked,
    rank_rows,
    rank_segments,
    ranks_before,
    sort_ids,
)


class Pairs:
    """The union of the runs' (query, doc) pairs, and each run's kept rows ranked.

    Queries (``query_ids``, the union, in trec_eval's order) come one after another; within
    a query, run after run; within a run, its kept rows in ranked order (score descending,
    ties by doc id descending; the top ``depth``). Query ``q``'s rows of run ``r`` are
    ``run_bounds[q * n_runs + r]:run_bounds[q * n_runs + r + 1]``; per row, ``sources``
    says where it is in ``docs`` and ``scores`` (the runs' columns, concatenated; as an
    array: :meth:`source_rows`) and ``local_pair`` is its doc's place among its query's
    pairs (int32 where they fit: half the memory to write and read). Query ``q``'s pairs are
    ``pair_bounds[q]:pair_bounds[q + 1]``, numbered in the order the runs first retrieve
    their docs (run by run, rank by rank); ``pair_src[p]`` is a row of pair ``p``'s doc.
    ``layout`` holds ``n_runs``, ``run_bounds``, ``local_pair`` and ``pair_bounds`` as the
    fusion kernels take them (:data:`Layout`).
    """

    def __init__(self, runs, depth):
        self.n_runs = n_runs = len(runs)
        self.runs = runs
        scores = Concatenation([r.scores for r in runs])  # (beside the steps below)
        queries = one_kind([r.query_ids for r in runs])
        q_codes, q_first = _codes(queries)
        self.query_ids, q_rank = _id_ranks(queries, q_first)
        n_queries = len(self.query_ids)
        self.docs = one_kind([r.doc_ids for r in runs])
        self.run_offsets = np.cumsum([0] + [len(r.scores) for r in runs])
        seg_lo = np.zeros(n_queries * n_runs, dtype=np.int64)
        seg_hi = np.zeros(n_queries * n_runs, dtype=np.int64)
        q_offset = np.cumsum([0] + [r.n_queries for r in runs])
        score_orders = np.zeros(n_queries * n_runs, dtype=np.uint8)  # (DESCENDING if absent)
        for i, r in enumerate(runs):
            segment = q_rank[q_codes[q_offset[i]:q_offset[i + 1]]] * n_runs + i
            seg_lo[segment] = r.starts + self.run_offsets[i]
            seg_hi[segment] = r.stops + self.run_offsets[i]
            score_orders[segment] = r.score_order()
        kept = seg_hi - seg_lo if depth is None else np.minimum(seg_hi - seg_lo, depth)
        self.run_bounds = np.concatenate(([0], np.cumsum(kept)))
        n_rows = int(self.run_bounds[-1])
        query_rows = self.run_bounds[::n_runs]  # (n_queries + 1)
        self.chunks = _jit.chunk_bounds(np.diff(query_rows), _jit.n_threads())
        self.sources = Sources(np.empty(n_rows, dtype=np.int64), seg_lo,
                               score_orders == DESCENDING)
        widest = int(np.diff(query_rows).max(initial=0))  # (no query has more pairs)
        self.local_pair = np.empty(n_rows, dtype=np.int32 if widest < 2**31 else np.int64)
        n_pairs = np.empty(n_queries, dtype=np.int64)
        first_src = np.empty(n_rows, dtype=np.int64)
        duplicate = np.full(n_queries * n_runs, -1, dtype=np.int64)
        self.scores = scores.result()
        _jit.launch(_pair_rows, self.chunks, n_runs, self.sources, score_orders == LEVEL,
                    seg_hi, self.run_bounds, self.scores, self.docs.args(), HASH_KEY,
                    Paired(self.local_pair, n_pairs, first_src, duplicate))
        self._refuse_duplicates(duplicate)
        self.pair_bounds = np.concatenate(([0], np.cumsum(n_pairs)))
        self.layout = Layout(n_runs, self.run_bounds, self.local_pair, self.pair_bounds)
        self.n_pairs = int(self.pair_bounds[-1])
        self.candidates = n_pairs  # (per query)
        firsts = self.chunks * n_runs  # (each chunk's pairs from its first row on)
        self.pair_src = first_src[rows_of(self.run_bounds[firsts[:-1]], np.diff(
            self.pair_bounds[self.chunks]))]
        self.pair_docs = self.docs.take(self.pair_src)

    def _refuse_duplicates(self, duplicate):
        """A run that ranks a doc twice for a query: refused, naming it (first by run)."""
        found = np.flatnonzero(duplicate >= 0)
        if not len(found):
            return
        segment = found[np.argmin(found % self.n_runs)]
        r = int(segment % self.n_runs)
        query = self.query_ids.take([segment // self.n_runs]).tolist()[0]
        row = int(duplicate[segment] - self.run_offsets[r])
        raise ValueError(f"runs: run {r}: {ranked_twice(self.runs[r], query, row)}")

    # -- per row and per pair, as arrays (for numpy callers) ----------------------------
    def _per_row(self, per_segment):
        return np.repeat(per_segment, np.diff(self.run_bounds))

    @property
    def run_of(self):
        """Each row's run."""
        return self._per_row(np.tile(np.arange(self.n_runs), len(self.query_ids)))

    @property
    def row_query(self):
        """Each row's query."""
        return self._per_row(np.repeat(np.arange(len(self.query_ids)), self.n_runs))

    @property
    def length(self):
        """Each row's number of kept rows of its run and query."""
        return self._per_row(np.diff(self.run_bounds))

    def source_rows(self, rows=None):
        """The rows in ``docs`` and ``scores`` of the kept rows ``rows`` (default: all)."""
        rows = np.arange(len(self.local_pair)) if rows is None else np.asarray(rows)
        segment = np.searchsorted(self.run_bounds, rows, side="right") - 1
        sources = self.sources
        return np.where(sources.in_place[segment],
                        sources.seg_lo[segment] + rows - self.run_bounds[segment],
                        sources.src[rows])

    @property
    def rank(self):
        """Each row's rank (from 1) in its run's ranking of its query."""
        starts = self.run_bounds[:-1]
        return np.arange(len(self.local_pair)) - self._per_row(starts) + 1

    @property
    def pair(self):
        """Each row's pair."""
        return self.local_pair + self.pair_bounds[:-1][self.row_query]

    @property
    def pair_query(self):
        """Each pair's query."""
        return np.repeat(np.arange(len(self.query_ids)), self.candidates)

    def doc_order(self):
        """Each pair's doc as its rank among the distinct docs in id order."""
        codes, first = _codes(self.pair_docs)
        return _id_ranks(self.pair_docs, first)[1][codes]

    def candidate_arrays(self):
        """Query ids and doc ids of every pair, as arrays for :meth:`Evaluator.bind`."""
        def array(ids, index=None):
            ids = ids if index is None else ids.take(index)
            if ids.is_int and not ids.text:
                return ids.values
            return np.array(ids.tolist(), dtype=object)
        return array(self.query_ids, self.pair_query), array(self.pair_docs)

    def where(self, row=None, pair=None):
        """``run r, query 'q' doc 'd'`` of a row (or ``query 'q' doc 'd'`` of a pair), for
        messages."""
        if pair is None:
            segment = int(np.searchsorted(self.run_bounds, row, side="right")) - 1
            q = segment // self.n_runs
            pair = self.pair_bounds[q] + self.local_pair[row]
        q = int(np.searchsorted(self.pair_bounds, pair, side="right")) - 1
        query = self.query_ids.take([q]).tolist()[0]
        doc = self.pair_docs.take([pair]).tolist()[0]
        return (f"run {segment % self.n_runs}, " if row is not None else "") + \
            f"query {query!r} doc {doc!r}"

    def ranked(self, scores):
        """The pairs of each query ranked by ``scores`` (ties by doc id descending)."""
        chunks = _jit.chunk_bounds(self.candidates, _jit.n_threads())
        return _jit.launch(rank_segments, chunks, self.pair_bounds, scores,
                           self.pair_docs.args())

    def run(self, scores, name):
        """The fused run: pairs ranked within each query."""
        counts = self.candidates
        order = self.ranked(scores)
        starts = self.pair_bounds[:-1]
        keep = counts > 0
        return Run(self.query_ids.take(np.flatnonzero(keep)), starts[keep],
                   (starts + counts)[keep], self.pair_docs.take(order), scores[order],
                   name=name, source="fuse")


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


class Concatenation:
    """``np.concatenate(arrays)``, copied in a thread of its own when they are long (numpy
    lets go of the GIL as it copies: the copy goes on beside the caller's next steps, which
    copy too); :meth:`result` waits for it. Measured on the project machine (BENCHMARKS.md,
    2026-11-28): 10 runs' scores and doc ids of 698,000 rows each, 12-14 ms side by side
    against 16-20 ms one after the other."""

    THREAD_ROWS = 1_000_000  # (below, a thread's start costs more than it saves)

    def __init__(self, arrays):
        self._out, self._error, self._thread = None, None, None
        if sum(len(a) for a in arrays) < self.THREAD_ROWS:
            self._out = np.concatenate(arrays)
            return
        self._thread = threading.Thread(target=self._copy, args=(arrays,), daemon=True,
                                        name="fastir-concatenation")
        self._thread.start()

    def _copy(self, arrays):
        try:
            self._out = np.concatenate(arrays)
        except BaseException as error:  # (MemoryError: raised in the caller's thread)
            self._error = error

    def result(self):
        """The concatenated array (the copy's error, if it failed)."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


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


#: Where the kept rows are in the runs' concatenated columns (``Pairs.docs``,
#: ``Pairs.scores``): row ``i`` of segment ``s`` (run ``s % n_runs`` of query ``s //
#: n_runs``; its first kept row ``lo``) is ``seg_lo[s] + i - lo`` when ``in_place[s]`` (the
#: run's rows of that query were in ranking order: read where they are), else ``src[i]``
#: (written only for the other segments).
Sources = namedtuple("Sources", "src seg_lo in_place")

#: The pairs as the fusion kernels read them (:class:`Pairs`' ``layout``): ``n_runs``; per
#: segment ``s`` (run ``s % n_runs`` of query ``s // n_runs``) its kept rows
#: ``run_bounds[s]:run_bounds[s + 1]``; per kept row its doc's place among its query's pairs
#: (``pair``: ``Pairs.local_pair``); per query its pairs ``pair_bounds[q]:pair_bounds[q +
#: 1]``. (Where the kept rows are, :data:`Sources`, comes apart: numba's parallel loops take
#: no namedtuple within a namedtuple, numba issue 10139.)
Layout = namedtuple("Layout", "n_runs run_bounds pair pair_bounds")

#: What :func:`_pair_rows` writes: per kept row its doc's place among its query's pairs
#: (``pair``); per query its number of pairs (``n_pairs``) and a row of each pair's doc
#: (``first_src``: a chunk's pairs one after another from its first row on); per segment a
#: row whose doc the run ranked before, or -1 (``duplicate``).
Paired = namedtuple("Paired", "pair n_pairs first_src duplicate")

#: :func:`_pair_query`'s scratch, one set per chunk of queries (see its doc).
PairScratch = namedtuple("PairScratch", "order buf table slot_hash slot_run pair_hash "
                         "last_run")


@helper
def segment_source(sources, s, lo):
    """Segment ``s``'s ``(in_place, offset)`` (``lo``: its first kept row), which
    :func:`source_row` reads a kept row's place with (the loops read the two once per
    segment, and branch on a constant)."""
    return sources.in_place[s], sources.seg_lo[s] - lo


@helper
def source_row(src, in_place, offset, i):
    """Kept row ``i``'s row in the runs' columns, given its segment's
    :func:`segment_source`: ``i + offset`` when the segment is read in place, else
    ``src[i]`` (``sources.src``)."""
    return i + offset if in_place else src[i]


@pjit
def _pair_rows(bounds, n_runs, sources, level, seg_hi, run_bounds, scores, docs, key, out):
    """Per query (chunks ``bounds[c]:bounds[c + 1]`` of queries), each run's rows
    ``seg_lo[s]:seg_hi[s]`` (``s = q * n_runs + r``; ``seg_lo`` of :data:`Sources`) ranked
    and cut to ``run_bounds[s + 1] - run_bounds[s]``, kept from ``run_bounds[s]`` on (where
    they are, ``sources.in_place[s]``, or their rows written to ``sources.src``;
    ``in_place[s]`` comes true for rows whose scores strictly descend, and ``level[s]``
    says that equal scores leave it to their doc ids: :meth:`Run.score_order`), and each
    row's doc matched with the query's docs so far (``out.pair``: its place among them).
    Per query: ``out.n_pairs`` and ``out.first_src`` (a row of each pair's doc), a chunk's
    pairs one after another from its first row on (the pages of the rest never touched);
    per (query, run), ``out.duplicate``: a row whose doc the run ranked before, or -1
    (``out``: a :data:`Paired`)."""
    pair, n_pairs, first_src, duplicate = out  # (as locals: see fastir.model.join)
    n_queries = len(n_pairs)
    seg_lo = sources.seg_lo
    longest = 0
    widest = 0
    for s in range(len(seg_lo)):
        longest = max(longest, seg_hi[s] - seg_lo[s])
    for q in range(n_queries):
        widest = max(widest, run_bounds[(q + 1) * n_runs] - run_bounds[q * n_runs])
    for c in prange(len(bounds) - 1):
        order = np.empty(longest, dtype=np.int64)
        buf = np.empty(longest, dtype=np.int64)
        table = np.empty(table_size(4 * widest), dtype=np.int64)
        slot_hash = np.empty(len(table), dtype=np.uint64)
        slot_run = np.empty(len(table), dtype=np.int64)
        pair_hash = np.empty(widest, dtype=np.uint64)
        last_run = np.empty(widest, dtype=np.int64)
        scratch = PairScratch(order, buf, table, slot_hash, slot_run, pair_hash, last_run)
        first = run_bounds[bounds[c] * n_runs]
        for q in range(bounds[c], bounds[c + 1]):
            _pair_query(q, n_runs, sources, level, seg_hi, run_bounds, scores, docs, key,
                        Paired(pair, n_pairs, first_src[first:], duplicate), scratch)
            first += n_pairs[q]


# The row loop is in a helper, called once per query: a kernel compiled with reference
# counting that calls helpers per row (those not inlined, taking arrays) increments and
# decrements each array on every call.
@helper
def _pair_query(q, n_runs, sources, level, seg_hi, run_bounds, scores, docs, key, out,
                scratch):
    """:func:`_pair_rows` of query ``q``, its pairs' first rows written from
    ``out.first_src[0]`` on (``scratch``: a :data:`PairScratch`). ``scratch.table`` holds
    pair numbers; ``slot_hash`` their hashes, so that a probe compares the hash without
    first reading the pair's; and ``slot_run`` the last run that ranked them, which finds a
    run's duplicates without a load that waits for the pair's number (measured: a quarter
    of the kernel's time when it was kept per pair)."""
    pair, n_pairs, first_src, duplicate = out
    order, buf, table, slot_hash, slot_run, pair_hash, last_run = scratch
    ranking = RankKey(scores, None, docs)
    seg_lo = sources.seg_lo
    longest = 0
    for s in range(q * n_runs, (q + 1) * n_runs):
        longest = max(longest, run_bounds[s + 1] - run_bounds[s])
    size = table_size(4 * longest)  # (8 slots a doc: few collisions; doubled as needed)
    mask = np.uint64(size - 1)
    for slot in range(size):
        table[slot] = -1
    n = 0
    for r in range(n_runs):
        s = q * n_runs + r
        at = run_bounds[s]
        ranked = sources.in_place[s] or (level[s] and _in_order(seg_lo[s], seg_hi[s],
                                                                ranking))
        sources.in_place[s] = ranked
        if not ranked:
            rank_rows(seg_lo[s], seg_hi[s], ranking, order, buf)
        lo = seg_lo[s]  # (read once: the stores below may alias it, for all numba knows)
        for i in range(run_bounds[s + 1] - at):
            row = lo + i if ranked else order[i]
            if not ranked:
                sources.src[at + i] = row
            h = id_hash(docs, row, key)
            slot = h & mask
            p = table[slot]
            while p >= 0 and not (slot_hash[slot] == h and (docs.is_int or id_equal(
                    docs, first_src[p], docs, row))):  # (int ids: see id_hash)
                slot = (slot + np.uint64(1)) & mask
                p = table[slot]
            if p < 0:
                p = n
                n += 1
                if 8 * n > size:
                    size *= 2
                    mask = np.uint64(size - 1)
                    _rehash(table, slot_hash, slot_run, size, pair_hash, n - 1, last_run)
                    slot = _free_slot(table, h & mask, mask)
                table[slot] = p
                slot_hash[slot] = h
                pair_hash[p] = h
                first_src[p] = row
            elif slot_run[slot] == r and duplicate[s] < 0:
                duplicate[s] = row
            slot_run[slot] = r
            pair[at + i] = p
    n_pairs[q] = n


@helper
def _in_order(lo, hi, ranking):
    """Whether the rows ``lo:hi`` are in ranking order already (none ranks before the row
    above it: the stable sort would keep them as they are)."""
    for row in range(lo + 1, hi):
        if ranks_before(ranking, row, row - 1):
            return False
    return True


@helper
def _rehash(table, slot_hash, slot_run, size, pair_hash, n, last_run):
    """Table ``table[:size]`` (and ``slot_hash``, ``slot_run``) of the pairs ``0:n`` (their
    hashes ``pair_hash``), from the table of half the size (``last_run``: scratch)."""
    for slot in range(size // 2):
        if table[slot] >= 0:
            last_run[table[slot]] = slot_run[slot]
    for slot in range(size):
        table[slot] = -1
    mask = np.uint64(size - 1)
    for p in range(n):
        slot = _free_slot(table, pair_hash[p] & mask, mask)
        table[slot] = p
        slot_hash[slot] = pair_hash[p]
        slot_run[slot] = last_run[p]


@helper
def _free_slot(table, slot, mask):
    """The first free slot from ``slot`` on (linear probing)."""
    while table[slot] >= 0:
        slot = (slot + np.uint64(1)) & mask
    return slot


@python_variant(_pair_rows)
def _pair_rows(bounds, n_runs, sources, level, seg_hi, run_bounds, scores, docs, key, out):
    """The same in Python: a sort per run and query, the query's docs in a dict."""
    pair, n_pairs, first_src, duplicate = out
    ranking_keys, ids, score = order_keys(docs), _keys(docs), scores.tolist()
    seg_lo = sources.seg_lo
    lo, hi, bound = seg_lo.tolist(), seg_hi.tolist(), run_bounds.tolist()
    for c in range(len(bounds) - 1):
        first = bound[bounds[c] * n_runs]
        for q in range(bounds[c], bounds[c + 1]):
            seen = {}  # doc -> (pair, last run)
            for r in range(n_runs):
                s = q * n_runs + r
                at = bound[s]
                ranked = python_ranked(range(lo[s], hi[s]), score, ranking_keys)
                sources.in_place[s] = ranked == list(range(lo[s], hi[s]))
                ranked = ranked[:bound[s + 1] - at]
                if not sources.in_place[s]:
                    sources.src[at:at + len(ranked)] = ranked
                for i, row in enumerate(ranked):
                    p, last = seen.get(ids[row], (len(seen), -1))
                    if last < 0:
                        first_src[first + p] = row
                    elif last == r and duplicate[s] < 0:
                        duplicate[s] = row
                    seen[ids[row]] = (p, r)
                    pair[at + i] = p
            n_pairs[q] = len(seen)
            first += len(seen)
