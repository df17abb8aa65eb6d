"""A training loop's first calls, each in a fresh process: the per-call seconds of
``evaluate_matrix`` (32 queries x 100 candidates, nDCG@10, AP, RR@10) from the first call,
medians over alternated processes, under each engine choice (automatic, ``FASTIR_JIT=numba``,
``FASTIR_JIT=python``) and, with ``--before TREE``, the automatic choice of another checkout
(warmed up: ``python -m fastir warmup`` with its PYTHONPATH).

    python scripts/bench_first_calls.py [--rounds 5] [--calls 30] [--before TREE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

LOOP = """
import json, sys, time
import numpy as np
start = time.perf_counter()
import fastir
imported = time.perf_counter() - start
rng = np.random.default_rng(0)
labels = rng.integers(0, 4, size=(32, 100))
times = []
for call in range({calls}):
    scores = rng.normal(size=labels.shape)
    start = time.perf_counter()
    fastir.evaluate_matrix(scores, labels, ["nDCG@10", "AP", "RR@10"])
    times.append(time.perf_counter() - start)
print(json.dumps([imported, times]))
"""


def one(tree, jit, calls):
    """(import seconds, per-call seconds) of one fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_JIT"}
    env["PYTHONPATH"] = str(tree)
    if jit:
        env["FASTIR_JIT"] = jit
    done = subprocess.run([sys.executable, "-c", LOOP.format(calls=calls)], env=env, cwd=tree,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--before", type=Path)
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent.parent
    cases = {"automatic": (here, None), "FASTIR_JIT=numba": (here, "numba"),
             "FASTIR_JIT=python": (here, "python")}
    if args.before:
        cases["automatic, before"] = (args.before.resolve(), None)
    found = {name: [] for name in cases}
    for round_ in range(args.rounds):
        order = list(cases) if round_ % 2 == 0 else list(reversed(cases))
        for name in order:
            found[name].append(one(*cases[name], args.calls))
    print(f"| choice | call 1 | call 2 | call 3 | calls 4-{args.calls} (median) | "
          f"{args.calls} calls |")
    print("|---|---|---|---|---|---|")
    for name, runs in found.items():
        per_call = [statistics.median(r[1][i] for r in runs) for i in range(args.calls)]
        total = statistics.median(sum(r[1]) for r in runs)
        print(f"| {name} | {per_call[0] * 1e3:.1f} ms | {per_call[1] * 1e3:.1f} ms | "
              f"{per_call[2] * 1e3:.1f} ms | {statistics.median(per_call[3:]) * 1e3:.2f} ms | "
              f"{total:.2f} s |")


if __name__ == "__main__":
    main()
