"""A request's process: forked from the warm worker ahead of a request, it becomes the
client's process for the length of one command and runs it as ``fastir`` would in-process.

It takes over what the client runs with: its descriptors (every one, at the same numbers,
so that ``/dev/fd/N`` and ``/proc/self/fd/N`` name the same files), working folder, limits
(:func:`peer.take`), umask, environment, arguments, first module folder and the standard
streams' settings. Where it cannot (a limit above the worker's, a module the client would
import from another file), it says so ("fallback") before anything ran and the client runs
the command itself; else it says "started" with a pidfd of itself (the client signals the
command directly: Ctrl-C, Ctrl-Z, a SIGTERM reach it without the worker), runs the command,
reports the exit status and leaves without running the worker's exit handlers. The client
answers "go" once it passes its signals on, and sends nothing more: its connection becoming
readable then means it has gone, and the command ends (the worker ends it at once; a thread
here does when the worker has gone).
"""

import fcntl
import io
import os
import resource
import select
import signal
import socket
import sys
import threading
import traceback
import warnings

from fastir.worker import common, peer
from fastir.worker.client import FORWARDED

#: The warning filters of a fresh process (saved by the worker before it warms up).
FRESH_WARNING_FILTERS = list(warnings.filters)


def run(conn, link, job, fds, dispatch):
    """Run the job (its ``request`` and the client's ``limits``) with the client's
    descriptors ``fds`` (its working folder first, then one for each number of
    ``request["fds"]``); ``conn`` is the client's connection, ``link`` the worker's. Never
    returns."""
    own = _Own(conn, link, os.dup(2))  # (2: the worker's log, until the command's stream)
    pidfd = None
    try:
        own.conn.setblocking(True)
        _take_over(own, job, fds)
        pidfd = os.pidfd_open(os.getpid()) if hasattr(os, "pidfd_open") else None
        common.send(own.conn, ("started", os.getpid()), fds=[] if pidfd is None else [pidfd])
    except Exception as failure:
        _refuse(own, failure)
    for fd in (own.log, pidfd):
        if fd is not None:
            os.close(fd)
    if not _go(own.conn):
        os._exit(0)
    _tell(own.link, "started")
    _watch(own.conn)
    status = ("exit", 70)
    try:
        status = _run_command(dispatch, job["request"]["argv"][1:])
    finally:
        try:
            common.send(own.conn, ("status", *status))
        except OSError:
            pass
        os._exit(status[1] if status[0] == "exit" else 128 + status[1])


class _Own:
    """This process's own descriptors while it takes the client's: the client's
    connection, the worker's link and the worker's log (each where it is now)."""

    def __init__(self, conn, link, log):
        self.conn, self.link, self.log = conn, link, log


def hold_signals():
    """Hold the signals a client passes on (FORWARDED) from the moment a request's process
    is forked until its command runs (:func:`_let_signals_through`): called first, before
    the rehearsal starts any thread, so that every thread inherits the hold and none takes
    such a signal for the process (Python would then raise it in the main thread wherever
    it is, and the process end without a status)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)


def _refuse(own, failure):
    """Leave without running the command: the client runs it in-process."""
    reason = str(failure) if isinstance(failure, peer.Refused) else \
        "".join(traceback.format_exception_only(failure)).strip()
    try:
        os.write(own.log, f"fastir worker: pid {os.getpid()}: a request runs in-process: "
                          f"{reason}\n".encode())
        common.send(own.conn, ("fallback", "refused"))
    except OSError:
        pass
    _tell(own.link, "fallback")
    os._exit(0)


def _go(conn):
    """Wait for the client's word to begin, sent once it passes its signals on: a Ctrl-Z
    before then stops the client, and this process waits with it (a Ctrl-C or SIGTERM
    passed on meanwhile is held until the command runs). False if the client has gone."""
    try:
        message, _ = common.receive(conn)
    except OSError:
        return False
    return message == "go"


def _tell(link, what):
    """Tell the worker whether the command started (its count of requests served)."""
    try:
        common.send(link, what)
        link.close()
    except OSError:
        pass


def _take_over(own, job, fds):
    """Become the client's process, up to running its command. Raises peer.Refused (or
    another error) where it cannot."""
    request = job["request"]
    if len(fds) != len(request["fds"]) + 1:
        raise peer.Refused("its descriptors did not all arrive")
    os.fchdir(fds[0])
    os.close(fds[0])
    _place(own, fds[1:], request["fds"], request["cloexec"])
    peer.take(job["limits"])
    shadowed = _shadowed(request["path0"], request["modules"])
    if shadowed is not None:
        raise peer.Refused(f"its first module folder {request['path0']!r} holds "
                           f"{shadowed!r}, which it would import in place of the worker's")
    _become_client(request)


def _place(own, received, numbers, cloexec):
    """Put each received descriptor at the client's number for it (with the client's
    close-on-exec flag); this process's own (``own``) move above them. Raises peer.Refused
    if a descriptor of the worker's that is not known here holds one of those numbers."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:  # room above the client's numbers (the client's own limit comes later)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    top = max(numbers) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, top)
             for fd in (own.conn.fileno(), own.link.fileno(), own.log, *received)]
    own.conn.close()
    own.link.close()
    for fd in (own.log, *received):
        os.close(fd)
    own.conn, own.link, own.log = (socket.socket(fileno=moved[0]),
                                   socket.socket(fileno=moved[1]), moved[2])
    clash = sorted((_open_descriptors() - {0, 1, 2} - set(moved)) & set(numbers))
    if clash:
        raise peer.Refused(f"the worker's descriptors {clash} hold numbers the client uses")
    for fd, number, close_on_exec in zip(moved[3:], numbers, cloexec):
        os.dup2(fd, number, inheritable=not close_on_exec)
        os.close(fd)


def _open_descriptors():
    listed = [int(name) for name in os.listdir("/proc/self/fd")]
    still = set()
    for fd in listed:  # (the listing's own descriptor is closed by now)
        try:
            os.fstat(fd)
        except OSError:
            continue
        still.add(fd)
    return still


def _shadowed(path0, client_modules):
    """A module this process has loaded that the client, whose first module folder
    (``sys.path[0]``: the working folder under ``python -m``) is ``path0``, would import
    from another file in-process (then the command's outcome could differ), or None.
    ``client_modules``: {name: file} of the client's loaded top-level modules, which it
    has already resolved."""
    import importlib.machinery as machinery

    if path0 is None:
        return None
    folder = os.path.abspath(path0 or ".")
    try:
        entries = os.listdir(folder)
    except OSError:  # (the import system finds nothing in a folder it cannot list)
        return None
    suffixes = machinery.all_suffixes()
    for entry in entries:
        name = next((entry[:-len(s)] for s in suffixes if entry.endswith(s)), entry)
        module = sys.modules.get(name) if name.isidentifier() else None
        spec = getattr(module, "__spec__", None)
        if module is None or spec is None or spec.origin in ("built-in", "frozen"):
            continue  # (built-in and frozen modules come before the path)
        path = os.path.join(folder, entry)
        if name == entry and not os.path.isdir(path):
            continue  # a file without an import suffix (a console script): never imported
        mine = getattr(module, "__file__", None)
        if name in client_modules:
            if client_modules[name] != mine:
                return name
            continue
        if not os.path.isdir(path):
            same = name != entry and _same_file(path, mine)
        elif any(os.path.exists(os.path.join(path, "__init__" + s)) for s in suffixes):
            same = _same_file(path, mine and os.path.dirname(mine))
        else:  # a namespace portion: a regular package or module later on the path wins
            found = machinery.PathFinder.find_spec(name, sys.path[1:])
            same = found is not None and found.origin == mine
        if not same:
            return name
    return None


def _same_file(path, other):
    try:
        return other is not None and os.path.samefile(path, other)
    except OSError:
        return False


def _watch(conn):
    """End this process when the client's connection becomes readable (it has gone)."""
    def watch():
        try:
            select.select([conn], [], [])
        finally:
            os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="fastir client watch", daemon=True).start()


def _become_client(request):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # The signals as a command's own process has them, whatever the worker inherited (one
    # started by a background job ignores SIGINT): the client passes on only those it does
    # not ignore itself. Ignored first: one sent to this process while it waited as the
    # spare (held since: hold_signals) is discarded, not raised in this client's command.
    for forwarded in FORWARDED:
        signal.signal(forwarded, signal.SIG_IGN)
        signal.signal(forwarded, signal.default_int_handler if forwarded == signal.SIGINT
                      else signal.SIG_DFL)
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    if sys.path and request["path0"] is not None:
        sys.path[0] = request["path0"]
    streams = [_stream(fd, *request["streams"][fd]) for fd in range(3)]
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    warnings.resetwarnings()
    warnings.filters[:] = FRESH_WARNING_FILTERS


def _stream(fd, encoding, errors, line_buffering, write_through, buffered):
    """A standard stream as Python makes it at start-up: its buffer as io.open makes it
    for the descriptor (a size from the file's block size), none where the client has
    none (``python -u``, PYTHONUNBUFFERED: stdout and stderr)."""
    buffer = open(fd, "rb" if fd == 0 else "wb", buffering=-1 if buffered else 0,
                  closefd=False)
    (buffer.raw if buffered else buffer).name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    return io.TextIOWrapper(buffer, encoding, errors, newline="\n",
                            line_buffering=line_buffering, write_through=write_through)


def _run_command(dispatch, args):
    """("exit", status) or ("signal", number), as ``sys.exit(main())`` would end. The
    signals passed on, held until now, are let through by ``dispatch`` once it handles them
    as in-process (its ``ready``): a Ctrl-C passed on as the command starts ends it with
    its line and status, never this process without one; once it is done they are held
    again (as ``program()`` ignores Ctrl-C after its command), so that its status is sent
    whatever comes then."""
    try:
        try:
            code = dispatch(args, ready=_let_signals_through)
        finally:
            hold_signals()
    except SystemExit as stop:
        code = stop.code
    except KeyboardInterrupt:
        traceback.print_exc()
        _flush()
        return "signal", signal.SIGINT.value
    except BaseException:
        traceback.print_exc()
        code = 1
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    return "exit", _flush(code)


def _let_signals_through():
    """Let the signals passed on (held since this process was forked: :func:`hold_signals`)
    reach its main thread: one that came meanwhile is raised here. (The rehearsal's threads
    keep holding them, and the command's own threads inherit its main thread's mask.)"""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)


def _flush(code=0):
    """Flush the streams as Python does on its way out (a failed flush of stdout: status
    120, with Python's message; ``dispatch`` leaves none to fail: it says so itself)."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        print(f"Exception ignored in: {sys.stdout!r}", file=sys.stderr)
        print(*traceback.format_exception_only(exc), sep="", end="", file=sys.stderr)
        code = 120
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return code & 0xFF
