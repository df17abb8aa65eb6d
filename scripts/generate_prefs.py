"""Deterministic synthetic preference judgments (trec_eval ``-R prefs``) and a run, at any size.

    python scripts/generate_prefs.py --pairs 1000000 --queries 500 --out data/prefs1m

writes ``<out>.prefs`` (``qid jg jsg docno level``) and ``<out>.run``. The same arguments
always give the same bytes.

Each query has a pool of judged documents with a hidden order of relevance (a quarter of
them non-relevant) and, as in a preference track, several users (judgment groups): graded
users give levels 0-3 to a sample of the pool (one subgroup: every pair of different levels
is a preference), and one pairwise user states single preferences, each a subgroup of two
lines (the preferred document at level 2, the other at 1), agreeing with the hidden order
(no cycle). ``--pairs`` is the number of preferences the file states, split evenly between
the queries, ``--pairwise`` of them (default half) by the pairwise user. The run ranks 1000
documents per query (most of the pool, and others), scores with 2 decimals (ties happen).
"""

import argparse
from pathlib import Path

import numpy as np

GRADED_USERS = 3
DEPTH = 1000


def query_lines(rng, q, pairs, pool, pairwise):
    """The preference lines of one query: ``pairs`` preferences over ``pool`` documents,
    the share ``pairwise`` of them stated one by one."""
    docs = np.array([f"D{q}-{d}" for d in range(pool)])
    hidden = rng.permutation(pool)  # rank of each document in the hidden order
    lines = []
    for user in range(GRADED_USERS):
        # a sample of n documents in four levels states about 3/8 n^2 preferences
        n = min(pool, max(2, int(np.sqrt(pairs * (1 - pairwise) / GRADED_USERS * 8 / 3))))
        chosen = rng.choice(pool, size=n, replace=False)
        levels = 3 - (4 * hidden[chosen]) // pool  # the hidden order, in four levels
        lines += [f"{q} g{user} s {docs[d]} {lv}\n" for d, lv in zip(chosen, levels)]
    stated = int(pairs * pairwise)
    a = rng.integers(0, pool, size=stated)
    b = (a + 1 + rng.integers(0, pool - 1, size=stated)) % pool
    better = np.where(hidden[a] < hidden[b], a, b)
    worse = np.where(hidden[a] < hidden[b], b, a)
    for k, (x, y) in enumerate(zip(better.tolist(), worse.tolist())):
        lines.append(f"{q} p s{k} {docs[x]} 2\n{q} p s{k} {docs[y]} 1\n")
    return lines, docs, hidden


def run_lines(rng, q, docs, hidden):
    """1000 ranked documents: most of the judged pool (better ones scored higher, with
    noise) and unjudged others."""
    pool = len(docs)
    keep = rng.random(pool) < 0.8
    judged = docs[keep]
    scores = np.round(20 - 10 * hidden[keep] / pool + rng.normal(0, 2, keep.sum()), 2)
    others = np.array([f"X{q}-{d}" for d in range(DEPTH - len(judged))])
    all_docs = np.concatenate([judged, others])
    all_scores = np.concatenate([scores, np.round(rng.normal(8, 3, len(others)), 2)])
    order = np.argsort(-all_scores, kind="stable")
    return [f"{q} Q0 {d} {r} {s:.2f} prefs\n"
            for r, (d, s) in enumerate(zip(all_docs[order], all_scores[order]), 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--pool", type=int, default=150, help="judged documents per query")
    parser.add_argument("--pairwise", type=float, default=0.5,
                        help="the share of preferences stated one by one")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    prefs, run = [], []
    for q in range(args.queries):
        lines, docs, hidden = query_lines(rng, 100 + q, args.pairs // args.queries, args.pool,
                                          args.pairwise)
        prefs += lines
        run += run_lines(rng, 100 + q, docs, hidden)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.prefs").write_text("".join(prefs))
    Path(f"{out}.run").write_text("".join(run))


if __name__ == "__main__":
    main()
