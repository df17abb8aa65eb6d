"""Rank fusion (:func:`fuse`) and a search of fusion weights (:func:`optimize_fusion`); the
fused runs are written by :func:`fastir.write_run` (:mod:`fastir.io.writers`).

Runs are fused over the union of their (query, doc) pairs: each run becomes one dense row of
values over those pairs (absent where the run did not retrieve the doc), so that every method
is a few array operations in run order. Definitions follow ranx's (``ranx.fuse``):

* a run ranks its docs by score descending, ties by doc id descending (as trec_eval and
  :func:`fastir.evaluate`); ranks count from 1;
* ``sum``, ``wsum``, ``rrf``, ``wrrf``, ``borda``: an absent doc adds nothing (``borda``: it
  gets the run's unranked points, ``(n - m + 1) / 2`` for ``n`` candidates of the query and
  ``m`` docs of the run);
* ``max``, ``min``, ``med``, ``anz``: over the runs that retrieved the doc (ranx uses the
  sentinels -1e9 / 1e9 for max / min; fastir takes the true extreme);
* ``mnz`` and ``isr`` multiply the sum by the number of runs that retrieved the doc, ``log_isr``
  by its natural log: a doc only one run retrieved scores 0 under ``log_isr`` (as in ranx);
* ``wrrf`` is ``sum(w * (1 / (k + rank)))``; ``isr`` sums ``1 / rank**2``;
* ``rrf``, ``wrrf``, ``isr``, ``log_isr`` and ``borda`` read each run's ranks and which docs
  it retrieved: a normalisation does not change them.

Normalisations, per run and query over the run's docs (ranx's, with its floor of 1e-9 on
every denominator, so that equal scores normalise to 0 and ``max`` of all-negative scores
divides by 1e-9): ``min-max`` ``(s - min) / (max - min)``; ``zmuv`` ``(s - mean) / std``
(population std); ``sum`` ``(s - min) / (sum - min * m)``; ``max`` ``s / max``; ``rank``
``1 - (rank - 1) / m``; ``borda`` ``1 - (rank - 1) / n`` and, for the candidates the run did
not retrieve, ``0.5 - (m - 1) / (2 n)`` (so after it every run has every candidate).
"""


import numpy as np

from fastir import _jit
from fastir._jit import jit
from fastir.io.inputs import as_qrels, as_run, size_hint
from fastir.model.data import Qrels, Run
from fastir.model.ids import Ids, intern_blocks
from fastir.model.ranking import rank_segments, sort_ids
from fastir.output.tables import markdown_row

METHODS = {"rrf": "rrf", "wrrf": "wrrf", "sum": "sum", "combsum": "sum", "mnz": "mnz",
           "combmnz": "mnz", "max": "max", "combmax": "max", "min": "min", "combmin": "min",
           "med": "med", "combmed": "med", "anz": "anz", "combanz": "anz", "wsum": "wsum",
           "borda": "borda", "bordafuse": "borda", "isr": "isr", "log_isr": "log_isr"}
NORMS = {"min-max": "min-max", "min_max": "min-max", "zmuv": "zmuv", "z-score": "zmuv",
         "sum": "sum", "max": "max", "rank": "rank", "borda": "borda"}
_WEIGHTED = ("wsum", "wrrf")
_BY_RANK = ("rrf", "wrrf", "isr", "log_isr", "borda")  # read ranks, not (normalised) scores
_FLOOR = 1e-9  # ranx's floor on normalisation denominators
_HUGE = 2.0 ** 400  # scores beyond: scaled down before a normalisation (see _Pairs.normalised)
MAX_GRID_POINTS = 10**6  # the most weight vectors optimize_fusion's simplex grid may hold


def fuse(runs, method="rrf", *, weights=None, norm=None, k=60, depth=None, name=None):
    """Fuse runs into one :class:`Run`.

    Parameters
    ----------
    runs : list or dict
        Two or more runs (:class:`Run`, ``{query: {doc: score}}`` dict or path), or
        ``{name: run}``. A query absent from a run is one the run retrieved nothing for.
    method : str
        ``rrf``, ``wrrf``, ``sum`` (CombSUM), ``mnz``, ``max``, ``min``, ``med``, ``anz``,
        ``wsum``, ``borda``, ``isr``, ``log_isr`` (``combsum``... and ``bordafuse`` too).
    weights : sequence of float, optional
        One per run, for ``wsum`` and ``wrrf`` (default: 1 each); finite, of any sign (a
        negative weight subtracts the run).
    norm : str, optional
        Score normalisation first: ``min-max``, ``zmuv`` (z-score), ``sum``, ``max``,
        ``rank``, ``borda`` (default: none).
    k : float
        RRF's constant: a finite number, 0 or more.
    depth : int, optional
        Fuse only each run's top ``depth`` docs per query.
    name : str, optional
        The fused run's tag (default: the method).

    The module doc gives each definition. Scores must be finite; a normalisation is
    computed without overflow however large they are (``min-max`` of -1e308 and 1e308 is 0
    and 1), and a fused score beyond a double (``sum`` of 1e308 and 1e308) is refused, not
    returned as ``inf``.

    Examples
    --------
    >>> import fastir
    >>> a = {"q": {"d1": 3.0, "d2": 2.0}}
    >>> b = {"q": {"d2": 0.9, "d3": 0.1}}
    >>> fastir.fuse([a, b], "rrf", k=1).to_dict()
    {'q': {'d2': 0.8333333333333333, 'd1': 0.5, 'd3': 0.3333333333333333}}
    """
    method = _choice(method, METHODS, "method")
    norm = _norm(norm)
    k = _k(k)
    if name is not None and (not isinstance(name, str) or not name):
        raise TypeError(f"name: the fused run's tag, a non-empty string, got {name!r}")
    names, loaded = _load(runs)
    w = _weights(weights, len(loaded), method)
    depth = _depth(depth)
    with _jit.tier(sum(len(r) for r in loaded)):
        pairs = _Pairs(loaded, depth)
        values, present = pairs.normalised(norm, names)
        with np.errstate(over="ignore", invalid="ignore"):  # (refused just below)
            scores = _combine(method, values, present, pairs, w, k)
        _finite_fused(scores, pairs, method, norm, weights)
        return pairs.run(scores, name or method)


def optimize_fusion(qrels, runs, measure, method="wsum", norm="min-max", *, step=0.1,
                    grid=None, k=60, depth=None, test_queries=None, **options):
    """Search fusion weights on the simplex: the best of every weight vector of a grid.

    Every grid point is a weight vector of integer counts over ``1 / step`` (all the
    points with counts summing to ``round(1 / step)``: none lost to float rounding), in
    lexicographic order of the counts. The candidates (the union of the runs' docs) are
    joined with the qrels once (:meth:`fastir.Evaluator.bind`); each point then costs one
    re-scoring. Ties go to the first point in grid order.

    Parameters
    ----------
    qrels : Qrels, dict or path
    runs : list or dict
        As for :func:`fuse`.
    measure : str
        The measure to maximise (any name :func:`fastir.evaluate` takes).
    method : {"wsum", "wrrf"}
    norm : str or None
        As for :func:`fuse` (``wsum`` default ``min-max``, as ranx's).
    step : float
        Grid step; ``1 / step`` must be a whole number (0.1, 0.05, 0.25...), and the grid
        at most :data:`MAX_GRID_POINTS` points (refused up front beyond).
    grid : array-like, shape (n_points, n_runs), optional
        Weight vectors to try instead of the simplex.
    k, depth
        As for :func:`fuse`.
    test_queries : collection of query ids, optional
        Held out: the search runs on the other queries, and the table reports both sides.
    **options
        ``relevance_level``, ``missing``... as for :class:`fastir.Evaluator`.

    Returns
    -------
    FusionSearch
    """
    method = _choice(method, METHODS, "method")
    if method not in _WEIGHTED:
        raise ValueError(f"method: optimize_fusion searches the weights of 'wsum' or 'wrrf', "
                         f"got {method!r}")
    norm, k = _norm(norm), _k(k)
    names, loaded = _load(runs)
    points = _simplex(len(loaded), step) if grid is None else _grid(grid, len(loaded))
    depth = _depth(depth)
    from fastir.loops.evaluator import Evaluator

    # (the work: every point re-scores every row)
    with _jit.tier(sum(len(r) for r in loaded) * len(points) + size_hint(qrels)):
        qrels = as_qrels(qrels)
        pairs = _Pairs(loaded, depth)
        values, present = pairs.normalised(norm, names)
        parts = _contributions(method, values, present, pairs, k)
        sides = {"train": qrels, "test": None}
        if test_queries is not None:
            sides = dict(zip(("train", "test"), _split(qrels, test_queries)))
        qids, dids = pairs.candidate_arrays()
        table = {}
        for side, side_qrels in sides.items():
            if side_qrels is None:
                continue
            bound = Evaluator(side_qrels, [measure], **options).bind(qids, dids)
            table[side] = _search(bound, parts, points)
    return FusionSearch(names, measure, points, table["train"], table.get("test"))


class FusionSearch:
    """What :func:`optimize_fusion` found.

    Attributes
    ----------
    names : list of str
        The runs, in weight order.
    measure : str
    grid : ndarray, shape (n_points, n_runs)
        The weight vectors tried, in order.
    values : ndarray, shape (n_points,)
        The measure's mean for each (on the training queries with ``test_queries``).
    test_values : ndarray or None
        The same on the held-out queries.
    best : int
        Index of the best point (the first of equal ones).
    weights : list of float
        ``grid[best]``.
    """

    def __init__(self, names, measure, grid, values, test_values):
        self.names, self.measure, self.grid = names, measure, grid
        self.values, self.test_values = values, test_values
        self.best = int(np.argmax(values))
        self.weights = grid[self.best].tolist()

    def __repr__(self):
        weights = ", ".join(f"{n!r}: {w:g}" for n, w in zip(self.names, self.weights))
        return (f"FusionSearch({self.measure} {self.values[self.best]:.4f} at weights "
                f"{{{weights}}}, {len(self.grid)} points)")

    def to_markdown(self, digits=4):
        """The table as markdown: one row per point in grid order, the best marked ``*``."""
        test = self.test_values is not None
        head = self.names + [self.measure + (" (train)" if test else "")] + \
            ([f"{self.measure} (test)"] if test else [])
        lines = [markdown_row(head), "|" + "---:|" * len(head)]
        for i, row in enumerate(self.grid):
            cells = [f"{w:g}" for w in row] + [f"{self.values[i]:.{digits}f}" +
                                              ("*" if i == self.best else "")]
            if test:
                cells.append(f"{self.test_values[i]:.{digits}f}")
            lines.append(markdown_row(cells))
        return "\n".join(lines)


# -- inputs -------------------------------------------------------------------------------
def _choice(value, table, what):
    key = str(value).lower() if value is not None else None
    if key not in table:
        raise ValueError(f"{what}: unknown {what} {value!r}; choose one of "
                         f"{', '.join(sorted(set(table.values())))}")
    return table[key]


def _load(runs):
    if isinstance(runs, dict):
        names, items = [str(n) for n in runs], list(runs.values())
    elif isinstance(runs, (list, tuple)):
        names, items = None, list(runs)
    else:
        raise TypeError("runs: give a list of runs or a {name: run} dict (runs are Run "
                        f"objects, {{query: {{doc: score}}}} dicts or paths), got "
                        f"{type(runs).__name__}")
    if len(items) < 2:
        raise ValueError(f"runs: fusion needs two or more runs, got {len(items)}")
    loaded = [as_run(r) for r in items]
    names = names or [r.name for r in loaded]
    for i, (name, r) in enumerate(zip(names, loaded)):
        bad = np.flatnonzero(~np.isfinite(r.scores))
        if len(bad):
            q = int(np.searchsorted(r.stops, bad[0], side="right"))
            query = r.query_ids.take([q]).tolist()[0]
            doc = r.doc_ids.take([bad[0]]).tolist()[0]
            raise ValueError(f"runs: run {i} ({name!r}), query {query!r} doc {doc!r}: score "
                             f"{r.scores[bad[0]]} is not finite; give finite scores")
    return names, loaded


def _weights(weights, n_runs, method):
    if weights is None:
        return np.ones(n_runs)
    if method not in _WEIGHTED:
        raise ValueError(f"weights: only 'wsum' and 'wrrf' take weights, not {method!r}")
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        w = None
    if isinstance(weights, (str, bytes)) or w is None or w.shape != (n_runs,) or \
            not np.isfinite(w).all() or any(isinstance(x, bool) for x in np.ravel(
                np.asarray(weights, dtype=object))):
        raise ValueError(f"weights: give {n_runs} finite numbers (one per run), got {weights!r}")
    return w


def _depth(depth):
    if depth is None:
        return None
    if not _real(depth) or not _finite(depth) or int(depth) != depth or depth < 1:
        raise ValueError(f"depth: a positive whole number of docs per query, got {depth!r}")
    return int(min(depth, 2**62))


def _real(x):
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_))


def _finite(x):
    """A real number (:func:`_real`) is finite (integers of any size are)."""
    return isinstance(x, (int, np.integer)) or bool(np.isfinite(x))


def _k(k):
    if not _real(k) or not _finite(k) or k < 0:
        raise ValueError(f"k: RRF's constant is a finite number, 0 or more (60 is usual), "
                         f"got {k!r}")
    return float(k)


def _norm(norm):
    return None if norm is None else _choice(norm, NORMS, "norm")


def _finite_fused(scores, pairs, method, norm, weights):
    """Refuse a fused score beyond a double (``sum`` of 1e308 and 1e308): ``inf`` would rank
    as a tie and write as no number."""
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        p = bad[0]
        query = pairs.query_ids.take([pairs.pair_query[p]]).tolist()[0]
        doc = pairs.docs.take([pairs.pair_doc[p]]).tolist()[0]
        raise ValueError(
            f"method: {method!r} (norm={norm!r}, weights={weights!r}) gives query {query!r} "
            f"doc {doc!r} a score beyond a double ({scores[p]}); scale the runs' scores or "
            f"the weights down, or normalise them (norm='min-max')")


def _one_kind(columns):
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


def _rows(starts, lengths):
    """The rows ``starts[q]:starts[q] + lengths[q]`` of every query, in query order."""
    total = int(lengths.sum())
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


class _Pairs:
    """The union of the runs' (query, doc) pairs, and each run's rows in ranked order."""

    def __init__(self, runs, depth):
        self.n_runs = len(runs)
        queries = _one_kind([r.query_ids for r in runs])
        q_codes, q_first = _codes(queries)
        self.query_ids, q_rank = _id_ranks(queries, q_first)
        q_offset = np.cumsum([0] + [r.n_queries for r in runs])
        row_query, row_run, row_src = [], [], []
        for i, r in enumerate(runs):
            lengths = r.stops - r.starts
            row_query.append(q_rank[q_codes[q_offset[i]:q_offset[i + 1]]].repeat(lengths))
            row_src.append(_rows(r.starts, lengths))
            row_run.append(np.full(int(lengths.sum()), i))
        docs = _one_kind([r.doc_ids.take(s) for r, s in zip(runs, row_src)])
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
        self.run_of, self.score = run, score
        self.pair, self.pair_query, self.pair_doc = _jit.select(_pair_ids, len(doc))(
            bounds, self.n_runs, n_queries, doc, len(self.docs))
        self.n_pairs = len(self.pair_query)
        self.candidates = np.bincount(self.pair_query, minlength=n_queries)
        self.length = np.diff(bounds)[group]  # docs of the row's run and query

    def normalised(self, norm, names=None):
        """(values, present): (n_runs, n_pairs) arrays, each run's normalised scores.

        The four score normalisations are unchanged by scaling a (run, query)'s scores by a
        power of two: those beyond :data:`_HUGE` in magnitude are scaled down first (and the
        floor with them), exactly, so that no difference, sum or square overflows."""
        x = self.score
        seg = self.segment
        norm = _norm(norm)
        n = self.length.astype(np.float64)
        if norm in ("min-max", "sum", "zmuv", "max"):
            starts = np.flatnonzero(np.diff(seg, prepend=-1))
            lo = np.minimum.reduceat(x, starts)[seg] if len(x) else x
            hi = np.maximum.reduceat(x, starts)[seg] if len(x) else x
            exp = np.where(np.maximum(-lo, hi) > _HUGE, np.frexp(np.maximum(-lo, hi))[1], 0)
            x, lo, hi = (np.ldexp(a, -exp) for a in (x, lo, hi))
            floor = np.ldexp(_FLOOR, -exp)
            total = np.bincount(seg, weights=x)[seg]
        if norm == "min-max":
            x = (x - lo) / np.maximum(hi - lo, floor)
        elif norm == "sum":
            x = (x - lo) / np.maximum(total - lo * n, floor)
        elif norm == "max":
            with np.errstate(over="ignore"):
                x = x / np.maximum(hi, floor)
        elif norm == "zmuv":
            mean = total / n
            std = np.sqrt(np.bincount(seg, weights=(x - mean) ** 2)[seg] / n)
            x = (x - mean) / np.maximum(std, floor)
        elif norm == "rank":
            x = 1 - (self.rank - 1) / n
        values = np.zeros((self.n_runs, self.n_pairs))
        present = np.zeros((self.n_runs, self.n_pairs), dtype=bool)
        if norm == "borda":
            cand = self.candidates.astype(np.float64)
            x = 1 - (self.rank - 1) / cand[self.pair_query[self.pair]]
            m = self.run_lengths()
            values[:] = 0.5 - (m - 1) / (2 * cand[self.pair_query])
            present[:] = True
        bad = np.flatnonzero(~np.isfinite(x))
        if len(bad):  # (norm='max' of all-negative scores divides by the floor, 1e-9)
            i = bad[0]
            run = self.run_of[i]
            query = self.query_ids.take([self.pair_query[self.pair[i]]]).tolist()[0]
            doc = self.docs.take([self.pair_doc[self.pair[i]]]).tolist()[0]
            raise ValueError(
                f"norm: {norm!r} takes the score {self.score[i]} of run {run}"
                f"{f' ({names[run]!r})' if names else ''}, query {query!r} doc {doc!r}, "
                f"beyond a double; choose another norm or scale the scores")
        values[self.run_of, self.pair] = x
        present[self.run_of, self.pair] = True
        return values, present

    def run_lengths(self):
        """(n_runs, n_pairs): docs each run retrieved for each pair's query."""
        counts = np.zeros((self.n_runs, len(self.query_ids)))
        query = self.pair_query[self.pair]
        np.add.at(counts, (self.run_of, query), 1)
        return counts[:, self.pair_query]

    def retrieved(self):
        """(n_runs, n_pairs): whether each run retrieved each pair's doc."""
        out = np.zeros((self.n_runs, self.n_pairs), dtype=bool)
        out[self.run_of, self.pair] = True
        return out

    def ranks(self):
        """(n_runs, n_pairs) float ranks (0 where absent)."""
        ranks = np.zeros((self.n_runs, self.n_pairs))
        ranks[self.run_of, self.pair] = self.rank
        return ranks

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

    def run(self, scores, name):
        """The fused run: rows ranked within each query."""
        counts = self.candidates
        order = _jit.launch(rank_segments, np.concatenate(([0], np.cumsum(counts))), scores,
                            self.tie(self.pair_doc))
        starts = np.cumsum(counts) - counts
        keep = counts > 0
        return Run(self.query_ids.take(np.flatnonzero(keep)), starts[keep],
                   (starts + counts)[keep], self.docs.take(self.pair_doc[order]),
                   scores[order], name=name, source="fuse")


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


def _contributions(method, values, present, pairs, k):
    """Per run and pair, what a weight multiplies (``wsum``: the score; ``wrrf``:
    ``1 / (k + rank)``), 0 where absent."""
    if method == "wrrf":
        with np.errstate(divide="ignore"):
            return np.where(pairs.retrieved(), 1 / (k + pairs.ranks()), 0.0)
    return np.where(present, values, 0.0)


def _combine(method, values, present, pairs, w, k):
    if method in _BY_RANK:
        present = pairs.retrieved()
    count = present.sum(axis=0)
    if method in ("wsum", "wrrf"):
        parts = _contributions(method, values, present, pairs, k)
        total = np.zeros(pairs.n_pairs)
        for r in range(pairs.n_runs):
            total = total + w[r] * parts[r]
        return total
    if method in ("max", "min"):
        fill = -np.inf if method == "max" else np.inf
        pick = np.max if method == "max" else np.min
        return pick(np.where(present, values, fill), axis=0)
    if method == "med":
        ordered = np.sort(np.where(present, values, np.inf), axis=0)
        cols = np.arange(pairs.n_pairs)
        return (ordered[(count - 1) // 2, cols] + ordered[count // 2, cols]) / 2
    if method in ("rrf", "isr", "log_isr"):
        ranks = pairs.ranks()
        with np.errstate(divide="ignore"):
            parts = 1 / (k + ranks) if method == "rrf" else 1 / (ranks * ranks)
    elif method == "borda":
        cand = pairs.candidates[pairs.pair_query].astype(np.float64)
        parts = np.where(present, cand - (pairs.ranks() - 1),
                         (cand - pairs.run_lengths() + 1) / 2)
        present = np.ones_like(present)
    else:
        parts = values
    total = np.zeros(pairs.n_pairs)
    for r in range(pairs.n_runs):
        total = total + np.where(present[r], parts[r], 0.0)
    if method in ("mnz", "isr"):
        return total * count
    if method == "anz":
        return total / count
    if method == "log_isr":
        return total * np.log(count)
    return total


def _simplex(n_runs, step):
    """Every vector of ``n_runs`` counts summing to ``1 / step``, over it, lexicographic."""
    try:
        steps = round(1 / step) if _real(step) and 0 < step <= 1 else 0
        exact = steps >= 1 and abs(steps * step - 1) < 1e-9
    except (TypeError, ZeroDivisionError, OverflowError, ValueError):
        exact = False
    if not exact:
        raise ValueError(f"step: 1 / step must be a whole number (0.1, 0.05, 0.25...; a "
                         f"step in (0, 1]), got {step!r}")
    from math import comb

    n_points = comb(steps + n_runs - 1, n_runs - 1)
    if n_points > MAX_GRID_POINTS:
        many = f"{n_points:,}" if n_points < 10**15 else f"about 10**{len(str(n_points)) - 1}"
        raise ValueError(f"step: a step of {step!r} over {n_runs} runs makes a grid of "
                         f"{many} weight vectors, more than the {MAX_GRID_POINTS:,} "
                         f"optimize_fusion searches; take a larger step, or give grid=")
    rows = [[]]
    for _ in range(n_runs - 1):
        rows = [row + [c] for row in rows for c in range(steps - sum(row) + 1)]
    counts = np.array([row + [steps - sum(row)] for row in rows], dtype=np.float64)
    return counts / steps


def _grid(grid, n_runs):
    try:
        array = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        array = np.empty(0)
    if array.ndim != 2 or array.shape[1] != n_runs or not len(array) or \
            not np.isfinite(array).all():
        got = f"shape {array.shape}" if array.ndim == 2 else repr(grid)[:80]
        raise ValueError(f"grid: an (n_points, {n_runs}) array of finite weights, one column "
                         f"per run, got {got}")
    return array


def _split(qrels, test_queries):
    """The qrels of the training queries and of the held-out ones."""
    try:
        if isinstance(test_queries, (str, bytes)):
            raise TypeError
        held = Ids.from_array(np.array(list(test_queries), dtype=object)).keys()
    except (TypeError, ValueError):
        raise TypeError(f"test_queries: a collection of query ids (a list or set), got "
                        f"{test_queries!r}") from None
    held = set(held)
    keys = qrels.query_ids.keys()
    test = np.array([key in held for key in keys], dtype=bool)
    if not test.any() or test.all():
        raise ValueError("test_queries: hold out some of the qrels' queries, not none or all")
    return _subset(qrels, ~test), _subset(qrels, test)


def _subset(qrels, keep):
    lengths = np.diff(qrels.indptr)[keep]
    rows = _rows(qrels.indptr[:-1][keep], lengths)
    return Qrels(qrels.query_ids.take(np.flatnonzero(keep)),
                 np.concatenate(([0], np.cumsum(lengths))), qrels.doc_ids.take(rows),
                 qrels.labels[rows], qrels.source)


def _search(bound, parts, points):
    """The measure's mean for every weight vector: each scored inside the bound kernel
    (:meth:`~fastir.BoundCandidates.evaluate_weighted`), never built."""
    with np.errstate(over="ignore", invalid="ignore"):  # (the check below, per point)
        finite = np.isfinite(np.abs(points) @ np.abs(parts).max(axis=1, initial=0.0))
    if not finite.all():  # (a bound on every sum) perhaps beyond a double: build those
        for p in np.flatnonzero(~finite):
            scores = np.zeros(parts.shape[1])
            with np.errstate(over="ignore", invalid="ignore"):
                for r in range(len(parts)):
                    scores = scores + points[p, r] * parts[r]
            if not np.isfinite(scores).all():
                raise ValueError(f"grid: the weights {points[p].tolist()} (point {p}) take "
                                 f"the fused scores beyond a double; give smaller weights")
    return bound.evaluate_weighted(parts, points)[:, 0]


__all__ = ["fuse", "optimize_fusion", "FusionSearch"]
