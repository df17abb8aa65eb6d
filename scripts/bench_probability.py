"""Probabilistic labels against integer labels on the MS MARCO dev shape: BENCHMARKS.md's
probability section (``./dev bench --case probability``), or printed alone.

    python scripts/bench_probability.py [--repeat 8] [--smoke]

``fastir.evaluate`` in one process, warm, on the msmarco case's files (6,980 queries x
1,000 documents, 7,657 judgments of label 1; scripts/generate.py makes them when missing):
the qrels and the run read once, then the same call timed with the integer labels and with
each judgment a probability of relevance (uniform in (0, 1), seeded: a query of n judgments
then has 2^n label assignments), ``labels="probability"``. The two
calls alternate in ABBA order (the first of two back-to-back calls may run faster), one
untimed call each first; medians and the load seen.
"""

import argparse
import statistics
import time

import bench_page
import numpy as np
from bench_means import MEASURES
from bench_page import Loads, spread, table

import fastir
from fastir.model.values import Distributions


def inputs(smoke):
    """(integer qrels, the same judgments as probabilities, the run)."""
    from bench import FILES

    files = FILES["msmarco"].smoke if smoke else FILES["msmarco"]
    qrels_path, run_path = (str(bench_page.ROOT / p) for p in files.files())
    qrels = fastir.read_qrels(qrels_path)
    probabilities = np.random.default_rng(0).random(len(qrels))
    probable = fastir.Qrels(qrels.query_ids, qrels.indptr, qrels.doc_ids,
                            np.arange(len(qrels)), qrels.source,
                            Distributions.of_probabilities(probabilities))
    return qrels, probable, fastir.read_run(run_path)


def abba(calls, rounds, loads):
    """{name: [seconds]} of two calls timed in ABBA order, one untimed call each first."""
    for call in calls.values():
        call()
    names = list(calls)
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            calls[name]()
            times[name].append(time.perf_counter() - start)
            loads.sample()
    return times


def section(smoke=False, repeat=None):
    """The probability section of BENCHMARKS.md."""
    qrels, probable, run = inputs(smoke)
    calls = {"integer labels": lambda: fastir.evaluate(qrels, run, MEASURES),
             "probabilities": lambda: fastir.evaluate(probable, run, MEASURES,
                                                      labels="probability")}
    loads = Loads()
    times = abba(calls, repeat or (2 if smoke else 8), loads)
    base = statistics.median(times["integer labels"])
    rows = [[name, f"`{code}`", spread(times[name], 1e3, 0) + " ms",
             f"{statistics.median(times[name]) / base:.2f}", len(times[name]), loads.text()]
            for name, code in (("integer labels", "fastir.evaluate(qrels, run, M)"),
                               ("probabilities", "fastir.evaluate(probable, run, M, "
                                                 "labels='probability')"))]
    text = (f"`fastir.evaluate` on the MS MARCO dev shape ({run.n_queries:,} queries x "
            f"1,000 documents, {len(qrels):,} judgments), in one process, warm, the qrels "
            "and the run read first: integer labels, and the same judgments as "
            "probabilities of relevance (uniform, seeded; each query of n judgments then has "
            "2^n label assignments, every one evaluated exactly). M: map, recip_rank, "
            "ndcg_cut_10, P_10, recall_1000. The two calls alternate in ABBA order, one "
            "untimed call each first (`python scripts/bench_probability.py`).")
    header = [("labels", "l"), ("call", "l"), ("median (min-max)", "r"),
              ("/ integer", "r"), ("runs", "r"), ("when, load", "l")]
    return bench_page.section("probability", "Probabilistic labels, MS MARCO dev shape",
                              text, table(header, rows))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, help="timed calls of each (default 8)")
    p.add_argument("--smoke", action="store_true", help="the small msmarco files, 2 calls")
    args = p.parse_args(argv)
    print(section(args.smoke, args.repeat))


if __name__ == "__main__":
    main()
