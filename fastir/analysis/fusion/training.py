"""What the trainable methods learn from judged training queries (:func:`train_fusion`), as
ranx's ``*_train`` functions learn it.

Each run's *hit list* for a training query is its (normalised) ranking read as 1 for a doc
judged relevant (label >= 1) and 0 otherwise; a training query the run retrieved nothing
for has an empty one. From them, per run:

* ``posfuse``, ``slidefuse``: ``probs[i]``, the fraction of the run's rankings of length
  above ``i`` that hold a relevant doc at position ``i + 1``;
* ``probfuse``: each ranking cut in ``n_segments`` segments of ``ceil(length /
  n_segments)`` docs; ``probs[j]`` the mean over the training queries of segment ``j``'s
  fraction of relevant docs (a query whose ranking has no segment ``j`` adds 0);
* ``segfuse``: the same over ranx's 10 fixed segments (5, 10, 20, 40... docs), each
  fraction over the segment's full size;
* ``bayesfuse``: over the positions 1-5, 6-10, 11-15, 16-20, 21-30, 31-100, 101-200,
  201-500, 501-1000, ``p`` the mean fraction of relevant docs (over the segment's full
  size; 0.001 for 0, and ``1 - p`` 0.001 for 0), and ``log_odds`` ``ln(p / (1 - p))`` at
  each position of the segment;
* ``mapfuse``: ``map_scores``, the run's MAP (mean average precision) over the training
  queries.
"""

import numpy as np

from fastir.analysis.fusion.inputs import depth as checked_depth
from fastir.analysis.fusion.inputs import load_runs, number
from fastir.analysis.fusion.methods import SEGFUSE_BOUNDS, method_name
from fastir.analysis.fusion.norms import norm_name, normalise, row_ranks
from fastir.analysis.fusion.pairs import Pairs
from fastir.io.inputs import as_qrels
from fastir.model.data import Run
from fastir.model.ids import rows_of
from fastir.model.join import join

TRAINABLE = {"posfuse": "probs", "slidefuse": "probs", "probfuse": "probs",
             "segfuse": "probs", "bayesfuse": "log_odds", "mapfuse": "map_scores"}
BAYES_CUTOFFS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000])


def train_fusion(qrels, runs, method, *, norm=None, queries=None, n_segments=None,
                 depth=None):
    """Learn the parameters of a trainable fusion method from judged training queries.

    Parameters
    ----------
    qrels : Qrels, dict or path
        Judgments of the training queries.
    runs : list or dict
        The runs to fuse later (as for :func:`fastir.fuse`), in the same order.
    method : str
        ``posfuse``, ``slidefuse``, ``probfuse``, ``segfuse``, ``bayesfuse`` or ``mapfuse``.
    norm : str, optional
        The normalisation the runs will be fused with (it only matters when it re-ranks
        them: ``min-max-inverted``).
    queries : collection of query ids, optional
        The training queries (default: every query of the runs); each must be in the qrels.
    n_segments : int
        ``probfuse``'s number of segments per ranking.
    depth : int, optional
        Train on each run's top ``depth`` docs.

    Returns
    -------
    dict
        ``{"probs": [...]}``, ``{"log_odds": [...]}`` or ``{"map_scores": [...]}`` (one
        array or number per run): keywords for :func:`fastir.fuse`.

    Examples
    --------
    >>> import fastir
    >>> qrels = {"q": {"d1": 1}}
    >>> runs = [{"q": {"d1": 2.0, "d2": 1.0}}, {"q": {"d2": 2.0, "d1": 1.0}}]
    >>> fastir.train_fusion(qrels, runs, "posfuse")
    {'probs': [array([1., 0.]), array([0., 1.])]}
    """
    method = method_name(method)
    if method not in TRAINABLE:
        raise ValueError(f"method: {method!r} learns nothing; train_fusion trains "
                         f"{', '.join(sorted(TRAINABLE))}")
    if method == "probfuse":
        n_segments = number(n_segments, "n_segments", low=1, whole=True,
                            rule="probfuse's segments per ranking, a whole number from 1")
    elif n_segments is not None:
        raise ValueError(f"n_segments: only 'probfuse' takes n_segments, not {method!r}")
    _, loaded = load_runs(runs)
    pairs = Pairs(loaded, checked_depth(depth))
    ranks = row_ranks(pairs, normalise(pairs, norm_name(norm)))
    hits = Hits(as_qrels(qrels), pairs, ranks, queries)
    return {TRAINABLE[method]: hits.learn(method, n_segments)}


class Hits:
    """The runs' hit lists over the training queries, as rows: per row its run, training
    query (``query``: its place among them), position (from 0) and whether it is a hit
    (``ranks``: each row of ``pairs``' rank in its run's ranking)."""

    def __init__(self, qrels, pairs, ranks, queries=None):
        train, self.n_relevant = _training_queries(qrels, pairs, queries)
        self.n_queries = len(self.n_relevant)
        row_train = train[pairs.row_query]
        keep = row_train >= 0
        self.n_runs = pairs.n_runs
        self.run = pairs.run_of[keep]
        self.query = row_train[keep]
        self.position = ranks[keep].astype(np.int64) - 1
        self.hit = (_pair_labels(qrels, pairs)[pairs.pair] >= 1)[keep].astype(np.float64)
        self.length = pairs.length[keep]

    @classmethod
    def of_lists(cls, hit_lists):
        """One run's hits given as hit lists (one 0/1 sequence per training query)."""
        hits = cls.__new__(cls)
        lists = [np.asarray(h, dtype=np.float64).ravel() for h in hit_lists]
        lengths = np.array([len(h) for h in lists], dtype=np.int64)
        hits.n_runs, hits.n_queries = 1, len(lists)
        hits.n_relevant = None
        hits.run = np.zeros(int(lengths.sum()), dtype=np.int64)
        hits.query = np.repeat(np.arange(len(lists)), lengths)
        hits.position = rows_of(np.zeros(len(lists), dtype=np.int64), lengths)
        hits.hit = np.concatenate(lists) if lists else np.zeros(0)
        hits.length = np.repeat(lengths, lengths)
        return hits

    def learn(self, method, n_segments=None):
        """Per run, what ``method`` learns (see the module doc)."""
        learn = {"posfuse": self.position_probs, "slidefuse": self.position_probs,
                 "probfuse": lambda r: self.segment_probs(r, n_segments),
                 "segfuse": self.segfuse_probs, "bayesfuse": self.log_odds,
                 "mapfuse": self.mean_ap}[method]
        out = [learn(np.flatnonzero(self.run == r)) for r in range(self.n_runs)]
        return [float(x) for x in out] if method == "mapfuse" else out

    def position_probs(self, rows):
        size = int(self.position[rows].max(initial=-1)) + 1
        hits = np.bincount(self.position[rows], weights=self.hit[rows], minlength=size)
        return hits / np.bincount(self.position[rows], minlength=size)

    def segment_probs(self, rows, n_segments):
        size = -(-self.length[rows] // n_segments)  # ceil(length / n_segments)
        segment = self.position[rows] // size
        return self._fractions(rows, segment, n_segments)

    def segfuse_probs(self, rows):
        segment = np.searchsorted(SEGFUSE_BOUNDS, self.position[rows], side="right") - 1
        return self._fractions(rows, segment, 10, size=np.diff(SEGFUSE_BOUNDS))

    def log_odds(self, rows, cutoffs=BAYES_CUTOFFS):
        segment = np.searchsorted(cutoffs, self.position[rows], side="right") - 1
        sizes = np.diff(cutoffs)
        p = self._fractions(rows, segment, len(sizes), size=sizes, each_over_n=True)
        p = np.where(p == 0, p + 0.001, p)
        not_p = 1 - p
        not_p = np.where(not_p == 0, not_p + 0.001, not_p)
        return np.concatenate((np.zeros(cutoffs[0]), np.repeat(np.log(p / not_p), sizes)))

    def _fractions(self, rows, segment, n_segments, size=None, each_over_n=False):
        """Per segment, the mean over the training queries of its fraction of hits: over
        ``size[segment]`` docs, or (``size`` None) over the docs the ranking has there.
        Summed query by query as ranx sums them: the fractions, then divided by the number
        of queries (``each_over_n``: each fraction divided first, as bayesfuse's)."""
        keep = (segment >= 0) & (segment < n_segments)
        rows, segment = rows[keep], segment[keep]
        cell = self.query[rows] * n_segments + segment  # (query, segment), query-major
        n_cells = self.n_queries * n_segments
        hits = np.bincount(cell, weights=self.hit[rows], minlength=n_cells)
        docs = np.bincount(cell, minlength=n_cells) if size is None else \
            np.tile(size.astype(np.float64), self.n_queries)
        fraction = np.where(docs > 0, hits / np.maximum(docs, 1), 0.0)
        if each_over_n:
            fraction = fraction / self.n_queries
        # (a C-ordered reduction over axis 0 adds the rows one after another: ranx's order)
        total = fraction.reshape(self.n_queries, n_segments).sum(axis=0)
        return total if each_over_n else total / self.n_queries

    def mean_ap(self, rows):
        order = rows[np.lexsort((self.position[rows], self.query[rows]))]
        query, hit = self.query[order], self.hit[order]
        new = np.concatenate(([True], query[1:] != query[:-1])) if len(order) else query > 0
        start = np.flatnonzero(new)
        seen = np.cumsum(hit)
        before = np.repeat(seen[start] - hit[start], np.diff(np.append(start, len(order))))
        precision = (seen - before) / (self.position[order] + 1)
        ap = np.bincount(query, weights=np.where(hit > 0, precision, 0.0),
                         minlength=self.n_queries)
        with np.errstate(invalid="ignore", divide="ignore"):
            ap = np.where(self.n_relevant > 0, ap / self.n_relevant, 0.0)
        return ap.mean()


def _training_queries(qrels, pairs, queries):
    """Per query of ``pairs``, its place among the training queries (-1: not one), and per
    training query its number of relevant docs (label >= 1); a training query the qrels
    lack is refused."""
    relevant = np.add.reduceat((qrels.labels >= 1).astype(np.int64), qrels.indptr[:-1]) \
        if len(qrels.labels) else np.zeros(len(qrels.indptr) - 1, dtype=np.int64)
    relevant = np.where(np.diff(qrels.indptr) > 0, relevant, 0)
    judged = {str(q): i for i, q in enumerate(qrels.query_ids.tolist())}
    ours = [str(q) for q in pairs.query_ids.tolist()]
    if queries is None:
        wanted = ours
    else:
        if isinstance(queries, (str, bytes)) or not hasattr(queries, "__iter__"):
            raise TypeError(f"queries: a collection of query ids (a list or set), got "
                            f"{queries!r}")
        wanted = list(dict.fromkeys(str(q) for q in queries))
    missing = [q for q in wanted if q not in judged]
    if missing:
        raise ValueError(f"queries: training query {missing[0]!r} has no judgments in the "
                         f"qrels ({len(missing)} of {len(wanted)} training queries lack them); "
                         f"give the qrels of every training query, or queries= without it")
    if not wanted:
        raise ValueError("queries: no training queries; give some")
    wanted.sort(key=judged.__getitem__)  # (the qrels' order: trec_eval's)
    place = {q: i for i, q in enumerate(wanted)}
    n_relevant = relevant[[judged[q] for q in wanted]].astype(np.float64)
    return np.array([place.get(q, -1) for q in ours], dtype=np.int64), n_relevant


def _pair_labels(qrels, pairs):
    """Each pair's label code in ``qrels`` (-1: not judged)."""
    qids, dids = pairs.candidate_arrays()
    candidates = Run.from_arrays(qids, dids, np.arange(len(qids), dtype=np.float64),
                                 source="candidates")
    joined = join(qrels, candidates, as_candidates=True)
    codes = np.full(pairs.n_pairs, -1, dtype=np.int64)
    codes[candidates.scores[joined.rows].astype(np.int64)] = joined.labels
    return codes
