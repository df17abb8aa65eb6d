"""A request's process: forked from the warm worker, it becomes the client's process for
the length of one command (its standard streams, working folder, umask, environment,
arguments and the standard streams' settings), runs the command as ``fastir`` would
in-process, reports the exit status and leaves without running the worker's exit
handlers."""

import io
import os
import signal
import sys
import traceback
import warnings

from fastir.worker import common
from fastir.worker.client import FORWARDED

#: The warning filters of a fresh process (saved by the worker before it warms up).
FRESH_WARNING_FILTERS = list(warnings.filters)


def run(conn, request, fds, dispatch):
    """Run the request; never returns."""
    status = ("exit", 70)
    try:
        _become_client(request, fds)
        status = _run_command(dispatch, request["argv"][1:])
    finally:
        try:
            common.send(conn, ("status", *status))
        except OSError:
            pass
        os._exit(status[1] if status[0] == "exit" else 128 + status[1])


def _become_client(request, fds):
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    # The signals as a command's own process has them, whatever the worker inherited (one
    # started by a background job ignores SIGINT): the client passes on only those it does
    # not ignore itself.
    for forwarded in FORWARDED:
        signal.signal(forwarded, signal.default_int_handler if forwarded == signal.SIGINT
                      else signal.SIG_DFL)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    for fd in fds:
        os.close(fd)
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = list(request["argv"])
    modes = ("r", "w", "w")
    streams = [_stream(fd, modes[fd], *request["streams"][fd]) for fd in range(3)]
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    warnings.resetwarnings()
    warnings.filters[:] = FRESH_WARNING_FILTERS


def _stream(fd, mode, encoding, errors, line_buffering, write_through):
    """A standard stream as Python makes it at start-up."""
    raw = io.FileIO(fd, mode, closefd=False)
    raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding, errors, newline="\n",
                            line_buffering=line_buffering, write_through=write_through)


def _run_command(dispatch, args):
    """("exit", status) or ("signal", number), as ``sys.exit(main())`` would end."""
    try:
        code = dispatch(args)
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
