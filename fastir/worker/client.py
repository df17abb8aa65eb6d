"""The client side: hand a command to the user's warm worker, or say that none can take it.

Standard library only. :func:`run` sends the worker the command, the environment, the
umask, how Python set up the standard streams, and the caller's standard input, output,
error and working folder themselves (file descriptors): the command then reads and writes
exactly what it would in-process. Signals the client gets (Ctrl-C) are passed on; the
worker's exit status becomes the client's, a death by a signal too. Whenever anything about
the worker fails before the command started, :func:`run` returns None and the caller runs
the command in-process.
"""

import os
import signal
import sys
import time

from fastir.worker import common

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Seconds a client waits for the worker to start its command before running it itself.
START_SECONDS = 5


def connect(folder, ident):
    """A connected socket to the worker of ``ident``, or None."""
    sock = common.unix_socket()
    try:
        sock.connect(common.paths(folder, ident)["socket"])
        if common.peer_uid(sock) != os.geteuid():  # never another user's process
            raise PermissionError("the worker's socket belongs to another user")
    except OSError:
        sock.close()
        return None
    return sock


def run(argv):
    """Run ``fastir`` with arguments ``argv`` in the worker: the exit status, or None when
    no worker can (the caller then runs it in-process)."""
    wanted = common.mode()
    if wanted == "off" or not common.supported():
        return None
    try:
        folder = common.directory()
        ident = common.identity()
    except (OSError, ValueError):
        return None
    sock = connect(folder, ident)
    if sock is None:
        if wanted == "auto":
            spawn(folder, ident)
        return None
    try:
        status = _request(sock, ident, argv)
    finally:
        sock.close()
    if status == "stale" and wanted == "auto":
        spawn(folder, ident)
    return None if status == "stale" else status


def _request(sock, ident, argv):
    try:
        streams = [(s.encoding, s.errors, s.line_buffering, s.write_through)
                   for s in (sys.stdin, sys.stdout, sys.stderr)]
        umask = os.umask(0o022)
        os.umask(umask)
        request = {"identity": ident, "stamp": common.sources_stamp(), "argv":
                   [sys.argv[0], *argv], "env": dict(os.environ), "umask": umask,
                   "streams": streams}
        here = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
        try:
            common.send(sock, ("run", request), fds=[0, 1, 2, here])
        finally:
            os.close(here)
    except (OSError, AttributeError, ValueError):  # a closed stream, no working folder
        return None
    return _wait(sock)


def _wait(sock):
    """The command's exit status from the worker, passing signals on while it runs."""
    def forward(signum, frame):
        try:
            common.send(sock, ("signal", signum))
        except OSError:
            pass

    previous = {s: signal.signal(s, forward) for s in FORWARDED  # (an ignored one stays so,
                if signal.getsignal(s) is not signal.SIG_IGN}        # as in-process)
    started = False
    sock.settimeout(START_SECONDS)  # a worker answers at once, or is not one to wait for
    try:
        while True:
            try:
                message, _ = common.receive(sock)
            except OSError:
                message = None
            if message is None:
                if not started:
                    return None
                print("fastir: the worker stopped before the command finished",
                      file=sys.stderr)
                return 1
            if message[0] == "started":
                started = True
                sock.settimeout(None)
            elif message[0] == "fallback":
                return message[1] if message[1] == "stale" else None
            elif message[0] == "status":
                return _status(message[1], message[2], previous)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _status(kind, value, previous):
    if kind == "signal":  # die as the command did
        previous.pop(value, None)
        signal.signal(value, signal.SIG_DFL)
        os.kill(os.getpid(), value)
        return 128 + value
    return value


def spawn(folder, ident, idle=None):
    """Start a worker for ``ident`` in the background (detached: its own session, no
    terminal, standard streams on its log), unless one is starting or failed lately."""
    files = common.paths(folder, ident)
    try:
        if time.time() - os.stat(files["failed"]).st_mtime < common.RETRY_SECONDS:
            return None
    except OSError:
        pass
    if _locked(files["lock"]):
        return None
    pid = os.fork()
    if pid == 0:  # the first child starts the worker and leaves, so nobody waits for it
        try:
            os.setsid()
            if os.fork() == 0:
                _exec_worker(files["log"], common.digest(ident), idle)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _exec_worker(log, key, idle):
    devnull = os.open(os.devnull, os.O_RDONLY)
    out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(devnull, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.chdir("/")
    package_parent = os.path.dirname(common.root())
    boot = ("import sys; sys.path[0] = sys.argv[1]; from fastir.cli.main import main; "
            "sys.exit(main(['worker', 'serve', *sys.argv[2:]]))")
    args = [package_parent, "--key", key] + ([] if idle is None else ["--idle", str(idle)])
    os.execv(sys.executable, [sys.executable, *_interpreter_flags(), "-c", boot, *args])


def _interpreter_flags():
    import subprocess

    return subprocess._args_from_interpreter_flags()


def _locked(path):
    """Whether a worker holds its lock (it is starting or serving)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def call(folder, ident, kind):
    """Ask the worker of ``ident`` for its ``"status"`` or to ``"stop"``: its answer (a
    dict), or None when no worker answers."""
    sock = connect(folder, ident)
    if sock is None:
        return None
    try:
        common.send(sock, (kind, ident))
        message, _ = common.receive(sock)
    except OSError:
        return None
    finally:
        sock.close()
    return message[1] if message and message[0] == kind else None
