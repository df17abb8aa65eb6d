"""repro_eval's workflow on MS MARCO dev-shaped runs: repro_eval against fastir.repro_eval.

    python scripts/bench_repro.py prepare --out data/repro      # the four runs and qrels
    python scripts/bench_repro.py time --data data/repro --rounds 2
    python scripts/bench_repro.py once --data data/repro --system fastir   # one workflow

``prepare`` writes ``qrels``, ``b_orig``, ``a_orig``, ``b_rep`` and ``a_rep`` (6,980 queries x
1,000 documents each, 7M lines and about 290 MB a run; the same arguments give the same
bytes): the original baseline is ``scripts/generate.py msmarco``'s run; the original advanced
run rescores its candidates with the relevant documents lifted; each reproduction adds noise
to the scores of its original and swaps 5% of its documents for others, so that the rankings
differ but keep their lengths (KTU needs that).

``once`` runs the workflow of repro_eval's README in one process: the evaluator on the five
files, ``trim()``, ``evaluate()``, then ``ktu``, ``rbo``, ``rmse``, ``nrmse``, ``er``, ``dri``
and ``ttest``, and prints each step's seconds and a digest of the results. ``time`` runs
``once`` for each system in turn (fastir, repro_eval, fastir, ...), ``--rounds`` times each,
as whole processes, and prints every run's seconds, the medians and their ratio. Give it the
``--data`` folder only: keep the data out of git.
"""

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SCRIPTS = Path(__file__).resolve().parent
RUNS = ("b_orig", "a_orig", "b_rep", "a_rep")


def prepare(out, queries, depth, seed=1):
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    base = out / "msmarco"
    subprocess.run([sys.executable, str(SCRIPTS / "generate.py"), "msmarco", "--queries",
                    str(queries), "--depth", str(depth), "--out", str(base)], check=True)
    (out / "qrels").write_bytes(base.with_suffix(".qrels").read_bytes())
    columns = ["qid", "q0", "doc", "rank", "score", "tag"]
    run = pd.read_csv(base.with_suffix(".run"), sep=" ", names=columns,
                      dtype={"qid": np.int64, "doc": np.int64, "score": np.float64})
    qrels = pd.read_csv(out / "qrels", sep=" ", names=["qid", "it", "doc", "rel"])
    relevant = set(zip(qrels.qid.tolist(), qrels.doc.tolist()))
    rng = np.random.default_rng(seed)
    qid, doc, score = run.qid.to_numpy(), run.doc.to_numpy(), run.score.to_numpy()
    lifted = np.fromiter(((q, d) in relevant for q, d in zip(qid.tolist(), doc.tolist())),
                         dtype=bool, count=len(qid))
    advanced = score + 3.0 * lifted + rng.normal(0, 1.0, len(score))
    spare = iter(range(9_000_000, 9_000_000 + len(qid)))
    write(out / "b_orig", qid, doc, score, "b_orig")
    write(out / "a_orig", qid, doc, advanced, "a_orig")
    for name, scores in (("b_rep", score), ("a_rep", advanced)):
        swapped = rng.random(len(qid)) < 0.05
        docs = doc.copy()
        docs[swapped] = [next(spare) for _ in range(int(swapped.sum()))]
        write(out / name, qid, docs, scores + rng.normal(0, 0.5, len(qid)), name)
    for suffix in (".qrels", ".run"):
        base.with_suffix(suffix).unlink()


def write(path, qid, doc, score, tag):
    """A run file in rank order (score descending within each query, 4 decimals)."""
    score = np.round(score, 4)
    order = np.lexsort((-doc, -score, qid))  # (trec_eval's order: ties by id descending)
    qid, doc, score = qid[order], doc[order], score[order]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    rank = np.arange(len(qid)) - np.repeat(starts, np.diff(np.r_[starts, len(qid)])) + 1
    with open(path, "w") as f:
        for q, d, r, s in zip(qid.tolist(), doc.tolist(), rank.tolist(), score.tolist()):
            f.write(f"{q} Q0 {d} {r} {s:.4f} {tag}\n")


def once(data, system):
    """The README workflow, each step timed; prints the steps and a digest."""
    start = time.perf_counter()
    if system == "fastir":
        from fastir.repro_eval import RpdEvaluator
    else:
        from repro_eval.Evaluator import RpdEvaluator
    steps = {}

    def step(name, function):
        t = time.perf_counter()
        value = function()
        steps[name] = time.perf_counter() - t
        return value

    evaluator = step("load", lambda: RpdEvaluator(
        qrels_orig_path=str(data / "qrels"),
        **{f"run_{name}_path": str(data / name) for name in RUNS}))
    step("trim", evaluator.trim)
    step("evaluate", evaluator.evaluate)
    results = {name: step(name, getattr(evaluator, name))
               for name in ("ktu", "rbo", "rmse", "nrmse", "er", "dri", "ttest")}
    total = time.perf_counter() - start
    print(f"{system}: {total:.2f} s (" + ", ".join(f"{k} {v:.2f}" for k, v in steps.items())
          + ")")
    print(f"  KTU {results['ktu']}  RBO {results['rbo']}")
    print(f"  RMSE AP {results['rmse']['baseline']['AP']:.6f}  ER AP {results['er']['AP']:.6f}"
          f"  DRI AP {results['dri']['AP']:.6f}  p AP {results['ttest']['baseline']['AP']:.6g}")


def time_both(data, rounds, systems):
    seconds = {s: [] for s in systems}
    for r in range(rounds):
        for system in systems:
            t = time.perf_counter()
            subprocess.run([sys.executable, __file__, "once", "--data", str(data), "--system",
                            system], check=True)
            seconds[system].append(time.perf_counter() - t)
            print(f"round {r + 1} {system}: {seconds[system][-1]:.2f} s (whole process)",
                  flush=True)
    medians = {s: statistics.median(v) for s, v in seconds.items()}
    print("medians: " + ", ".join(f"{s} {m:.2f} s" for s, m in medians.items()))
    if len(systems) == 2:
        print(f"{systems[1]} / {systems[0]}: {medians[systems[1]] / medians[systems[0]]:.1f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--queries", type=int, default=6980)
    p.add_argument("--depth", type=int, default=1000)
    o = sub.add_parser("once")
    o.add_argument("--data", type=Path, required=True)
    o.add_argument("--system", choices=("fastir", "repro_eval"), required=True)
    t = sub.add_parser("time")
    t.add_argument("--data", type=Path, required=True)
    t.add_argument("--rounds", type=int, default=2)
    t.add_argument("--systems", default="fastir,repro_eval")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.out, args.queries, args.depth)
    elif args.command == "once":
        once(args.data, args.system)
    else:
        time_both(args.data, args.rounds, args.systems.split(","))


if __name__ == "__main__":
    main()
