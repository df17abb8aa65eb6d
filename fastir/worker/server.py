"""The worker: warm once, then run each request in a forked child.

:func:`serve` takes the lock of its key (one worker per identity and security context; a
second one leaves), warms up (``prepare``: numba and every kernel loaded, a fork-safe
threading layer), checks that fastir's sources are still those stamped before it imported
them (else it does not serve: it would run old code), then listens on its socket. Each
request is checked: its identity and sources stamp, then its client, which the worker
pins and reads itself (:mod:`peer`): the client's rights must equal the worker's own.
Then the request and the client's limits go to a child forked ahead from the warm process
(:mod:`child`), which takes them on and runs the command, or says it cannot (the client
then runs the command in-process). So several clients run at once and none sees another's
state. The worker ends a child whose client has gone, reports a child killed by a signal,
and exits after ``idle`` seconds without a request, on ``stop``, or when a client's
sources stamp says fastir changed (it then lets its children finish). A request it cannot
read is dropped and logged: nothing a client sends ends the worker.
"""

import fcntl
import os
import select
import selectors
import signal
import socket
import sys
import time
import traceback

from fastir.worker import child, common, library, peer


def serve(dispatch, prepare, key=None, idle=None, rehearse=None, stamp=None, ready=None,
          after=None):
    """Run the worker of this process's identity and rights until it stops; returns an
    exit status. ``key``: the name the client that started it expects; ``stamp``: the
    sources stamp the client took before this process imported anything of fastir;
    ``ready``: a descriptor to write ``serving`` to (then closed) once it serves;
    ``after``: a pidfd of the process that started it, which runs its command meanwhile:
    the warm-up waits for its end (at most AFTER_SECONDS) so as not to slow it down;
    ``rehearse(folder)``: what a forked process does while it waits for its request."""
    stamp = stamp or common.sources_stamp()  # (before the bulk of fastir is imported)
    library.stay_in_process()  # (its processes never hand a library call on to a worker)
    _say(f"starting (pid {os.getpid()}, {time.strftime('%Y-%m-%d %H:%M:%S')})")
    folder = common.directory()
    ident = common.identity()
    name = common.key(ident, common.own_context())
    files = common.names(name)
    if key is not None and key != name:
        _failed(folder, files, "its identity or rights differ from those of the client that "
                               "started it (flags, path, environment, groups, namespaces)")
        return 1
    lock = folder.open(files["lock"], os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        _say("another worker is starting or serving: leaving")
        return 0
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # (status names a worker that is starting)
    if after is not None:
        _outlive(after)
    try:
        prepare()
        if rehearse is not None:
            rehearse(folder)  # once here too: what it creates (files) is the parent's
    except BaseException as failure:
        _failed(folder, files, repr(failure))
        raise
    if common.sources_stamp() != stamp:
        _say("not serving: fastir's sources changed while it started (it would run the "
             "old code; the next command starts another)")
        return 0
    worker = _Worker(folder, files, ident, stamp, dispatch, common.IDLE_SECONDS
                     if idle is None else idle, lock, rehearse)
    if ready is not None:
        os.write(ready, b"serving\n")
        os.close(ready)
    return worker.loop()


#: The longest a new worker waits for the process that started it to end before it warms up.
AFTER_SECONDS = 10


def _outlive(pidfd):
    """Wait until the process of ``pidfd`` has ended (its pidfd becomes readable), or
    AFTER_SECONDS; then close it."""
    try:
        select.select([pidfd], [], [], AFTER_SECONDS)
    finally:
        os.close(pidfd)


def _say(text):
    print(f"fastir worker: {text}", file=sys.stderr, flush=True)


def _failed(folder, files, reason):
    fd = folder.open(files["failed"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open(fd, "w") as out:
        out.write(reason + "\n")
    _say(f"not started: {reason}")


class _Worker:
    def __init__(self, folder, files, ident, stamp, dispatch, idle, lock, rehearse):
        self.folder, self.files, self.ident, self.stamp = folder, files, ident, stamp
        self.dispatch, self.idle, self.lock, self.rehearse = dispatch, idle, lock, rehearse
        self.children = {}  # pid -> the client's connection
        self.links = {}  # pid -> the connection on which a child says whether it started
        self.started = self.last = time.time()
        self.served = self.refused = 0
        self.peak_kb = 0  # the peak resident memory of the last finished command
        self.selector = selectors.DefaultSelector()
        self.wakeup_r, wakeup_w = os.pipe()
        for fd in (self.wakeup_r, wakeup_w):
            os.set_blocking(fd, False)
        self.wakeup_w = wakeup_w
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wakeup_w)
        self.selector.register(self.wakeup_r, selectors.EVENT_READ, ("reap", None))
        self.listener = self._listen()
        self.selector.register(self.listener, selectors.EVENT_READ, ("accept", None))
        self.spare = None
        self._fork_spare()
        _say(f"serving (pid {os.getpid()}, idle {idle:g} s) on "
             f"{folder.shown(files['socket'])}")

    def _listen(self):
        """Bind under a temporary name, then rename into place: a client never meets a
        socket that does not answer yet."""
        temporary = f"{self.files['socket']}.{os.getpid()}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.folder.at(temporary))
        listener.listen(64)
        self.folder.replace(temporary, self.files["socket"])
        self.inode = self.folder.stat(self.files["socket"]).st_ino
        return listener

    def loop(self):
        while self.listener is not None or self.children:
            timeout = None if self.children else self.last + self.idle - time.time()
            if timeout is not None and timeout <= 0:
                self.retire("idle")
                continue
            for key, _ in self.selector.select(timeout):
                self._event(key)
        _say(f"stopped after {self.served} requests")
        return 0

    def _event(self, key):
        """Handle one event of a ``select()`` batch (an earlier event of the same batch may
        have ended the command it is about: see ``_client_gone`` and ``_from_child``)."""
        kind, pid = key.data
        try:
            if kind == "accept":
                self._accept()
            elif kind == "reap":
                self._reap()
            elif kind == "client":
                self._client_gone(key.fileobj, pid)
            elif kind == "link":
                self._from_child(key.fileobj, pid)
        except Exception:  # the worker goes on, whatever happened
            _say("an event failed:\n" + traceback.format_exc().rstrip())

    def retire(self, reason):
        """Stop accepting (the socket and the lock go now, so a new worker can start);
        the loop ends when the last child has."""
        if self.listener is None:
            return
        _say(f"retiring ({reason})")
        self.selector.unregister(self.listener)
        try:
            if self.folder.stat(self.files["socket"]).st_ino == self.inode:
                self.folder.unlink(self.files["socket"])
        except OSError:
            pass
        self.listener.close()
        self.listener = None
        os.close(self.lock)
        if self.spare is not None:  # it sees the end of its socket pair, and leaves
            pid, link = self.spare
            link.close()
            self.spare = None
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass

    # -- requests ---------------------------------------------------------------------------
    def _accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        accepted = peer.now_ticks()
        self.last = time.time()
        fds = []
        started = False
        try:
            conn.settimeout(2)  # (a client sends its request at once)
            message, _ = common.receive(conn)  # (descriptors come once it may run: _run)
            started = self._handle(conn, message, accepted, fds)
        except Exception as problem:
            _say(f"a request was dropped: {problem!r}")
        finally:
            if not started:
                for fd in fds:
                    os.close(fd)
                conn.close()

    def _handle(self, conn, message, accepted, fds):
        """Answer one message; True when a child took the request (and ``conn`` and the
        descriptors ``fds`` received with it)."""
        kind, body = message if isinstance(message, tuple) and len(message) == 2 else \
            (None, None)
        if kind == "run":
            return self._run(conn, body, accepted, fds)
        if kind in ("status", "stop") and body == self.ident:
            common.send(conn, (kind, self.status()))
            if kind == "stop":
                self.retire("asked to stop")
            return False
        if message is not None:
            _say(f"a message was refused: {str(message)[:200]}")
            common.send(conn, ("fallback", "refused"))
        return False

    def _run(self, conn, request, accepted, fds):
        """A request to run a command: checked (its fields, identity and sources stamp; its
        client's rights), then its descriptors asked for (only then: a client whose request
        is refused, or whose worker does not answer, has handed none over, and none stays
        held in a socket nobody reads) and handed to the spare child."""
        problem = _malformed(request)
        if problem is not None or request["identity"] != self.ident:
            _say(f"a request was refused: {problem or 'another identity'}")
            common.send(conn, ("fallback", "refused"))
            return False
        if request["stamp"] != self.stamp:
            common.send(conn, ("fallback", "stale"))
            self.retire("fastir's sources changed")
            return False
        try:
            limits = self._check_client(conn, accepted)
        except peer.Refused as refusal:
            _say(f"a request runs in-process: {refusal}")
            self.refused += 1
            common.send(conn, ("fallback", "refused"))
            return False
        common.send(conn, ("send", None))
        message, received = common.receive(conn, max_fds=common.MAX_FDS + 1)
        fds += received
        if message != ("fds", None) or len(fds) != len(request["fds"]) + 1:
            _say("a request was dropped: its descriptors did not come")
            return False
        if self._start(conn, request, limits, fds):
            return True
        common.send(conn, ("fallback", "refused"))
        return False

    def _check_client(self, conn, accepted):
        """The client's limits, once its rights are found equal to the worker's; raises
        peer.Refused otherwise."""
        client = peer.Peer(conn, accepted)
        try:
            reason = common.context_refusal(client.context(), common.own_context())
            if reason is not None:
                raise peer.Refused(f"the client's rights differ from the worker's: {reason}")
            return client.limits()
        finally:
            client.close()

    def status(self):
        for pid, link in list(self.links.items()):  # (a count that is up to date: what a
            if select.select([link], [], [], 0)[0]:  # child said before its client asks)
                self._from_child(link, pid)
        return {"state": "serving", "pid": os.getpid(), "started": self.started,
                "idle": self.idle, "served": self.served, "refused": self.refused,
                "running": len(self.children), "last_peak_kb": self.peak_kb,
                "socket": self.folder.shown(self.files["socket"]),
                "log": self.folder.shown(self.files["log"])}

    def _fork_spare(self):
        """Fork the next request's process ahead, off the request's path: it waits for its
        request (the client's connection and descriptors) on a socket pair, and leaves if
        the worker closes it instead."""
        mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:  # never back into the worker's loop
                child.hold_signals()
                mine.close()
                self._forget()
                try:
                    if self.rehearse is not None:
                        self.rehearse(self.folder)
                except Exception:
                    pass
                job, fds = common.receive(its, max_fds=common.MAX_FDS + 2)
                self.folder.close()
                if job is not None and len(fds) >= 2:
                    child.run(socket.socket(fileno=fds[0]), its, job, fds[1:], self.dispatch)
            finally:
                os._exit(0)
        its.close()
        self.spare = (pid, mine)

    def _start(self, conn, request, limits, fds):
        """Hand the request to the spare child; False if it has gone. (The next spare is
        forked once the client's descriptors are closed here: it must not hold them.)"""
        if self.spare is None:
            self._fork_spare()
        (pid, link), self.spare = self.spare, None
        try:
            common.send(link, {"request": request, "limits": limits},
                        fds=[conn.fileno(), *fds])
        except OSError:
            link.close()
            return False
        for fd in fds:
            os.close(fd)
        fds.clear()
        self.children[pid] = conn
        self.links[pid] = link
        conn.settimeout(None)
        self.selector.register(link, selectors.EVENT_READ, ("link", pid))
        self._fork_spare()
        return True

    def _forget(self):
        """In a child: let go of the worker's own descriptors (the lock above all: a child
        that outlives the worker must not keep a new one from starting); the folder's
        stays open for the rehearsal."""
        signal.set_wakeup_fd(-1)  # (before its descriptor closes: its number is reused)
        for fd in (self.wakeup_r, self.wakeup_w, self.lock):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.listener is not None:
            self.listener.close()
        for other in [*self.children.values(), *self.links.values()]:
            other.close()
        if self.spare is not None:
            self.spare[1].close()
        self.selector.close()

    def _client_gone(self, conn, pid):
        """A running command's client connection became readable: the client sends
        nothing once its command started, so it has gone, and so must its command. Only a
        child not reaped yet is signalled (``_ended`` forgets a child as it reaps it, maybe
        earlier in the same batch of events): its pid names it, or its zombie, and no other
        process, whereas a reaped child's pid may be another process's by now."""
        if self.children.get(pid) is not conn:
            return
        _kill(pid, signal.SIGKILL)
        self.selector.unregister(conn)

    def _from_child(self, link, pid):
        """A child says whether it started the command or left it to the client (nothing
        to read once the child was reaped and its link closed, maybe earlier in the same
        batch of events)."""
        if self.links.get(pid) is not link:
            return
        try:
            message, _ = common.receive(link)
        except OSError:
            message = None
        if message == "started":  # (then the client sends nothing more: watch for its end)
            self.served += 1
            self.selector.register(self.children[pid], selectors.EVENT_READ, ("client", pid))
        elif message == "fallback":
            self.refused += 1
        if message is None or message in ("started", "fallback"):
            self.selector.unregister(link)
            link.close()
            self.links.pop(pid, None)

    def _reap(self):
        try:
            while os.read(self.wakeup_r, 512):
                pass
        except BlockingIOError:
            pass
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.spare is not None and self.spare[0] == pid:  # (the next request forks
                self.spare[1].close()                              # another)
                self.spare = None
            if pid in self.children:
                self._ended(pid, status, usage)

    def _ended(self, pid, status, usage):
        link = self.links.get(pid)
        if link is not None and select.select([link], [], [], 0)[0]:
            self._from_child(link, pid)  # (what it said before it ended: count it)
        self.peak_kb = usage.ru_maxrss
        conn = self.children.pop(pid)
        if os.WIFSIGNALED(status):  # the child could not say so itself
            try:
                common.send(conn, ("status", "signal", os.WTERMSIG(status)))
            except OSError:
                pass
        for done in (conn, self.links.pop(pid, None)):
            if done is None:
                continue
            try:
                self.selector.unregister(done)
            except (KeyError, ValueError):
                pass
            done.close()
        self.last = time.time()


#: A request: its fields and their types (the values are checked by :func:`_malformed`).
_REQUEST = {"identity": str, "stamp": str, "argv": list, "env": dict, "umask": int,
            "streams": list, "fds": list, "cloexec": list, "path0": (str, type(None)),
            "modules": dict}


def _malformed(request):
    """What is wrong with ``request``, or None: the first problem of its checks, in turn."""
    if not isinstance(request, dict) or set(request) != set(_REQUEST):
        return "not a request"
    for check in (_wrong_types, _wrong_texts, _wrong_descriptors, _wrong_cloexec,
                  _wrong_streams):
        problem = check(request)
        if problem is not None:
            return problem
    return None


def _wrong_types(request):
    """The first field of a type other than :data:`_REQUEST`'s, said, or None."""
    for field, kind in _REQUEST.items():
        if not isinstance(request[field], kind):
            return f"{field} is not a {kind}"
    return None


def _wrong_texts(request):
    """Whether argv is empty, or argv, env and the modules' names are not all text, or the
    modules' files not all text or None: said, or None."""
    strings = [*request["argv"], *request["env"], *request["env"].values(),
               *request["modules"]]
    if not request["argv"] or not all(isinstance(s, str) for s in strings):
        return "argv, env or modules hold something else than text"
    if not all(isinstance(f, (str, type(None))) for f in request["modules"].values()):
        return "modules hold something else than files"
    return None


def _wrong_descriptors(request):
    """Whether the descriptors' numbers (``fds``) are not distinct numbers from 0, fewer
    than :data:`common.MAX_FDS`, with 0, 1 and 2 among them: said, or None."""
    numbers = request["fds"]
    if (not numbers or len(numbers) >= common.MAX_FDS or len(set(numbers)) != len(numbers)
            or not all(isinstance(n, int) and n >= 0 for n in numbers)
            or not {0, 1, 2} <= set(numbers)):
        return "its descriptors do not match their numbers"
    return None


def _wrong_cloexec(request):
    """Whether ``cloexec`` is not one bool per descriptor: said, or None."""
    if len(request["cloexec"]) != len(request["fds"]) or \
            not all(isinstance(c, bool) for c in request["cloexec"]):
        return "cloexec does not match the descriptors"
    return None


def _wrong_streams(request):
    """Whether ``streams`` are not three stream settings (encoding, errors and three bools
    each): said, or None."""
    shapes = [(str, str, bool, bool, bool)] * 3
    if len(request["streams"]) != 3 or not all(
            isinstance(s, (tuple, list)) and len(s) == 5
            and all(isinstance(v, k) for v, k in zip(s, shape))
            for s, shape in zip(request["streams"], shapes)):
        return "streams are not three stream settings"
    return None


def _kill(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
