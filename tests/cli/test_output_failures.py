"""Output that is all there or says it is not, as a user runs the commands: standard output
on /dev/full, closed (``>&-``) or a file on a full disk, ``-o`` onto a device or a full disk,
``fuse -o`` onto one of its inputs. Each is one line naming where to and exit status 1
(no traceback, no "Exception ignored"), the same in-process and through a warm worker (the
module's own, stopped by its process id); a reader that leaves early stays no error."""

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_calls import PROGRAM
from conftest import fill

from fastir.output.writing import discard_stdout
from fastir.worker import child, common

pytestmark = pytest.mark.one_engine

DATA = Path(__file__).resolve().parent.parent / "data" / "trec_eval" / "inputs"
ROOT = Path(__file__).resolve().parents[2]
QRELS, RUN, OTHER_RUN = (str(DATA / name) for name in ("qrels.test", "results.test",
                                                        "results.trunc"))
COMMANDS = {"trec_eval": ["trec_eval", "-q", QRELS, RUN], "eval": ["eval", QRELS, RUN],
            "stats": ["stats", QRELS, RUN], "agree": ["agree", QRELS, QRELS],
            "fuse": ["fuse", RUN, OTHER_RUN], "measures": ["measures"],
            "example": ["example"]}
FULL = "cannot write to standard output: No space left on device (the output is incomplete)"
CLOSED = "cannot write to standard output: it is closed (nothing was written)"


def _env(folder, mode):
    """A user's environment (stdout buffered, fastir's default engine) with the worker
    ``mode`` and a private worker folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("FASTIR_JIT", "PYTHONUNBUFFERED")}
    return {**env, "FASTIR_WORKER": mode, "FASTIR_WORKER_DIR": str(folder),
            "FASTIR_WORKER_IDLE": "60"}  # (a worker a failed test could not stop goes soon)


def fastir(env, args, stdout, preexec_fn=None, timeout=300):
    return subprocess.run([*PROGRAM, *args], stdout=stdout,
                          stderr=subprocess.PIPE, env=env, cwd=ROOT, timeout=timeout,
                          preexec_fn=preexec_fn)


def _status(env):
    """The worker's status (None: none serves)."""
    return json.loads(fastir(env, ["worker", "status", "--json"], subprocess.PIPE).stdout)


def _served(env):
    return _status(env)["served"]


@pytest.fixture(scope="module")
def envs(tmp_path_factory):
    """``{"in-process": env, "worker": env}``: the second's commands go to a warm worker
    started here (when the platform has workers) and stopped by its process id."""
    folder = tmp_path_factory.mktemp("worker") / "private"
    alone = _env(folder, "off")
    if not common.supported():
        yield {"in-process": alone}
        return
    served = _env(folder, "use")
    try:  # (a start that fails or times out may leave one starting: stopped too)
        done = fastir(served, ["worker", "start", "--idle", "120"], subprocess.PIPE,
                      timeout=900)
        assert done.returncode == 0, done.stderr.decode()
        yield {"in-process": alone, "worker": served}
    finally:
        started = _status(served)
        if started is not None:
            _stop(started["pid"])


def _stop(pid):
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def _both(envs, args, stdout, preexec_fn=None, reset=None, served=True):
    """The command's ``(stderr, status)`` in-process, checked to be the same through the
    worker (which must have run it when ``served``); ``stdout()`` opens what it writes to,
    ``reset()`` puts the files back as they were before each run."""
    outcomes = {}
    for where, env in envs.items():
        if reset:
            reset()
        before = _served(env) if where == "worker" else None
        with stdout() as out:
            done = fastir(env, args, out, preexec_fn)
        if where == "worker" and served:
            assert _served(env) == before + 1, "the worker did not run it"
        outcomes[where] = done.stderr.decode(), done.returncode
    assert len(set(outcomes.values())) == 1, outcomes
    return outcomes["in-process"]


def _dev_full():
    return open("/dev/full", "wb")


def _dev_null():
    return open(os.devnull, "wb")


@pytest.mark.parametrize("command", COMMANDS)
def test_stdout_on_a_full_device(envs, command):
    stderr, status = _both(envs, COMMANDS[command], _dev_full)
    assert (stderr, status) == (f"fastir {command}: error: {FULL}\n", 1)


def _close_stdout():
    os.close(1)


def test_help_on_a_full_device(envs):
    """argparse's help, printed as it exits."""
    stderr, status = _both(envs, ["eval", "-h"], _dev_full)
    assert (stderr, status) == (f"fastir eval: error: {FULL}\n", 1)


@pytest.mark.parametrize("command", COMMANDS)
def test_stdout_closed(envs, command):
    stderr, status = _both(envs, COMMANDS[command], contextlib.nullcontext, _close_stdout,
                           served=False)
    assert (stderr, status) == (f"fastir {command}: error: {CLOSED}\n", 1)


class _LeftPipe:
    """A pipe whose reader has left (``fastir measures | head``, head done)."""

    def __enter__(self):
        read, self.write = os.pipe()
        os.close(read)
        return self.write

    def __exit__(self, *exc):
        os.close(self.write)
        return False


@pytest.mark.parametrize("command", ["measures", "trec_eval", "fuse"])
def test_a_reader_that_left_is_no_error(envs, command):
    assert _both(envs, COMMANDS[command], _LeftPipe) == ("", 0)


def test_stdout_to_a_file_on_a_full_disk(envs, small_disk):
    out = small_disk / "out.txt"
    fill(small_disk, leave=4096)
    stderr, status = _both(envs, ["trec_eval", "-q", "-m", "all_trec", QRELS, RUN],
                           lambda: open(out, "wb"))
    assert (stderr, status) == (f"fastir trec_eval: error: {FULL}\n", 1)


def test_example_files_on_a_full_disk(envs, small_disk):
    fill(small_disk)
    folder = small_disk / "example"
    stderr, status = _both(envs, ["example", "--write", str(folder)], _dev_null)
    assert (stderr, status) == (f"fastir example: error: cannot write {folder / 'qrels.txt'}: "
                                "No space left on device (nothing was written)\n", 1)
    assert os.listdir(folder) == []


def test_fuse_onto_an_input_on_a_full_disk(envs, small_disk):
    """The input is left as it was, the temporary file removed."""
    target = small_disk / "a.run"
    target.write_bytes(Path(OTHER_RUN).read_bytes())
    fill(small_disk, leave=8192)
    before = sorted(os.listdir(small_disk))
    stderr, status = _both(envs, ["fuse", str(target), RUN, "-o", str(target)], _dev_null)
    assert (stderr, status) == (f"fastir fuse: error: cannot write {target}: No space left on "
                                f"device ({target} is left as it was)\n", 1)
    assert target.read_bytes() == Path(OTHER_RUN).read_bytes()
    assert sorted(os.listdir(small_disk)) == before


def test_fuse_onto_an_input(envs, tmp_path):
    """-o onto a run it reads is safe: the fused run replaces it, as written elsewhere."""
    target = tmp_path / "a.run"
    expected = tmp_path / "expected.run"
    done = fastir(envs["in-process"], ["fuse", OTHER_RUN, RUN, "-o", str(expected)],
                  subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr.decode()

    def reset():
        target.write_bytes(Path(OTHER_RUN).read_bytes())

    stderr, status = _both(envs, ["fuse", str(target), RUN, "-o", str(target)], _dev_null,
                           reset=reset)
    assert (stderr, status) == (f"wrote {target}\n", 0)
    assert target.read_bytes() == expected.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["a.run", "expected.run"]


@pytest.mark.parametrize("command", ["fuse", "plot"])
def test_output_file_on_a_full_device(envs, tmp_path, command):
    """-o naming a device (a link to /dev/full) writes it in place, checked."""
    if command == "plot":
        pytest.importorskip("matplotlib")
    target = tmp_path / "out.png"
    target.symlink_to("/dev/full")
    args = {"fuse": ["fuse", RUN, OTHER_RUN], "plot": ["plot", "pr", QRELS, RUN]}[command]
    stderr, status = _both(envs, [*args, "-o", str(target)], _dev_null)
    assert (stderr, status) == (f"fastir {command}: error: cannot write {target}: No space "
                                "left on device (the output is incomplete)\n", 1)


def test_plot_to_a_full_disk_with_stdout_full(envs, small_disk):
    """plot writes nothing to stdout: a full one is no error; a full disk for its figure
    is."""
    pytest.importorskip("matplotlib")
    target = small_disk / "pr.png"
    fill(small_disk)
    stderr, status = _both(envs, ["plot", "pr", QRELS, RUN, "-o", str(target)], _dev_full)
    assert (stderr, status) == (f"fastir plot: error: cannot write {target}: No space left on "
                                "device (nothing was written)\n", 1)
    assert sorted(os.listdir(small_disk)) == ["filler"]


def test_plot_with_stdout_full(envs, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "pr.png"
    stderr, status = _both(envs, ["plot", "pr", QRELS, RUN, "-o", str(target)], _dev_full)
    assert (stderr, status) == (f"wrote {target}\n", 0)
    assert target.read_bytes().startswith(b"\x89PNG")


def test_unbuffered_stdout_on_a_full_device(envs):
    """With PYTHONUNBUFFERED a write fails at once rather than at the flush: the same line
    (in-process: a worker serves only clients of its own PYTHON* environment)."""
    env = {**envs["in-process"], "PYTHONUNBUFFERED": "1"}
    stderr, status = _both({"in-process": env}, COMMANDS["eval"], _dev_full)
    assert (stderr, status) == (f"fastir eval: error: {FULL}\n", 1)


@pytest.fixture(scope="module")
def unbuffered(envs, tmp_path_factory):
    """``envs`` with PYTHONUNBUFFERED=1: a worker serves only clients of its own PYTHON*
    environment, so the worker's is another one, started here and stopped by its pid."""
    mine = {where: {**env, "PYTHONUNBUFFERED": "1"} for where, env in envs.items()}
    if "worker" not in mine:
        yield mine
        return
    mine["worker"]["FASTIR_WORKER_DIR"] = str(tmp_path_factory.mktemp("unbuffered"))
    try:
        done = fastir(mine["worker"], ["worker", "start", "--idle", "120"], subprocess.PIPE,
                      timeout=900)
        assert done.returncode == 0, done.stderr.decode()
        yield mine
    finally:
        started = _status(mine["worker"])
        if started is not None:
            _stop(started["pid"])


@pytest.mark.parametrize("streams", ["buffered", "unbuffered"])
def test_a_short_write_fails_alike_buffered_and_unbuffered(envs, unbuffered, streams,
                                                           tmp_path):
    """A file size limit (``ulimit -f``; a disk that fills) cuts a write short: unbuffered,
    Python's own stream took it as complete and the command exited 0 with 4 KB of 13."""
    target = tmp_path / "out"
    limit = 4096

    def small_files():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE,
                           (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    args = ["trec_eval", "-q", "-m", "all_trec", QRELS, RUN]
    stderr, status = _both(envs if streams == "buffered" else unbuffered, args,
                           lambda: open(target, "wb"), preexec_fn=small_files)
    assert (stderr, status) == ("fastir trec_eval: error: cannot write to standard output: "
                                "File too large (the output is incomplete)\n", 1)
    assert target.stat().st_size == limit


def test_help_unbuffered_on_a_full_device(unbuffered):
    """argparse drops the error of its own write of the help: unbuffered, nothing flushes
    later to find it, and the command exited 0 silently."""
    stderr, status = _both(unbuffered, ["eval", "-h"], _dev_full)
    assert (stderr, status) == (f"fastir eval: error: {FULL}\n", 1)


def test_the_workers_last_flush_says_what_failed(monkeypatch):
    """What a request's process does if stdout still held output that fails (dispatch leaves
    none): Python's own message at exit, with the error that happened, and status 120."""
    errors = io.StringIO()
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        monkeypatch.setattr(sys, "stderr", errors)
        full.write("held\n")
        assert child._flush(0) == 120
        discard_stdout()
    assert errors.getvalue() == (f"Exception ignored in: {full!r}\n"
                                 "OSError: [Errno 28] No space left on device\n")


@pytest.mark.parametrize("command", ["eval", "fuse", "pool", "trec_eval", "measures",
                                     "stats"])
def test_a_closed_pipe_ends_a_command_quietly(command, data_dir, tmp_path):

    qrels, run = (str(data_dir / "inputs" / n) for n in ("qrels.test", "results.test"))
    other = str(tmp_path / "other.test")
    shutil.copy(run, other)
    args = {"eval": [qrels, run, "-q"], "fuse": [run, other], "pool": [run, other],
            "trec_eval": ["-q", qrels, run],
            "measures": [], "stats": [qrels, run]}[command]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
    done = subprocess.run([*PROGRAM, command, *args], stdout=reader.stdin,
                          stderr=subprocess.PIPE, text=True)
    reader.stdin.close()
    reader.wait()
    said = [line for line in done.stderr.splitlines()
            if not line.startswith("fastir: compiling")]  # (a fresh cache's one-time note)
    assert done.returncode == 0 and said == [], done.stderr


