"""ir_measures and PyTerrier with and without fastir as their provider (``import
fastir.ir_measures``): the same experiment, TREC-DL-like qrels (graded, about 200 judged
documents a query) and several systems of ``--depth`` documents a query.

    python scripts/bench_provider.py --queries 43 --systems 5       # TREC DL 2019's size
    python scripts/bench_provider.py --queries 5000 --systems 3

Times are the best of ``--repeat`` runs, in this process, after one warm-up run each:
``calc_aggregate`` (ir_measures' records), ``iter_calc`` over DataFrames (what
``pt.Experiment`` calls for each system) and, if PyTerrier is installed, ``pt.Experiment``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import ir_measures  # noqa: E402
from generate import trecdl  # noqa: E402
from ir_measures import AP, RR, R, nDCG  # noqa: E402

from fastir.peers import provider  # noqa: E402

MEASURES = [nDCG @ 10, nDCG @ 100, AP(rel=2), RR(rel=2) @ 10, R(rel=2) @ 1000]


def data(n_queries, depth, n_systems):
    """Qrels records and, per system, run records (a seed each)."""
    qrels_lines, _ = trecdl(np.random.default_rng(0), n_queries, depth)
    qrels = [ir_measures.Qrel(q, d, int(label)) for q, _, d, label in
             (line.split() for line in qrels_lines)]
    runs = []
    for seed in range(n_systems):
        _, blocks = trecdl(np.random.default_rng(0), n_queries, depth)  # same judged docs
        rng = np.random.default_rng(seed + 1)
        runs.append([ir_measures.ScoredDoc(q, d, float(s) + float(rng.normal()))
                     for block in blocks for q, _, d, _, s, _ in
                     (line.split() for line in block.splitlines())])
    return qrels, runs


def best(work, repeat):
    work()  # (warm-up: compiled kernels loaded, caches filled)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def experiments(qrels, runs):
    """name -> a function evaluating every system the way that interface does."""
    import pandas as pd

    q_frame = pd.DataFrame(qrels)
    frames = [pd.DataFrame(run) for run in runs]
    out = {
        "ir_measures.calc_aggregate (records)":
            lambda: [ir_measures.calc_aggregate(MEASURES, qrels, run) for run in runs],
        "ir_measures.iter_calc (DataFrames)":
            lambda: [list(ir_measures.iter_calc(MEASURES, q_frame, f)) for f in frames],
    }
    try:
        import pyterrier as pt
    except ImportError:
        return out
    topics = pd.DataFrame({"qid": sorted(q_frame.query_id.unique()), "query": "q"})
    pt_qrels = q_frame.rename(columns={"query_id": "qid", "doc_id": "docno",
                                       "relevance": "label"})
    systems = [pt.Transformer.from_df(f.rename(columns={"query_id": "qid", "doc_id": "docno"})
                                      .assign(rank=f.groupby("query_id").cumcount()))
               for f in frames]
    out["pt.Experiment"] = lambda: pt.Experiment(systems, topics, pt_qrels, MEASURES)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=43)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    qrels, runs = data(args.queries, args.depth, args.systems)
    print(f"{args.systems} systems x {args.queries} queries x {args.depth} docs, "
          f"{len(qrels)} judgments; {', '.join(map(str, MEASURES))}")
    print(f"{'':40s} {'ir_measures':>12s} {'with fastir':>12s} {'speed-up':>9s}")
    for name, work in experiments(qrels, runs).items():
        provider.unregister()
        without = best(work, args.repeat)
        provider.register()
        with_fastir = best(work, args.repeat)
        provider.unregister()
        print(f"{name:40s} {without:11.3f}s {with_fastir:11.3f}s {without / with_fastir:8.1f}x")


if __name__ == "__main__":
    main()
