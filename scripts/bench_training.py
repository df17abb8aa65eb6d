"""Epoch-level retrieval metrics, fastir against torchmetrics, side by side.

    python scripts/bench_training.py [--queries 10000] [--candidates 100] [--batch 100]

One epoch of ``--queries`` queries with ``--candidates`` candidates each, in batches of
``--batch`` queries, in torchmetrics' flat form (preds, target, indexes): torchmetrics'
metrics (update per batch, compute at the end) against fastir.MetricAccumulator
(update_flat per batch, compute), and fastir.evaluate_flat on the whole epoch at once.
Prints seconds (best of --repeat) and the largest difference between the means. Scores are
distinct positive float32 values, where the definitions coincide (see tests/loops/test_training.py).
"""

import argparse
import time

import numpy as np
import torch
import torchmetrics.retrieval as tm

import fastir


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    n = args.queries * args.candidates
    preds = (rng.permutation(n) + 1).astype(np.float32)
    target = (rng.random(n) < 0.05).astype(np.int64)
    indexes = np.repeat(np.arange(args.queries), args.candidates)
    rows = args.batch * args.candidates
    batches = [(torch.from_numpy(preds[i:i + rows]), torch.from_numpy(target[i:i + rows]),
                torch.from_numpy(indexes[i:i + rows])) for i in range(0, n, rows)]
    pairs = {"AP": tm.RetrievalMAP, "RR@10": lambda: tm.RetrievalMRR(top_k=10),
             "nDCG@10": lambda: tm.RetrievalNormalizedDCG(top_k=10),
             "P@10": lambda: tm.RetrievalPrecision(top_k=10),
             "R@100": lambda: tm.RetrievalRecall(top_k=100)}
    names = list(pairs)
    fastir.evaluate_flat(preds[:rows], target[:rows], indexes[:rows], names)  # warm

    def torchmetrics_epoch():
        metrics = {name: make() for name, make in pairs.items()}
        for batch in batches:
            for metric in metrics.values():
                metric.update(*batch)
        return {name: metric.compute().item() for name, metric in metrics.items()}

    def accumulator_epoch():
        acc = fastir.MetricAccumulator(names, ties="average")
        for batch in batches:
            acc.update_flat(*batch)
        return acc.compute()

    def flat_once():
        return fastir.evaluate_flat(preds, target, indexes, names, ties="average")

    print(f"{args.queries} queries x {args.candidates} candidates, batches of {args.batch} "
          f"queries, measures {', '.join(names)}; torch threads {torch.get_num_threads()}")
    results = {}
    for label, run in [("torchmetrics (update + compute)", torchmetrics_epoch),
                       ("fastir.MetricAccumulator (update_flat + compute)", accumulator_epoch),
                       ("fastir.evaluate_flat (whole epoch, one call)", flat_once)]:
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            results[label] = run()
            times.append(time.perf_counter() - start)
        print(f"  {label:50s} {min(times):8.3f} s")
    want = results["torchmetrics (update + compute)"]
    for label, got in results.items():
        diff = max(abs(got[m] - want[m]) for m in names)
        print(f"  largest |difference| from torchmetrics, {label}: {diff:.2e}")


if __name__ == "__main__":
    main()
