"""Fusion-weight search: fastir.optimize_fusion vs ranx.optimize_fusion, side by side; and
(--fuse) every fusion method: fastir.fuse vs ranx.fuse.

    python scripts/bench_fusion.py [--queries 1000 --depth 100 --step 0.1] [--no-ranx]
    python scripts/bench_fusion.py --fuse --runs 10 --queries 6980 --depth 1000 \
        [--methods rrf,sum,...] [--ranx-queries 698] [--no-ranx]

--fuse: ``--runs`` noisy systems rank the same ``--depth`` generated candidates per query
(each run's rows in rank order, as a run file has them). fastir fuses all of them per
method, warm (its kernels compiled on a small fusion first, then one untimed call of the
whole size, so that the process's memory allocator has met the call's sizes as it has in a
loop of calls), ``--repeat`` calls alternated with ranx's (warmed the same way: the table
gives the median, the fastest and the slowest; the objects built before the calls, ranx's
Run objects above all, are frozen out of Python's garbage collections); the trained
methods' parameters come from fastir.train_fusion on the first ``--ranx-queries`` queries
(timed apart). ranx fuses those queries per method (its Run objects built from dicts
beforehand, not timed), and its time is scaled to all the queries (ranx's fusion is per
query: linear in them); the table says which were measured and which scaled.

Three noisy systems score the same generated candidates; both libraries search the weights
of a min-max-normalised weighted sum on nDCG@10 over the 3-run simplex (66 points at step
0.1; ranx's grid keeps the points whose float weights sum to exactly 1.0: 62 of them). Each
is timed warm (one untimed call first, so numba's compilation is not counted), and the
script prints both best weights and their nDCG@10 as fastir evaluates them.
"""

import argparse
import gc
import time
import warnings
from functools import partial

import bench_page
import numpy as np
from bench_page import Loads, alternated, spread, table

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


def timings(function, repeat, warm=None):
    """The seconds of ``repeat`` warm calls, and the last call's result."""
    (warm or function)()  # warm: compiles, fills caches
    seconds, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return seconds, result


def timed(function, repeat, warm=None):
    """The best of ``repeat`` warm calls, and the last call's result."""
    seconds, result = timings(function, repeat, warm)
    return min(seconds), result


def ranked_runs(n_runs, n_queries, depth, seed=7):
    """Qrels and ``n_runs`` runs over the same candidates, rows in rank order."""
    rng = np.random.default_rng(seed)
    grades = rng.choice([0, 0, 0, 0, 1, 1, 2, 3], size=(n_queries, depth))
    qids = np.repeat(np.arange(n_queries), depth)
    judged = rng.random(qids.size) < 0.5
    qrels = fastir.Qrels.from_arrays(qids[judged], np.tile(np.arange(depth), n_queries)[judged],
                                     grades.ravel()[judged])
    runs = []
    for i in range(n_runs):
        scores = grades * rng.uniform(0.2, 0.8) + rng.normal(size=grades.shape)
        order = np.argsort(-scores, axis=1, kind="stable")
        runs.append(fastir.Run.from_arrays(qids, order.ravel(), np.take_along_axis(
            scores, order, axis=1).ravel(), name=f"sys{i}"))
    return qrels, runs


#: Parameters of each method for the benchmark (ranx's names; trained ones learnt).
FUSE_PARAMS = {"gmnz": {"gamma": 0.5}, "logn_isr": {"sigma": 0.01}, "rbc": {"phi": 0.8},
               "rrf": {"k": 60}}
TRAINED = {"mapfuse": {}, "posfuse": {}, "probfuse": {"n_segments": 10}, "segfuse": {},
           "slidefuse": {}, "bayesfuse": {}}


#: The methods ranx takes minutes over even on few queries (ranks over every candidate):
#: ranx fuses only the first queries of these, its time scaled (BENCHMARKS.md's fusion).
SLOW_FOR_RANX = ("bordafuse", "w_bordafuse", "condorcet", "w_condorcet")


def fuse_bench(args):
    """Every method of ``args.methods``: fastir's and ranx's calls alternated; rows of
    (method, fastir's seconds, ranx's seconds or None, ranx's scale), the load seen."""
    warnings.filterwarnings("ignore")  # (ranx's numba kernels warn as they compile)
    from fastir.peers.ranx import FUSIONS

    methods = list(FUSIONS) if args.methods == "all" else args.methods.split(",")
    qrels, runs = ranked_runs(args.runs, args.queries, args.depth)
    n_train = args.ranx_queries or args.queries  # (trained on these: the same distribution)
    train_runs, small = ([fastir.Run.from_arrays(np.repeat(np.arange(n), args.depth),
                                                 r.doc_ids.values[:n * args.depth],
                                                 r.scores[:n * args.depth], name=r.name)
                          for r in runs] for n in (n_train, 5))
    params = {}
    for method in methods:
        ours = FUSIONS[method][0]
        params[method] = dict(FUSE_PARAMS.get(method, {}))
        if ours in ("wsum", "mixed", "wmnz", "w_bordafuse", "w_condorcet"):
            params[method]["weights"] = list(np.linspace(1, 2, args.runs))
        if method in TRAINED:
            start = time.perf_counter()
            learnt = fastir.train_fusion(qrels, train_runs, method, **TRAINED[method])
            print(f"train {method}: {time.perf_counter() - start:.2f} s", flush=True)
            params[method].update(learnt, **({"w": 5} if method == "slidefuse" else {}))
    ranx_runs = None
    if not args.no_ranx:
        import ranx

        start = time.perf_counter()
        ranx_runs = [as_ranx(ranx, run) for run in train_runs]
        warm = [as_ranx(ranx, run) for run in small]
        print(f"ranx Runs of {n_train} queries built in {time.perf_counter() - start:.1f} s "
              "(not timed below)", flush=True)
    gc.collect()  # (then the objects built so far, ranx's Runs above all, are left out of
    gc.freeze()   # the collections the calls below set off: neither side pays for them)
    rows, loads = [], Loads()
    for method in methods:
        ours = FUSIONS[method][0]
        calls = {"fastir": _warmed(partial(fastir.fuse, small, ours, **params[method]),
                                   partial(fastir.fuse, runs, ours, **params[method]))}
        if ranx_runs is not None:
            import ranx

            given = {"norm": None, "method": method, "params": params[method]}
            calls["ranx"] = _warmed(partial(ranx.fuse, warm, **given),
                                    partial(ranx.fuse, ranx_runs, **given))
        seconds = alternated(calls, args.repeat, loads)
        rows.append((method, seconds["fastir"], seconds.get("ranx")))
        print(f"{method}: fastir {spread(seconds['fastir'])} s" + (
              f", ranx {spread(seconds['ranx'])} s on {n_train} queries"
              if "ranx" in seconds else ""), flush=True)
    return rows, args.queries / n_train, loads


def _warmed(small, call):
    """``call`` timed: a function returning its seconds, which first runs ``small`` (its
    kernels compiled) and ``call`` once untimed (the first calls of the whole size are
    slower: the allocator meets its sizes)."""
    warm = [small, call]

    def timed_call():
        while warm:
            warm.pop(0)()
        start = time.perf_counter()
        call()
        return time.perf_counter() - start
    return timed_call


def fusion_table(rows, scale, loads, n_ranx):
    """The markdown table of :func:`fuse_bench`'s rows (ranx's times scaled by ``scale``
    from its ``n_ranx`` queries)."""
    out = []
    for method, ours, theirs in rows:
        said = spread(theirs, scale) if theirs else ""
        if theirs and scale != 1:
            said += f"; {spread(theirs)} on {n_ranx:,} queries x {scale:g}"
        speed_up = (f"{float(np.median(theirs)) * scale / float(np.median(ours)):.1f}x"
                    if theirs else "")
        out.append([method, f"`fastir.fuse(runs, \"{method}\")`", spread(ours), said, speed_up,
                    len(ours), loads.text()])
    header = [("method", "l"), ("call", "l"), ("fastir (s), median (min-max)", "r"),
              ("ranx.fuse (s)", "r"), ("speed-up", "r"), ("calls", "r"), ("when, load", "l")]
    return table(header, out)


def section(smoke=False, repeat=None):
    """The fusion section of BENCHMARKS.md: every method on 10 runs x 6,980 queries x 1,000
    documents, ranx on the same queries but for the slow ones (14 queries, scaled);
    ``smoke``: 3 runs x 60 x 100, two methods and one slow one."""
    size = (dict(runs=3, queries=60, depth=100) if smoke else
            dict(runs=10, queries=6980, depth=1000))
    from fastir.peers.ranx import FUSIONS

    fast = [m for m in FUSIONS if m not in SLOW_FOR_RANX]
    tables = []
    for methods, n_ranx in ((["sum", "rrf"] if smoke else fast, None),
                            (["bordafuse"] if smoke else list(SLOW_FOR_RANX), 14)):
        args = argparse.Namespace(**size, methods=",".join(methods), ranx_queries=n_ranx,
                                  repeat=repeat or (2 if smoke else 3), no_ranx=False)
        rows, scale, loads = fuse_bench(args)
        tables.append(fusion_table(rows, scale, loads, n_ranx or size["queries"]))
    text = (f"`fastir.fuse` against `ranx.fuse` on {size['runs']} runs x {size['queries']:,} "
            f"queries x {size['depth']:,} documents (generated, each run's rows in rank "
            "order; no normalisation; trained methods' parameters from "
            "`fastir.train_fusion`), warm: each side's kernels compiled on 5 queries and one "
            "untimed call of the whole size first, ranx's Run objects built beforehand, the "
            "two sides' calls alternated. The second table's methods take ranx minutes a "
            "query set: ranx fuses the first 14 queries, its time scaled to all (its fusion "
            "is per query).")
    return bench_page.section("fusion", "Rank fusion", text, "\n\n".join(tables))


def as_ranx(ranx, run):
    """A fastir Run as a ranx Run (text ids)."""
    return ranx.Run({str(q): {str(d): s for d, s in docs.items()}
                     for q, docs in run.to_dict().items()}, name=run.name)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fuse", action="store_true", help="time every fusion method instead")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--methods", default="all", help="ranx's method names, comma-separated")
    p.add_argument("--ranx-queries", type=int, help="ranx fuses only the first N queries")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--depth", type=int, default=100)
    p.add_argument("--step", type=float, default=0.1)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-ranx", action="store_true", help="time fastir only")
    args = p.parse_args(argv)
    if args.fuse:
        rows, scale, loads = fuse_bench(args)
        print(fusion_table(rows, scale, loads, args.ranx_queries or args.queries))
        return
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
