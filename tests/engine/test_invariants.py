"""Invariants: thread count, query order and chunking change nothing; ranges hold."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import qrels_and_runs
from hypothesis import given, settings

import fastir

NAMES = ["AP", "nDCG@10", "nDCG", "P@5", "R@10", "R@100", "RR", "Bpref", "IPrec@0.5", "GMAP"]

SCRIPT = """
import json, sys
import numpy as np
import numba
import fastir
from fastir import _jit
_jit.SERIAL_ITEMS = int(sys.argv[1])  # (0: every launch through numba's team of threads)
_jit.busy = lambda: True  # (a small launch then runs on the calling thread, whatever the load)
rng = np.random.default_rng(7)
n_q = 300
lengths = rng.integers(1, 400, n_q)  # uneven queries: the chunks are balanced by rows
q = np.repeat(np.arange(n_q), lengths)
d = np.concatenate([rng.permutation(400)[:n] for n in lengths])
s = np.round(rng.normal(size=len(q)), 2)  # ties
keep = rng.random(n_q * 60) < 0.5
qq = np.repeat(np.arange(n_q), 60)[keep]
qd = np.tile(np.arange(0, 300, 5), n_q)[keep]
ql = rng.integers(0, 3, size=keep.sum())
res = fastir.evaluate(fastir.Qrels.from_arrays(qq, qd, ql), fastir.Run.from_arrays(q, d, s),
                      __NAMES__)
print(json.dumps({"values": res.values.tolist(), "mean": res.mean,
                  "threads": _jit.n_threads(), "layer": numba.threading_layer(),
                  "chunks": len(_jit.chunk_bounds(lengths, _jit.n_threads())) - 1}))
""".replace("__NAMES__", repr(NAMES))


def _run_with_threads(n, serial_items=0):
    # compiled: under the Python engine every kernel is serial and the thread count is moot
    env = dict(os.environ, NUMBA_NUM_THREADS=str(n), FASTIR_JIT="numba")
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(serial_items)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.one_engine
def test_one_and_two_threads_are_bit_identical():
    one, two = _run_with_threads(1), _run_with_threads(2)
    # (and small work on the calling thread alone, numba's thread count restored after it)
    small = _run_with_threads(2, serial_items=10**9)
    assert small["threads"] == 2 and small["values"] == two["values"]
    # the compiled parallel kernels ran (a threading layer is chosen at the first parallel
    # launch), with 1 and 2 threads over several chunks each (chunk_bounds: 4 per thread)
    assert (one["threads"], two["threads"]) == (1, 2)
    assert one["chunks"] == 4 and two["chunks"] == 8
    assert one["values"] == two["values"] and one["mean"] == two["mean"]  # JSON floats
    # round-trip exactly


@settings(max_examples=60, deadline=None)
@given(qrels_and_runs())
def test_input_order_changes_nothing(data):
    qrels, run = data
    forward = fastir.evaluate(qrels, run, NAMES)
    reverse = fastir.evaluate({q: dict(reversed(list(d.items())))
                               for q, d in reversed(list(qrels.items()))},
                              {q: dict(reversed(list(d.items())))
                               for q, d in reversed(list(run.items()))}, NAMES)
    assert forward.query_ids == reverse.query_ids
    assert np.array_equal(forward.values, reverse.values)


@settings(max_examples=60, deadline=None)
@given(qrels_and_runs())
def test_ranges_and_monotonic_recall(data):
    qrels, run = data
    res = fastir.evaluate(qrels, run, ["nDCG", "nDCG@3", "R@1", "R@3", "R@10", "AP", "P@5"])
    v = res.values
    assert np.all((v >= 0) & (v <= 1))
    assert np.all(v[:, 2] <= v[:, 3]) and np.all(v[:, 3] <= v[:, 4])
