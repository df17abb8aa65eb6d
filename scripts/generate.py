"""Deterministic synthetic qrels and runs, MS MARCO-like or TREC-DL-like, at any size.

    python scripts/generate.py msmarco --queries 6980 --depth 1000 --out data/msmarco-dev
    python scripts/generate.py trecdl --queries 200 --depth 1000 --out data/trecdl

writes ``<out>.qrels`` and ``<out>.run``. The same arguments always give the same bytes.

- msmarco: sparse binary labels (1 relevant doc per query, 10% of queries with 2), 8.8M
  passage ids, scores with 4 decimals (ties happen), relevant docs usually ranked high.
- trecdl: graded labels 0-3, ~200 judged docs per query, scores with 2 decimals (many ties).
"""

import argparse
from pathlib import Path

import numpy as np

N_PASSAGES = 8_841_823


def msmarco(rng, n_queries, depth):
    qids = rng.choice(np.arange(1_000_000, 1_200_000), size=n_queries, replace=False)
    qrels, run = [], []
    for qid in qids.tolist():
        docs = rng.choice(N_PASSAGES, size=depth + 2, replace=False)
        n_rel = 2 if rng.random() < 0.1 else 1
        relevant = docs[:n_rel]
        qrels.extend(f"{qid} 0 {d} 1\n" for d in relevant.tolist())
        ranked = docs[n_rel:n_rel + depth].copy()
        for d in relevant.tolist():
            if rng.random() < 0.8:  # retrieved, usually near the top
                ranked[min(int(rng.exponential(8.0)), depth - 1)] = d
        scores = np.sort(np.round(rng.normal(20, 3, size=depth), 4))[::-1]
        run.append(_run_block(qid, ranked, scores))
    return qrels, run


def trecdl(rng, n_queries, depth):
    qrels, run = [], []
    for q in range(n_queries):
        qid = 100000 + 37 * q
        docs = rng.choice(N_PASSAGES, size=depth + 100, replace=False)
        judged = docs[rng.random(depth + 100) < 0.2]
        grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=len(judged))
        qrels.extend(f"{qid} 0 {d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist()))
        ranked = docs[:depth]
        gain = np.zeros(depth)
        lookup = dict(zip(judged.tolist(), grades.tolist()))
        gain[:] = [lookup.get(d, 0) for d in ranked.tolist()]
        scores = np.round(gain * 0.8 + rng.normal(size=depth), 2)
        order = np.argsort(-scores, kind="stable")
        run.append(_run_block(qid, ranked[order], scores[order]))
    return qrels, run


def _run_block(qid, docs, scores):
    return "".join(f"{qid} Q0 {d} {r} {s:.4f} fastir-gen\n"
                   for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["msmarco", "trecdl"])
    p.add_argument("--queries", type=int, default=6980)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--out", required=True, help="output prefix")
    args = p.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    qrels, run = {"msmarco": msmarco, "trecdl": trecdl}[args.kind](rng, args.queries,
                                                                    args.depth)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.qrels").write_text("".join(qrels))
    with open(f"{out}.run", "w") as f:
        f.writelines(run)
    print(f"wrote {out}.qrels ({len(qrels)} lines) and {out}.run")


if __name__ == "__main__":
    main()
