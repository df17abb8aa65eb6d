"""A user's measure three ways: fastir's compiled one (``fastir.define_measure``) against the
built-in measure of the same work, and ir_measures' ``define_byquery`` of the same function
(answered by ir_measures' runtime provider, and by fastir's provider).

    python scripts/bench_user_measures.py data/msmarco-dev.qrels data/msmarco-dev.run
    python scripts/bench_user_measures.py Q R --repeat 7 --subset 300

The measure is nDCG@10 (and nDCG of the whole ranking) with the log2 discount written as
a user's function (the guide's, docs/guides/own-measures.md), so its values equal the
built-in nDCG's (checked: the script stops otherwise) and the work is the same.

fastir: the qrels read and prepared once (``fastir.Evaluator``), then ``evaluate(run)``
(the join and the measure) on the run read once; built-in and user measure alternated
``--repeat`` times after a warm-up call each, medians and minima. ir_measures:
``define_byquery`` of the same function over pandas frames (each query's run rows merged
with its qrels, then the function), on the first ``--subset`` queries of the run only (it
takes minutes on all of MS MARCO), timed once after a warm-up, and extrapolated to the
run's queries in proportion (said so in the output).
"""

import argparse
import math
import os
import statistics
import time

import numpy as np

import fastir


def user_ndcg(ranked, judged, n_rel, cutoff):
    """nDCG@k as a user writes it: gains are the labels, rank i discounted by log2(i + 1)."""
    dcg = 0.0
    for i in range(len(ranked)):
        if ranked[i] > 0:
            dcg += ranked[i] / math.log2(i + 2)
    ideal = 0.0
    for i in range(min(cutoff, len(judged)) if cutoff else len(judged)):
        if judged[i] > 0:
            ideal += judged[i] / math.log2(i + 2)
    return dcg / ideal if ideal > 0 else 0.0


#: (built-in, user measure) of the same work: nDCG at a cutoff, and of the whole ranking.
PAIRS = [("nDCG@10", "user_ndcg@10"), ("nDCG", "user_ndcg")]


def timed(work, *args):
    start = time.perf_counter()
    work(*args)
    return time.perf_counter() - start


def fastir_times(qrels, run, repeat, pair):
    """{name: [seconds]} of a built-in measure and the user's of the same work, alternated
    (their means must be equal): ``evaluate(run)`` (the join and the measure), and the
    measure alone on the join made once (``Plan.values``); and the mean."""
    from fastir.engine import Plan
    from fastir.model.join import join
    from fastir.options import DEFAULT

    evaluators = {name: fastir.Evaluator(qrels, [name]) for name in pair}
    means = [list(ev.evaluate(run).mean.values())[0] for ev in evaluators.values()]
    assert abs(means[0] - means[1]) < 1e-12, means  # (and a warm-up call each)
    joined = join(qrels, run, DEFAULT)
    plans = {name: Plan([name]) for name in pair}
    for plan in plans.values():
        plan.values(joined, qrels)  # (warm-up)
    times = {f"{way} {name}": [] for way in ("evaluate", "values") for name in pair}
    for _ in range(repeat):
        for name in pair:
            times[f"evaluate {name}"].append(timed(evaluators[name].evaluate, run))
            times[f"values {name}"].append(timed(plans[name].values, joined, qrels))
    return times, means[0]


def frames(qrels_path, run_path, subset):
    """ir_measures' records of the qrels and of the run's first ``subset`` queries."""
    import ir_measures

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run, queries = [], []
    for row in ir_measures.read_trec_run(str(run_path)):
        if not queries or queries[-1] != row.query_id:
            if len(queries) == subset:
                break
            queries.append(row.query_id)
        run.append(row)
    return qrels, run, queries


def by_query(qrels, run):
    """The same function for ir_measures' define_byquery: one query's frames."""
    merged = run.merge(qrels[["doc_id", "relevance"]], "left", on="doc_id")
    ranked = merged["relevance"].fillna(-1).to_numpy(dtype=np.int32)
    judged = np.sort(qrels["relevance"].to_numpy(dtype=np.int32))[::-1]
    return user_ndcg(ranked, judged, int((judged >= 1).sum()), 10)


def ir_measures_time(qrels, run, through_fastir):
    import ir_measures

    from fastir.peers import provider

    measure = ir_measures.define_byquery(by_query, name="user_ndcg") @ 10
    (provider.register if through_fastir else provider.unregister)()
    try:
        ir_measures.calc_aggregate([measure], qrels, run)  # (warm-up)
        start = time.perf_counter()
        value = ir_measures.calc_aggregate([measure], qrels, run)[measure]
        return time.perf_counter() - start, value
    finally:
        provider.unregister()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--subset", type=int, default=300,
                        help="queries ir_measures' define evaluates (then extrapolated)")
    args = parser.parse_args()
    fastir.define_measure(user_ndcg, cutoff=True)
    qrels = fastir.read_qrels(args.qrels)
    run = fastir.read_run(args.run)
    n_queries = len(run.query_ids)
    print(f"{n_queries} queries, {len(run)} run lines; load {os.getloadavg()[0]:.1f}")
    print("| way | median s | min s | vs built-in |")
    print("|---|---|---|---|")
    for pair in PAIRS:
        times, mean = fastir_times(qrels, run, args.repeat, pair)
        for way in ("evaluate", "values"):
            base = statistics.median(times[f"{way} {pair[0]}"])
            for name in pair:
                values = times[f"{way} {name}"]
                print(f"| {way}, {name} (mean {mean:.6f}) | {statistics.median(values):.3f} | "
                      f"{min(values):.3f} | {statistics.median(values) / base:.2f}x |")
        if pair == PAIRS[0]:
            compiled = statistics.median(times[f"evaluate {pair[1]}"])
    ir_qrels, ir_run, queries = frames(args.qrels, args.run, args.subset)
    for through in (False, True):
        seconds, _ = ir_measures_time(ir_qrels, ir_run, through)
        whole = seconds * n_queries / len(queries)
        who = "fastir's provider" if through else "ir_measures' runtime provider"
        print(f"| ir_measures define_byquery, {who}: {len(queries)} queries {seconds:.2f} s, "
              f"extrapolated to {n_queries} | {whole:.1f} | | "
              f"{whole / compiled:.0f}x user_ndcg@10's time |")


if __name__ == "__main__":
    main()
