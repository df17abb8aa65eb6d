"""The worker: warm once, then run each request in a forked child.

:func:`serve` takes the lock of its identity (one worker per identity; a second one
leaves), warms up (``prepare``: numba and every kernel loaded, a fork-safe threading
layer), then listens on its socket. Each request is checked (the client's user, identity
and sources stamp) and run in a child forked from the warm process (:mod:`child`), so
several clients run at once and none sees another's state. The worker passes the client's
signals to its child, kills the child when the client goes away, reports a child killed by
a signal, and exits after ``idle`` seconds without a request, on ``stop``, or when a
client's sources stamp says fastir changed (it then lets its children finish).
"""

import errno
import fcntl
import os
import selectors
import signal
import socket
import sys
import time

from fastir.worker import child, common


def serve(dispatch, prepare, key=None, idle=None, rehearse=None):
    """Run the worker of this process's identity until it stops; returns an exit status.
    ``rehearse``: what a forked process does while it waits for its request."""
    folder = common.directory()
    ident = common.identity()
    files = common.paths(folder, ident)
    if key is not None and key != common.digest(ident):
        _failed(files, "its identity differs from the client's (flags, path, environment)")
        return 1
    lock = os.open(files["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another worker is starting or serving
    try:
        prepare()
        if rehearse is not None:
            rehearse()  # once here too: what it creates (files) is the parent's
    except BaseException as failure:
        _failed(files, repr(failure))
        raise
    idle = common.IDLE_SECONDS if idle is None else idle
    worker = _Worker(files, ident, common.sources_stamp(), dispatch, idle, lock)
    worker.rehearse = rehearse
    worker._fork_spare()
    return worker.loop()


def _failed(files, reason):
    with open(files["failed"], "w") as out:
        out.write(reason + "\n")
    print(f"fastir worker: not started: {reason}", file=sys.stderr, flush=True)


class _Worker:
    def __init__(self, files, ident, stamp, dispatch, idle, lock):
        self.files, self.ident, self.stamp = files, ident, stamp
        self.dispatch, self.idle, self.lock = dispatch, idle, lock
        self.children = {}  # pid -> the client's connection
        self.started = self.last = time.time()
        self.served = 0
        self.peak_kb = 0  # the peak resident memory of the last finished command
        self.selector = selectors.DefaultSelector()
        self.wakeup_r, wakeup_w = os.pipe()
        for fd in (self.wakeup_r, wakeup_w):
            os.set_blocking(fd, False)
        self.wakeup_w = wakeup_w
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wakeup_w)
        self.selector.register(self.wakeup_r, selectors.EVENT_READ, "reap")
        self.listener = self._listen()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.spare = None
        self.rehearse = None
        print(f"fastir worker: serving (pid {os.getpid()}, idle {idle} s) on "
              f"{files['socket']}", file=sys.stderr, flush=True)

    def _listen(self):
        """Bind under a temporary name, then rename into place: a client never meets a
        socket that does not answer yet."""
        temporary = f"{self.files['socket']}.{os.getpid()}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(temporary)
        listener.listen(64)
        os.replace(temporary, self.files["socket"])
        self.inode = os.stat(self.files["socket"]).st_ino
        return listener

    def loop(self):
        while self.listener is not None or self.children:
            timeout = None if self.children else self.last + self.idle - time.time()
            if timeout is not None and timeout <= 0:
                self.retire("idle")
                continue
            for key, _ in self.selector.select(timeout):
                if key.data == "accept":
                    self._accept()
                elif key.data == "reap":
                    self._reap()
                elif key.data in self.children and key.fileobj.fileno() >= 0:
                    self._from_client(key.fileobj, key.data)
        print(f"fastir worker: stopped after {self.served} requests", file=sys.stderr,
              flush=True)
        return 0

    def retire(self, reason):
        """Stop accepting (the socket and the lock go now, so a new worker can start);
        the loop ends when the last child has."""
        if self.listener is None:
            return
        print(f"fastir worker: retiring ({reason})", file=sys.stderr, flush=True)
        self.selector.unregister(self.listener)
        try:
            if os.stat(self.files["socket"]).st_ino == self.inode:
                os.unlink(self.files["socket"])
        except OSError:
            pass
        self.listener.close()
        self.listener = None
        os.close(self.lock)
        if self.spare is not None:  # it sees the end of its socket pair, and leaves
            pid, link = self.spare
            link.close()
            self.spare = None
            os.waitpid(pid, 0)

    def _accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last = time.time()
        conn.settimeout(10)
        fds = []
        try:
            if common.peer_uid(conn) != os.geteuid():
                raise PermissionError("a client of another user")
            message, fds = common.receive(conn, max_fds=4)
            self._handle(conn, message, fds)
        except OSError:
            for fd in fds:
                os.close(fd)
            conn.close()

    def _handle(self, conn, message, fds):
        kind, body = (message[0], message[1]) if message else (None, None)
        if kind == "run" and len(fds) == 4 and body["identity"] == self.ident:
            if body["stamp"] != self.stamp:
                common.send(conn, ("fallback", "stale"))
                self.retire("fastir's sources changed")
                raise OSError(errno.ESTALE, "stale")
            return self._start(conn, body, fds)
        if kind in ("status", "stop") and body == self.ident:
            common.send(conn, (kind, self.status()))
            if kind == "stop":
                self.retire("asked to stop")
        elif kind is not None:
            common.send(conn, ("fallback", "refused"))
        raise OSError(errno.ECONNABORTED, "done")

    def status(self):
        return {"pid": os.getpid(), "started": self.started, "idle": self.idle,
                "served": self.served, "running": len(self.children),
                "last_peak_kb": self.peak_kb,
                "socket": self.files["socket"], "log": self.files["log"]}

    def _fork_spare(self):
        """Fork the next request's process ahead, off the request's path: it waits for its
        request (the client's connection and descriptors) on a socket pair, and leaves if
        the worker closes it instead."""
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:  # never back into the worker's loop
                mine.close()
                self._forget()
                try:
                    if self.rehearse is not None:
                        self.rehearse()
                except Exception:
                    pass
                message, fds = common.receive(its, max_fds=5)
                if message is not None and len(fds) == 5:
                    its.close()
                    child.run(socket.socket(fileno=fds[0]), message, fds[1:], self.dispatch)
            finally:
                os._exit(0)
        its.close()
        self.spare = (pid, mine)

    def _start(self, conn, request, fds):
        if self.spare is None:
            self._fork_spare()
        (pid, link), self.spare = self.spare, None
        self.served += 1
        self.children[pid] = conn
        try:
            common.send(conn, ("started", pid))
            # only once the client knows it started: else the client may run it too
            common.send(link, request, fds=[conn.fileno(), *fds])
        except OSError:
            pass
        finally:
            link.close()
            for fd in fds:
                os.close(fd)
        conn.settimeout(None)
        self.selector.register(conn, selectors.EVENT_READ, pid)
        self._fork_spare()

    def _forget(self):
        """In a child: let go of the worker's own descriptors (the lock above all: a child
        that outlives the worker must not keep a new one from starting)."""
        for fd in (self.wakeup_r, self.wakeup_w, self.lock):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.listener is not None:
            self.listener.close()
        for other in self.children.values():
            other.close()
        if self.spare is not None:
            self.spare[1].close()
        self.selector.close()

    def _from_client(self, conn, pid):
        """A message from a running command's client: a signal to pass on; or the client
        has gone, and so must its command."""
        try:
            message, _ = common.receive(conn)
        except OSError:
            message = None
        if message is not None and message[0] == "signal":
            _kill(pid, message[1])
        elif message is None:
            _kill(pid, signal.SIGKILL)
            self.selector.unregister(conn)
            conn.close()

    def _reap(self):
        try:
            while os.read(self.wakeup_r, 512):
                pass
        except BlockingIOError:
            pass
        for pid in list(self.children):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if not done:
                continue
            self.peak_kb = usage.ru_maxrss
            conn = self.children.pop(pid)
            if os.WIFSIGNALED(status):  # the child could not say so itself
                try:
                    common.send(conn, ("status", "signal", os.WTERMSIG(status)))
                except OSError:
                    pass
            try:
                self.selector.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()
            self.last = time.time()


def _kill(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
