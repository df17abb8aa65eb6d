"""Evaluation from arrays at growing sizes: linear scaling and peak memory.

    python scripts/scale.py --queries 70000 1000000 --depth 100

For each size, in a fresh process: MS MARCO-like int arrays (query ids, doc ids, scores in
descending order per query, ~1.1 relevant doc per query), ``Run.from_arrays`` and
``Qrels.from_arrays``, then ``evaluate`` with trec_eval's official measures. Prints a markdown
table: rows, seconds to build the containers, seconds to evaluate, ns per row, peak RSS and
its ratio to the size of the input arrays.
"""

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import numpy as np
import fastir

n_queries, depth = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(7)
qids = np.repeat(np.arange(n_queries, dtype=np.int64) * 7 + 100000, depth)
docs = (np.arange(n_queries * depth, dtype=np.int64) * 2654435761) % 2**33  # distinct
scores = -np.tile(np.arange(depth, dtype=np.float64), n_queries) + rng.random(n_queries * depth)
n_rel = 1 + (rng.random(n_queries) < 0.1)
q_q = np.repeat(np.arange(n_queries, dtype=np.int64) * 7 + 100000, n_rel)
first = np.repeat(np.arange(n_queries) * depth + rng.integers(0, depth - 1, n_queries), n_rel)
second = np.concatenate([[0, 1][:k] for k in n_rel])  # 0, or 0 and 1: distinct rows
q_d = docs[first + second]
q_d = np.where(rng.random(len(q_d)) < 0.8, q_d, q_d + 2**33)  # some unretrieved
input_bytes = qids.nbytes + docs.nbytes + scores.nbytes
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
from fastir.cli.warmup import warmup
warmup(out=None)  # numba loaded and its kernels ready: the times below are the work alone
t0 = time.perf_counter()
qrels = fastir.Qrels.from_arrays(q_q, q_d, np.ones(len(q_q), dtype=np.int64))
run = fastir.Run.from_arrays(qids, docs, scores)
t1 = time.perf_counter()
names = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
         "recip_rank", "iprec_at_recall", "P"]
res = fastir.evaluate(qrels, run, names)
res.mean
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"rows": len(scores), "build": t1 - t0, "evaluate": t2 - t1,
                  "input_bytes": input_bytes, "peak": peak, "base": base}))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, nargs="+", default=[70_000, 1_000_000])
    p.add_argument("--depth", type=int, default=100)
    args = p.parse_args(argv)
    rows = []
    for n in args.queries:
        out = subprocess.run([sys.executable, "-c", CHILD, str(n), str(args.depth)],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    first = rows[0]
    print("| rows | build (s) | evaluate (s) | ns/row | vs linear | peak RSS (MB) | "
          "peak / input arrays |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        linear = first["evaluate"] * r["rows"] / first["rows"]
        print(f"| {r['rows']:,} | {r['build']:.2f} | {r['evaluate']:.2f} | "
              f"{1e9 * r['evaluate'] / r['rows']:.1f} | {r['evaluate'] / linear:.2f}x | "
              f"{r['peak'] / 2**20:.0f} | {r['peak'] / r['input_bytes']:.2f} |")


if __name__ == "__main__":
    main()
