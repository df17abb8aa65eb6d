"""``fastir worker start|stop|status``: the warm worker of this installation.

The worker (:mod:`fastir.worker`) keeps numba and every kernel loaded and runs the command
line's requests in forked children. The command line starts one on first use (then each
later command skips numba's start-up) unless ``FASTIR_WORKER`` says ``off`` (never use one)
or ``use`` (use one started here, never start one); where ``CI`` is set the default is
``off``. A worker exits after ``FASTIR_WORKER_IDLE`` seconds without a request (600), when
stopped, or when fastir's sources change. These commands answer within seconds whatever
the worker's state (starting, stopped by a signal, gone), in one line when something is
wrong.
"""

import argparse
import gc
import math
import os
import select
import sys
import time

from fastir.worker import client, common, server

USAGE = """fastir worker start [--idle SECONDS] [--wait SECONDS] | stop | status [--json]

  start    start the worker (if none runs) and wait until it serves; it exits by itself
           after --idle seconds without a request (default: FASTIR_WORKER_IDLE, else 600)
  stop     stop the worker (it lets running commands finish)
  status   is one serving? (exit status 0 if so, 1 if not)

FASTIR_WORKER=off: never use a worker; use: use one started here, never start one; auto (the
default, except where CI is set): start one on first use."""


def _wait_seconds(text):
    """argparse's type for --wait: seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= common.MAX_IDLE_SECONDS:
        raise argparse.ArgumentTypeError(f"expected seconds (a number from 0), got {text!r}")
    return value


def worker_main(argv, dispatch):
    parser = argparse.ArgumentParser(prog="fastir worker", usage=USAGE, add_help=True)
    parser.add_argument("action", choices=["start", "stop", "status", "serve"])
    parser.add_argument("--idle", default=None)
    parser.add_argument("--wait", type=_wait_seconds, default=600.0)
    parser.add_argument("--json", action="store_true", help="status: as one JSON line")
    for hidden in ("--key", "--stamp"):  # (serve: from the client that starts it)
        parser.add_argument(hidden, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--ready-fd", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--after-fd", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if not common.supported():
        print("fastir worker: not supported here (Linux only; commands run in-process)",
              file=sys.stderr)
        return 1
    try:
        idle = (common.idle_seconds(args.idle, "--idle") if args.idle is not None else
                common.idle_seconds(os.environ.get("FASTIR_WORKER_IDLE") or None))
    except common.SettingError as problem:
        print(f"fastir worker: {problem}", file=sys.stderr)
        return 2
    if args.action == "serve":
        return server.serve(dispatch, prepare, key=args.key, idle=idle, stamp=args.stamp,
                            ready=args.ready_fd, after=args.after_fd,
                            rehearse=lambda f: rehearse(dispatch, f))
    try:
        folder = common.directory()
        ident = common.identity()
        name = common.key(ident, common.own_context())
    except (common.SettingError, OSError) as problem:
        print(f"fastir worker: {getattr(problem, 'strerror', None) or problem}",
              file=sys.stderr)
        return 1
    try:
        if args.action == "start":
            return _start(folder, name, ident, idle, args.wait, args.idle is not None)
        return _ask(folder, name, ident, args.action, args.json)
    except client.NotAnswering as silent:
        print(f"fastir worker: the worker (pid {silent.pid}) does not answer within "
              f"{client.ANSWER_SECONDS} s: it is stopped or hung (kill -CONT {silent.pid} "
              f"continues it, kill {silent.pid} ends it)", file=sys.stderr)
        return 1
    finally:
        folder.close()


def _ask(folder, name, ident, action, as_json):
    """``status`` or ``stop``."""
    answer = client.call(folder, name, ident, action)
    starting = client.holder(folder, name) if answer is None else None
    if action == "stop":
        if answer is None and starting:
            _end_starting(folder, name, starting)
        if answer is not None and not _gone(answer["pid"], 10):
            print(f"fastir worker: stopping (pid {answer['pid']}): it lets its "
                  f"{answer['running']} running commands finish")
            return 0
    if as_json:
        import json

        print(json.dumps(answer if answer is not None or starting is None else
                         {"state": "starting", "pid": starting}))
    elif answer is not None:
        print(f"fastir worker: stopped (pid {answer['pid']}, {answer['served']} requests)"
              if action == "stop" else _describe(answer))
    elif starting is not None:
        state = "stopped a worker that was starting" if action == "stop" else "starting"
        print(f"fastir worker: {state} (pid {starting})")
    else:
        print("fastir worker: none running")
    return 1 if answer is None and action == "status" else 0


def _describe(answer):
    up = time.time() - answer["started"]
    return (f"fastir worker: serving (pid {answer['pid']}, up {up:.0f} s, "
            f"{answer['served']} requests, {answer['refused']} left to run in-process, "
            f"{answer['running']} running, exits after {answer['idle']:g} s idle)\n"
            f"  socket {answer['socket']}\n  log {answer['log']}")


def _start(folder, name, ident, idle, wait, idle_given):
    answer = client.call(folder, name, ident, "status")
    if answer is not None:
        if idle_given and answer["idle"] != idle:
            print(f"fastir worker: one serves already, with --idle {answer['idle']:g} "
                  "(stop it to start one with another)", file=sys.stderr)
        print(_describe(answer))
        return 0
    files = common.names(name)
    try:
        folder.unlink(files["failed"])
    except FileNotFoundError:
        pass
    deadline = time.time() + wait
    print("fastir worker: starting (loads every kernel; compiles those not cached)",
          file=sys.stderr, flush=True)
    ready, ready_w = os.pipe()
    try:
        spawned = client.spawn(folder, name, idle=idle, ready=ready_w)
    finally:
        os.close(ready_w)
    try:
        if spawned is not None:  # it writes to the pipe once it serves, or ends
            readable, _, _ = select.select([ready], [], [], max(0, deadline - time.time()))
            if readable:
                os.read(ready, 64)
    finally:
        os.close(ready)
    answer = client.call(folder, name, ident, "status")
    while answer is None and client.holder(folder, name) is not None \
            and time.time() < deadline:  # (another one starting: wait for it)
        time.sleep(0.05)
        answer = client.call(folder, name, ident, "status")
    if answer is None:
        print(f"fastir worker: did not start{_reason(folder, files)}; see "
              f"{folder.shown(files['log'])}", file=sys.stderr)
        return 1
    print(_describe(answer))
    return 0


def _reason(folder, files):
    """The last line the worker wrote about why it did not start, as ': ...'."""
    try:
        fd = folder.open(files["log"], os.O_RDONLY)
    except OSError:
        return ""
    with open(fd, "rb") as log:
        size = log.seek(0, os.SEEK_END)
        log.seek(max(0, size - 4096))
        lines = log.read().decode("utf-8", "replace").splitlines()
    said = [line for line in lines if line.startswith("fastir worker: not")]
    return ": " + said[-1].removeprefix("fastir worker: ") if said else ""


def _end_starting(folder, name, pid):
    """Stop a worker that is starting (it holds the lock, its pid written in it): a pidfd
    taken while it still holds the lock names it, whatever reuses the pid later."""
    import signal

    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    try:
        if client.holder(folder, name) == pid:
            signal.pidfd_send_signal(pidfd, signal.SIGTERM)
    finally:
        os.close(pidfd)


def _gone(pid, seconds):
    """Wait up to ``seconds`` for process ``pid`` to end; whether it has."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return True
    try:
        readable, _, _ = select.select([pidfd], [], [], seconds)  # (readable once it ends)
        return bool(readable)
    finally:
        os.close(pidfd)


def prepare():
    """Warm the worker: numba on a fork-safe threading layer, every kernel loaded (compiled
    when not cached), the command line's modules imported; then the garbage collector's
    objects frozen, so that children do not copy the pages a collection would touch."""
    from fastir import _jit
    from fastir.cli import commands, example, trec_eval, trec_output  # noqa: F401
    from fastir.cli.warmup import default_jobs, warmup

    _jit.fork_safe()
    if default_jobs() > 1:  # a fresh cache compiles in parallel; then this one loads all
        warmup(out=None, jobs=default_jobs())
    warmup(out=None)
    gc.collect()
    gc.freeze()


_REHEARSAL = {}


def rehearse(dispatch, folder):
    """What a request's process does while it waits for its request: a tiny ``trec_eval``
    whose output is dropped, so that a process's first-call costs (numba's threads, the
    pages a call touches, Python's caches) are paid off the request's path (measured: a
    forked process's first test-pair call 7.6 ms, its second 3 ms). Its two small files
    are in the worker's folder (``folder``, a common.Folder)."""
    import io

    if not _REHEARSAL:
        paths = []
        for name, text in (("qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"),
                           ("run", "".join(f"q{q} Q0 d{d} {d} {1 / d} r\n" for q in (1, 2)
                                           for d in range(1, 6)))):
            temporary = f"rehearsal.{name}.{os.getpid()}"
            with open(folder.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                      "w") as f:
                f.write(text)
            folder.replace(temporary, f"rehearsal.{name}")
            paths.append(folder.at(f"rehearsal.{name}"))
        _REHEARSAL["args"] = ["trec_eval", "-q", "-m", "all_trec", *paths]
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.TextIOWrapper(io.BytesIO(), "utf-8")
    try:
        dispatch(_REHEARSAL["args"])
    finally:
        sys.stdout, sys.stderr = saved
