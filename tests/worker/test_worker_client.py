"""The client (fastir/worker/client.py) with a real worker, run as a user runs it: every
command gives the same stdout, stderr, exit status and files through the worker as
in-process (``cli`` of tests/cli_calls.py compares them, as it does each call of tests/cli);
the caller's descriptors (``<(zcat run.gz)``, ``/dev/fd/N``, ``/proc/self/fd/N``), standard
input and relative paths; a closed standard stream, and a terminal the command would read or
that stops background writers, keep the command in-process; Ctrl-C, SIGTERM and Ctrl-Z
reach the command, also once its worker was killed, and a client killed ends its command;
several clients at once; the client imports neither numpy nor numba; ``python -m fastir``
from the folder above a checkout named fastir; PYTHONUNBUFFERED's order of the two streams;
a setting the client cannot use is said in one line. Each test stops the workers it
started, by their process id."""

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from cli_calls import PROGRAM, ROOT, Worker, cli, gone, session_worker
from conftest import sigint_default, sigint_ignored

from fastir.worker import common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

DATA = ROOT / "tests" / "data" / "trec_eval" / "inputs"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")
OTHER_RUN = str(DATA / "results.trunc")


@pytest.fixture(scope="module")
def worker():
    """The session's worker for this environment (tests/cli_calls.py stops it)."""
    return session_worker(os.environ)


#: ``python -m fastir``, which puts the working folder first on the module path.
PYTHON_M = [sys.executable, "-m", "fastir"]


def fastir(env, *args, cwd=ROOT, stdin=None, timeout=120, program=PROGRAM, **kwargs):
    """``fastir ARGS`` once, with ``env`` (``program``: as users type it)."""
    return subprocess.run([*program, *args], capture_output=True,
                          env=env, cwd=cwd, input=stdin, timeout=timeout, **kwargs)


def both(worker, run):
    """``run(env)`` in-process and through ``worker``: the same stdout, stderr and exit
    status; the worker ran it once. The result."""
    before = worker.served()
    alone = run({**worker.env, "FASTIR_WORKER": "off"})
    served = run(worker.env)
    assert (served.returncode, served.stdout, served.stderr) == \
        (alone.returncode, alone.stdout, alone.stderr)
    assert worker.served() == before + 1, "the worker did not run it"
    return served


def in_process_only(worker, run):
    """``run(env)`` in-process and with the worker in use: the same results, and the
    worker did not run it."""
    before = worker.served()
    alone = run({**worker.env, "FASTIR_WORKER": "off"})
    kept = run(worker.env)
    assert (kept.returncode, kept.stdout, kept.stderr) == \
        (alone.returncode, alone.stdout, alone.stderr)
    assert worker.served() == before
    return kept


COMMANDS = [
    ["trec_eval", "-q", QRELS, RUN],
    ["trec_eval", "-m", "official", "-c", "-M", "5", QRELS, RUN],
    ["trec_eval", "-m", "no_such_measure", QRELS, RUN],
    ["trec_eval", "-l", "2.5", QRELS, RUN],
    ["trec_eval", QRELS, "/no/such/run"],
    ["trec_eval", "-v"],
    ["trec_eval", "-x"],
    ["trec_eval", "--compat", "9.0.8", "-m", "P.5,10", "-q", QRELS, RUN],
    ["eval", QRELS, RUN, "-m", "nDCG@10", "-m", "AP", "--format", "json"],
    ["eval", QRELS, RUN, "-m", "nDCG@10", "--per-query", "--format", "csv"],
    ["eval", QRELS, RUN, OTHER_RUN, "-m", "AP", "--compare", "--resamples", "99"],
    ["eval", QRELS, RUN, "-m", "nDCG@1O"],
    ["eval", "-h"],
    ["measures"],
    ["measures", "--bad"],
    ["example"],
    ["stats", QRELS, RUN, "--format", "json"],
    ["agree", QRELS, QRELS],
    ["fuse", RUN, RUN, "--method", "rrf"],
    ["fuse", RUN, OTHER_RUN, "--method", "wsum", "--norm", "min-max"],
    ["pool", RUN, OTHER_RUN, "--depth", "5", "--strategy", "rbp"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:40])
def test_same_output_and_status(args):
    cli(*args, cwd=ROOT)


def test_the_program_users_type_is_served(worker):
    """The console script's first module folder is its bin folder, which holds numba's own
    ``numba`` program: not a module, so the worker serves it (it once ran in-process)."""
    assert Path(PROGRAM[0]).name == "fastir", "fastir is not installed as a program"
    assert (Path(PROGRAM[0]).parent / "numba").exists()
    done = both(worker, lambda env: fastir(env, "trec_eval", "-m", "map", QRELS, RUN))
    assert done.returncode == 0 and done.stdout.startswith(b"map")


def test_written_files_and_umask(tmp_path):
    """fuse -o, plot -o and example --write: the same files with the same modes."""
    cli("fuse", RUN, OTHER_RUN, "-o", "fused.run", cwd=tmp_path)
    cli("example", "--write", "example", cwd=tmp_path)
    assert (tmp_path / "fused.run").stat().st_size > 0
    assert len(list((tmp_path / "example").iterdir())) == 3
    pytest.importorskip("matplotlib")
    cli("plot", "pr", QRELS, RUN, "-o", "pr.png", cwd=tmp_path)


def test_relative_paths_and_standard_input():
    cli("trec_eval", "qrels.test", "results.test", cwd=DATA)
    done = cli("trec_eval", "-q", "qrels.test", "-", cwd=DATA, stdin=Path(RUN).read_bytes())
    assert b"num_ret" in done.stdout


@pytest.mark.parametrize("shell", [
    '"$0" -m fastir trec_eval "$1" <(cat "$2")',  # process substitution: /dev/fd/63
    'exec 3< <(cat "$2"); "$0" -m fastir trec_eval "$1" /dev/fd/3',
    'exec 3< <(cat "$2"); "$0" -m fastir trec_eval "$1" /proc/self/fd/3',
    'exec 3< <(cat "$2"); "$0" -m fastir trec_eval "$1" /proc/thread-self/fd/3',
    'exec 3<"$2"; "$0" -m fastir trec_eval "$1" /dev/stdin <&3',
    '"$0" -m fastir fuse "$2" "$3" --output=/dev/fd/3 3>&1 >/dev/null',
], ids=["process-substitution", "dev-fd", "proc-self-fd", "proc-thread-self-fd",
        "dev-stdin", "output-option"])
def test_paths_naming_the_callers_descriptors(worker, shell):
    """Read (or written) through the caller's own descriptors, which the client passes."""
    done = both(worker, lambda env: subprocess.run(
        ["bash", "-c", shell, sys.executable, QRELS, RUN, OTHER_RUN], capture_output=True,
        env=env,
        cwd=ROOT, timeout=120))
    assert done.returncode == 0 and done.stdout, done.stderr


@pytest.mark.parametrize("closing", ["<&-", ">&-", "2>&-"])
def test_a_closed_standard_stream_runs_in_process(worker, closing):
    """Python has no sys.stdin (stdout, stderr) then: nothing to hand over."""
    in_process_only(worker, lambda env: subprocess.run(
        ["sh", "-c", f'exec "$0" -m fastir trec_eval "$1" "$2" {closing}', sys.executable,
         QRELS, RUN], capture_output=True, env=env, cwd=ROOT, timeout=120))


@pytest.fixture
def full_disk(tmp_path):
    """A folder on a tmpfs of 8 KB (mounted here: root only), which no command's output
    fits in."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount") or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8k", "tmpfs", str(disk)],
            capture_output=True).returncode != 0:
        pytest.skip("a small tmpfs needs root")
    try:
        yield disk
    finally:
        deadline = time.time() + 30  # (busy while a process that wrote there is ending)
        while subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0 \
                and time.time() < deadline:
            time.sleep(0.1)


FULL_DISK = [
    pytest.param('"$0" -m fastir fuse "$2" "$3" > "$4/out"', id="stdout"),
    pytest.param('"$0" -m fastir fuse "$2" "$3" -o "$4/out"', id="output-option"),
    pytest.param('"$0" -m fastir trec_eval -q -m all_trec "$1" "$2" > "$4/out"',
                 id="trec_eval-stdout"),
    pytest.param('"$0" -m fastir measures > "$4/out"', id="measures-stdout"),
]


@pytest.mark.parametrize("shell", FULL_DISK)
def test_a_full_disk(full_disk, shell):
    """Output to a file system without room: the same message, status and file both ways
    (Python's default buffers: PYTHONUNBUFFERED unset, as users have it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    worker = session_worker(env)

    def run(env):
        done = subprocess.run(["bash", "-c", shell, sys.executable, QRELS, RUN, OTHER_RUN,
                               str(full_disk)], capture_output=True, env=env, cwd=ROOT,
                              timeout=120)
        out = full_disk / "out"  # (-o writes through a temporary file: none is left)
        written = out.read_bytes() if out.exists() else b"(no file)"
        out.unlink(missing_ok=True)
        assert sorted(p.name for p in full_disk.iterdir()) == []
        return subprocess.CompletedProcess(done.args, done.returncode,
                                           done.stdout + written, done.stderr)

    done = both(worker, run)
    assert done.returncode != 0 and b"No space left on device" in done.stderr


def test_a_reader_that_leaves_early(worker):
    """``fastir fuse ... | head -c 100``: the command's output pipe closes under it."""
    done = both(worker, lambda env: subprocess.run(
        ["bash", "-c", '"$0" -m fastir fuse "$1" "$2" | head -c 100; '
                       'echo " status=${PIPESTATUS[0]}"', sys.executable, RUN, OTHER_RUN],
        capture_output=True, env=env, cwd=ROOT, timeout=120))
    assert done.stdout.endswith(b" status=0\n")


def _through_a_terminal(env, args, terminal_fd, typed=b"", tostop=False):
    """``fastir ARGS`` with a terminal as ``terminal_fd`` (0: standard input, 1:
    standard output); what ``typed`` says is read, then end of input."""
    main, other = pty.openpty()
    attributes = termios.tcgetattr(other)
    attributes[3] = attributes[3] | termios.TOSTOP if tostop else attributes[3]
    termios.tcsetattr(other, termios.TCSANOW, attributes)
    streams = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    streams["stdin" if terminal_fd == 0 else "stdout"] = other
    process = subprocess.Popen([*PROGRAM, *args], env=env, cwd=ROOT,
                               stderr=subprocess.PIPE, **streams)
    os.close(other)
    if terminal_fd == 0:
        os.write(main, typed + b"\x04")
    else:
        process.stdin.close()
    seen = b""
    while process.poll() is None or select.select([main], [], [], 0)[0]:
        if select.select([main], [], [], 0.1)[0]:
            try:
                seen += os.read(main, 65536)
            except OSError:
                break
    os.close(main)
    out = seen if terminal_fd == 1 else process.stdout.read()
    done = subprocess.CompletedProcess(args, process.wait(), out.replace(b"\r\n", b"\n"),
                                       process.stderr.read())
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    return done


def test_a_terminal_the_command_reads_keeps_it_in_process(worker):
    """Only a process of the terminal's session is stopped when it reads the terminal in
    the background: ``-`` with a terminal as standard input runs in-process."""
    typed = b"301 Q0 FBIS3-10082 1 3 r\n"
    done = in_process_only(worker, lambda env: _through_a_terminal(
        env, ["trec_eval", "-c", "-m", "num_ret", QRELS, "-"], 0, typed))
    assert done.returncode == 0 and b"num_ret" in done.stdout


def test_a_terminal_that_stops_background_writers_keeps_it_in_process(worker):
    """stty tostop: a background job that writes to the terminal stops, as only a process
    of the terminal's session can; without it, the worker runs the command."""
    args = ["trec_eval", "-m", "map", QRELS, RUN]
    in_process_only(worker, lambda env: _through_a_terminal(env, args, 1, tostop=True))
    done = both(worker, lambda env: _through_a_terminal(env, args, 1))
    assert b"map" in done.stdout


def _waiting_client(env, preexec_fn=sigint_default):
    """A client whose command waits on its standard input, once the worker runs it."""
    return subprocess.Popen([*PROGRAM, "trec_eval", QRELS, "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT,
                            preexec_fn=preexec_fn)


def _command_of(worker_pid, client, seconds=30):
    """The pid of the command the worker runs for ``client`` (its standard input is the
    client's), once it runs."""
    pipe = os.fstat(client.stdin.fileno()).st_ino
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(f"/proc/{worker_pid}/task/{worker_pid}/children") as f:
            for pid in f.read().split():
                try:
                    if os.stat(f"/proc/{pid}/fd/0").st_ino == pipe:
                        return int(pid)
                except OSError:
                    pass
        time.sleep(0.02)
    raise AssertionError("the worker did not run the command")


def _ended(process):
    if process.poll() is None:
        process.kill()
        process.wait()
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None and not stream.closed:
            stream.close()


def test_ctrl_c_is_passed_on(worker):
    waiting = _waiting_client(worker.env)
    try:
        command = _command_of(worker.pid, waiting)
        waiting.send_signal(signal.SIGINT)
        waiting.wait(timeout=30)  # (stdin stays open: the command was waiting)
        err = waiting.stderr.read()
    finally:
        _ended(waiting)
    assert waiting.returncode == 130, err  # as in-process (fastir.cli.main.dispatch): no traceback
    assert err.decode().splitlines()[-1:] == ["fastir trec_eval: interrupted (Ctrl-C)"], err
    assert gone(command)


def test_an_ignored_ctrl_c_is_not_passed_on(worker):
    """A client that ignores SIGINT (a background job's) goes on as in-process does, however
    the worker was started."""
    run = Path(RUN).read_bytes()
    alone = fastir({**worker.env, "FASTIR_WORKER": "off"}, "trec_eval", QRELS, "-",
                   stdin=run)
    going = _waiting_client(worker.env, sigint_ignored)
    try:
        _command_of(worker.pid, going)
        going.send_signal(signal.SIGINT)
        time.sleep(0.3)
        out, err = going.communicate(run, timeout=60)
    finally:
        _ended(going)
    assert (going.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert going.returncode == 0


def _state(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _read_until(fd, wanted, seconds=60):
    """What the terminal ``fd`` shows until the pattern ``wanted`` (bytes)."""
    seen = b""
    deadline = time.time() + seconds
    while not re.search(wanted, seen) and time.time() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            seen += os.read(fd, 65536)
    assert re.search(wanted, seen), seen
    return seen


def _command_on_a_terminal(worker_pid, seconds=30):
    """The pid of the command the worker runs with a terminal as its standard output."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(f"/proc/{worker_pid}/task/{worker_pid}/children") as f:
            for pid in f.read().split():
                try:
                    if os.readlink(f"/proc/{pid}/fd/1").startswith("/dev/pts/"):
                        return int(pid)
                except OSError:
                    pass
        time.sleep(0.05)
    raise AssertionError("the worker did not run the command")


def test_ctrl_z_stops_the_command_as_a_job(worker, tmp_path):
    """In an interactive shell: Ctrl-Z stops the command and the client (the shell lists a
    stopped job), fg continues both, and the command's output and status are the
    in-process ones."""
    fifo = tmp_path / "run.fifo"  # (the command waits on it: opening it blocks)
    os.mkfifo(fifo)
    pid, terminal = pty.fork()
    if pid == 0:  # (the shell: a session of its own on the terminal, job control on)
        try:
            os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"],
                       {**worker.env, "PS1": "$ "})
        finally:
            os._exit(127)
    try:
        _read_until(terminal, rb"\$ ")
        before = worker.served()
        os.write(terminal, f'"{sys.executable}" -m fastir trec_eval -m map {QRELS} {fifo}\n'
                 .encode())
        command = _command_on_a_terminal(worker.pid)
        deadline = time.time() + 30  # (the command has begun: it waits on the fifo)
        while worker.served() == before and time.time() < deadline:
            time.sleep(0.05)
        os.write(terminal, b"\x1a")  # Ctrl-Z
        _read_until(terminal, b"Stopped")
        deadline = time.time() + 10  # (SIGSTOP stops a running process at its next tick)
        while _state(command) != "T" and time.time() < deadline:
            time.sleep(0.02)
        assert _state(command) == "T"
        os.write(terminal, b"jobs\n")
        _read_until(terminal, b"Stopped")
        os.write(terminal, b"fg\n")
        deadline = time.time() + 30
        while _state(command) == "T" and time.time() < deadline:
            time.sleep(0.05)
        assert _state(command) != "T"
        with open(fifo, "wb") as f:
            f.write(Path(RUN).read_bytes())
        seen = _read_until(terminal, rb"\$ ")  # (fg returns once the job has ended)
        os.write(terminal, b'echo "status=$?"\n')  # (the status fg returns: the job's)
        seen += _read_until(terminal, rb"status=\d+")
    finally:
        os.write(terminal, b"exit\n")
        time.sleep(0.2)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(terminal)
    alone = fastir({**worker.env, "FASTIR_WORKER": "off"}, "trec_eval", "-m", "map", QRELS,
                   RUN)
    assert alone.stdout.replace(b"\n", b"\r\n") in seen
    assert re.search(rb"status=(\d+)", seen).group(1) == b"0"


def test_a_killed_worker_leaves_no_client_waiting_nor_command_behind(tmp_path):
    """Its clients' Ctrl-C and SIGTERM reach their commands without it (Ctrl-C: the
    command's own line and status; SIGTERM: the client ends by it, as in-process); a
    client killed then ends its command; a new worker's log keeps the old one's lines, and
    ``fastir worker stop`` returns once the worker has gone."""
    own = Worker()
    try:
        clients = [_waiting_client(own.env) for _ in range(3)]
        commands = [_command_of(own.pid, c) for c in clients]
        os.kill(own.pid, signal.SIGKILL)
        assert gone(own.pid)
        clients[0].send_signal(signal.SIGINT)
        clients[1].send_signal(signal.SIGTERM)
        clients[2].kill()
        assert clients[0].wait(timeout=30) == 130
        assert clients[0].stderr.read().decode().splitlines()[-1:] == \
            ["fastir trec_eval: interrupted (Ctrl-C)"]
        assert clients[1].wait(timeout=30) == -signal.SIGTERM
        assert all(gone(command) for command in commands)
        again = Worker(home=own.home)
        try:
            log = own.log()
            assert f"serving (pid {own.pid}," in log and f"serving (pid {again.pid}," in log
            stopped = fastir(again.env, "worker", "stop")  # (it waits until it has gone)
            assert stopped.stdout.startswith(f"fastir worker: stopped (pid {again.pid}, ".
                                             encode())
            assert gone(again.pid, 1)
        finally:
            again.stop()
    finally:
        for waiting in clients:
            _ended(waiting)
        own.stop()


def test_several_clients_at_once(worker):
    """Commands that end together: their children's reaping and their clients' leaving
    fall in the same batches of the worker's events, which once logged 'an event failed'
    (a closed link read) and could signal a reaped pid."""
    before = worker.served()
    clients = [subprocess.Popen([*PROGRAM, "trec_eval", "-q", QRELS,
                                 RUN], stdout=subprocess.PIPE, env=worker.env, cwd=ROOT)
               for _ in range(12)]
    outputs = [c.communicate(timeout=120)[0] for c in clients]
    assert all(c.returncode == 0 for c in clients)
    assert len(set(outputs)) == 1 and outputs[0]
    assert worker.served() == before + 12
    assert "an event failed" not in worker.log()


def test_a_signal_sent_to_the_waiting_process_is_not_the_next_commands(tmp_path):
    """The process forked ahead for the next request holds the signals a client passes on
    until it runs a command: one sent to it meanwhile (kill, pkill on the worker's command
    line) is dropped as it takes the request, not raised in that client's command."""
    own = Worker()
    try:
        deadline = time.time() + 30
        spare = []
        while not spare and time.time() < deadline:  # (the spare: its one child, idle)
            with open(f"/proc/{own.pid}/task/{own.pid}/children") as f:
                spare = [int(pid) for pid in f.read().split()]
            time.sleep(0.05)
        assert len(spare) == 1, spare
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            os.kill(spare[0], signum)
        done = both(own, lambda env: fastir(env, "trec_eval", "-m", "map", QRELS, RUN))
        assert done.returncode == 0 and done.stdout.startswith(b"map"), done.stderr
    finally:
        own.stop()


def test_client_imports_neither_numpy_nor_numba(worker):
    code = ("import sys; from fastir.cli.main import main; "
            f"sys.argv = ['fastir', 'trec_eval', {QRELS!r}, {RUN!r}]; status = main(); "
            "assert status == 0, status; "
            "print(sorted(m for m in ('numpy', 'numba') if m in sys.modules))")
    before = worker.served()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=worker.env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert worker.served() == before + 1


#: An editable install's import hook, as setuptools writes it: after the module path.
_EDITABLE_HOOK = '''
import importlib.util, sys
from importlib.machinery import PathFinder

class Hook:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name == "fastir" or name.startswith("fastir."):
            parts = name.split(".")
            base = {root!r} + "/" + "/".join(parts)
            for file, package in ((base + "/__init__.py", True), (base + ".py", False)):
                try:
                    open(file).close()
                except OSError:
                    continue
                return importlib.util.spec_from_file_location(
                    name, file, submodule_search_locations=[base] if package else None)
        return None

sys.meta_path.insert(sys.meta_path.index(PathFinder) + 1, Hook)
'''


def test_python_m_from_the_folder_above_a_checkout(tmp_path):
    """The folder holds the checkout, named fastir, as an editable install's users have
    it: ``import fastir`` finds that folder first (a namespace package); ``python -m
    fastir`` runs the package nonetheless, in-process and through the worker alike."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_EDITABLE_HOOK.format(root=str(ROOT)))
    above = tmp_path / "src"
    above.mkdir()
    (above / "fastir").symlink_to(ROOT)
    env = {**os.environ, "PYTHONPATH": str(hook)}
    probe = subprocess.run([sys.executable, "-c", "import fastir; print(fastir.__file__)"],
                           env=env, cwd=above, capture_output=True, text=True)
    assert probe.stdout.strip() == "None", probe.stderr  # (the namespace package)
    own = Worker(env=env)
    try:
        version = fastir({**own.env, "FASTIR_WORKER": "off"}, "--version", cwd=above,
                         program=PYTHON_M)
        assert version.stdout.startswith(b"fastir "), version.stderr
        for args in (["eval", QRELS, RUN, "-m", "AP"], ["trec_eval", "-m", "map", QRELS, RUN]):
            done = both(own, lambda e, args=args: fastir(e, *args, cwd=above,
                                                         program=PYTHON_M))
            assert done.returncode == 0 and done.stdout, done.stderr
    finally:
        own.stop()


def test_a_module_of_the_working_folder_keeps_the_command_in_process(worker, tmp_path):
    """``python -m fastir`` puts the working folder first on the module path: a json.py
    there is the json the command imports in-process (the worker's is the standard one),
    so the command runs in-process, with the same outcome."""
    (tmp_path / "json.py").write_text('raise SystemExit("this folder\'s json.py")\n')
    before = worker.status()
    done = in_process_only(worker, lambda env: fastir(env, "eval", QRELS, RUN, "--format",
                                                      "json", cwd=tmp_path, program=PYTHON_M))
    assert done.returncode == 1 and b"this folder's json.py" in done.stderr
    assert worker.status()["refused"] == before["refused"] + 1
    assert "holds 'json', which it would import in place of the worker's" in worker.log()


def test_unbuffered_streams_keep_their_order(tmp_path):
    """PYTHONUNBUFFERED (python -u): stdout and stderr to one file interleave as
    in-process (trec_eval's note after its table)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    worker = session_worker(env)
    args = ["trec_eval", "--compat", "9.0.8", QRELS, OTHER_RUN]

    def to_one_file(env):
        path = tmp_path / env["FASTIR_WORKER"]
        with open(path, "wb") as out:
            status = subprocess.run([*PROGRAM, *args], env=env,
                                    cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
        return subprocess.CompletedProcess(args, status, path.read_bytes(), b"")

    done = both(worker, to_one_file)
    assert done.stdout.splitlines()[-1].startswith(b"fastir trec_eval: note:")


@pytest.mark.parametrize("setting, value, line", [
    ("FASTIR_WORKER", "bogus", "FASTIR_WORKER='bogus' is not one of off, use, auto"),
    ("FASTIR_WORKER_IDLE", "abc", "FASTIR_WORKER_IDLE='abc': expected seconds"),
    ("FASTIR_WORKER_DIR", "/proc/fastir", "fastir worker folder: /proc"),
])
def test_a_setting_it_cannot_use_is_said_in_one_line(worker, setting, value, line):
    env = {**worker.env, "FASTIR_WORKER": "auto", setting: value}
    before = worker.served()
    done = fastir(env, "trec_eval", "-m", "map", QRELS, RUN)
    alone = fastir({**worker.env, "FASTIR_WORKER": "off"}, "trec_eval", "-m", "map", QRELS,
                   RUN)
    first, *rest = done.stderr.decode().splitlines()
    assert first.startswith(f"fastir: {line}") and first.endswith("running without a worker")
    assert (done.returncode, done.stdout, "\n".join(rest)) == \
        (alone.returncode, alone.stdout, alone.stderr.decode().rstrip("\n"))
    assert worker.served() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
def test_another_users_runtime_folder_is_left_alone_silently(tmp_path):
    """``sudo -E fastir ...`` keeps another user's XDG_RUNTIME_DIR: that user could swap the
    folder in it, so the command runs in-process, as it would without a worker, and nothing
    is written there."""
    theirs = tmp_path / "run-user-4242"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 4242, 4242)
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_WORKER_DIR"}
    env = {**env, "FASTIR_WORKER": "auto", "XDG_RUNTIME_DIR": str(theirs)}
    done = fastir(env, "trec_eval", "-m", "map", QRELS, RUN)
    alone = fastir({**env, "FASTIR_WORKER": "off"}, "trec_eval", "-m", "map", QRELS, RUN)
    assert (done.returncode, done.stdout, done.stderr) == \
        (alone.returncode, alone.stdout, alone.stderr)
    assert list(theirs.iterdir()) == []


def test_a_socket_of_something_else_falls_back(tmp_path):
    """A socket that accepts and never answers: the client does not wait for it, and has
    handed it none of its descriptors (its output pipes end when it ends)."""
    import socket

    from fastir.worker import client

    own = tmp_path / "private"
    env = {**os.environ, "FASTIR_WORKER": "use", "FASTIR_WORKER_DIR": str(own)}
    folder = common.open_folder(str(own))
    name = subprocess.run([sys.executable, "-c", "from fastir.worker import common; "
                           "print(common.key(common.identity(), common.own_context()))"],
                          env=env, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as impostor:
            impostor.bind(folder.at(common.names(name)["socket"]))
            impostor.listen(1)  # accepts, never answers
            done = fastir(env, "trec_eval", QRELS, RUN, timeout=120)
    finally:
        folder.close()
    assert done.returncode == 0 and b"map" in done.stdout
    assert client.START_SECONDS < 10


def test_another_users_worker_is_never_used(worker, monkeypatch):
    from fastir.worker import client

    folder = common.open_folder(str(worker.folder))
    try:
        sock = client.connect(folder, worker.name)
        assert sock is not None
        sock.close()
        monkeypatch.setattr(os, "geteuid", lambda: 4242)
        assert client.connect(folder, worker.name) is None
    finally:
        folder.close()
