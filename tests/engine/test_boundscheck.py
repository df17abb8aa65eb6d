"""The kernels compiled once more, in a fresh numba cache with numba's bounds checks on, by
``fastir warmup``: then nothing a user commonly runs compiles again (the warmup covers it),
and the kernel, join and reader tests pass in that cache (an out-of-bounds index fails a
test instead of reading memory the kernel does not own). One compilation serves both
checks: each alone cost the suite about three minutes of compiling."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_calls import PROGRAM

TESTS = Path(__file__).parent.parent

SUBSET = ["measures/test_reference.py", "measures/test_requests.py", "loops/test_batch.py",
          "engine/test_engines.py", "io/test_io.py", "engine/test_invariants.py"]

BATTERY = r"""
import sys, numpy as np
from numba.core import event
import fastir
from fastir import _jit
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
data = sys.argv[1]
with _jit.forced("numba"):
    for q, r in [("qrels.test", "results.test"), ("qrels.rel_level", "results.trunc")]:
        res = fastir.evaluate(f"{data}/{q}", f"{data}/{r}", ["official", "ndcg_cut_10", "infAP"])
        res.mean
    qrels = fastir.Qrels.from_arrays(np.array([3, 3, 5]), np.array([10, 11, 12]),
                                     np.array([1, 0, 2]))
    run = fastir.Run.from_arrays(np.array([3, 3, 3, 5]), np.array([10, 11, 13, 12]),
                                 np.array([0.5, 0.5, 0.1, 2.0]))
    fastir.evaluate(qrels, run, ["AP", "nDCG@3", "RR@2"], missing="skip").mean
    ev = fastir.Evaluator({"a": {"x": 1, "y": 2}}, ["nDCG@10", "AP"])
    ev.bind(["a", "a", "a"], ["x", "y", "z"]).evaluate(np.array([[1.0, 2.0, 3.0]]))
    fastir.evaluate_matrix(np.random.default_rng(1).normal(size=(16, 30)),
                           np.random.default_rng(2).integers(0, 4, size=(16, 30)),
                           ["nDCG@5", "P@3", "R@10"])
print(sorted(set(compiled)))
"""


@pytest.mark.slow(minutes=5)
@pytest.mark.one_engine
def test_after_warmup_nothing_compiles_and_kernels_stay_within_bounds(tmp_path, data_dir):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               FASTIR_BOUNDSCHECK_RUN="1")
    # (--jobs 2: the steps shared by two processes, whatever the load: the suite runs alone)
    subprocess.run([*PROGRAM, "warmup", "--jobs", "2"], env=env,
                   check=True, capture_output=True)
    battery = subprocess.run([sys.executable, "-c", BATTERY, str(data_dir / "inputs")],
                             env=env, capture_output=True, text=True, check=True)
    within = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                             "-k", "numba and not slow and not warmup", "--hypothesis-seed=0",
                             *[str(TESTS / name) for name in SUBSET]],
                            env=env, capture_output=True, text=True, cwd=TESTS.parent)
    assert battery.stdout.strip() == "[]", f"compiled after the warmup: {battery.stdout}"
    assert within.returncode == 0, within.stdout[-4000:] + within.stderr[-2000:]
