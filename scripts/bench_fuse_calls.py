"""fastir.fuse alone, called again and again in one process: the wall and CPU seconds of
each call and their medians (for before/after comparisons of fusion commits: run it from
each tree, alternated, e.g. ``PYTHONPATH=<tree> python scripts/bench_fuse_calls.py``).

    python scripts/bench_fuse_calls.py [--method sum] [--calls 15] [--fresh-runs]
        [--runs 10 --queries 698 --depth 1000]

The runs are bench_fusion.py's (each run's rows in rank order). ``--fresh-runs`` gives
every call new Run objects over the same columns, so that nothing a run keeps about itself
(``Run.score_order``) is known yet: a first call, as a script that fuses once makes. The
kernels are compiled on a small fusion first, not timed.
"""

import argparse
import time

import numpy as np
from bench_fusion import ranked_runs

import fastir


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="sum")
    parser.add_argument("--calls", type=int, default=15)
    parser.add_argument("--fresh-runs", action="store_true")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--queries", type=int, default=698)
    parser.add_argument("--depth", type=int, default=1000)
    args = parser.parse_args(argv)
    runs = ranked_runs(args.runs, args.queries, args.depth)[1]
    fastir.fuse(ranked_runs(args.runs, 5, args.depth)[1], args.method)  # (compiles)

    def given():
        if not args.fresh_runs:
            return runs
        return [fastir.Run(r.query_ids, r.starts, r.stops, r.doc_ids, r.scores, r.name)
                for r in runs]

    wall, cpu = [], []
    for _ in range(args.calls):
        these = given()
        start, start_cpu = time.perf_counter(), time.process_time()
        fastir.fuse(these, args.method)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"{args.method}, {args.runs} x {args.queries:,} x {args.depth:,}"
          f"{', new Run objects each call' if args.fresh_runs else ''}: wall ms "
          f"{' '.join(f'{s * 1000:.0f}' for s in wall)} | median {np.median(wall) * 1000:.1f}"
          f", CPU median {np.median(cpu) * 1000:.1f}")


if __name__ == "__main__":
    main()
