"""Fusion-weight search: fastir.optimize_fusion vs ranx.optimize_fusion, side by side.

    python scripts/bench_fusion.py [--queries 1000 --depth 100 --step 0.1] [--no-ranx]

Three noisy systems score the same generated candidates; both libraries search the weights
of a min-max-normalised weighted sum on nDCG@10 over the 3-run simplex (66 points at step
0.1; ranx's grid keeps the points whose float weights sum to exactly 1.0: 62 of them). Each
is timed warm (one untimed call first, so numba's compilation is not counted), and the
script prints both best weights and their nDCG@10 as fastir evaluates them.
"""

import argparse
import time

import numpy as np

import fastir


def collection(n_queries, depth, seed=7):
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.arange(n_queries), depth)
    docs = np.tile(np.arange(depth), n_queries)
    grades = rng.choice([0, 0, 0, 0, 1, 1, 2, 3], size=qids.size)
    judged = rng.random(qids.size) < 0.5
    qrels = fastir.Qrels.from_arrays(qids[judged], docs[judged], grades[judged])
    runs = {f"sys{i}": fastir.Run.from_arrays(
        qids, docs, grades * strength + rng.normal(size=qids.size) * noise, name=f"sys{i}")
        for i, (strength, noise) in enumerate([(0.8, 1.0), (0.6, 0.7), (0.3, 0.5)])}
    return qrels, runs


def timed(function, repeat, warm=None):
    (warm or function)()  # warm: compiles, fills caches
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--step", type=float, default=0.1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-ranx", action="store_true", help="time fastir only")
    args = p.parse_args(argv)
    qrels, runs = collection(args.queries, args.depth)
    measure = "nDCG@10"

    def ours():
        return fastir.optimize_fusion(qrels, runs, measure, "wsum", "min-max", step=args.step)

    seconds, search = timed(ours, args.repeat)
    rows = [("fastir.optimize_fusion", len(search.grid), seconds, search.weights)]
    if not args.no_ranx:
        import ranx

        start = time.perf_counter()
        r_runs = [ranx.Run({str(q): {str(d): s for d, s in docs.items()}
                            for q, docs in run.to_dict().items()}, name=name)
                  for name, run in runs.items()]
        r_qrels = ranx.Qrels({str(q): {str(d): v for d, v in docs.items()}
                              for q, docs in qrels.to_dict().items()})
        convert = time.perf_counter() - start
        from ranx.fusion_optimization.optimize_weights import (
            get_possible_weights,
            get_trial_configs,
        )

        n_ranx = len(get_trial_configs(get_possible_weights(args.step), len(r_runs)))

        def theirs():
            return ranx.optimize_fusion(r_qrels, r_runs, norm="min-max", method="wsum",
                                        metric="ndcg@10", step=args.step,
                                        show_progress=False)["weights"]

        small = {q: r_qrels.to_dict()[q] for q in list(r_qrels.keys())[:10]}

        def warm():  # ranx's kernels compile per type, not size: warm them on 10 queries
            ranx.optimize_fusion(ranx.Qrels(small), [ranx.Run({q: r.to_dict()[q] for q in small})
                                                     for r in r_runs], norm="min-max",
                                 method="wsum", metric="ndcg@10", step=args.step,
                                 show_progress=False)

        r_seconds, r_weights = timed(theirs, max(1, args.repeat - 2), warm)
        rows.append(("ranx.optimize_fusion", n_ranx, r_seconds, [float(w) for w in r_weights]))
    n_rows = args.queries * args.depth
    print(f"{args.queries:,} queries x {args.depth} candidates, 3 runs ({n_rows:,} rows "
          f"each), wsum + min-max, step {args.step}, {measure}; best of {args.repeat} "
          "warm runs\n")
    print("| | grid points | seconds | per point (ms) | best weights | nDCG@10 of them |")
    print("|---|---:|---:|---:|---|---:|")
    for name, points, secs, weights in rows:
        fused = fastir.fuse(runs, "wsum", weights=weights, norm="min-max")
        value = fastir.evaluate(qrels, fused, measure).mean[measure]
        print(f"| {name} | {points} | {secs:.3f} | {1000 * secs / points:.1f} | "
              f"{[round(w, 3) for w in weights]} | {value:.4f} |")
    if len(rows) == 2:
        same = np.allclose(rows[0][3], rows[1][3])
        print(f"\nsame best weights: {same}; speed-up {rows[1][2] / rows[0][2]:.1f}x "
              f"(ranx's conversion from dicts, not timed above: {convert:.2f} s)")


if __name__ == "__main__":
    main()
