"""The warm worker, run as a user runs it: every command gives the same stdout, stderr and
exit status through the worker as in-process (differential), reads standard input and
relative paths as the caller sees them, passes Ctrl-C on, serves several clients at once,
retires when fastir changes or when idle, and is never used when anything about it is
wrong (then the command runs in-process). Each test stops the workers it started, by their
process id; the suite's other tests never use one (conftest sets FASTIR_WORKER=off)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import sigint_default, sigint_ignored

from fastir.worker import client, common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

DATA = Path(__file__).resolve().parent.parent / "data" / "trec_eval" / "inputs"
ROOT = Path(__file__).resolve().parents[2]
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")
OTHER_RUN = str(DATA / "results.trunc")


def fastir(env, *args, cwd=ROOT, stdin=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "fastir", *args], capture_output=True,
                          env=env, cwd=cwd, input=stdin, timeout=timeout)


def _env(folder, mode):
    """The environment of a user's commands (fastir's default engine choice: in-process,
    small inputs run as Python, as users' commands do)."""
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_JIT"}
    return {**env, "FASTIR_WORKER": mode, "FASTIR_WORKER_DIR": str(folder),
            "FASTIR_WORKER_IDLE": "60"}  # a worker a failed test could not stop goes soon


def _gone(pid, seconds=20):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _stop(pid):
    """Stop a worker by its process id (and wait until it has gone)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not _gone(pid):
        os.kill(pid, signal.SIGKILL)
        _gone(pid)


def _status(env):
    """The worker's status (None: none serves), asked as a user asks."""
    done = fastir(env, "worker", "status", "--json")
    return json.loads(done.stdout)


def _identity(env):
    """The identity of ``python -m fastir`` (this test process's differs: pytest's path)."""
    done = subprocess.run([sys.executable, "-c", "from fastir.worker import common; "
                           "print(common.identity())"], capture_output=True, text=True,
                          env=env, cwd=ROOT, check=True)
    return done.stdout.strip()


def _start(env, *flags):
    done = fastir(env, "worker", "start", *flags, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    return _status(env)["pid"]


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """(environment that uses it, its pid): one worker for the module's tests."""
    env = _env(tmp_path_factory.mktemp("worker") / "private", "use")
    pid = _start(env, "--idle", "120")
    yield env, pid
    _stop(pid)


def _served(env):
    return _status(env)["served"]


def _same(env, *args, cwd=ROOT, stdin=None):
    """Run ``args`` in-process and through the worker: the same bytes and status."""
    before = _served(env)
    alone = fastir({**env, "FASTIR_WORKER": "off"}, *args, cwd=cwd, stdin=stdin)
    served = fastir(env, *args, cwd=cwd, stdin=stdin)
    assert _served(env) == before + 1, "the worker did not run it"
    assert served.stdout == alone.stdout
    assert served.stderr == alone.stderr
    assert served.returncode == alone.returncode
    return served


COMMANDS = [
    ["trec_eval", "-q", QRELS, RUN],
    ["trec_eval", "-m", "official", "-c", "-M", "5", QRELS, RUN],
    ["trec_eval", "-m", "no_such_measure", QRELS, RUN],
    ["trec_eval", "-l", "2.5", QRELS, RUN],
    ["trec_eval", QRELS, "/no/such/run"],
    ["trec_eval", "-v"],
    ["trec_eval", "--compat", "9.0.8", "-m", "P.5,10", "-q", QRELS, RUN],
    ["eval", QRELS, RUN, "-m", "nDCG@10", "-m", "AP", "--format", "json"],
    ["eval", QRELS, RUN, "-m", "nDCG@10", "--per-query"],
    ["eval", QRELS, RUN, "-m", "nDCG@1O"],
    ["eval", "-h"],
    ["measures"],
    ["example"],
    ["stats", QRELS, RUN],
    ["fuse", RUN, RUN, "--method", "rrf"],
    ["fuse", RUN, OTHER_RUN, "--method", "wsum", "--norm", "min-max"],
    ["pool", RUN, OTHER_RUN, "--depth", "5", "--strategy", "rbp"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_same_output_and_status(worker, args):
    _same(worker[0], *args)


def test_relative_paths_and_standard_input(worker):
    env = worker[0]
    _same(env, "trec_eval", "qrels.test", "results.test", cwd=DATA)
    done = _same(env, "trec_eval", "-q", "qrels.test", "-", cwd=DATA,
                 stdin=Path(RUN).read_bytes())
    assert b"num_ret" in done.stdout


def test_closed_standard_input_runs_in_process(worker):
    env = worker[0]
    before = _served(env)
    done = subprocess.run(["sh", "-c", f'exec "$0" -m fastir trec_eval {QRELS} {RUN} <&-',
                           sys.executable], capture_output=True, env=env, cwd=ROOT)
    assert done.returncode == 0 and b"map" in done.stdout
    assert _served(env) == before  # Python has no sys.stdin: nothing to hand over


def test_written_files_and_umask(worker, tmp_path):
    env = worker[0]
    for mode, name in (("off", "alone.run"), ("use", "served.run")):
        done = fastir({**env, "FASTIR_WORKER": mode}, "fuse", RUN, OTHER_RUN, "-o", name,
                      cwd=tmp_path)
        assert done.returncode == 0
    assert (tmp_path / "alone.run").read_bytes() == (tmp_path / "served.run").read_bytes()
    assert (tmp_path / "alone.run").stat().st_mode == (tmp_path / "served.run").stat().st_mode


def _sigint_while_waiting(env, preexec_fn):
    """A client whose command waits on its standard input, sent SIGINT once the worker runs
    it (started with ``preexec_fn``)."""
    before = _served(env)
    client = subprocess.Popen([sys.executable, "-m", "fastir", "trec_eval", QRELS, "-"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, cwd=ROOT,
                              preexec_fn=preexec_fn)
    deadline = time.time() + 30
    while _status(env)["running"] == 0 and time.time() < deadline:
        time.sleep(0.02)
    assert _served(env) == before + 1
    client.send_signal(signal.SIGINT)
    return client


def _ended(client):
    if client.poll() is None:
        client.kill()
        client.wait()
    for stream in (client.stdin, client.stdout, client.stderr):
        if not stream.closed:
            stream.close()


def test_ctrl_c_is_passed_on(worker):
    env = worker[0]
    waiting = _sigint_while_waiting(env, sigint_default)
    try:
        waiting.wait(timeout=30)  # (stdin stays open: the command was waiting)
        err = waiting.stderr.read()
    finally:
        _ended(waiting)
    assert waiting.returncode == 130  # as in-process (fastir.cli.main.dispatch): no traceback
    assert err.decode().splitlines()[-1:] == ["fastir trec_eval: interrupted (Ctrl-C)"], err
    assert _status(env)["running"] == 0


def test_an_ignored_ctrl_c_is_not_passed_on(worker):
    """A client that ignores SIGINT (a background job's) goes on as in-process does, however
    the worker was started."""
    env = worker[0]
    run = Path(RUN).read_bytes()
    alone = fastir({**env, "FASTIR_WORKER": "off"}, "trec_eval", QRELS, "-", stdin=run)
    going = _sigint_while_waiting(env, sigint_ignored)
    try:
        time.sleep(0.3)
        out, err = going.communicate(run, timeout=60)
    finally:
        _ended(going)
    assert (going.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert going.returncode == 0


def test_several_clients_at_once(worker):
    env = worker[0]
    before = _served(env)
    clients = [subprocess.Popen([sys.executable, "-m", "fastir", "trec_eval", "-q", QRELS,
                                 RUN], stdout=subprocess.PIPE, env=env, cwd=ROOT)
               for _ in range(4)]
    outputs = [c.communicate(timeout=60)[0] for c in clients]
    assert all(c.returncode == 0 for c in clients)
    assert len(set(outputs)) == 1 and outputs[0]
    assert _served(env) == before + 4


def test_client_imports_neither_numpy_nor_numba(worker):
    code = ("import sys; from fastir.cli.main import main; "
            f"sys.argv = ['fastir', 'trec_eval', {QRELS!r}, {RUN!r}]; status = main(); "
            "assert status == 0, status; "
            "print(sorted(m for m in ('numpy', 'numba') if m in sys.modules))")
    before = _served(worker[0])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=worker[0], cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert _served(worker[0]) == before + 1


def test_stale_sources_retire_the_worker(tmp_path):
    env = _env(tmp_path / "private", "use")
    pid = _start(env, "--idle", "60")
    try:
        ident = _identity(env)
        sock = client.connect(env["FASTIR_WORKER_DIR"], ident)
        try:
            request = {"identity": ident, "stamp": "another", "argv": ["fastir"],
                       "env": {}, "umask": 0o22, "streams": []}
            here = os.open(".", os.O_RDONLY)
            common.send(sock, ("run", request), fds=[0, 1, 2, here])
            os.close(here)
            assert common.receive(sock)[0] == ("fallback", "stale")
        finally:
            sock.close()
        assert _gone(pid)
        done = fastir(env, "trec_eval", QRELS, RUN)  # runs in-process, starts nothing
        assert done.returncode == 0 and b"map" in done.stdout
        assert _status(env) is None
    finally:
        _stop(pid)


def test_sources_stamp_follows_the_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    first = common.sources_stamp(str(tmp_path))
    (tmp_path / "a.py").write_text("x = 22\n")
    assert common.sources_stamp(str(tmp_path)) != first


def test_idle_worker_exits(tmp_path):
    env = _env(tmp_path / "private", "use")
    pid = _start(env, "--idle", "1")
    try:
        assert _gone(pid, 30)
        assert not list((tmp_path / "private").glob("*.sock"))
    finally:
        _stop(pid)


def test_first_use_starts_one_and_stop_stops_it(tmp_path):
    env = _env(tmp_path / "private", "auto")
    done = fastir(env, "trec_eval", QRELS, RUN)  # in-process, and a worker starts
    assert done.returncode == 0
    deadline = time.time() + 300
    answer = None
    while answer is None and time.time() < deadline:
        time.sleep(0.1)
        answer = _status(env)
    assert answer is not None, (tmp_path / "private").glob("*.log")
    try:
        stopped = fastir(env, "worker", "stop")
        assert stopped.returncode == 0 and b"stopped" in stopped.stdout
        assert _gone(answer["pid"])
    finally:
        _stop(answer["pid"])


def test_a_folder_others_can_open_is_never_used(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    env = _env(folder, "auto")
    done = fastir(env, "trec_eval", QRELS, RUN)
    assert done.returncode == 0 and b"map" in done.stdout
    assert list(folder.iterdir()) == []  # nothing started, nothing written
    assert fastir(env, "worker", "start").returncode != 0


def test_a_socket_of_something_else_falls_back(tmp_path):
    folder = tmp_path / "private"
    env = _env(folder, "use")
    folder.mkdir(mode=0o700)
    path = common.paths(str(folder), _identity(env))["socket"]
    out = tmp_path / "out"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as impostor, open(out, "wb") as f:
        impostor.bind(path)
        impostor.listen(1)  # accepts, never answers: the client must not wait for it
        done = subprocess.run([sys.executable, "-m", "fastir", "trec_eval", QRELS, RUN],
                              stdout=f, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0 and b"map" in out.read_bytes()


def test_another_users_worker_is_never_used(worker, monkeypatch):
    env = worker[0]
    ident = _identity(env)
    sock = client.connect(env["FASTIR_WORKER_DIR"], ident)
    assert sock is not None
    sock.close()
    monkeypatch.setattr(os, "geteuid", lambda: 4242)
    assert client.connect(env["FASTIR_WORKER_DIR"], ident) is None


def test_modes(monkeypatch):
    monkeypatch.delenv("FASTIR_WORKER", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert common.mode() == "auto"
    monkeypatch.setenv("CI", "true")
    assert common.mode() == "off"
    for value, mode in [("off", "off"), ("0", "off"), ("use", "use"), ("auto", "auto"),
                        ("nonsense", "off")]:
        monkeypatch.setenv("FASTIR_WORKER", value)
        assert common.mode() == mode
