"""fastir/worker/peer.py with a real worker: a client of the same user with other rights
(other groups, fewer capabilities, another namespace, no_new_privs, another cgroup) is
never served, whether it looks for a worker of its own rights (it finds none and runs the
command in-process) or reaches the worker's socket anyway (the worker reads its rights
itself and refuses); the command's process takes the client's limits (resource limits,
nice, CPU affinity, scheduling policy, I/O priority, OOM score), and where it cannot (a
priority above the worker's, without the privilege) the command runs in-process. The
clients with other rights are made with setpriv and unshare, which need root: skipped
elsewhere."""

import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_calls import PROGRAM, ROOT, Worker, session_worker

from fastir.worker import common, peer

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

DATA = ROOT / "tests" / "data" / "trec_eval" / "inputs"
QRELS, RUN, OTHER_RUN = (str(DATA / n) for n in ("qrels.test", "results.test",
                                                  "results.trunc"))
needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv")
                                or not shutil.which("unshare"),
                                reason="making a client with other rights needs root, "
                                       "setpriv and unshare")


@pytest.fixture(scope="module")
def worker():
    """The session's worker for this environment (tests/cli_calls.py stops it)."""
    return session_worker(os.environ)


def _fastir(env, wrapper, *args, **kwargs):
    return subprocess.run([*wrapper, *PROGRAM, *args], env=env,
                          cwd=ROOT, capture_output=True, timeout=120, **kwargs)


#: A client that reaches the worker's socket whatever its rights, with a request for
#: ``trec_eval QRELS RUN``: what the worker answers (None: it left the command to the client).
_INTRUDER = """
import sys
from fastir.worker import client, common
folder = common.open_folder(sys.argv[1])
sock = client.connect(folder, sys.argv[2])
print(client._request(sock, folder, common.identity(), ["trec_eval", *sys.argv[3:]]))
"""


WRAPPERS = {
    "other groups": ["setpriv", "--groups", "4242"],
    "fewer capabilities": ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"],
    "no_new_privs": ["setpriv", "--no-new-privs"],
    "a mount namespace": ["unshare", "--mount"],
    "a network namespace": ["unshare", "--net"],
    "a user namespace": ["unshare", "--user", "--map-root-user"],
    "a cgroup namespace": ["unshare", "--cgroup"],
}


@needs_root
@pytest.mark.parametrize("rights", sorted(WRAPPERS))
def test_a_client_with_other_rights_is_never_served(worker, rights):
    wrapper = WRAPPERS[rights]
    before = worker.status()
    alone = _fastir({**worker.env, "FASTIR_WORKER": "off"}, wrapper, "trec_eval", QRELS, RUN)
    kept = _fastir(worker.env, wrapper, "trec_eval", QRELS, RUN)
    assert (kept.returncode, kept.stdout, kept.stderr) == \
        (alone.returncode, alone.stdout, alone.stderr)
    assert kept.returncode == 0 and b"map" in kept.stdout
    intruding = subprocess.run([*wrapper, sys.executable, "-c", _INTRUDER, str(worker.folder),
                                worker.name, QRELS, RUN], env=worker.env, cwd=ROOT,
                               capture_output=True, text=True, timeout=120)
    assert intruding.stdout.strip() == "None", intruding.stderr
    after = worker.status()
    assert after["served"] == before["served"]
    assert after["refused"] == before["refused"] + 1
    assert "the client's rights differ from the worker's" in worker.log() or \
        rights == "no_new_privs"


@needs_root
def test_a_file_only_the_worker_may_read_stays_unread(worker, tmp_path):
    """Without CAP_DAC_OVERRIDE the client cannot read a file of another user's: nor can
    its command, in-process or not."""
    secret = tmp_path / "secret.run"
    secret.write_bytes(Path(RUN).read_bytes())
    os.chown(secret, 4242, 4242)
    secret.chmod(0o600)
    wrapper = WRAPPERS["fewer capabilities"]
    for env in ({**worker.env, "FASTIR_WORKER": "off"}, worker.env):
        done = _fastir(env, wrapper, "trec_eval", QRELS, str(secret))
        assert done.returncode == 2 and b"secret.run: cannot read: Permission denied" in \
            done.stderr, done.stderr
        intruding = subprocess.run([*wrapper, sys.executable, "-c", _INTRUDER,
                                    str(worker.folder), worker.name, QRELS, str(secret)],
                                   env=worker.env, cwd=ROOT, capture_output=True, text=True,
                                   timeout=120)
        assert intruding.stdout.strip() == "None", intruding.stderr  # (never "0")


def _cgroup_to_join():
    """A new cgroup of the cpu hierarchy (cgroup v1) a test may put a client in, or None."""
    base = Path("/sys/fs/cgroup/cpu")
    group = base / f"fastir-test-{os.getpid()}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


@needs_root
def test_a_client_in_another_cgroup_is_never_served(worker):
    group = _cgroup_to_join()
    if group is None:
        pytest.skip("no cgroup can be made here")
    try:
        wrapper = ["sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"', "sh"]
        before = worker.status()
        done = _fastir(worker.env, wrapper, "trec_eval", QRELS, RUN)
        assert done.returncode == 0 and b"map" in done.stdout
        intruding = subprocess.run([*wrapper, sys.executable, "-c", _INTRUDER,
                                    str(worker.folder), worker.name, QRELS, RUN],
                                   env=worker.env, cwd=ROOT, capture_output=True, text=True)
        assert intruding.stdout.strip() == "None", intruding.stderr
        after = worker.status()
        assert (after["served"], after["refused"]) == \
            (before["served"], before["refused"] + 1)
        assert "cgroup" in worker.log().splitlines()[-1]
    finally:
        time.sleep(0.1)
        group.rmdir()


def _command_of(worker_pid, client, seconds=30):
    """The pid of the command the worker runs for ``client`` (its standard input is the
    client's)."""
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


@pytest.mark.skipif(not all(shutil.which(t) for t in ("prlimit", "taskset", "chrt",
                                                          "ionice")),
                    reason="prlimit, taskset, chrt and ionice make the limits")
def test_the_command_takes_the_callers_limits(worker):
    """ulimit -f -v -t -n, nice, taskset, chrt -b, ionice -c 3 and an OOM score reach every
    thread of the command's process; its output is the in-process one. (``nice -n 7`` adds
    7 to the niceness it is run at: the suite's own, under ``nice``.)"""
    cpus = sorted(os.sched_getaffinity(0))[:1]
    niceness = min(os.getpriority(os.PRIO_PROCESS, 0) + 7, 19)
    wrapper = ["prlimit", "--fsize=123456789:123456789", "--as=68719476736",
               "--cpu=100000:100001", "--nofile=1000:2000", "nice", "-n", "7", "taskset",
               "-c", str(cpus[0]), "chrt", "-b", "0", "ionice", "-c", "3", "sh", "-c",
               'echo 567 > /proc/self/oom_score_adj && exec "$@"', "sh"]
    run = Path(RUN).read_bytes()
    alone = _fastir({**worker.env, "FASTIR_WORKER": "off"}, wrapper, "trec_eval", QRELS, "-",
                    input=run)
    before = worker.served()
    client = subprocess.Popen([*wrapper, *PROGRAM, "trec_eval", QRELS,
                               "-"], env=worker.env, cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        command = _command_of(worker.pid, client)
        deadline = time.time() + 30  # (once it runs the command: it has taken them)
        while worker.served() == before and time.time() < deadline:
            time.sleep(0.02)
        assert resource.prlimit(command, resource.RLIMIT_FSIZE) == (123456789, 123456789)
        assert resource.prlimit(command, resource.RLIMIT_AS) == (68719476736, 68719476736)
        assert resource.prlimit(command, resource.RLIMIT_CPU) == (100000, 100001)
        assert resource.prlimit(command, resource.RLIMIT_NOFILE) == (1000, 2000)
        for tid in map(int, os.listdir(f"/proc/{command}/task")):
            assert os.getpriority(os.PRIO_PROCESS, tid) == niceness
            assert sorted(os.sched_getaffinity(tid)) == cpus
            assert os.sched_getscheduler(tid) == os.SCHED_BATCH
            assert peer._ioprio_get(tid) in (None, peer._ioprio_get(client.pid))
        assert Path(f"/proc/{command}/oom_score_adj").read_text().strip() == "567"
        out, err = client.communicate(run, timeout=120)
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
    assert (client.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert worker.served() == before + 1


def test_a_file_size_limit_ends_the_write_as_in_process(worker, tmp_path):
    """ulimit -f: fuse -o stops at the limit with the same message and status, and leaves no
    partial file (it writes through a temporary file, removed when the write fails)."""
    wrapper = ["prlimit", "--fsize=8192"]
    results = []
    for env in ({**worker.env, "FASTIR_WORKER": "off"}, worker.env):
        done = subprocess.run([*wrapper, *PROGRAM, "fuse", RUN,
                               OTHER_RUN, "-o", "fused.run"], env=env, cwd=tmp_path,
                              capture_output=True, timeout=120)
        results.append((done.returncode, done.stdout, done.stderr, sorted(tmp_path.iterdir())))
    assert results[0] == results[1] and results[0][0] != 0
    assert results[0][3] == [] and b"File too large" in results[0][2]


def test_an_address_space_below_the_workers_leaves_the_command_in_process(worker):
    """ulimit -v below what the worker's process maps already: the command would fail there
    where a fresh process might not; it runs in-process (its own outcome, whatever it is)."""
    wrapper = ["prlimit", "--as=300000000"]
    before = worker.status()
    alone = _fastir({**worker.env, "FASTIR_WORKER": "off"}, wrapper, "trec_eval", QRELS, RUN)
    kept = _fastir(worker.env, wrapper, "trec_eval", QRELS, RUN)
    assert (kept.returncode, kept.stdout, kept.stderr) == \
        (alone.returncode, alone.stdout, alone.stderr)
    after = worker.status()
    assert (after["served"], after["refused"]) == (before["served"], before["refused"] + 1)
    assert "bytes of VmSize is below what the worker's process maps already" in worker.log()


@needs_root
def test_limits_it_cannot_take_leave_the_command_in_process():
    """A worker at nice 5 without CAP_SYS_NICE cannot give a command the priority of a
    client at nice 0 (the same rights otherwise): the client runs it itself. (Under
    ``nice``, 5 above the suite's own niceness.)"""
    if os.getpriority(os.PRIO_PROCESS, 0) + 5 > 19:
        pytest.skip("the suite's niceness leaves no room for a worker 5 above it")
    rights = ["setpriv", "--bounding-set", "-sys_nice,-sys_resource"]
    own = Worker(wrapper=[*rights, "nice", "-n", "5"])
    try:
        before = own.status()
        alone = _fastir({**own.env, "FASTIR_WORKER": "off"}, rights, "trec_eval", QRELS,
                        RUN)
        kept = _fastir(own.env, rights, "trec_eval", QRELS, RUN)
        assert (kept.returncode, kept.stdout, kept.stderr) == \
            (alone.returncode, alone.stdout, alone.stderr)
        after = own.status()
        assert (after["served"], after["refused"]) == \
            (before["served"], before["refused"] + 1)
        assert "its limits cannot be taken" in own.log()
        niced = _fastir(own.env, [*rights, "nice", "-n", "5"], "trec_eval", QRELS, RUN)
        assert niced.stdout == alone.stdout
        assert own.status()["served"] == before["served"] + 1
    finally:
        own.stop()
