"""Judgment pools (:func:`pool`): per query, the documents to judge, chosen from runs by
trectools' strategies, and what each run contributes.

Strategies (trectools' ``TrecPoolMaker.make_pool`` names in brackets):

* ``depth`` (Depth@K, ``topX``): every doc some run ranks in its top ``depth``;
* ``rrf`` (RRFTake@N, ``rrf``): the ``depth`` docs of highest reciprocal-rank sum
  ``sum(1 / (k + rank))`` over the runs (Cormack's RRF, ``k`` 60);
* ``rbp`` (RBPTake@N, ``rbp``): the ``depth`` docs of highest rank-biased weight
  ``(1 - p) * p ** (rank - 1)``, summed over the runs (``merge="sum"``) or their maximum
  (``merge="max"``), ``p`` 0.8.

Runs are ranked as fastir ranks everywhere (score descending, ties by doc id descending;
trectools breaks equal scores by doc id ascending, and its RRF and RBP read the run file's
rank column); a take strategy's ties at the cut go to the doc of the greater id, ranked
first (trectools leaves them to pandas' sort).
"""

from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir.analysis.fusion.inputs import choice, load_runs, number
from fastir.analysis.fusion.methods import fused_scores
from fastir.analysis.fusion.norms import normalise
from fastir.analysis.fusion.pairs import Pairs
from fastir.output.writing import atomic_write

STRATEGIES = {"depth": "depth", "topx": "depth", "rrf": "rrf", "rbp": "rbp"}
FORMATS = ("trec", "qrels", "docs")

#: Per run, what it gives the pool: ``contributed`` (pool docs it brought: in its top
#: ``depth`` for ``depth`` pools, anywhere in its ranking for take strategies), ``unique``
#: (of those, the ones no other run brought), ``coverage`` (the fraction of the pool it
#: retrieved at all) and ``judged`` (trectools' ``check_coverage``: over the pool's
#: queries, the mean number of its top ``judged_at`` docs that are in the pool).
RunStats = namedtuple("RunStats", "name contributed unique coverage judged")


def pool(runs, depth=10, strategy="depth", *, k=60, p=0.8, merge="sum", judged_at=None):
    """The documents to judge for each query, chosen from ``runs``.

    Parameters
    ----------
    runs : list or dict
        Runs (:class:`Run`, ``{query: {doc: score}}`` dict or path), or ``{name: run}``.
    depth : int
        ``depth`` pools: each run's top ``depth`` docs; take strategies: ``depth`` docs per
        query.
    strategy : {"depth", "rrf", "rbp"}
        See the module doc (trectools' ``topX``, ``rrf``, ``rbp``).
    k : float
        ``rrf``'s constant (60).
    p : float
        ``rbp``'s persistence, in [0, 1] (0.8).
    merge : {"sum", "max"}
        How ``rbp`` merges the runs' weights of a doc.
    judged_at : int, optional
        The ranking depth of each run's ``judged`` statistic (default ``depth``).

    Returns
    -------
    Pool

    Examples
    --------
    >>> import fastir
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d4": 3.0, "d1": 2.0}}
    >>> fastir.pool([a, b], depth=1).to_dict()
    {'q1': ['d1', 'd4']}
    """
    strategy = choice(strategy, STRATEGIES, "strategy")
    depth = number(depth, "depth", low=1, whole=True,
                   rule="a positive whole number of docs (per run, or per query)")
    judged_at = depth if judged_at is None else number(
        judged_at, "judged_at", low=1, whole=True, rule="a positive whole number of docs")
    if merge not in ("sum", "max"):
        raise ValueError(f"merge: 'sum' or 'max' (how rbp merges the runs' weights), got "
                         f"{merge!r}")
    names, loaded = load_runs(runs, at_least=1, what="a pool")
    if len(set(names)) < len(names):  # (runs of dicts, or files of one tag)
        names = [f"{name} ({i + 1})" for i, name in enumerate(names)]
    with _jit.tier(sum(len(r) for r in loaded)):
        pairs = Pairs(loaded, None)
        if strategy == "depth":
            pooled = np.zeros(pairs.n_pairs, dtype=bool)
            brought = pairs.rank <= depth
            pooled[pairs.pair[brought]] = True
        else:
            pooled = _taken(pairs, strategy, depth, k, p, merge)
            brought = np.ones(len(pairs.rank), dtype=bool)
        return Pool(names, pairs, pooled, brought, judged_at, strategy, depth)


def _taken(pairs, strategy, n, k, p, merge):
    """Per pair, whether it is among its query's top ``n`` by the strategy's score."""
    scored = normalise(pairs, None)
    if strategy == "rrf":
        params = {"k": number(k, "k", low=0, rule="RRF's constant is a finite number, 0 or "
                              "more (60 is usual)")}
        scores = fused_scores("rrf", scored, pairs, params)
    else:
        p = number(p, "p", low=0, high=1, rule="RBP's persistence is a number in [0, 1] "
                   "(0.8 is trectools')")
        if merge == "sum":  # (rank-biased centroid: the same weights, summed)
            scores = fused_scores("rbc", scored, pairs, {"phi": p})
        else:
            scores = np.full(pairs.n_pairs, -np.inf)
            np.maximum.at(scores, pairs.pair, (1 - p) * np.power(p, pairs.rank - 1.0))
    order = pairs.ranked(scores)
    position = np.arange(pairs.n_pairs) - pairs.pair_bounds[pairs.pair_query[order]]
    taken = np.zeros(pairs.n_pairs, dtype=bool)
    taken[order[position < n]] = True
    return taken


class Pool:
    """A judgment pool: per query, the docs to judge (:meth:`to_dict`, :meth:`write`), and
    per run what it gives (:attr:`stats`, :meth:`to_markdown`).

    Attributes
    ----------
    strategy : str
    depth : int
    n_docs : int
        Docs in the pool, over every query.
    stats : list of RunStats
        One per run, in the runs' order.
    """

    def __init__(self, names, pairs, pooled, brought, judged_at, strategy, depth):
        self.strategy, self.depth, self.judged_at = strategy, depth, judged_at
        self._pairs, self._pooled = pairs, pooled
        self.n_docs = int(pooled.sum())
        self.stats = _run_stats(names, pairs, pooled, brought, judged_at)

    def __repr__(self):
        return (f"Pool({self.strategy}@{self.depth}: {self.n_docs} docs over "
                f"{len(self.queries())} queries, {len(self.stats)} runs)")

    def queries(self):
        """The pooled queries' ids, in trec_eval's order."""
        counts = np.bincount(self._pairs.pair_query[self._pooled],
                             minlength=len(self._pairs.query_ids))
        return self._pairs.query_ids.take(np.flatnonzero(counts)).tolist()

    def to_dict(self):
        """``{query: [doc, ...]}``, queries in trec_eval's order, docs sorted (as trectools
        writes them)."""
        rows = self._rows()
        out = {}
        for query, doc in zip(rows[0], rows[1]):
            out.setdefault(query, []).append(doc)
        return out

    def _rows(self):
        """Query ids and doc ids of the pooled pairs, by query then doc id (both in
        trec_eval's order: ascending as strings)."""
        pairs = self._pairs
        chosen = np.flatnonzero(self._pooled)
        query = pairs.pair_query[chosen]
        chosen = chosen[np.lexsort((pairs.doc_order()[chosen], query))]
        return (pairs.query_ids.take(pairs.pair_query[chosen]).tolist(),
                pairs.pair_docs.take(chosen).tolist())

    def write(self, file, format="trec", tag="fastir"):
        """Write the pool for judging: ``trec`` (trectools' and Relevation's pool file:
        ``query Q0 doc 0 0 tag``, tab-separated), ``qrels`` (``query 0 doc -1``: a qrels
        file to fill in, every doc not yet judged) or ``docs`` (each pooled doc id once,
        sorted: trectools' ``filelist``). ``file`` is a path or an open text file."""
        if format not in FORMATS:
            raise ValueError(f"format: one of {', '.join(FORMATS)}, got {format!r}")
        if format == "trec" and (not isinstance(tag, str) or not tag or
                                 any(c.isspace() for c in tag)):
            raise ValueError(f"tag: one word, got {tag!r}")
        queries, docs = self._rows()
        if format == "docs":
            pooled = np.flatnonzero(self._pooled)
            first = np.unique(self._pairs.doc_order()[pooled], return_index=True)[1]
            text = "".join(f"{d}\n" for d in self._pairs.pair_docs.take(pooled[first]).tolist())
        elif format == "qrels":
            text = "".join(f"{q} 0 {d} -1\n" for q, d in zip(queries, docs))
        else:
            text = "".join(f"{q}\tQ0\t{d}\t0\t0\t{tag}\n" for q, d in zip(queries, docs))
        if hasattr(file, "write"):
            file.write(text)
        else:  # (whole or not at all, as every file fastir writes)
            with atomic_write(file) as out:
                out.write(text)

    def to_markdown(self, digits=3):
        """The runs' statistics as markdown, one row per run."""
        head = ["run", "contributed", "unique", "coverage", f"judged@{self.judged_at}"]
        lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
        for s in self.stats:
            lines.append(f"| {s.name} | {s.contributed} | {s.unique} | "
                         f"{s.coverage:.{digits}f} | {s.judged:.{digits}f} |")
        return "\n".join(lines)


def _run_stats(names, pairs, pooled, brought, judged_at):
    """Each run's :data:`RunStats` (see there), all runs at once."""
    pair, run_of = pairs.pair, pairs.run_of
    in_pool = pooled[pair]
    contributing = in_pool & brought
    by_pair = np.zeros((pairs.n_runs, pairs.n_pairs), dtype=bool)
    by_pair[run_of[contributing], pair[contributing]] = True
    only = by_pair & (by_pair.sum(axis=0) == 1)
    retrieved = np.zeros((pairs.n_runs, pairs.n_pairs), dtype=bool)
    retrieved[run_of[in_pool], pair[in_pool]] = True
    pool_queries = np.zeros(len(pairs.query_ids), dtype=bool)
    pool_queries[pairs.pair_query[pooled]] = True
    top = in_pool & (pairs.rank <= judged_at) & pool_queries[pairs.row_query]
    judged_docs = np.bincount(run_of[top], minlength=pairs.n_runs)
    n_queries, n_docs = max(int(pool_queries.sum()), 1), max(int(pooled.sum()), 1)
    return [RunStats(name, int(by_pair[r].sum()), int(only[r].sum()),
                     float(retrieved[r].sum() / n_docs), float(judged_docs[r] / n_queries))
            for r, name in enumerate(names)]


__all__ = ["pool", "Pool", "RunStats", "STRATEGIES"]
