"""Files-to-means benchmark: fastir against the peers, each in its own process.

    python scripts/bench_table.py --qrels data/msmarco-dev.qrels --run data/msmarco-dev.run

Prints one markdown table: wall time and peak memory of each system reading both files
and computing the means of map, recip_rank, ndcg_cut_10, P_10 and recall_1000, and its
ratio to fastir. Every system's means must equal fastir's (to 1e-4: pytrec_eval ranks
float32 scores, ranx breaks ties differently) or the script stops; the naive reference
(tests/naive.py, plain Python) must agree to the last bit. Peers are included when installed
(pytrec_eval, ranx) or on PATH (trec_eval); ``--systems`` chooses. A last line times fastir
on containers already loaded ("prepared"), with trec_eval's official measure set too.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]

RUNNERS = {
    "naive": """
import collections, sys
sys.path.insert(0, "tests")
import naive
def read(path, value):
    out = collections.defaultdict(dict)
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                out[fields[0]][fields[2]] = value(fields)
    return out
qrels = read(QRELS, lambda f: int(f[3]))
run = read(RUN, lambda f: float(f[4]))
spec = [("AP", {}), ("RR", {}), ("nDCG", {"cutoff": 10}), ("P", {"cutoff": 10}),
        ("R", {"cutoff": 1000})]
per_query = naive.evaluate(qrels, run, spec, missing="skip")
order = sorted(per_query, key=lambda q: q.encode())
means = {m: naive.aggregate(spec[i][0], [per_query[q][i] for q in order])
         for i, m in enumerate(MEASURES)}
""",
    "fastir": """
import fastir
res = fastir.evaluate(fastir.read_qrels(QRELS), fastir.read_run(RUN), MEASURES,
                      missing="skip")
means = res.mean
""",
    "prepared": """
import fastir
qrels, run = fastir.read_qrels(QRELS), fastir.read_run(RUN)
official = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P"]
best = {}
for label, names in (("five", MEASURES), ("official", official)):
    fastir.evaluate(qrels, run, names, missing="skip").mean
    times = []
    for _ in range(5):
        t = time.perf_counter()
        fastir.evaluate(qrels, run, names, missing="skip").mean
        times.append(time.perf_counter() - t)
    best[label] = min(times)
means = fastir.evaluate(qrels, run, MEASURES, missing="skip").mean
print(json.dumps({"means": means, **best}))
raise SystemExit
""",
    "pytrec_eval": """
import pytrec_eval
with open(QRELS) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(RUN) as f:
    run = pytrec_eval.parse_run(f)
per_query = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
means = {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in MEASURES}
""",
    "ranx": """
from ranx import Qrels, Run, evaluate
names = {"map": "map", "recip_rank": "mrr", "ndcg_cut_10": "ndcg@10", "P_10": "precision@10",
         "recall_1000": "recall@1000"}
qrels = Qrels.from_file(QRELS, kind="trec")
run = Run.from_file(RUN, kind="trec")
scores = evaluate(qrels, run, list(names.values()), make_comparable=False)
means = {m: float(scores[n]) for m, n in names.items()}
""",
}


def run_python(name, qrels, run):
    code = (f"import json, time\nt0 = time.perf_counter()\nQRELS, RUN = {qrels!r}, {run!r}\n"
            f"MEASURES = {MEASURES!r}\n{RUNNERS[name]}\n"
            "print(json.dumps({'means': means, 'inner': time.perf_counter() - t0}))")
    return _timed([sys.executable, "-c", code], parse=json.loads)


def run_trec_eval(binary, qrels, run):
    args = [binary, "-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.10",
            "-m", "recall.1000", qrels, run]

    def parse(out):
        means = {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}
        return {"means": means}
    return _timed(args, parse=parse)


def _timed(args, parse):
    """Run ``args``; wall time and the peak RSS of that process alone (wait4)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read()
        if proc.returncode:
            raise RuntimeError(f"{args[0]} failed: {err.read()[-2000:]}")
    result = parse(text.strip().splitlines()[-1] if args[0] == sys.executable else text)
    result["wall"] = wall
    result["peak_mb"] = usage.ru_maxrss / 1024
    return result


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--qrels", required=True)
    p.add_argument("--run", required=True)
    p.add_argument("--systems", default="naive,trec_eval,pytrec_eval,ranx,fastir")
    args = p.parse_args(argv)
    rows = {}
    for name in args.systems.split(","):
        if name == "trec_eval":
            binary = shutil.which("trec_eval")
            if binary:
                rows[name] = run_trec_eval(binary, args.qrels, args.run)
            continue
        if name not in ("fastir", "naive"):
            try:
                __import__(name)
            except ImportError:
                continue
        rows[name] = run_python(name, args.qrels, args.run)
    base = rows["fastir"]
    for name, row in rows.items():
        for m in MEASURES:
            tolerance = 0.0 if name == "naive" else 1e-4
            if abs(row["means"][m] - base["means"][m]) > tolerance:
                raise SystemExit(f"{name} disagrees with fastir on {m}: "
                                 f"{row['means'][m]} vs {base['means'][m]}")
    print("| system | wall (s) | peak RSS (MB) | wall / fastir |")
    print("|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['wall']:.2f} | {row['peak_mb']:.0f} | "
              f"{row['wall'] / base['wall']:.1f}x |")
    prepared = run_python("prepared", args.qrels, args.run)
    print(f"| fastir, prepared containers: 5 measures / official set | "
          f"{prepared['five']:.3f} / {prepared['official']:.3f} | | |")


if __name__ == "__main__":
    main()
