"""Ctrl-C on the command line: a command it stops ends with one line and exit status 130,
wherever the interrupt lands (in Python, in numba's compiler, in a callback from C).
Standard library only: the client path imports it."""

import os
import sys


def by_ctrl_c(exc):
    """Whether ``exc`` ends a command a Ctrl-C stopped: a KeyboardInterrupt, an error it
    caused (one raised inside numba's compiler comes out as another exception), or any
    error after a Ctrl-C (numba's state, interrupted in a callback, fails later)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return _ctrl_c[0]


_ctrl_c = [False]  # whether a Ctrl-C came


def note_ctrl_c():
    """Note each Ctrl-C (then raise KeyboardInterrupt, as Python does); one that lands in a
    callback from C (numba's compiler, llvmlite's object cache), where Python can only
    print it as 'Exception ignored' and go on, comes again a moment later, to stop the
    command where it can."""
    import signal
    import threading

    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        def noted(signum, frame):
            _ctrl_c[0] = True
            raise KeyboardInterrupt

        signal.signal(signal.SIGINT, noted)
    hook = sys.unraisablehook
    if getattr(hook, "_fastir", False):
        return

    def again(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            timer = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT))
            timer.daemon = True
            timer.start()
            return
        hook(unraisable)

    again._fastir = True
    sys.unraisablehook = again


#: The exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
INTERRUPTED_STATUS = 130


def interrupted(command=None):
    """Say that Ctrl-C stopped the command; its exit status."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    print(f"fastir{' ' + command if command else ''}: interrupted (Ctrl-C)", file=sys.stderr,
          flush=True)
    return INTERRUPTED_STATUS
