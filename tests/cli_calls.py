"""How the tests run the command line: the tests of tests/cli and tests/worker call it
through this module only, so that each call is also checked against the warm worker.

- :func:`cli`: ``fastir ARGS`` in a subprocess, as a user runs it (:data:`PROGRAM`).
- :func:`in_process`: ``fastir.cli.main.main(ARGS)`` in this process, its streams captured
  (fast: the drawn-input tests call it thousands of times).

The differential check: each call is run again through a warm worker of the test session
(started on first use in a private folder, stopped at the session's end by its process id:
tests/conftest.py) and must give the same stdout, stderr and exit status, and write the
same files (``-o`` and ``--write`` of fuse, plot and example) with the same modes; and the
worker must have run it (its count of commands served), unless the call says it runs
in-process (``served=False``). ``cli`` calls are checked every one; ``in_process`` calls the
first three of each test and one in 25 after. ``FASTIR_TEST_WORKER``: ``all`` checks
every call, ``off`` none (as where workers are not supported). Calls under the python
engine (FASTIR_JIT=python) are not checked: a worker's commands run compiled kernels, and
every call is checked under the numba engine.
"""

import contextlib
import difflib
import io
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from fastir.worker import client, common

ROOT = Path(__file__).resolve().parent.parent
#: The ``fastir`` program as users type it: the console script installed beside this
#: Python (``python -m fastir`` where there is none: the package not installed).
PROGRAM = [str(Path(sys.executable).with_name("fastir"))] \
    if Path(sys.executable).with_name("fastir").exists() else [sys.executable, "-m", "fastir"]
#: The environment variables a worker's identity holds (common.identity): the session has a
#: worker for each set of their values its calls use (the engine fixture's FASTIR_JIT, say).
_IDENTITY_PREFIXES = ("PYTHON", "NUMBA_", "FASTIR_JIT")


class Done(NamedTuple):
    """A finished call, as subprocess.CompletedProcess names its parts (bytes, or text
    with ``text=True``)."""
    returncode: int
    stdout: bytes
    stderr: bytes


def checking():
    """``"all"``, ``"sample"`` or ``"off"``: which calls are checked against the worker."""
    value = os.environ.get("FASTIR_TEST_WORKER", "sample")
    if not common.supported() or os.environ.get("FASTIR_JIT") == "python":
        return "off"
    return value


def cli(*args, stdin=None, cwd=None, env=None, text=False, served=True, timeout=300):
    """``fastir ARGS`` run in-process (FASTIR_WORKER=off), then through the
    session's worker, which must give the same (see the module's docstring)."""
    env = dict(os.environ if env is None else env)
    cwd = os.getcwd() if cwd is None else cwd
    alone = _run(args, stdin, cwd, {**env, "FASTIR_WORKER": "off"}, timeout)
    if checking() != "off":
        outputs = _outputs(args, cwd)
        written = _take(outputs, remove=True)
        worker = session_worker(env)
        before = worker.served()
        through = _run(args, stdin, cwd, worker.environment(env), timeout)
        _assert_same(args, alone, through)
        assert _take(outputs, remove=False) == written, f"{args}: the worker wrote other files"
        if served and _for_a_worker(args):
            assert worker.served() == before + 1, f"{args}: the worker did not run it"
    if text:
        return Done(alone.returncode, alone.stdout.decode(), alone.stderr.decode())
    return alone


def in_process(*args, stdin=None):
    """``main(ARGS)`` in this process: (status, stdout bytes, stderr text), and the same
    call through the session's worker for a sample of calls (the module's docstring)."""
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape", newline="")
    saved_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        from fastir.cli.main import main

        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(err):
            status = main(list(args))
        stdout.flush()
    finally:
        sys.stdin = saved_stdin
    if _sampled():
        worker = session_worker(os.environ)
        before = worker.served()
        through = _run(args, stdin, os.getcwd(), worker.environment(os.environ), 300)
        _assert_same(args, Done(status & 0xFF, out.getvalue(), err.getvalue().encode()),
                     through)
        if _for_a_worker(args):
            assert worker.served() == before + 1, f"{args}: the worker did not run it"
    return status, out.getvalue(), err.getvalue()


def _for_a_worker(args):
    """Whether the command line offers the command to a worker (the others are cheap)."""
    from fastir.cli.main import WORKER_COMMANDS, _defines

    return bool(args) and args[0] in WORKER_COMMANDS and not _defines(args)


_calls = Counter()


def _sampled():
    mode = checking()
    if mode == "off":
        return False
    test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
    _calls[test] += 1
    return mode == "all" or _calls[test] <= 3 or _calls[test] % 25 == 0


def _run(args, stdin, cwd, env, timeout):
    done = subprocess.run([*PROGRAM, *args], input=stdin, cwd=cwd,
                          env=env, capture_output=True, timeout=timeout)
    return Done(done.returncode, done.stdout, done.stderr)


def _assert_same(args, alone, through):
    for part in ("stdout", "stderr", "returncode"):
        mine, theirs = getattr(alone, part), getattr(through, part)
        assert theirs == mine, f"{args}: {part} differs through the worker:\n" + \
            "\n".join(difflib.unified_diff(_lines(mine), _lines(theirs), "in-process",
                                            "worker", lineterm=""))


def _lines(value):
    return value.decode("utf-8", "replace").splitlines() if isinstance(value, bytes) else \
        [str(value)]


def _outputs(args, cwd):
    """The files and folders a call writes: fuse's and plot's -o, example's --write."""
    found = []
    for i, arg in enumerate(args):
        if args[0] in ("fuse", "plot") and arg in ("-o", "--output") and i + 1 < len(args):
            found.append(args[i + 1])
        elif args[0] in ("fuse", "plot") and arg.startswith("--output="):
            found.append(arg.split("=", 1)[1])
        elif args[0] == "example" and arg == "--write" and i + 1 < len(args):
            found.append(args[i + 1])
    return [Path(cwd, path) for path in found if path != "-"]


def _take(outputs, remove):
    """{path: (bytes, mode)} of the written ``outputs`` (every file of a folder); ``remove``:
    then remove those files, so that the next run writes them afresh."""
    taken = {}
    for path in outputs:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else \
            [path] if path.exists() else []
        for file in files:
            taken[str(file)] = (file.read_bytes(), stat.S_IMODE(file.stat().st_mode))
            if remove:
                file.unlink()
    return taken


# -- the session's worker ------------------------------------------------------------------
class Worker:
    """A worker in its own private folder, run by the ``fastir`` program with this
    environment; ``stop`` ends it by its process id."""

    def __init__(self, env=None, idle=900, preexec_fn=None, wrapper=(), home=None):
        self.home = Path(tempfile.mkdtemp(prefix="fastir-worker-") if home is None else home)
        self.folder = self.home / "private"
        self.env = {**(os.environ if env is None else env), "FASTIR_WORKER": "use",
                    "FASTIR_WORKER_DIR": str(self.folder), "FASTIR_WORKER_IDLE": str(idle)}
        self.wrapper = list(wrapper)
        done = subprocess.run([*self.wrapper, sys.executable, "-c", _WHO], env=self.env,
                              cwd=ROOT, capture_output=True, text=True, check=True)
        self.name, self.ident = json.loads(done.stdout)
        started = subprocess.run([*self.wrapper, *PROGRAM, "worker",
                                  "start"], env=self.env, cwd=ROOT, capture_output=True,
                                 timeout=900, preexec_fn=preexec_fn)
        self.pid = None
        status = self.status()
        assert started.returncode == 0 and status, started.stderr.decode()
        self.pid = status["pid"]

    def environment(self, env):
        """``env`` with this worker in use."""
        return {**env, "FASTIR_WORKER": "use", "FASTIR_WORKER_DIR": str(self.folder)}

    def status(self):
        """The worker's answer to ``status`` (None: none listens), asked from here."""
        folder = common.open_folder(str(self.folder))
        try:
            return client.call(folder, self.name, self.ident, "status")
        finally:
            folder.close()

    def served(self):
        """How many commands the worker has run."""
        status = self.status()
        assert status is not None, f"the worker has gone; its log:\n{self.log()[-2000:]}"
        return status["served"]

    def log(self):
        return "".join(p.read_text() for p in sorted(self.folder.glob("*.log*")))

    def stop(self):
        """End the worker (SIGTERM, then SIGKILL) and wait until it has gone."""
        if self.pid is not None:
            stop_process(self.pid)
        shutil.rmtree(self.home, ignore_errors=True)


#: What a client of this environment names its worker (its key and identity), as JSON.
_WHO = ("import json; from fastir.worker import common; i = common.identity(); "
        "print(json.dumps([common.key(i, common.own_context()), i]))")


def gone(pid, seconds=20):
    """Wait up to ``seconds`` for process ``pid`` to end (a child of another process, or
    reaped); whether it has."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def stop_process(pid):
    """End process ``pid`` (SIGTERM, then SIGKILL) and wait until it has gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not gone(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        gone(pid)


_session = {}


def session_worker(env):
    """The session's worker for calls with environment ``env`` (started on first use)."""
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(_IDENTITY_PREFIXES)))
    if key not in _session:
        _session[key] = Worker({k: v for k, v in env.items()
                                if not k.startswith(_IDENTITY_PREFIXES)} | dict(key))
    return _session[key]


def stop_session_worker():
    """Stop the session's workers (tests/conftest.py, at its end)."""
    while _session:
        _session.popitem()[1].stop()
