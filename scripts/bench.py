"""fastir against the peers in each use case; BENCHMARKS.md's tables, rewritten case by case.

    ./dev bench                        # every case (BENCHMARKS.md rewritten whole)
    ./dev bench --case msmarco         # one case or more (its section only, the others kept)
    ./dev bench --case tiny,trec --smoke --page /tmp/page.md   # the machinery, in seconds
    python scripts/bench.py --qrels Q --run R   # one pair of files, printed only

The cases (:data:`CASES`): ``tiny`` trec_eval's test pair, ``trec`` a TREC run of 50 x
1,000, ``msmarco`` the MS MARCO-dev shape (6,980 x 1,000, 291 MB): whole processes on files,
as users type them (``fastir`` is this environment's console script), each system's means
checked equal to fastir's; ``dicts``: a script's call on run dicts, in one process; then
``loops``, ``fusion``, ``streaming``, ``dask``, ``probability`` and ``spark``
(scripts/bench_batch.py, scripts/bench_fusion.py, scripts/bench_streaming.py,
scripts/bench_probability.py, scripts/bench_spark.py). Input files are generated into
``data/`` by scripts/generate.py when missing (deterministic). Every case alternates its
systems run by run and samples the load between runs (scripts/bench_page.py).

Whole processes: the trec_eval binary (from PATH, else built from ../shared/peers into
data/bin; without either its rows are left out, with a note), ``fastir trec_eval`` served
by a warm worker (the script starts one in a private folder before the first timed run and
stops it by its process id at the end; each run's row says whether the worker served it:
its count of requests served, before and after, so that an in-process run cannot pass for
a worker's) and in-process (``FASTIR_WORKER=off``), the libraries through
scripts/bench_means.py (``fastir.evaluate`` through the worker and in-process, pytrec_eval,
ranx). ``--smoke`` runs every case small (msmarco on a 200 x 100 run; few runs) to check
the machinery; its figures mean nothing, and it writes only to a ``--page`` given.

Before timing, fastir's bytecode is compiled (as a regular install does) and its kernels are
warmed up (``fastir warmup``), so the times are those of an installed, warmed-up fastir.
"""

import argparse
import compileall
import gc
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

import bench_page
from bench_means import MEASURES
from bench_page import Loads, alternated, spread, table

ROOT = bench_page.ROOT
DATA = ROOT / "data"
BIN = Path(sys.executable).parent  # (this environment's: python, fastir)
TREC_FLAGS = "-m map -m recip_rank -m ndcg_cut.10 -m P.10 -m recall.1000"


class Files:
    """A case on a qrels and a run file: its title, paths (relative to the repository), how
    to generate them (None: they ship), its timed runs per system and its smoke stand-in."""

    def __init__(self, title, qrels, run, generate, runs, smoke=None):
        self.title, self.qrels, self.run = title, qrels, run
        self.generate, self.runs, self.smoke = generate, runs, smoke

    def files(self):
        if not (ROOT / self.run).exists():
            subprocess.run([sys.executable, "scripts/generate.py", *self.generate.split()],
                           check=True, cwd=ROOT)
        return self.qrels, self.run


FILES = {
    "tiny": Files("trec_eval's test pair (1,500 run lines)",
                  "tests/data/trec_eval/inputs/qrels.test",
                  "tests/data/trec_eval/inputs/results.test", None, 15),
    "trec": Files("A TREC run, 50 queries x 1,000 documents", "data/trec50.qrels",
                  "data/trec50.run", "trecdl --queries 50 --depth 1000 --out data/trec50", 9),
    "msmarco": Files("The MS MARCO dev shape, 6,980 queries x 1,000 documents",
                     "data/msmarco-dev.qrels", "data/msmarco-dev.run",
                     "msmarco --queries 6980 --depth 1000 --out data/msmarco-dev", 3,
                     smoke=Files("The MS MARCO shape, small (smoke): 200 queries x 100",
                                 "data/smoke-msmarco.qrels", "data/smoke-msmarco.run",
                                 "msmarco --queries 200 --depth 100 --out data/smoke-msmarco",
                                 2)),
}

#: Each system on files: (the command as a user types it, with $M the measures' flags, $Q
#: and $R the files; the environment it needs: through the worker or in-process).
SYSTEMS = {
    "trec_eval": ("trec_eval $M $Q $R", "off"),
    "fastir trec_eval (worker)": ("fastir trec_eval $M $Q $R", "worker"),
    "fastir trec_eval (in-process)": ("FASTIR_WORKER=off fastir trec_eval $M $Q $R", "off"),
    "fastir.evaluate (worker)": ("python scripts/bench_means.py fastir $Q $R", "worker"),
    "fastir.evaluate (in-process)":
        ("FASTIR_WORKER=off python scripts/bench_means.py fastir $Q $R", "off"),
    "pytrec_eval": ("python scripts/bench_means.py pytrec_eval $Q $R", "off"),
    "ranx": ("python scripts/bench_means.py ranx $Q $R", "off"),
    "naive reference": ("python scripts/bench_means.py naive $Q $R", "off"),
}
DEFAULT_SYSTEMS = [s for s in SYSTEMS if s != "naive reference"]
#: Systems timed once a case (after their untimed run): minutes on MS MARCO.
SLOW = ("ranx", "naive reference")
#: Python's own start, a reference row of the test pair.
PYTHON_START = "python -c pass"


def argv(command, qrels, run, binary):
    """The program and arguments of a system's ``command`` (``FASTIR_WORKER=off`` is its
    environment's: :func:`environment`)."""
    words = command.replace("FASTIR_WORKER=off ", "").split()
    program = {"trec_eval": binary, "fastir": str(BIN / "fastir"),
               "python": sys.executable}[words[0]]
    expand = {"$M": TREC_FLAGS.split(), "$Q": [qrels], "$R": [run]}
    return [program] + [x for w in words[1:] for x in expand.get(w, [w])]


def timed(args, env):
    """Wall time, peak RSS (MB) of that process alone (wait4), and its stdout."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, text=True, cwd=ROOT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status):
            raise RuntimeError(f"{args[:3]} failed: {err.read()[-2000:]}")
        return wall, usage.ru_maxrss / 1024, out.read()


def parse_means(out):
    """The means a system printed: trec_eval's text or bench_means.py's JSON."""
    if out.startswith("{"):
        return json.loads(out)
    return {line.split()[0]: float(line.split()[2]) for line in out.splitlines()}


class Worker:
    """A warm worker in a private folder, started for this run and stopped by its pid."""

    def __init__(self, folder):
        self.env = {**os.environ, "FASTIR_WORKER": "use", "FASTIR_WORKER_DIR": str(folder)}
        subprocess.run([str(BIN / "fastir"), "worker", "start", "--idle", "1800"],
                       env=self.env, cwd=ROOT, check=True, capture_output=True)
        self.pid = self.status()["pid"]

    def status(self):
        """``fastir worker status --json``: the worker's answer."""
        done = subprocess.run([str(BIN / "fastir"), "worker", "status", "--json"],
                              env=self.env, cwd=ROOT, capture_output=True, text=True)
        return json.loads(done.stdout)

    def stop(self):
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        for _ in range(200):
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        os.kill(self.pid, signal.SIGKILL)


def environment(kind, worker):
    return worker.env if kind == "worker" else {**os.environ, "FASTIR_WORKER": "off"}


def trec_eval_binary():
    found = shutil.which("trec_eval")
    if found:
        return found
    built = DATA / "bin" / "trec_eval"
    script = ROOT.parent / "shared" / "peers" / "build-trec-eval"
    if not built.exists() and script.exists():
        subprocess.run([str(script), str(built.parent)], check=True, capture_output=True)
    return str(built) if built.exists() else None


def files_rows(qrels, run, systems, runs, binary, worker, python_start=False):
    """Time each system on the pair, alternated run by run; the table's rows and notes."""
    loads = Loads()
    processes = {}
    for name in systems:
        command, kind = SYSTEMS[name]
        if (name == "trec_eval" and not binary) or (
                name in SLOW + ("pytrec_eval",) and not _importable(name)):
            continue
        processes[name] = Process(argv(command, qrels, run, binary), environment(kind, worker),
                                  worker if kind == "worker" else None, slow=name in SLOW)
    if python_start:
        processes[PYTHON_START] = Process([sys.executable, "-c", "pass"], None, None, False)
    walls = alternated(processes, runs, loads)
    notes = check({name: p.means for name, p in processes.items() if p.means})
    medians = {name: statistics.median(w) for name, w in walls.items() if w}
    rows = []
    for name, p in processes.items():
        command = SYSTEMS[name][0] if name in SYSTEMS else PYTHON_START
        served = f"{p.served} of {len(walls[name])}" if p.worker else ""
        if p.worker and p.served < len(walls[name]):
            notes.append(f"{name} was served by the worker in {served} runs; the others ran "
                         "in-process")
        rows.append([name, f"`{command}`", spread(walls[name]), len(walls[name]),
                     f"{p.peak:.0f}", *(f"{medians[peer] / medians[name]:.2f}x"
                                        if peer in medians and name in SYSTEMS else ""
                                        for peer in ("trec_eval", "pytrec_eval")),
                     served, loads.text()])
    return rows, notes


class Process:
    """A system's runs of one command, called once a run: each returns its wall seconds and
    records the means printed, and from the second run on (the first is untimed) its peak
    RSS and whether the ``worker`` served it: the worker's count of requests served went
    up (its process that ran the command then gives the peak). A ``slow`` system runs
    twice only (its later calls return None)."""

    def __init__(self, args, env, worker, slow):
        self.args, self.env, self.worker, self.slow = args, env, worker, slow
        self.runs = self.served = 0
        self.peak, self.means = 0.0, None

    def __call__(self):
        if self.slow and self.runs >= 2:
            return None
        before = self.worker.status()["served"] if self.worker else 0
        wall, peak, out = timed(self.args, self.env)
        self.runs += 1
        self.means = parse_means(out) if out.strip() else None
        if self.worker:
            answer = self.worker.status()
            served = answer["served"] > before
            self.served += served and self.runs > 1
            peak = max(peak, answer["last_peak_kb"] / 1024) if served else peak
        self.peak = max(self.peak, peak) if self.runs > 1 else 0.0
        return wall


def check(means):
    """Every system's means against fastir's (the printed trec_eval text has 4 decimals).
    Stops on a disagreement, but for ranx, which breaks score ties its own way: a note."""
    base = next((means[n] for n in ("fastir.evaluate (in-process)",
                                    "fastir.evaluate (worker)") if n in means), None)
    if base is None:
        return []
    notes = []
    for name, values in means.items():
        tolerance = 5.01e-5 if "trec_eval" in name else 1e-4
        for m in MEASURES:
            gap = abs(values[m] - base[m])
            if gap > tolerance and name == "ranx":
                notes.append(f"ranx differs on {m} by {gap:.1e} (its own order of tied scores)")
            elif gap > tolerance:
                raise SystemExit(f"{name} disagrees with fastir on {m}: {values[m]} vs "
                                 f"{base[m]}")
    return notes


FILES_HEADER = [("system", "l"), ("command", "l"), ("wall (s), median (min-max)", "r"),
                ("runs", "r"), ("peak RSS (MB)", "r"), ("trec_eval / this", "r"),
                ("pytrec_eval / this", "r"), ("served by the worker", "r"),
                ("when, load", "l")]


def files_case(case):
    """A case on files: its section of the page."""
    def run(args, context):
        spec = FILES[case].smoke if args.smoke and FILES[case].smoke else FILES[case]
        qrels, run_path = spec.files()
        rows, notes = files_rows(qrels, run_path, args.systems, _runs(args, spec.runs),
                                 context["binary"], context["worker"], case == "tiny")
        lines = sum(1 for _ in open(ROOT / run_path, "rb"))
        made = (f"; made by `python scripts/generate.py {spec.generate}`" if spec.generate
                else "")
        text = (f"Files to the means of five measures, whole process, warm (each system ran "
                f"once untimed first): `M='{TREC_FLAGS}' Q={qrels} R={run_path}` "
                f"({lines:,} run lines, {(ROOT / run_path).stat().st_size / 1e6:.1f} MB"
                f"{made}). `fastir` is the console script, the warm worker one that "
                "`fastir worker start` started; a run the worker did not serve ran "
                "in-process. Every system's means equal fastir's.")
        body = table(FILES_HEADER, rows) + "".join(f"\n\nNote: {n}." for n in notes)
        return bench_page.section(case, spec.title, text, body)
    return run


def _runs(args, default):
    return args.repeat or (2 if args.smoke else default)


def _importable(module):
    module = {"naive reference": "numpy"}.get(module, module)
    return subprocess.run([sys.executable, "-c", f"import {module}"],
                          capture_output=True).returncode == 0


# -- dicts: a script's calls on run dicts, warm, one process ---------------------------------
#: The run dicts: (generate.py kind, queries, depth), or the msmarco files.
DICT_SIZES = {"50x1000": ("trecdl", 50, 1000), "500x1000": ("trecdl", 500, 1000),
              "5000x100": ("trecdl", 5000, 100), "msmarco": None}
#: The four measures, in each interface's names.
DICT_MEASURES = {"pytrec_eval": {"map", "ndcg", "P_10", "recip_rank"},
                 "fastir": ["map", "ndcg", "P_10", "recip_rank"],
                 "ir_measures": ["AP", "nDCG", "P@10", "RR"],
                 "ranx": ["map", "ndcg", "precision@10", "mrr"]}
#: Each system: what is made once, then the call timed; and its peer (the ratio's).
DICT_SYSTEMS = {
    "pytrec_eval": ("`ev = pytrec_eval.RelevanceEvaluator(qrels, M)`; `ev.evaluate(run)`",
                    None),
    "fastir.pytrec_eval": ("the same with `fastir.pytrec_eval`", "pytrec_eval"),
    "fastir.evaluate": ("`q = fastir.Qrels.from_dict(qrels)`; `fastir.evaluate(q, run, M)`",
                        "pytrec_eval"),
    "ir_measures": ("`ev = ir_measures.pytrec_eval.evaluator(M, qrels)`; "
                    "`list(ev.iter_calc(run))`", None),
    "fastir.ir_measures": ("the same with fastir's provider, `fastir.peers.provider.provider`",
                           "ir_measures"),
    "ranx": ("`q = ranx.Qrels(qrels)`; `ranx.evaluate(q, ranx.Run(run), M)`", None),
    "fastir.ranx": ("the same with `fastir.ranx`", "ranx"),
}


def dict_inputs(size):
    """qrels and run dicts (``{qid: {doc: value}}``, str keys) of a size: the msmarco files
    read into dicts, or generate.py's shapes made in memory."""
    if size == "msmarco":
        qrels_path, run_path = FILES["msmarco"].files()
        return (_read_dict(ROOT / qrels_path, 2, 3, int),
                _read_dict(ROOT / run_path, 2, 4, float))
    import numpy as np
    from generate import trecdl

    _, n_queries, depth = DICT_SIZES[size]
    qrels_lines, run_blocks = trecdl(np.random.default_rng(13), n_queries, depth)
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


def dict_calls(qrels):
    """name -> (the call timed, on a run dict; its means, to check the systems agree).
    Everything a script prepares once (an evaluator, the qrels) is prepared here; a peer
    not installed is left out."""
    m = DICT_MEASURES
    out = {}
    if _importable("pytrec_eval"):
        import pytrec_eval

        out["pytrec_eval"] = (pytrec_eval.RelevanceEvaluator(qrels, m["pytrec_eval"]).evaluate,
                              _nested_means)
    import fastir
    import fastir.pytrec_eval

    out["fastir.pytrec_eval"] = (
        fastir.pytrec_eval.RelevanceEvaluator(qrels, m["pytrec_eval"]).evaluate, _nested_means)
    judged = fastir.Qrels.from_dict(qrels)
    out["fastir.evaluate"] = (lambda run: fastir.evaluate(judged, run, m["fastir"]),
                              lambda res: dict(zip(m["fastir"], res.mean.values())))
    if _importable("ir_measures"):
        out.update(_ir_measures_calls(qrels))
    if _importable("ranx"):
        out.update(_ranx_calls(qrels))
    return out


def _ir_measures_calls(qrels):
    import ir_measures

    from fastir.peers import provider

    measures = [ir_measures.parse_measure(x) for x in DICT_MEASURES["ir_measures"]]
    names = dict(zip(measures, DICT_MEASURES["fastir"]))

    def per_query_means(metrics):
        sums = {}
        for metric in metrics:
            sums.setdefault(names[metric.measure], []).append(metric.value)
        return {k: sum(v) / len(v) for k, v in sums.items()}

    ev = ir_measures.pytrec_eval.evaluator(measures, qrels)
    ev_f = provider.provider.evaluator(measures, qrels)
    return {"ir_measures": (lambda run: list(ev.iter_calc(run)), per_query_means),
            "fastir.ir_measures": (lambda run: list(ev_f.iter_calc(run)), per_query_means)}


def _ranx_calls(qrels):
    import ranx

    from fastir import ranx as fastir_ranx

    metrics = DICT_MEASURES["ranx"]

    def means(scores):
        return dict(zip(DICT_MEASURES["fastir"], (float(scores[k]) for k in metrics)))

    judged, judged_f = ranx.Qrels(qrels), fastir_ranx.Qrels(qrels)
    return {"ranx": (lambda run: ranx.evaluate(judged, ranx.Run(run), metrics), means),
            "fastir.ranx": (lambda run: fastir_ranx.evaluate(judged_f, fastir_ranx.Run(run),
                                                             metrics), means)}


def _nested_means(per_query):
    columns = {}
    for values in per_query.values():
        for k, v in values.items():
            columns.setdefault(k, []).append(v)
    return {k: sum(v) / len(v) for k, v in columns.items()}


def dicts_case(args, context):
    """A script's calls on run dicts: per size, each system's calls alternated with the
    others' (one untimed call each first; on MS MARCO ranx's minute-long conversion is
    timed once)."""
    sizes = ["50x1000"] if args.smoke else list(DICT_SIZES)
    rows = []
    for size in sizes:
        qrels, run = dict_inputs(size)
        calls = dict_calls(qrels)
        loads, outputs = Loads(), {}
        rounds = _runs(args, 3 if size == "msmarco" else 7)
        timed_calls = {name: _dict_call(name, call, run, outputs, once=size == "msmarco"
                                        and "ranx" in name) for name, (call, _) in calls.items()}
        times = alternated(timed_calls, rounds, loads)
        _check_dict_means({name: means(outputs[name]) for name, (_, means) in calls.items()})
        medians = {name: statistics.median(t) for name, t in times.items()}
        label = f"{size} ({sum(map(len, run.values())):,} rows)"
        for name, t in times.items():
            peer = DICT_SYSTEMS[name][1]
            ratio = f"{medians[name] / medians[peer]:.2f}" if peer in medians else ""
            rows.append([label, name, DICT_SYSTEMS[name][0], spread(t, 1e3, 1), len(t),
                         ratio, loads.text()])
            label = ""
        del qrels, run, calls
    text = ("A script's call on run dicts (`{qid: {doc: score}}`), warm, in one process: "
            "what a script makes once, then the call timed, `M` the four measures map, "
            "nDCG, P@10 and RR in each library's names; systems alternated call by call "
            "after an untimed call each. The ratio is the call's time over its peer's: "
            "below 1, fastir is faster.")
    header = [("run dict", "l"), ("system", "l"), ("made once; call timed", "l"),
              ("call (ms), median (min-max)", "r"), ("calls", "r"), ("over its peer", "r"),
              ("when, load", "l")]
    return bench_page.section("dicts", "Run dicts in a script", text, table(header, rows))


def _dict_call(name, call, run, outputs, once):
    """A timed call of ``call`` on ``run`` (its first output kept in ``outputs``; with
    ``once``, only its first two calls run: the untimed one and one timed)."""
    calls = 0

    def timed_call():
        nonlocal calls
        if once and calls >= 2:
            return None
        calls += 1
        gc.collect()
        start = time.perf_counter()
        out = call(run)
        seconds = time.perf_counter() - start
        outputs.setdefault(name, out)
        return seconds
    return timed_call


def _check_dict_means(means):
    """Every system's means within 1e-4 of fastir.pytrec_eval's (ranx's ties: a note)."""
    base = means["fastir.pytrec_eval"]
    for name, values in means.items():
        for k, v in values.items():
            if abs(v - base[k]) > 1e-4:
                print(f"note: {name} differs on {k}: {v} vs {base[k]}", flush=True)


def _other(module, function):
    def run(args, context):
        return getattr(__import__(module), function)(smoke=args.smoke, repeat=args.repeat)
    return run


#: Each case: the function that measures it and returns its section of the page.
CASES = {"tiny": files_case("tiny"), "trec": files_case("trec"),
         "msmarco": files_case("msmarco"), "dicts": dicts_case,
         "loops": _other("bench_batch", "section"), "fusion": _other("bench_fusion", "section"),
         "streaming": _other("bench_streaming", "streaming_section"),
         "dask": _other("bench_streaming", "dask_section"),
         "probability": _other("bench_probability", "section"),
         "spark": _other("bench_spark", "section")}


def prepare():
    """Compile fastir's bytecode (a regular install does) and warm its kernels up."""
    compileall.compile_dir(str(ROOT / "fastir"), quiet=1)
    subprocess.run([str(BIN / "fastir"), "warmup"], check=True, cwd=ROOT, capture_output=True)


def main(argv_=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", default=",".join(CASES), help=f"among {', '.join(CASES)}")
    p.add_argument("--page", help="the page to rewrite (default: BENCHMARKS.md; with "
                   "--smoke, none unless given)")
    p.add_argument("--smoke", action="store_true",
                   help="small inputs, few runs: checks the machinery, figures meaningless")
    p.add_argument("--qrels", help="a qrels file (with --run: one pair, printed only)")
    p.add_argument("--run")
    p.add_argument("--systems", default=",".join(DEFAULT_SYSTEMS),
                   help=f"on files, among {', '.join(SYSTEMS)}")
    p.add_argument("--repeat", type=int, help="timed runs per system (default: per case)")
    args = p.parse_args(argv_)
    args.systems = [s.strip() for s in args.systems.split(",")]
    cases = args.case.split(",")
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        p.error(f"unknown case {', '.join(unknown)}: among {', '.join(CASES)}")
    prepare()
    context = {"binary": trec_eval_binary() if "trec_eval" in args.systems else None}
    if "trec_eval" in args.systems and not context["binary"]:
        print("note: no trec_eval binary (not on PATH, no ../shared/peers to build it): its "
              "rows are left out", flush=True)
    page = args.page or (None if args.smoke else bench_page.PAGE)
    with tempfile.TemporaryDirectory() as folder:
        context["worker"] = Worker(Path(folder) / "w")
        try:
            if args.qrels:
                rows, notes = files_rows(args.qrels, args.run, args.systems, args.repeat or 3,
                                         context["binary"], context["worker"])
                print(table(FILES_HEADER, rows), *notes, sep="\n")
                return
            for case in cases:
                print(f"bench.py: measuring the {case} case", file=sys.stderr, flush=True)
                text = CASES[case](args, context)
                print(text, flush=True)
                if page:
                    bench_page.update(page, {case: text}, list(CASES))
        finally:
            context["worker"].stop()


if __name__ == "__main__":
    main()
