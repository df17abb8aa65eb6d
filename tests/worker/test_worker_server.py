"""fastir/worker/server.py: the code a worker runs is the code it stamped (sources changed
while it started: it does not serve; changed later: it retires at the next request), it
starts on first use and leaves when idle, and nothing a client sends ends it (a message
that is not one, a request of the wrong shape, a client that stops half-way). Each test
stops the workers it started, by their process id."""

import contextlib
import os
import selectors
import socket
import struct
import subprocess
import time

import pytest
from cli_calls import PROGRAM, ROOT, Worker, gone, session_worker, stop_process

from fastir.worker import client, common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

DATA = ROOT / "tests" / "data" / "trec_eval" / "inputs"
QRELS, RUN = str(DATA / "qrels.test"), str(DATA / "results.test")


def fastir(env, *args, timeout=120):
    return subprocess.run([*PROGRAM, *args], capture_output=True,
                          env=env, cwd=ROOT, timeout=timeout)


def _request(worker, **changes):
    """A request to run ``trec_eval QRELS RUN`` as a client of ``worker`` makes it."""
    return {"identity": worker.ident, "stamp": common.sources_stamp(),
            "argv": ["fastir", "trec_eval", QRELS, RUN], "env": dict(worker.env),
            "umask": 0o22, "streams": [("utf-8", "strict", False, False, True)] * 3,
            "fds": [0, 1, 2], "cloexec": [False] * 3, "path0": None, "modules": {},
            **changes}


def _connect(worker):
    folder = common.open_folder(str(worker.folder))
    try:
        sock = client.connect(folder, worker.name, timeout=10)
    finally:
        folder.close()
    assert sock is not None
    return sock


def test_sources_changed_later_retire_it_and_while_it_started_it_does_not_serve(tmp_path):
    own = Worker()
    try:
        sock = _connect(own)
        try:
            common.send(sock, ("run", _request(own, stamp="another")))
            assert common.receive(sock)[0] == ("fallback", "stale")
        finally:
            sock.close()
        assert gone(own.pid)
        done = fastir(own.env, "trec_eval", QRELS, RUN)  # in-process, and starts nothing
        assert done.returncode == 0 and b"map" in done.stdout
        assert own.status() is None
        # the client stamps the sources before the worker imports fastir: a worker whose
        # sources are not those once it is warm does not serve (this stamp is not theirs)
        serving = fastir(own.env, "worker", "serve", "--stamp", "0" * 16, timeout=600)
        assert serving.returncode == 0 and own.status() is None
        assert b"not serving: fastir's sources changed while it started" in serving.stderr
    finally:
        own.stop()


def test_first_use_starts_one_that_leaves_when_idle(tmp_path):
    env = {**os.environ, "FASTIR_WORKER": "auto",
           "FASTIR_WORKER_DIR": str(tmp_path / "private"), "FASTIR_WORKER_IDLE": "3"}
    done = fastir(env, "trec_eval", QRELS, RUN)  # in-process, and a worker starts
    assert done.returncode == 0
    deadline = time.time() + 300
    answer = None
    while answer is None and time.time() < deadline:
        time.sleep(0.1)
        answer = client_status(env)
    assert answer is not None, (tmp_path / "private").glob("*.log")
    try:
        assert answer["idle"] == 3
        assert gone(answer["pid"], 60)
        assert not list((tmp_path / "private").glob("*.sock"))
        assert "retiring (idle)" in "".join(p.read_text() for p in
                                            (tmp_path / "private").glob("*.log"))
    finally:
        stop_process(answer["pid"])


def client_status(env):
    import json

    done = fastir(env, "worker", "status", "--json")
    answer = json.loads(done.stdout)
    return answer if answer and answer["state"] == "serving" else None


GARBAGE = [
    b"",  # (connects, closes)
    b"\x00\x00",  # half a length
    struct.pack("!I", 10) + b"\xff" * 10,  # not marshal
    struct.pack("!I", common.MAX_MESSAGE + 1),  # too long
    struct.pack("!I", 1000) + b"x" * 10,  # shorter than it says, then closed
]


def test_nothing_a_client_sends_ends_it():
    worker = session_worker(os.environ)
    before = worker.served()
    for data in GARBAGE:
        sock = _connect(worker)
        with contextlib.closing(sock):
            sock.sendall(data)
    messages = [("run", 5), ("run", {}), ("run", _request(worker, argv=[])),
                ("run", _request(worker, fds=[1, 2])), ("run", _request(worker, env={1: 2})),
                ("run", _request(worker, streams=[1, 2, 3])), ("status", "another"),
                ("stop", None), (1, 2, 3), "run", 7]
    for message in messages:
        sock = _connect(worker)
        with contextlib.closing(sock):
            common.send(sock, message)
            assert common.receive(sock)[0] == ("fallback", "refused")
    sock = _connect(worker)  # a request whose descriptors never come
    with contextlib.closing(sock):
        common.send(sock, ("run", _request(worker)))
        assert common.receive(sock)[0] == ("send", None)
        common.send(sock, ("fds", None))
    assert worker.status()["pid"] == worker.pid
    done = fastir(worker.env, "trec_eval", QRELS, RUN)
    assert done.returncode == 0 and worker.served() == before + 1
    assert "a request was refused" in worker.log()


def test_an_event_of_a_command_reaped_earlier_in_the_batch_is_dropped(monkeypatch):
    """One ``select()`` batch holds the reaping of a command's child and then events of
    its client's connection and its link (the client left as the command ended): the
    reaped pid is never signalled (it may name another process by then) and the closed
    link is not read (it raised 'Invalid file descriptor: -1' into the log)."""
    from fastir.worker import server

    worker = server._Worker.__new__(server._Worker)  # (its state alone: no socket, no fork)
    worker.children, worker.links, worker.spare = {}, {}, None
    worker.served = worker.refused = worker.peak_kb = 0
    worker.last = time.time()
    worker.selector = selectors.DefaultSelector()
    worker.wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(worker.wakeup_r, False)
    signalled, said = [], []
    monkeypatch.setattr(server, "_kill", lambda pid, signum: signalled.append(pid))
    monkeypatch.setattr(server, "_say", said.append)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    conn, client_end = socket.socketpair()
    link, child_end = socket.socketpair()
    try:
        worker.children[pid], worker.links[pid] = conn, link
        keys = [worker.selector.register(worker.wakeup_r, selectors.EVENT_READ, ("reap", None)),
                worker.selector.register(conn, selectors.EVENT_READ, ("client", pid)),
                worker.selector.register(link, selectors.EVENT_READ, ("link", pid))]
        client_end.close()  # (the client has gone: its connection reads as ended)
        child_end.close()
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # (ended, not reaped)
        os.write(wakeup_w, b"\0")
        for key in keys:  # (the batch, in the order that raced)
            worker._event(key)
        assert pid not in worker.children and pid not in worker.links
        assert signalled == [] and not [s for s in said if "failed" in s], said
    finally:
        for fd in (worker.wakeup_r, wakeup_w):
            os.close(fd)
        worker.selector.close()
        for sock in (conn, link):
            sock.close()
