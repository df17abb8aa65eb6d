"""8 Python threads calling evaluate, evaluate_matrix, bind and read_run at once, under each
numba threading layer available (omp, workqueue): no abort, and every result equal to the
single-threaded one. Each layer runs in its own process (the layer is chosen at start-up)."""

import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import sys, threading, time
import numpy as np
import fastir
from fastir import _jit

path = sys.argv[1]
rng = np.random.default_rng(3)
qids = np.repeat(np.arange(300), 60)
docs = np.tile(np.arange(60), 300)
scores = np.round(rng.normal(size=len(qids)), 2)
with open(path, "w") as f:
    f.writelines(f"{q} Q0 d{d} 1 {s} t\n" for q, d, s in zip(qids, docs, scores))
keep = rng.random(len(qids)) < 0.2
qrels = fastir.Qrels.from_arrays(qids[keep], docs[keep], rng.integers(0, 3, keep.sum()))
names = ["AP", "nDCG@10", "P@5", "RR"]
batch = (rng.random((400, 80)), rng.integers(0, 3, size=(400, 80)))  # the parallel kernel
vectors = rng.random((3, len(qids)))

def once():
    run = fastir.read_run(path)
    bound = fastir.Evaluator(qrels, names).bind(qids, docs)
    return (fastir.evaluate(qrels, run, names).values, fastir.evaluate_matrix(*batch, names),
            bound.evaluate(vectors))

with _jit.forced("numba"):
    expected = once()
    failures, stop = [], time.perf_counter() + float(sys.argv[2])

    def work():
        try:
            while time.perf_counter() < stop:
                got = once()
                if not (np.array_equal(got[0], expected[0]) and got[1] == expected[1]
                        and np.array_equal(got[2], expected[2])):
                    failures.append("a result differs from the single-threaded one")
        except Exception as exc:  # reported below
            failures.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
import numba
print(numba.threading_layer(), failures[:3])
"""


@pytest.mark.one_engine
@pytest.mark.parametrize("layer", ["omp", "workqueue"])
def test_eight_threads_at_once(tmp_path, layer):
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer)
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path / "run"), "3"], env=env,
                          capture_output=True, text=True)
    if layer != "workqueue" and "No threading layer could be loaded" in done.stderr:
        pytest.skip(f"numba's {layer} threading layer is not available here")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[0] == layer and done.stdout.strip().endswith("[]"), done.stdout
