"""``fastir worker start|stop|status``: the warm worker of this installation.

The worker (:mod:`fastir.worker`) keeps numba and every kernel loaded and runs the command
line's requests in forked children. The command line starts one on first use (then each
later command skips numba's start-up) unless ``FASTIR_WORKER`` says ``off`` (never use one)
or ``use`` (use one started here, never start one); where ``CI`` is set the default is
``off``. A worker exits after ``FASTIR_WORKER_IDLE`` seconds without a request (600), when
stopped, or when fastir's sources change.
"""

import argparse
import gc
import os
import sys
import time

from fastir.worker import client, common, server

USAGE = """fastir worker start [--idle SECONDS] [--wait SECONDS] | stop | status

  start    start the worker (if none runs) and wait until it serves; it exits by itself
           after --idle seconds without a request (default: FASTIR_WORKER_IDLE, else 600)
  stop     stop the worker (it lets running commands finish)
  status   is one serving? (exit status 0 if so, 1 if not)

FASTIR_WORKER=off: never use a worker; use: use one started here, never start one; auto (the
default, except where CI is set): start one on first use."""


def worker_main(argv, dispatch):
    parser = argparse.ArgumentParser(prog="fastir worker", usage=USAGE, add_help=True)
    parser.add_argument("action", choices=["start", "stop", "status", "serve"])
    parser.add_argument("--idle", type=float, default=None)
    parser.add_argument("--wait", type=float, default=600.0)
    parser.add_argument("--key", default=None)
    parser.add_argument("--json", action="store_true", help="status: as one JSON line")
    args = parser.parse_args(argv)
    if not common.supported():
        print("fastir worker: not supported here (Linux only; commands run in-process)",
              file=sys.stderr)
        return 1
    if args.idle is None and os.environ.get("FASTIR_WORKER_IDLE"):
        args.idle = float(os.environ["FASTIR_WORKER_IDLE"])
    if args.action == "serve":
        return server.serve(dispatch, prepare, key=args.key, idle=args.idle,
                            rehearse=lambda: rehearse(dispatch))
    folder, ident = common.directory(), common.identity()
    if args.action == "start":
        return _start(folder, ident, args)
    answer = client.call(folder, ident, args.action)
    if answer is not None and args.action == "stop":
        _wait_gone(answer["pid"], 10)
    if args.json:
        import json

        print(json.dumps(answer))
    elif answer is None:
        print("fastir worker: none running")
    elif args.action == "stop":
        print(f"fastir worker: stopped (pid {answer['pid']}, {answer['served']} requests)")
    else:
        print(_describe(answer))
    return 1 if answer is None and args.action == "status" else 0


def _describe(answer):
    up = time.time() - answer["started"]
    return (f"fastir worker: serving (pid {answer['pid']}, up {up:.0f} s, "
            f"{answer['served']} requests, {answer['running']} running, exits after "
            f"{answer['idle']:g} s idle)\n  socket {answer['socket']}\n  log {answer['log']}")


def _start(folder, ident, args):
    answer = client.call(folder, ident, "status")
    if answer is None:
        try:
            os.unlink(common.paths(folder, ident)["failed"])
        except FileNotFoundError:
            pass
        client.spawn(folder, ident, idle=args.idle)
        print("fastir worker: starting (loads every kernel; compiles those not cached)",
              file=sys.stderr, flush=True)
        deadline = time.time() + args.wait
        while answer is None and time.time() < deadline:
            time.sleep(0.05)
            answer = client.call(folder, ident, "status")
            if answer is None and os.path.exists(common.paths(folder, ident)["failed"]):
                break
    if answer is None:
        log = common.paths(folder, ident)["log"]
        print(f"fastir worker: did not start; see {log}", file=sys.stderr)
        return 1
    print(_describe(answer))
    return 0


def _wait_gone(pid, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


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


def rehearse(dispatch):
    """What a request's process does while it waits for its request: a tiny ``trec_eval``
    whose output is dropped, so that a process's first-call costs (numba's threads, the
    pages a call touches, Python's caches) are paid off the request's path (measured: a
    forked process's first test-pair call 7.6 ms, its second 3 ms)."""
    import io

    if not _REHEARSAL:  # two small files in the worker's private folder
        paths = []
        for name, text in (("qrels", "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"),
                           ("run", "".join(f"q{q} Q0 d{d} {d} {1 / d} r\n" for q in (1, 2)
                                           for d in range(1, 6)))):
            paths.append(os.path.join(common.directory(), f"rehearsal.{name}"))
            with open(f"{paths[-1]}.{os.getpid()}", "w") as f:
                f.write(text)
            os.replace(f"{paths[-1]}.{os.getpid()}", paths[-1])
        _REHEARSAL["args"] = ["trec_eval", "-q", "-m", "all_trec", *paths]
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.TextIOWrapper(io.BytesIO(), "utf-8")
    try:
        dispatch(_REHEARSAL["args"])
    finally:
        sys.stdout, sys.stderr = saved
