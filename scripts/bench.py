"""Files to means at every size, fastir against the peers, each system in its own process.

    python scripts/bench.py                       # every size class (a few minutes)
    python scripts/bench.py --sizes tiny,trec     # some of them
    python scripts/bench.py --qrels Q --run R     # one pair of files

Size classes (generated into ``data/`` by scripts/generate.py when missing, deterministic):
``tiny`` is trec_eval's own test pair (1,500 run lines), ``trec`` a TREC-style run of 50
queries x 1,000 documents (graded labels), ``trecdl`` 2,000 x 1,000, ``msmarco`` the MS
MARCO-dev shape (6,980 x 1,000, 291 MB). Every system reads both files and computes the means
of map, recip_rank, ndcg_cut_10, P_10 and recall_1000 (trec_eval: the same ``-m`` flags),
whole process, warm caches. Systems run interleaved, ``--repeat`` times each (a noisy
machine varies from run to run: compare systems within one table); the table gives the
median and the minimum wall time, the peak RSS, and each median over fastir's command
line's. Every system's means must equal fastir's (to 1e-4: pytrec_eval ranks float32
scores, ranx breaks ties its own way) or the script stops.

The trec_eval binary is taken from PATH, else built from ../shared/peers (``build-trec-eval``)
into data/bin; without either its rows are left out, with a note. ``--systems`` chooses.
Before timing, fastir's bytecode is compiled (as a regular install does) and its kernels are
warmed up (``fastir warmup``), so the times are those of an installed, warmed-up fastir.
"""

import argparse
import compileall
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]
TREC_FLAGS = ["-m", "map", "-m", "recip_rank", "-m", "ndcg_cut.10", "-m", "P.10", "-m",
              "recall.1000"]

SIZES = {  # name: (files, generate.py arguments, repeats)
    "tiny": ((ROOT / "tests/data/trec_eval/inputs/qrels.test",
              ROOT / "tests/data/trec_eval/inputs/results.test"), None, 15),
    "trec": ((DATA / "trec50.qrels", DATA / "trec50.run"),
             ["trecdl", "--queries", "50", "--depth", "1000", "--out", str(DATA / "trec50")],
             9),
    "trecdl": ((DATA / "trecdl.qrels", DATA / "trecdl.run"),
               ["trecdl", "--queries", "2000", "--depth", "1000", "--out",
                str(DATA / "trecdl")], 3),
    "msmarco": ((DATA / "msmarco-dev.qrels", DATA / "msmarco-dev.run"),
                ["msmarco", "--queries", "6980", "--depth", "1000", "--out",
                 str(DATA / "msmarco-dev")], 3),
}

PYTHON_RUNNERS = {
    "fastir (library)": """
import fastir
means = fastir.evaluate(QRELS, RUN, MEASURES, missing="skip").mean
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
scores = evaluate(Qrels.from_file(QRELS, kind="trec"), Run.from_file(RUN, kind="trec"),
                  list(names.values()), make_comparable=False)
means = {m: float(scores[n]) for m, n in names.items()}
""",
    "naive reference": """
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
names = ["AP", "RR", "nDCG@10", "P@10", "R@1000"]
per_query = naive.evaluate(read(QRELS, lambda f: int(f[3])), read(RUN, lambda f: float(f[4])),
                           names, missing="skip")
order = sorted(per_query, key=lambda q: q.encode())
means = {m: naive.aggregate(naive.parse(names[i])[0], [per_query[q][i] for q in order])
         for i, m in enumerate(MEASURES)}
""",
}

CLI = "fastir trec_eval"
WORKER = "fastir trec_eval (worker)"
DEFAULT_SYSTEMS = ["trec_eval", "pytrec_eval", "ranx", "fastir (library)", CLI, WORKER]
#: The environment of each fastir system: in-process, or through a warm worker (started
#: by main in a private folder of its own, stopped by its process id at the end).
IN_PROCESS = {**os.environ, "FASTIR_WORKER": "off"}


def python_command(name, qrels, run):
    code = (f"QRELS, RUN = {str(qrels)!r}, {str(run)!r}\nMEASURES = {MEASURES!r}\n"
            f"{PYTHON_RUNNERS[name]}\nimport json\nprint(json.dumps(means))")
    return [sys.executable, "-c", code], lambda out: json.loads(out.splitlines()[-1]), None


def trec_command(program, qrels, run, env=None):
    def parse(out):
        return {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}
    return [*program, *TREC_FLAGS, str(qrels), str(run)], parse, env


def timed(args, env=None):
    """Wall time, peak RSS (MB) of that process alone (wait4), and its stdout."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=ROOT,
                                env=env or IN_PROCESS)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"{args[:3]} failed: {err.read()[-2000:]}")
        return wall, usage.ru_maxrss / 1024, out.read()


def trec_eval_binary():
    found = shutil.which("trec_eval")
    if found:
        return found
    built = DATA / "bin" / "trec_eval"
    script = ROOT.parent / "shared" / "peers" / "build-trec-eval"
    if not built.exists() and script.exists():
        subprocess.run([str(script), str(built.parent)], check=True, capture_output=True)
    return str(built) if built.exists() else None


def commands(systems, qrels, run, binary, worker_env=None):
    out = {}
    for name in systems:
        if name == "trec_eval":
            if binary:
                out[name] = trec_command([binary], qrels, run)
        elif name in (CLI, WORKER):
            out[name] = trec_command([sys.executable, "-m", "fastir", "trec_eval"], qrels,
                                     run, worker_env if name == WORKER else None)
        elif name in PYTHON_RUNNERS:
            module = name.split()[0]
            if module in ("fastir", "naive") or _importable(module):
                out[name] = python_command(name, qrels, run)
    return out


def _importable(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


def measure(cmds, repeat, slow=("ranx", "naive reference")):
    """Run every command once untimed (caches, ranx's JIT), then ``repeat`` times each,
    interleaved (the slow peers once); returns each system's walls, peak RSS and means."""
    results = {name: {"walls": [], "peak": 0.0, "means": None} for name in cmds}
    for r in range(-1, repeat):
        for name, (args, parse, env) in cmds.items():
            if name in slow and r > 0:
                continue
            wall, peak, out = timed(args, env)
            if name == WORKER:  # the command ran in the worker's child: its peak counts
                peak = max(peak, worker_call(env, "status")["last_peak_kb"] / 1024)
            row = results[name]
            row["means"] = parse(out)
            if r >= 0:
                row["walls"].append(wall)
                row["peak"] = max(row["peak"], peak)
    return results


def check(results):
    """Every system's means against fastir's (the library's, at full precision; printed
    trec_eval text has 4 decimals). Stops on a disagreement, but for ranx, which breaks
    score ties its own way: that is a note."""
    base = next(results[n] for n in ("fastir (library)", CLI, WORKER) if n in results)["means"]
    notes = []
    for name, row in results.items():
        tolerance = 5.01e-5 if name in ("trec_eval", CLI, WORKER) else 1e-4
        for m in MEASURES:
            gap = abs(row["means"][m] - base[m])
            if gap > tolerance and name == "ranx":
                notes.append(f"ranx differs on {m} by {gap:.1e} (its own order of tied scores)")
            elif gap > tolerance:
                raise SystemExit(f"{name} disagrees with fastir on {m}: {row['means'][m]} vs "
                                 f"{base[m]}")
    return notes


def table(title, results):
    medians = {name: statistics.median(row["walls"]) for name, row in results.items()}
    peers = [p for p in ("trec_eval", "pytrec_eval") if p in medians]
    lines = [f"\n{title}\n", "| system | wall, median (s) | min - max (s) | runs | "
             "peak RSS (MB) | " + "".join(f"{p} / this | " for p in peers),
             "|---|---:|---:|---:|---:|" + "---:|" * len(peers)]
    for name, row in results.items():
        median = medians[name]
        lines.append(f"| {name} | {median:.3f} | {min(row['walls']):.3f} - "
                     f"{max(row['walls']):.3f} | {len(row['walls'])} | {row['peak']:.0f} | "
                     + "".join(f"{medians[p] / median:.2f}x | " for p in peers))
    return "\n".join(lines)


def worker_call(env, action):
    """``fastir worker ACTION --json`` in ``env``: the worker's answer (None: none)."""
    done = subprocess.run([sys.executable, "-m", "fastir", "worker", action, "--json"],
                          env=env, cwd=ROOT, capture_output=True, text=True)
    return json.loads(done.stdout) if done.stdout.strip() else None


def start_worker(folder):
    """A warm worker in ``folder`` (private to this run): its environment and pid."""
    env = {**os.environ, "FASTIR_WORKER": "use", "FASTIR_WORKER_DIR": str(folder)}
    subprocess.run([sys.executable, "-m", "fastir", "worker", "start", "--idle", "1800"],
                   env=env, cwd=ROOT, check=True, capture_output=True)
    return env, worker_call(env, "status")["pid"]


def stop_worker(pid):
    """Stop the worker this run started, by its process id."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def import_times(repeat=15):
    walls = {"python -c pass": [], "import numpy": [], "import fastir": []}
    code = {"python -c pass": "pass", "import numpy": "import numpy",
            "import fastir": "import fastir"}
    for _ in range(repeat):
        for name in walls:
            walls[name].append(timed([sys.executable, "-c", code[name]])[0])
    lines = ["\nStart-up (whole process)\n", "| command | wall, median (s) | wall, min (s) |",
             "|---|---:|---:|"]
    for name, w in walls.items():
        lines.append(f"| `{name}` | {statistics.median(w):.3f} | {min(w):.3f} |")
    return "\n".join(lines)


def prepare():
    """Compile fastir's bytecode (a regular install does) and warm its kernels up."""
    compileall.compile_dir(str(ROOT / "fastir"), quiet=1)
    subprocess.run([sys.executable, "-m", "fastir", "warmup"], check=True, cwd=ROOT,
                   capture_output=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(SIZES), help=f"among {', '.join(SIZES)}")
    p.add_argument("--qrels", help="a qrels file (with --run: one pair, no size classes)")
    p.add_argument("--run")
    p.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                   help="among trec_eval, pytrec_eval, ranx, 'naive reference', "
                        "'fastir (library)', 'fastir trec_eval', 'fastir trec_eval (worker)'")
    p.add_argument("--repeat", type=int, default=None, help="runs per system (default: "
                   "per size class)")
    args = p.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",")]
    prepare()
    binary = trec_eval_binary() if "trec_eval" in systems else None
    if "trec_eval" in systems and not binary:
        print("note: no trec_eval binary (not on PATH, no ../shared/peers to build it): its "
              "rows are left out")
    if args.qrels:
        classes = {"given pair": ((Path(args.qrels), Path(args.run)), None, args.repeat or 3)}
    else:
        classes = {name: SIZES[name] for name in args.sizes.split(",")}
        print(import_times())
    with tempfile.TemporaryDirectory() as folder:
        worker_env, pid = start_worker(Path(folder) / "w") if WORKER in systems else (None,
                                                                                       None)
        try:
            for name, ((qrels, run), generate, repeat) in classes.items():
                _size_class(name, qrels, run, generate, args.repeat or repeat,
                            commands(systems, qrels, run, binary, worker_env))
        finally:
            if pid is not None:
                stop_worker(pid)


def _size_class(name, qrels, run, generate, repeat, cmds):
    if not run.exists():
        subprocess.run([sys.executable, str(ROOT / "scripts/generate.py"), *generate],
                       check=True)
    load = os.getloadavg()[0]
    results = measure(cmds, repeat)
    notes = check(results)
    lines = sum(1 for _ in open(run, "rb"))
    print(table(f"{name}: {run.name} ({lines:,} run lines, {run.stat().st_size / 1e6:.1f} "
                f"MB; {time.strftime('%Y-%m-%d %H:%M')}, load {load:.1f} before, "
                f"{os.getloadavg()[0]:.1f} after)", results), flush=True)
    for note in notes:
        print(f"\nnote: {note}")


if __name__ == "__main__":
    main()
