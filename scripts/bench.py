"""Files to means at every size, fastir against the peers, each system in its own process.

    python scripts/bench.py                       # every size class (a few minutes)
    python scripts/bench.py --sizes tiny,trec     # some of them
    python scripts/bench.py --qrels Q --run R     # one pair of files
    python scripts/bench.py --modes in-process    # calls on dicts in one process only

Size classes (generated into ``data/`` by scripts/generate.py when missing, deterministic):
``tiny`` is trec_eval's own test pair (1,500 run lines), ``trec`` a TREC-style run of 50
queries x 1,000 documents (graded labels), ``trecdl`` 2,000 x 1,000, ``msmarco`` the MS
MARCO-dev shape (6,980 x 1,000, 291 MB). Every system reads both files and computes the means
of map, recip_rank, ndcg_cut_10, P_10 and recall_1000 (trec_eval: the same ``-m`` flags),
whole process, warm caches. Systems run interleaved, ``--repeat`` times each (a noisy
machine varies from run to run: compare systems within one table); the table gives the
median and the minimum wall time, the peak RSS, and each median over fastir's command
line's. fastir runs in-process (``FASTIR_WORKER=off``) but in the rows that say "worker": the
command line's and the library's (``fastir.evaluate`` on the files) go to a warm worker the
script starts in a private folder, running before the first timed run (each system runs
once untimed first), as one started by an earlier call; their peak RSS counts the
worker's process that ran the call. Every system's means must equal fastir's (to 1e-4:
pytrec_eval ranks float32 scores, ranx breaks ties its own way) or the script stops.

The trec_eval binary is taken from PATH, else built from ../shared/peers (``build-trec-eval``)
into data/bin; without either its rows are left out, with a note. ``--systems`` chooses.
The in-process mode (``--modes in-process``, run first by default) times what a script does
in a loop: the qrels (or an evaluator) prepared once, then one call on a run dict
(``{qid: {doc: score}}``) per system, alternated, medians of ``--repeat`` calls after a
warm-up call: pytrec_eval's ``RelevanceEvaluator.evaluate`` against ``fastir.pytrec_eval``'s
and ``fastir.evaluate`` (map, ndcg, P_10, recip_rank), ir_measures' ``iter_calc`` with its
pytrec_eval provider against fastir's provider, ranx's ``evaluate(qrels, Run(run))`` against
``fastir.ranx``'s. Sizes: 50 x 1,000, 500 x 1,000 and 5,000 x 100 (generate.py's trecdl
shape, made in memory) and the msmarco files read into dicts.

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
LIBRARY_WORKER = "fastir (library via worker)"
PYTHON_RUNNERS[LIBRARY_WORKER] = PYTHON_RUNNERS["fastir (library)"]
DEFAULT_SYSTEMS = ["trec_eval", "pytrec_eval", "ranx", "fastir (library)", LIBRARY_WORKER,
                   CLI, WORKER]
#: The systems run through the warm worker (the others' fastir runs in-process).
THROUGH_WORKER = (WORKER, LIBRARY_WORKER)
#: The environment of each fastir system: in-process, or through a warm worker (started
#: by main in a private folder of its own, stopped by its process id at the end).
IN_PROCESS = {**os.environ, "FASTIR_WORKER": "off"}


def python_command(name, qrels, run, env=None):
    code = (f"QRELS, RUN = {str(qrels)!r}, {str(run)!r}\nMEASURES = {MEASURES!r}\n"
            f"{PYTHON_RUNNERS[name]}\nimport json\nprint(json.dumps(means))")
    return [sys.executable, "-c", code], lambda out: json.loads(out.splitlines()[-1]), env


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
                out[name] = python_command(name, qrels, run,
                                           worker_env if name == LIBRARY_WORKER else None)
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
            if name in THROUGH_WORKER:  # it ran in the worker's child: its peak counts
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
                        "'fastir (library)', 'fastir (library via worker)', 'fastir trec_eval', "
                        "'fastir trec_eval (worker)'")
    p.add_argument("--repeat", type=int, default=None, help="runs per system (default: "
                   "per size class)")
    p.add_argument("--modes", default="process,in-process",
                   help="whole processes on files (process), calls on dicts in this "
                        "process (in-process), or both")
    p.add_argument("--dict-sizes", default=",".join(DICT_SIZES),
                   help=f"in-process sizes, among {', '.join(DICT_SIZES)}")
    p.add_argument("--dict-systems", default=",".join(DICT_SYSTEMS),
                   help=f"in-process systems, among {', '.join(DICT_SYSTEMS)}, "
                        "'fastir.evaluate().to_dict()'")
    args = p.parse_args(argv)
    systems = [s.strip() for s in args.systems.split(",")]
    modes = args.modes.split(",")
    prepare()
    if "process" in modes:  # (first: a child's peak RSS counts this process's until exec)
        whole_processes(args, systems)
    if "in-process" in modes:
        in_process(args.dict_sizes.split(","), args.dict_systems.split(","),
                   args.repeat or 7)


def whole_processes(args, systems):
    """The size classes (or the given pair), each system as a whole process."""
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
        through = any(name in systems for name in THROUGH_WORKER)
        worker_env, pid = start_worker(Path(folder) / "w") if through else (None, None)
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


# -- in-process: a script's calls on dicts, warm, one process --------------------------------
#: The in-process size classes: (generate.py kind, queries, depth), or the msmarco files.
DICT_SIZES = {"50x1000": ("trecdl", 50, 1000), "500x1000": ("trecdl", 500, 1000),
              "5000x100": ("trecdl", 5000, 100), "msmarco": None}
#: The four measures of issue 29, in each interface's names.
DICT_MEASURES = {"pytrec_eval": {"map", "ndcg", "P_10", "recip_rank"},
                 "fastir": ["map", "ndcg", "P_10", "recip_rank"],
                 "ir_measures": ["AP", "nDCG", "P@10", "RR"],
                 "ranx": ["map", "ndcg", "precision@10", "mrr"]}


def dict_inputs(size):
    """qrels and run dicts (``{qid: {doc: value}}``, str keys) of an in-process size class:
    the msmarco files read into dicts, or generate.py's shapes made in memory."""
    if size == "msmarco":
        (qrels_path, run_path), generate, _ = SIZES["msmarco"]
        if not run_path.exists():
            subprocess.run([sys.executable, str(ROOT / "scripts/generate.py"), *generate],
                           check=True)
        return (_read_dict(qrels_path, 2, 3, int), _read_dict(run_path, 2, 4, float))
    sys.path.insert(0, str(ROOT / "scripts"))
    import numpy as np
    from generate import msmarco, trecdl

    kind, n_queries, depth = DICT_SIZES[size]
    qrels_lines, run_blocks = {"trecdl": trecdl, "msmarco": msmarco}[kind](
        np.random.default_rng(13), n_queries, depth)
    return (_lines_dict(qrels_lines, 2, 3, int),
            _lines_dict("".join(run_blocks).splitlines(), 2, 4, float))


def _read_dict(path, doc, value, cast):
    with open(path) as f:
        return _lines_dict(f, doc, value, cast)


def _lines_dict(lines, doc, value, cast):
    out = {}
    for line in lines:
        fields = line.split()
        out.setdefault(fields[0], {})[fields[doc]] = cast(fields[value])
    return out


def dict_systems(qrels, systems):
    """name -> (the call timed, on a run dict; its means, to check the systems agree).
    Everything a script prepares once (an evaluator, the qrels) is prepared here."""
    out = {}
    m = DICT_MEASURES
    if "pytrec_eval" in systems and _importable("pytrec_eval"):
        import pytrec_eval

        ev = pytrec_eval.RelevanceEvaluator(qrels, m["pytrec_eval"])
        out["pytrec_eval"] = (ev.evaluate, _nested_means)
    if "fastir.pytrec_eval" in systems:
        import fastir.pytrec_eval

        ev_f = fastir.pytrec_eval.RelevanceEvaluator(qrels, m["pytrec_eval"])
        out["fastir.pytrec_eval"] = (ev_f.evaluate, _nested_means)
    if "fastir.evaluate" in systems:
        import fastir

        judged = fastir.Qrels.from_dict(qrels)
        out["fastir.evaluate"] = (lambda run: fastir.evaluate(judged, run, m["fastir"]),
                                  lambda res: dict(zip(m["fastir"], res.mean.values())))
    if "fastir.evaluate().to_dict()" in systems:
        import fastir

        judged = fastir.Qrels.from_dict(qrels)
        out["fastir.evaluate().to_dict()"] = (
            lambda run: fastir.evaluate(judged, run, m["fastir"], missing="skip").to_dict(),
            _nested_means)
    if _importable("ir_measures"):
        out.update(_ir_measures_systems(qrels, systems))
    if _importable("ranx"):
        out.update(_ranx_systems(qrels, systems))
    return out


def _ir_measures_systems(qrels, systems):
    import ir_measures

    out = {}
    measures = [ir_measures.parse_measure(x) for x in DICT_MEASURES["ir_measures"]]
    names = dict(zip(measures, DICT_MEASURES["fastir"]))

    def per_query_means(metrics):
        sums = {}
        for metric in metrics:
            sums.setdefault(names[metric.measure], []).append(metric.value)
        return {k: sum(v) / len(v) for k, v in sums.items()}

    if "ir_measures" in systems:
        ev = ir_measures.pytrec_eval.evaluator(measures, qrels)
        out["ir_measures"] = (lambda run: list(ev.iter_calc(run)), per_query_means)
    if "fastir.ir_measures" in systems:
        from fastir.peers import provider

        ev_f = provider.provider.evaluator(measures, qrels)
        out["fastir.ir_measures"] = (lambda run: list(ev_f.iter_calc(run)), per_query_means)
    return out


def _ranx_systems(qrels, systems):
    out = {}
    metrics = DICT_MEASURES["ranx"]

    def means(scores):
        return dict(zip(DICT_MEASURES["fastir"], (float(scores[k]) for k in metrics)))

    if "ranx" in systems:
        import ranx

        judged = ranx.Qrels(qrels)
        out["ranx"] = (lambda run: ranx.evaluate(judged, ranx.Run(run), metrics), means)
    if "fastir.ranx" in systems:
        from fastir import ranx as fastir_ranx

        judged_f = fastir_ranx.Qrels(qrels)
        out["fastir.ranx"] = (lambda run: fastir_ranx.evaluate(judged_f, fastir_ranx.Run(run),
                                                               metrics), means)
    return out


def _nested_means(per_query):
    columns = {}
    for values in per_query.values():
        for k, v in values.items():
            columns.setdefault(k, []).append(v)
    return {k: sum(v) / len(v) for k, v in columns.items()}


DICT_SYSTEMS = ["pytrec_eval", "fastir.pytrec_eval", "fastir.evaluate", "ir_measures",
                "fastir.ir_measures", "ranx", "fastir.ranx"]
#: Each fastir system's peer: the ratio printed beside it.
DICT_PEERS = {"fastir.pytrec_eval": "pytrec_eval", "fastir.evaluate": "pytrec_eval",
              "fastir.evaluate().to_dict()": "pytrec_eval",
              "fastir.ir_measures": "ir_measures", "fastir.ranx": "ranx"}


def in_process(sizes, systems, repeat):
    """The in-process table: per size class and system, the median of ``repeat`` calls
    alternated with the other systems' (after one warm-up call each), and fastir's time
    over its peer's."""
    import gc

    lines = [f"\nIn-process, warm, evaluator or qrels prepared once, one call on a run dict "
             f"({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f})\n",
             "| run dict | system | call, median (ms) | min (ms) | runs | over its peer |",
             "|---|---|---:|---:|---:|---:|"]
    print(lines[0], flush=True)
    for size in sizes:
        qrels, run = dict_inputs(size)
        calls = dict_systems(qrels, systems)
        times = {name: [] for name in calls}
        means = {}
        rounds = max(1, repeat if size != "msmarco" else min(repeat, 3))
        for r in range(-1, rounds):
            for name, (call, _) in calls.items():
                if name in ("ranx", "fastir.ranx") and size == "msmarco" and r >= 0:
                    continue  # (ranx's minute-long conversion: its warm-up call only)
                gc.collect()
                start = time.perf_counter()
                out = call(run)
                elapsed = time.perf_counter() - start
                if r < 0:
                    means[name] = calls[name][1](out)
                if r >= 0 or (size == "msmarco" and name in ("ranx", "fastir.ranx")):
                    times[name].append(elapsed)
                del out
        _check_dict_means(means)
        medians = {name: statistics.median(t) for name, t in times.items()}
        label = f"{size} ({sum(map(len, run.values())):,} rows)"
        for name, t in times.items():
            peer = DICT_PEERS.get(name)
            ratio = f"{medians[name] / medians[peer]:.2f}" if peer in medians else ""
            lines.append(f"| {label} | {name} | {medians[name] * 1e3:.1f} | "
                         f"{min(t) * 1e3:.1f} | {len(t)} | {ratio} |")
            label = ""
        print("\n".join(lines[-len(times):]), flush=True)
    return "\n".join(lines)


def _check_dict_means(means):
    """Every system's means within 1e-4 of fastir.pytrec_eval's (ranx's ties: a note)."""
    base = means.get("fastir.pytrec_eval") or next(iter(means.values()))
    for name, values in means.items():
        for k, v in values.items():
            if abs(v - base[k]) > 1e-4:
                print(f"note: {name} differs on {k}: {v} vs {base[k]}", flush=True)


if __name__ == "__main__":
    main()
