"""``fastir warmup``: compile every kernel once, ahead of the first large input.

numba compiles a kernel the first time it meets a kind of input (text or integer ids, a
file or arrays, a dense batch) and caches the machine code on disk; later processes load it
in milliseconds. Warming up runs each code path once on a tiny input with the kernels
compiled, so that no later call waits for the compiler.
"""

import io
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from fastir import _jit
from fastir._estimate import COMPILE_SECONDS, about, compiling


def _examples(keep):
    """The registry's example measures of the families ``keep`` accepts (every family's
    kernel path, with the parameters that select other paths)."""
    from fastir.measures.registry import FAMILIES

    return [name for f in FAMILIES.values() if keep(f) for name in f.examples]


_TEXTS = {
    "qrels": "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 -1\nq2 0 d9 1\n",
    "run": "".join(f"q{q} Q0 d{d} {d} {1.0 / (d + 1):.3e} t\n" for q in (1, 2)
                   for d in range(12)),
    "int_qrels": "1 0 10 1\n1 0 12 0\n2 0 11 2\n",
    "int_run": "".join(f"{q} Q0 {d} 1 {d % 3}.5 t\n" for q in (1, 2) for d in range(10, 20)),
    "msmarco_run": "".join(f"{q}\t{d}\t{r}\n" for q in (1, 2)
                           for r, d in enumerate(range(10, 20), 1)),
}


def _steps(folder):
    """{step: function} of each code path (the files written into ``folder``)."""
    paths = {}
    for name, text in _TEXTS.items():
        paths[name] = os.path.join(folder, name)
        with open(paths[name], "w") as f:
            f.write(text)
    return {"files": lambda: _files(paths), "fusion": _fusion,
            "significance": _significance, "diversity": _diversity,
            "preferences": lambda: _preferences(folder, paths),
            "containers": _containers, "loops": _loops}


#: The paths of measures that read other judgments than plain qrels.
_OTHER_JUDGMENTS = ("subtopics", "prefs", "groups")


def _measures():
    return _examples(lambda f: f.path not in _OTHER_JUDGMENTS)


def _files(paths):
    from fastir.api import evaluate
    from fastir.io.trec import read_qrels, read_run

    for q, r in [("qrels", "run"), ("int_qrels", "int_run"), ("int_qrels", "msmarco_run")]:
        qrels = read_qrels(paths[q])
        evaluate(qrels, read_run(paths[r]), _measures(), num_docs=100)
        evaluate(qrels, paths[r], ["P@5", "map"], max_docs=3, judged_only=True,
                 compat="9.0.8")


def _containers():
    from fastir.api import evaluate
    from fastir.model.data import Qrels, Run

    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    run = {"q1": {"d1": 0.5, "d2": 0.7}, "q2": {"d3": 1.0, "d4": 1.0}}
    evaluate(qrels, run, _measures(), missing="skip", num_docs=100)
    ints = Run.from_arrays(np.array([1, 1, 2]), np.array([5, 6, 7]),
                           np.array([0.1, 0.2, 0.3]))
    evaluate(Qrels.from_arrays(np.array([1, 2]), np.array([5, 7]),
                               np.array([1, 1])), ints, ["map"])
    text = Run.from_arrays(np.array(["a", "a"]), np.array(["x", "é"]),
                           np.array([1.0, 2.0]))
    evaluate(Qrels.from_arrays(np.array(["a"]), np.array(["x"]),
                               np.array([1])), text, ["map"])


def _loops():
    from fastir.loops.evaluator import Evaluator, evaluate_matrix

    numeric = _examples(lambda f: f.path not in _OTHER_JUDGMENTS and f.aggregate != "none")
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    Evaluator(qrels, numeric, num_docs=100).evaluate({"q1": {"d1": 0.5}, "q2": {"d3": 1.0}})
    bindable = _examples(lambda f: f.path not in _OTHER_JUDGMENTS and f.aggregate != "none"
                         and not f.anywhere)  # (bound candidates refuse Hole)
    bound = Evaluator(qrels, bindable, num_docs=100).bind(["q1", "q1", "q2"], ["d1", "d2", "d3"])
    bound.evaluate(np.array([0.1, 0.2, 0.3]))
    bound.evaluate(np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]), per_query=True)
    Evaluator({"q1": {"d1": 1}}, ["P@1"], max_docs=1, judged_only=True).bind(
        ["q1", "q1"], ["d1", "d2"]).evaluate(np.array([0.1, 0.2]))
    rng = np.random.default_rng(0)
    for batch, width in [(4, 8), (400, 60)]:  # the serial and the parallel kernel
        scores = rng.normal(size=(batch, width))
        labels = rng.integers(0, 3, size=(batch, width))
        evaluate_matrix(scores, labels, ["nDCG@10", "AP", "RR", "P@5"])
        evaluate_matrix(scores, labels, ["nDCG", "R@5"], ties="average",
                        valid=scores > -2, n_relevant=np.full(batch, 3))


def _diversity():
    from fastir.api import evaluate

    judged = {"q1": {"d1": {"1": 1, "2": 0}, "d2": {"2": 2}}, "q2": {"d3": {"1": 1}}}
    run = {"q1": {"d1": 0.5, "d2": 0.7, "d5": 0.1}, "q2": {"d3": 1.0}}
    evaluate(judged, run, _examples(lambda f: f.path == "subtopics") + ["AP"])


def _preferences(folder, paths):
    from fastir.api import evaluate
    from fastir.io.prefs import read_judgment_groups, read_prefs

    path = os.path.join(folder, "prefs")
    with open(path, "w") as f:
        f.write("q1 u1 s1 d1 2\nq1 u1 s1 d2 0\nq1 u1 s2 d3 1\nq1 u1 s2 d1 3\n"
                "q1 u2 s1 d2 1\nq1 u2 s1 d4 0\n")
    run = {"q1": {"d1": 0.5, "d2": 0.7, "d5": 0.1}}
    evaluate(read_prefs(path), run, ["all_prefs"])
    groups = read_judgment_groups(paths["qrels"])
    evaluate(groups, paths["run"], ["qrels_jg"], judged_only=True)


def _significance():
    from fastir.analysis.stats import compare

    qrels = {f"q{i}": {"d1": i % 2, "d2": 1} for i in range(20)}
    runs = {name: {q: {"d1": float(k), "d2": float(i % 3)} for i, q in enumerate(qrels)}
            for k, name in enumerate(["a", "b", "c"])}
    for test in ("randomization", "tukey"):
        compare(qrels, runs, ["AP"], test=test, n_resamples=64)


def _fusion():
    from fastir.analysis.fusion import fuse, optimize_fusion
    from fastir.io.writers import write_run

    runs = [{"q1": {"d1": 0.5, "d2": 0.2}, "q2": {"d3": 1.0}},
            {"q1": {"d2": 0.9, "d4": 0.1}, "q2": {"d3": 0.3, "d5": 0.2}}]
    write_run(fuse(runs, "rrf"), io.StringIO())
    fuse(runs, "wsum", weights=[0.3, 0.7], norm="min-max")
    optimize_fusion({"q1": {"d2": 1}, "q2": {"d3": 1}}, runs, "nDCG@10", step=0.5)


#: Each step: what it compiles (its seconds: fastir._estimate.COMPILE_SECONDS, which weigh
#: the plan and give the estimates printed).
STEPS = {"files": "files (text and integer ids, MS MARCO runs)", "fusion": "rank fusion",
         "loops": "loops and dense batches",
         "diversity": "diversity measures (subtopic judgments)",
         "preferences": "preference judgments and judgment groups",
         "significance": "significance tests", "containers": "dicts and arrays"}


def plan(jobs):
    """The steps in ``jobs`` groups of about equal estimated seconds (longest first, each
    to the least loaded group): one process compiles each group (and the shared kernels)."""
    groups = [[] for _ in range(max(1, min(jobs, len(STEPS))))]
    load = [0.0] * len(groups)
    for key in sorted(STEPS, key=lambda k: -COMPILE_SECONDS[k]):
        g = load.index(min(load))
        groups[g].append(key)
        load[g] += COMPILE_SECONDS[key]
    return [g for g in groups if g]


def estimate(groups, loads=None, cores=None):
    """What a warmup of ``groups`` (one process each) takes on a fresh cache, said before
    it starts: its longest group's compiles (with the shared kernels, which every process
    compiles), scaled to the load averages ``loads`` (default: now) on ``cores``."""
    longest = max(groups, key=lambda group: sum(COMPILE_SECONDS[key] for key in group))
    return about(compiling(*longest), len(groups), loads, cores)


def default_jobs():
    """Processes a warmup compiles in: one per idle core (numba compiles one kernel at a
    time per process), at most 4. Measured on the 2-core machine at load 5 (every core
    busy): 2 processes 163-165 s, 1 process 147-151 s, so a busy machine gets one."""
    cores = os.cpu_count() or 1
    try:
        busy = int(os.getloadavg()[0])
    except OSError:
        busy = 0
    return max(1, min(cores - busy, 4))


def warmup(out=sys.stderr, jobs=1, only=None):
    """Compile every kernel (or load it from numba's cache); returns the seconds taken.

    With ``jobs`` > 1 the steps are shared among that many processes (this one and
    ``jobs - 1`` others started for the purpose): the cache then holds every kernel, but
    this process has loaded only its own group's. ``only``: run just these steps here (a
    helper of a warmup of ``jobs`` processes).
    """
    start = time.perf_counter()
    groups = [list(only)] if only else plan(jobs)
    processes = jobs if only else len(groups)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    helpers = [subprocess.Popen([sys.executable, "-m", "fastir", "warmup", "--only",
                                 ",".join(group), "--jobs", str(processes)],
                                stdout=subprocess.DEVNULL,
                                stderr=None if out is sys.stderr else subprocess.DEVNULL,
                                cwd=package_parent)  # (-m finds this fastir, not another)
               for group in groups[1:]]
    try:
        _run_steps(groups[0], out, processes)
    except KeyboardInterrupt:  # (the helpers too: a terminal's Ctrl-C reaches them as well)
        for helper in helpers:
            helper.terminate()
        raise
    finally:
        failed = [h.args for h in helpers if h.wait() != 0]
    if failed:
        raise RuntimeError(f"fastir warmup: a compiling process failed: {failed}")
    return time.perf_counter() - start


def _run_steps(keys, out, processes):
    """Run the steps ``keys``, saying of each whether it compiled kernels (said when the
    first compile starts, with its estimate in a warmup of ``processes`` processes) or
    loaded every one from numba's cache."""
    noting, _jit.note_compiles = _jit.note_compiles, False
    try:
        with tempfile.TemporaryDirectory() as folder, _jit.forced("numba"):
            from numba.core import event

            steps = _steps(folder)
            for n, key in enumerate(keys):
                step = compiling(key, shared=n == 0)  # (the first compiles those too)
                t = time.perf_counter()
                counter = _compile_counter(event, out, (
                    f"fastir warmup: {STEPS[key]}: compiling the kernels not in the cache: "
                    f"{about(step, processes)}"))
                with event.install_listener("numba:compile", counter):
                    steps[key]()
                seconds = time.perf_counter() - t
                if out is not None:
                    did = (f"compiled {counter.n} kernel{'s' if counter.n > 1 else ''}"
                           if counter.n else "loaded from the cache")
                    print(f"fastir warmup: {STEPS[key]}: {did} in {seconds:.1f} s", file=out,
                          flush=True)
    finally:
        _jit.note_compiles = noting


def _compile_counter(event, out, first):
    """A numba listener counting the compiles of fastir's kernels, printing ``first`` on
    ``out`` (if any) at the first (numba compiles on a cache miss only: a kernel loaded is
    no compile)."""

    class Counter(event.Listener):
        n = 0

        def on_start(self, ev):
            dispatcher = ev.data.get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if module.startswith("fastir"):
                if self.n == 0 and out is not None:
                    print(first, file=out, flush=True)
                self.n += 1

        def on_end(self, ev):
            pass

    return Counter()
