"""A fresh install's first ``fastir eval`` compiles its kernels in helper processes too, says
so with the count and an estimate, prints what a warm run prints, and leaves nothing
running (fastir.cli.first_run)."""

import os
import re
import subprocess

import pytest
from cli_calls import PROGRAM
from conftest import DATA

from fastir import _jit
from fastir._estimate import CONTENTION, KERNEL_SECONDS, Measured, seconds, shared
from fastir.cli.first_run import shares

pytestmark = pytest.mark.one_engine

QRELS, RUN = str(DATA / "inputs" / "qrels.test"), str(DATA / "inputs" / "results.test")


def test_the_kernels_timed_are_those_fastir_registers():
    """A kernel renamed or moved must be timed again under its new name."""
    import importlib

    for name in {n.rsplit(".", 1)[0] for n in KERNEL_SECONDS}:
        importlib.import_module(name)

    assert [n for n in KERNEL_SECONDS if not _jit.registered(n)] == []


def test_a_helper_compiles_its_share_and_runs_the_other_kernels_as_python():
    import functools

    from fastir.measures import kernels

    name = _jit.name_of(kernels.summaries)
    with _jit.compiling_only(["fastir.x.other"]):
        assert not _jit.python_mode(10)  # (compiled work: its share compiles at any size)
        assert isinstance(_jit.compiled(kernels.summaries), functools.partial)
    with _jit.compiling_only([name]):
        assert not isinstance(_jit.compiled(kernels.summaries), functools.partial)


def test_a_kernel_compiled_elsewhere_waits_for_that_process_once():
    from fastir.measures import kernels

    waits = []
    name = _jit.name_of(kernels.summaries)
    _jit.compiled_elsewhere([name], lambda: waits.append(1))
    try:
        _jit.compiled(kernels.summaries)
        _jit.compiled(kernels.summaries)
    finally:
        _jit.compiled_elsewhere([name], None)
    assert waits == [1]


def test_one_process_takes_what_seconds_says_and_more_as_others_fill_the_machine():
    measured = Measured(30, load=3.0)
    for load, slower in [(0.0, 1.0), (1.0, 1 + (CONTENTION - 1) / 4), (6.0, CONTENTION)]:
        low, high = shared([measured], [load], cores=2)
        assert low == high == pytest.approx(seconds(measured, 1, [load], cores=2)[0] * slower)


def test_processes_sharing_the_cores_end_with_the_last():
    """Three processes on two idle cores: a share of 2/3 of a core each until the shortest
    ends, then a core each."""
    low, high = shared([Measured(s, 0.0) for s in (6, 9, 12)], [0.0], cores=2)
    assert low == high == pytest.approx(6 * 1.5 + 3 + 3)


def test_the_shares_are_consecutive_and_cover_every_kernel():
    names = list(KERNEL_SECONDS)
    for cores in (1, 2, 4):
        runs, measured = shares(names, cores)
        assert [n for run in runs for n in run] == names
        assert 1 <= len(runs) <= cores + 1 and len(measured) == len(runs)
    assert len(shares(names, 1)[0]) == 1  # (one core: helpers would only add their start)


def run(env, *args):
    return subprocess.run([*PROGRAM, "eval", QRELS, RUN, *args], env=env, capture_output=True,
                          text=True, start_new_session=True)


def left_running(group):
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.slow(minutes=2)
def test_a_first_run_on_a_fresh_cache_says_so_and_prints_what_a_warm_run_prints(tmp_path):
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "FASTIR_WORKER": "off", "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "FASTIR_JIT": "numba",  # (the kernels compiled, though the input is small)
           "TMPDIR": str(tmp_path / "tmp")}
    first = subprocess.Popen([*PROGRAM, "eval", QRELS, RUN], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = first.communicate(timeout=900)
    assert first.returncode == 0, err
    assert not left_running(first.pid)  # (its helpers ended with it)
    assert os.listdir(tmp_path / "tmp") == []  # (and the samples they read)
    said = err.splitlines()
    assert len(said) == 1 and re.fullmatch(
        r"fastir: compiling numba kernels, the \d+ this input needs, once \(cached on disk\), "
        r"in \d+ process(es)?: about \d+(-\d+)? s at this machine's load \(\d+\.\d on \d+ "
        r"cores\)\. `fastir warmup` compiles them all ahead\.", said[0]), err
    warm = run(env)
    assert (warm.returncode, warm.stdout, warm.stderr) == (0, out, "")
    assert run({**env, "FASTIR_JIT": "python"}).stdout == out
