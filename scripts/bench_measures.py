"""What the measures beyond trec_eval cost, as markdown rows.

    python scripts/bench_measures.py [--data data/trecdl]

- Each new family alone, and the official set, on a qrels/run pair (``--data``: a prefix
  of ``.qrels`` and ``.run`` files, e.g. from ``scripts/generate.py``): ``Evaluator.evaluate``,
  best of 5, compiled.
- The diversity measures on seeded synthetic subtopic judgments (50 topics x 600 judged
  documents, 1-3 of 6 subtopics each, 1000 ranked), and ir_measures through pyndeval on
  the same data when it is installed (values compared).
"""

import argparse
import time

import numpy as np

import fastir
from fastir import _jit

SINGLE = ["official", "nDCG@10", "ERR@20", "nERR@20", "Judged@10", "Compat",
          "INST(max_rel=3)", "SDCG(max_rel=3)@10", "BPM(max_rel=3)@20"]
DIVERSITY = ["alpha_nDCG@20", "ERR_IA@20", "nERR_IA@20", "NRBP", "nNRBP", "P_IA@20",
             "StRecall@20"]


def best_of(function, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/trecdl")
    args = parser.parse_args()
    with _jit.forced("numba"):
        qrels = fastir.read_qrels(args.data + ".qrels")
        run = fastir.read_run(args.data + ".run")
        print(f"| measures, {args.data} ({len(run)} run rows) | time |\n|---|---:|")
        for name in SINGLE:
            evaluator = fastir.Evaluator(qrels, [name])
            evaluator.evaluate(run)
            seconds = best_of(lambda evaluator=evaluator: evaluator.evaluate(run))
            print(f"| {name} | {seconds * 1e3:.1f} ms |")

        rng = np.random.default_rng(0)
        judged, ranked = {}, {}
        for q in range(50):
            judged[str(q)] = {f"d{d}": {str(s): int(rng.integers(0, 3))
                                        for s in rng.choice(6, rng.integers(1, 4),
                                                            replace=False)}
                              for d in rng.choice(5000, 600, replace=False)}
            ranked[str(q)] = {f"d{d}": float(rng.random())
                              for d in rng.choice(5000, 1000, replace=False)}
        sub_qrels, sub_run = fastir.Qrels.from_dict(judged), fastir.Run.from_dict(ranked)
        print("\n| diversity, 50 x 600 judged x 1000 ranked | time |\n|---|---:|")
        for names in (["AP"], ["alpha_nDCG@20"], ["nNRBP"], DIVERSITY):
            fastir.evaluate(sub_qrels, sub_run, names)
            seconds = best_of(lambda names=names: fastir.evaluate(sub_qrels, sub_run, names))
            print(f"| fastir {', '.join(names)} | {seconds * 1e3:.1f} ms |")
    try:
        import ir_measures
    except ImportError:
        return
    rows = [ir_measures.Qrel(q, d, label, s) for q, docs in judged.items()
            for d, pairs in docs.items() for s, label in pairs.items()]
    measures = [ir_measures.parse_measure(name) for name in DIVERSITY]
    start = time.perf_counter()
    values = ir_measures.pyndeval.calc_aggregate(measures, rows, ranked)
    seconds = time.perf_counter() - start
    ours = fastir.evaluate(sub_qrels, sub_run, DIVERSITY).mean
    gap = max(abs(values[m] - ours[str(m)]) for m in measures if str(m) in ours)
    print(f"| ir_measures (pyndeval), the same {len(DIVERSITY)} | {seconds * 1e3:.0f} ms "
          f"(largest difference {gap:.1e}) |")


if __name__ == "__main__":
    main()
