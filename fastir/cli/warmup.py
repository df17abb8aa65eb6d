"""``fastir warmup``: compile every kernel once, ahead of the first large input.

numba compiles a kernel the first time it meets a kind of input (text or integer ids, a
file or arrays, a dense batch) and caches the machine code on disk; later processes load it
in milliseconds. Warming up runs each code path once on a tiny input with the kernels
compiled, so that no later call waits for the compiler.
"""

import io
import os
import sys
import tempfile
import time

import numpy as np

from fastir import _jit


def _examples(keep):
    """The registry's example measures of the families ``keep`` accepts (every family's
    kernel path, with the parameters that select other paths)."""
    from fastir.measures.registry import FAMILIES

    return [name for f in FAMILIES.values() if keep(f) for name in f.examples]


def _steps(folder):
    """(description, function) of each code path."""
    import fastir

    qrels_only = ("subtopics", "prefs", "groups")  # (the others read other judgments)
    measures = _examples(lambda f: f.path not in qrels_only)
    numeric = _examples(lambda f: f.path not in qrels_only and f.aggregate != "none")
    qrels_text = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 -1\nq2 0 d9 1\n"
    run_text = "".join(f"q{q} Q0 d{d} {d} {1.0 / (d + 1):.3e} t\n" for q in (1, 2)
                       for d in range(12))
    int_qrels = "1 0 10 1\n1 0 12 0\n2 0 11 2\n"
    int_run = "".join(f"{q} Q0 {d} 1 {d % 3}.5 t\n" for q in (1, 2) for d in range(10, 20))
    msmarco_run = "".join(f"{q}\t{d}\t{r}\n" for q in (1, 2)
                          for r, d in enumerate(range(10, 20), 1))
    paths = {}
    for name, text in [("qrels", qrels_text), ("run", run_text), ("int_qrels", int_qrels),
                       ("int_run", int_run), ("msmarco_run", msmarco_run)]:
        paths[name] = os.path.join(folder, name)
        with open(paths[name], "w") as f:
            f.write(text)

    def files():
        for q, r in [("qrels", "run"), ("int_qrels", "int_run"), ("int_qrels", "msmarco_run")]:
            qrels = fastir.read_qrels(paths[q])
            fastir.evaluate(qrels, fastir.read_run(paths[r]), measures, num_docs=100)
            fastir.evaluate(qrels, paths[r], ["P@5", "map"], max_docs=3, judged_only=True,
                            compat="9.0.8")

    def containers():
        qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
        run = {"q1": {"d1": 0.5, "d2": 0.7}, "q2": {"d3": 1.0, "d4": 1.0}}
        fastir.evaluate(qrels, run, measures, missing="skip", num_docs=100)
        ints = fastir.Run.from_arrays(np.array([1, 1, 2]), np.array([5, 6, 7]),
                                      np.array([0.1, 0.2, 0.3]))
        fastir.evaluate(fastir.Qrels.from_arrays(np.array([1, 2]), np.array([5, 7]),
                                                 np.array([1, 1])), ints, ["map"])
        text = fastir.Run.from_arrays(np.array(["a", "a"]), np.array(["x", "é"]),
                                      np.array([1.0, 2.0]))
        fastir.evaluate(fastir.Qrels.from_arrays(np.array(["a"]), np.array(["x"]),
                                                 np.array([1])), text, ["map"])

    def loops():
        ev = fastir.Evaluator({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}, numeric,
                              num_docs=100)
        ev.evaluate({"q1": {"d1": 0.5}, "q2": {"d3": 1.0}})
        bound = ev.bind(["q1", "q1", "q2"], ["d1", "d2", "d3"])
        bound.evaluate(np.array([0.1, 0.2, 0.3]))
        bound.evaluate(np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]), per_query=True)
        fastir.Evaluator({"q1": {"d1": 1}}, ["P@1"], max_docs=1, judged_only=True).bind(
            ["q1", "q1"], ["d1", "d2"]).evaluate(np.array([0.1, 0.2]))
        rng = np.random.default_rng(0)
        for batch, width in [(4, 8), (400, 60)]:  # the serial and the parallel kernel
            scores = rng.normal(size=(batch, width))
            labels = rng.integers(0, 3, size=(batch, width))
            fastir.evaluate_matrix(scores, labels, ["nDCG@10", "AP", "RR", "P@5"])
            fastir.evaluate_matrix(scores, labels, ["nDCG", "R@5"], ties="average",
                                   valid=scores > -2, n_relevant=np.full(batch, 3))

    def diversity():
        judged = {"q1": {"d1": {"1": 1, "2": 0}, "d2": {"2": 2}}, "q2": {"d3": {"1": 1}}}
        run = {"q1": {"d1": 0.5, "d2": 0.7, "d5": 0.1}, "q2": {"d3": 1.0}}
        fastir.evaluate(judged, run, _examples(lambda f: f.path == "subtopics") + ["AP"])

    def preferences():
        path = os.path.join(folder, "prefs")
        with open(path, "w") as f:
            f.write("q1 u1 s1 d1 2\nq1 u1 s1 d2 0\nq1 u1 s2 d3 1\nq1 u1 s2 d1 3\n"
                    "q1 u2 s1 d2 1\nq1 u2 s1 d4 0\n")
        run = {"q1": {"d1": 0.5, "d2": 0.7, "d5": 0.1}}
        fastir.evaluate(fastir.read_prefs(path), run, ["all_prefs"])
        groups = fastir.read_judgment_groups(paths["qrels"])
        fastir.evaluate(groups, paths["run"], ["qrels_jg"], judged_only=True)

    def significance():
        qrels = {f"q{i}": {"d1": i % 2, "d2": 1} for i in range(20)}
        runs = {name: {q: {"d1": float(k), "d2": float(i % 3)} for i, q in enumerate(qrels)}
                for k, name in enumerate(["a", "b", "c"])}
        for test in ("randomization", "tukey"):
            fastir.compare(qrels, runs, ["AP"], test=test, n_resamples=64)

    def fusion():
        runs = [{"q1": {"d1": 0.5, "d2": 0.2}, "q2": {"d3": 1.0}},
                {"q1": {"d2": 0.9, "d4": 0.1}, "q2": {"d3": 0.3, "d5": 0.2}}]
        fastir.write_run(fastir.fuse(runs, "rrf"), io.StringIO())
        fastir.fuse(runs, "wsum", weights=[0.3, 0.7], norm="min-max")
        fastir.optimize_fusion({"q1": {"d2": 1}, "q2": {"d3": 1}}, runs, "nDCG@10", step=0.5)

    return [("files (text and integer ids, MS MARCO runs)", files), ("rank fusion", fusion),
            ("significance tests", significance),
            ("diversity measures (subtopic judgments)", diversity),
            ("preference judgments and judgment groups", preferences),
            ("dicts and arrays", containers), ("loops and dense batches", loops)]


def warmup(out=sys.stderr):
    """Compile every kernel (or load it from numba's cache); returns the seconds taken."""
    start = time.perf_counter()
    noting, _jit.note_compiles = _jit.note_compiles, False
    try:
        with tempfile.TemporaryDirectory() as folder, _jit.forced("numba"):
            for description, step in _steps(folder):
                t = time.perf_counter()
                step()
                if out is not None:
                    print(f"fastir warmup: {description}: {time.perf_counter() - t:.1f} s",
                          file=out, flush=True)
    finally:
        _jit.note_compiles = noting
    return time.perf_counter() - start
