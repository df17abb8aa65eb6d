"""fastir.compare against ranx's significance testing, on the same per-query scores.

    python scripts/bench_compare.py [--systems 10 --queries 6980 --measures 5
                                     --resamples 10000 --ranx-permutations 100]

Per-query scores are synthetic (seeded): a shared query difficulty plus per-system noise.
fastir runs each test over every pair of systems (bootstrap intervals included); ranx's
``compute_statistical_significance`` (what ``ranx.compare`` runs) does its Fisher
randomization test over every ordered pair with ``--ranx-permutations`` permutations, and
its time is scaled to ``--resamples``.
"""

import argparse
import time

import numpy as np

import fastir
from fastir.measures.registry import parse_all
from fastir.results import Results

NAMES = ["AP", "nDCG@10", "RR", "P@10", "R@100", "nDCG@20", "P@5", "R@10"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--queries", type=int, default=6980)
    parser.add_argument("--measures", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ranx-permutations", type=int, default=100)
    args = parser.parse_args()
    names = NAMES[:args.measures]
    keys, parsed = parse_all(names)
    rng = np.random.default_rng(0)
    base = rng.random((args.queries, len(names)))
    scores = [np.clip(base + rng.normal(0, 0.1, base.shape) + 0.002 * s, 0, 1)
              for s in range(args.systems)]
    ids = np.array([f"q{i}" for i in range(args.queries)])
    runs = {f"sys{s}": Results(ids, keys, parsed, v, [], [], "zero",
                               np.ones(args.queries, bool)) for s, v in enumerate(scores)}
    print(f"{args.systems} systems x {args.queries} queries x {len(names)} measures, "
          f"{args.resamples} resamples, every pair\n")
    print("| | time |\n|---|---:|")
    for test in ("randomization", "bootstrap", "tukey", "t"):
        fastir.compare(None, runs, names, test=test, n_resamples=64)  # (load the kernels)
        start = time.perf_counter()
        fastir.compare(None, runs, names, test=test, n_resamples=args.resamples)
        print(f"| fastir, {test} (with bootstrap intervals) | "
              f"{time.perf_counter() - start:.2f} s |")
    try:
        from ranx.statistical_tests import compute_statistical_significance
    except ImportError:
        print("| ranx | not installed |")
        return
    metric_scores = {f"sys{s}": {n: v[:, m] for m, n in enumerate(names)}
                     for s, v in enumerate(scores)}
    pair = dict(list(metric_scores.items())[:2])
    compute_statistical_significance(list(pair), pair, "fisher", 10)  # (compile)
    start = time.perf_counter()
    compute_statistical_significance(list(metric_scores), metric_scores, "fisher",
                                     args.ranx_permutations)
    seconds = time.perf_counter() - start
    print(f"| ranx, Fisher randomization, {args.ranx_permutations} permutations | "
          f"{seconds:.2f} s |")
    print(f"| ranx, scaled to {args.resamples} permutations | "
          f"{seconds * args.resamples / args.ranx_permutations:.0f} s |")


if __name__ == "__main__":
    main()
