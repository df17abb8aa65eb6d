"""``fastir worker start|stop|status`` (fastir/cli/worker.py): never a traceback nor a hang.
A folder it must not use, an idle time that is not one (FASTIR_WORKER_IDLE, --idle nan or
inf), a worker stopped by a signal (it does not answer), one that is starting (status names
it; stop ends it), one that fails while it starts (start says why at once, not after
--wait): each gets one line and an exit status, within seconds."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from cli_calls import PROGRAM, ROOT, session_worker

from fastir.worker import client, common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]


def worker_command(env, *args, timeout=60):
    """``fastir worker ARGS``: (status, stdout, stderr), its seconds."""
    started = time.time()
    done = subprocess.run([*PROGRAM, "worker", *args], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout, done.stderr, time.time() - started


def _env(folder, **more):
    return {**os.environ, "FASTIR_WORKER_DIR": str(folder), **more}


@pytest.mark.parametrize("action", ["status", "start", "stop"])
def test_a_folder_it_must_not_use(tmp_path, action):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    status, out, err, _ = worker_command(_env(shared), action)
    assert status == 1 and out == ""
    assert err.splitlines() == [f"fastir worker: fastir worker folder: {shared} is not a "
                                "folder only this user can open (owner 0, mode 755): use a "
                                "new folder, or chmod 700 it"] or os.geteuid() != 0, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("args, env, line", [
    (["start", "--idle", "nan"], {}, "--idle='nan': expected seconds"),
    (["start", "--idle", "inf"], {}, "--idle='inf': expected seconds"),
    (["start", "--idle", "0"], {}, "--idle='0': expected seconds"),
    (["status"], {"FASTIR_WORKER_IDLE": "abc"}, "FASTIR_WORKER_IDLE='abc': expected seconds"),
    (["start"], {"FASTIR_WORKER_IDLE": "-1"}, "FASTIR_WORKER_IDLE='-1': expected seconds"),
])
def test_an_idle_time_that_is_not_one(tmp_path, args, env, line):
    status, out, err, seconds = worker_command(_env(tmp_path / "private", **env), *args)
    assert status == 2 and out == "" and seconds < 30
    assert len(err.splitlines()) == 1 and err.startswith(f"fastir worker: {line}"), err
    assert not (tmp_path / "private").exists()  # (nothing started)


def test_a_wait_that_is_not_one(tmp_path):
    status, _, err, _ = worker_command(_env(tmp_path / "private"), "start", "--wait", "nan")
    assert status == 2 and "--wait: expected seconds" in err


def test_a_stopped_worker_is_said_not_to_answer():
    """SIGSTOP: status and stop answer within seconds, naming it and what to do."""
    worker = session_worker(os.environ)
    os.kill(worker.pid, signal.SIGSTOP)
    try:
        for action in ("status", "stop"):
            status, out, err, seconds = worker_command(worker.env, action)
            assert status == 1 and seconds < client.ANSWER_SECONDS + 20
            assert err.splitlines() == [
                f"fastir worker: the worker (pid {worker.pid}) does not answer within "
                f"{client.ANSWER_SECONDS} s: it is stopped or hung (kill -CONT {worker.pid} "
                f"continues it, kill {worker.pid} ends it)"], err
    finally:
        os.kill(worker.pid, signal.SIGCONT)
    assert worker.status()["pid"] == worker.pid  # (a stop it did not hear: still serving)


def _holding_the_lock(env):
    """A process that holds the worker's lock with its pid written, as a worker that is
    starting does; it says "held" once it does."""
    code = ("import fcntl, os, sys, time; from fastir.worker import common; "
            "folder = common.directory(); "
            "name = common.key(common.identity(), common.own_context()); "
            "fd = folder.open(common.names(name)['lock'], os.O_RDWR | os.O_CREAT); "
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, str(os.getpid()).encode()); "
            "print('held', flush=True); time.sleep(120)")
    holder = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "held\n"
    return holder


def test_a_worker_that_is_starting(tmp_path):
    env = _env(tmp_path / "private")
    holder = _holding_the_lock(env)
    try:
        status, out, err, _ = worker_command(env, "status")
        assert (status, out, err) == (1, f"fastir worker: starting (pid {holder.pid})\n", "")
        status, out, _, _ = worker_command(env, "status", "--json")
        assert status == 1 and json.loads(out) == {"state": "starting", "pid": holder.pid}
        status, out, err, _ = worker_command(env, "stop")
        assert status == 0, err
        assert out == f"fastir worker: stopped a worker that was starting (pid {holder.pid})\n"
        assert holder.wait(timeout=30) == -signal.SIGTERM
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        holder.stdout.close()
    status, out, _, _ = worker_command(env, "status")
    assert (status, out) == (1, "fastir worker: none running\n")


def test_a_worker_that_fails_to_start_is_reported_at_once(tmp_path):
    """Not after --wait: start sees the worker end, and says why."""
    env = _env(tmp_path / "private", NUMBA_NUM_THREADS="-1")  # (numba refuses it)
    status, _, err, seconds = worker_command(env, "start", "--wait", "300", timeout=300)
    assert status == 1 and seconds < 120
    assert "fastir worker: did not start: not started: ValueError(" in err, err
    assert "Traceback" not in err
    status, out, _, _ = worker_command(env, "status")
    assert (status, out) == (1, "fastir worker: none running\n")

