"""Whole-call timings of the library's doors on the 50 x 1,000 pair, in one process: the
median seconds of repeated calls after two warm-up calls, as JSON. The fastir imported (the
one on PYTHONPATH) is the one timed; scripts/bench_before_after.py runs it from two trees.

    python scripts/bench_calls.py OUT.json    (from a checkout with data/trec50.*)
"""

import json
import statistics
import sys
import time

import numpy as np

import fastir
from fastir.analysis import reproducibility
from fastir.io.trec import read_qrels, read_run

QRELS, RUN = "data/trec50.qrels", "data/trec50.run"
MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def timed(call, n):
    """The median seconds of ``n`` calls, after two."""
    call()
    call()
    seconds = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def main(out):
    qrels, run, other = read_qrels(QRELS), read_run(RUN), read_run(RUN)
    rng = np.random.default_rng(0)
    scores, labels = rng.random((64, 100)), rng.integers(0, 3, (64, 100))
    evaluator = fastir.Evaluator(qrels, MEASURES)
    qrels_dict = {f"q{i}": {f"d{j}": int(j % 7 == 0) for j in range(0, 200, 3)}
                  for i in range(50)}
    run_dict = {f"q{i}": {f"d{j}": float(1000 - j) for j in range(1000)} for i in range(50)}
    runs = [run, other, run]
    calls = {
        "evaluate(Qrels, Run)": (lambda: fastir.evaluate(qrels, run, MEASURES), 30),
        "Evaluator.evaluate(Run)": (lambda: evaluator.evaluate(run), 30),
        "evaluate(dicts)": (lambda: fastir.evaluate(qrels_dict, run_dict, MEASURES), 10),
        "evaluate_matrix 64 x 100, nDCG@10 AP RR": (
            lambda: fastir.evaluate_matrix(scores, labels, ["nDCG@10", "AP", "RR"]), 200),
        "evaluate_matrix 64 x 100, nDCG@10, ties='average'": (
            lambda: fastir.evaluate_matrix(scores, labels, ["nDCG@10"], ties="average"), 200),
        "evaluate_file": (lambda: fastir.evaluate_file(QRELS, RUN, MEASURES), 10),
        "fuse combsum, min-max, 3 runs": (
            lambda: fastir.fuse(runs, "combsum", norm="min-max"), 20),
        "fuse rrf, 3 runs": (lambda: fastir.fuse(runs, "rrf"), 20),
        "fuse combmed, 3 runs": (lambda: fastir.fuse(runs, "combmed"), 20),
        "KTU of two runs": (lambda: reproducibility.ktu(run, other), 20),
        "RBO of two runs": (lambda: reproducibility.rbo(run, other), 20),
    }
    with open(out, "w") as f:
        json.dump({name: timed(call, n) for name, (call, n) in calls.items()}, f)


if __name__ == "__main__":
    main(sys.argv[1])
