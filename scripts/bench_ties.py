"""The cost of ``ties=`` and ``unjudged=``: one run evaluated in memory under each, alternated.

    python scripts/generate.py msmarco --queries 6980 --depth 1000 --out /tmp/msmarco-dev
    python scripts/bench_ties.py /tmp/msmarco-dev.qrels /tmp/msmarco-dev.run --pairs 7

The qrels and the run are read once; then ``fastir.evaluate(qrels, run, MEASURES, **way)``
(the join and the kernels) runs for each way in turn, ``--pairs`` rounds after a warm-up
round (compiled kernels, ``FASTIR_JIT=numba``), and the median wall seconds of each way and
its median ratio to the default's (round by round) are printed, with the load average.
"""

import argparse
import os
import statistics
import time

MEASURES = ["RR@10", "nDCG@10", "AP", "R@1000", "P@10"]
WAYS = {"default": {}, "input": {"ties": "input"}, "expected": {"ties": "expected"},
        "unjudged relevant": {"unjudged": "relevant"}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("FASTIR_JIT", "numba")
    import fastir

    qrels, run = fastir.read_qrels(args.qrels), fastir.read_run(args.run)
    seconds = {name: [] for name in WAYS}
    for round_ in range(args.pairs + 1):
        for name, way in WAYS.items():
            start = time.perf_counter()
            fastir.evaluate(qrels, run, MEASURES, **way)
            if round_:  # (the first round compiles and warms)
                seconds[name].append(time.perf_counter() - start)
    base = seconds["default"]
    print(f"{len(run):,} lines, {run.n_queries:,} queries; load {os.getloadavg()}")
    for name, times in seconds.items():
        ratio = statistics.median(t / b for t, b in zip(times, base))
        print(f"{name:18} median {statistics.median(times):.3f} s (min {min(times):.3f}), "
              f"{ratio:.2f}x the default")


if __name__ == "__main__":
    main()
