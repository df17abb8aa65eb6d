"""fastir warmup says what it does (compiling only when it compiles), and a Ctrl-C stops it
and its helper processes with one line."""

import os
import re
import signal
import subprocess
import time

import pytest
from cli_calls import PROGRAM
from conftest import sigint_default

pytestmark = pytest.mark.one_engine


def warmup(*args):
    """``fastir warmup ARGS`` in a process of its own (not through cli_calls: its timings
    differ from a worker's, and a worker never compiles for it)."""
    return subprocess.run([*PROGRAM, "warmup", *args],
                          capture_output=True, text=True)


def test_warmup_says_compiling_only_when_it_compiles():
    first = warmup("--only", "containers")  # (compiles what is not cached)
    assert first.returncode == 0, first.stderr
    again = warmup("--only", "containers")
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr
    assert again.stderr.startswith("fastir warmup: dicts and arrays: loaded from the cache in ")
    said = first.stderr.splitlines()
    assert len(said) == 1 or (re.search(r"compiling the kernels not in the cache: about \d+"
                                        r"(-\d+)? (s|minutes) at this machine's load", said[0])
                              and " compiled " in said[1]), first.stderr


def test_warmup_says_how_long_it_takes_before_it_starts():
    """The first line, before any compile, says the estimate (scaled to the load now: the
    figures are fastir._estimate's tests')."""
    done = warmup("--jobs", "1")
    assert done.returncode == 0, done.stderr
    first = done.stderr.splitlines()[0]
    assert first.startswith("fastir warmup: loading the numba kernels from the cache"), first
    assert re.search(r"on a fresh cache \(once per install\) about \d+(-\d+)? (s|minutes) "
                     r"at this machine's load \(\d+\.\d on \d+ cores\)$", first), first


@pytest.mark.slow
def test_ctrl_c_stops_a_warmup_and_its_helpers_with_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the warmup and its helper processes: one line, 130, and
    no helper left compiling."""
    env = {**os.environ, "FASTIR_WORKER": "off", "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([*PROGRAM, "warmup", "--jobs", "2"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=sigint_default)
    try:
        time.sleep(6)  # (both processes compiling)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # (the session's processes, all ours)
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == 130, err
    said = err.splitlines()
    assert said[-1] == "fastir warmup: interrupted (Ctrl-C)" and "Traceback" not in err, err
    assert sum("interrupted" in line for line in said) == 1, err
