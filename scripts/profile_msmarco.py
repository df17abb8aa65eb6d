"""Where the time of ``fastir trec_eval`` goes on a pair of files (by default the MS MARCO dev
shape of BENCHMARKS.md and its measures): the command through the warm worker and the trivial
command through it (the round trip), whole processes; then the command run again and again in
one warm process, its stages timed (reading, parsing, id interning, join, measure kernels,
output). Medians of ``--rounds``; the stages are inclusive, a stage's parts indented under it.

    python scripts/profile_msmarco.py [--qrels Q] [--run R] [--rounds 5] [--no-worker]

The worker is the user's (``fastir worker start`` first, with this tree's PYTHONPATH, to time
this tree's); ``--no-worker`` skips the whole-process part.
"""

import argparse
import contextlib
import functools
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ["map", "recip_rank", "ndcg_cut.10", "P.10", "recall.1000"]
HERE = Path(__file__).resolve().parent.parent

#: The stages timed: (module, name in it, label). A kernel launched compiled is timed by name
#: too (fastir._jit._launch), under the stage that launched it.
STAGES = [
    ("fastir.cli.trec_output", "format_trec_eval", "evaluate and format"),
    ("fastir.io.trec", "read_qrels", "read the qrels"),
    ("fastir.io.trec", "read_run", "read the run"),
    ("fastir.io.trec", "read_bytes", "file to memory"),
    ("fastir.io.trec", "_run_layout", "layout (first and last lines)"),
    ("fastir.io.trec", "_finish", "slow numbers, query ids interned"),
    ("fastir.model.join", "join", "join"),
    ("fastir.engine", "Plan.values", "measure values"),
    ("fastir.cli.trec_output", "trec_lines", "output lines"),
    ("fastir.cli.trec_eval", "_write", "write stdout"),
]


class Timer:
    """Inclusive seconds per stage path (``a / b``: b within a) of the current call."""

    def __init__(self):
        self.stack = []
        self.seconds = {}

    def wrap(self, label, func):
        @functools.wraps(func)
        def timed(*args, **kwargs):
            self.stack.append(label)
            path = " / ".join(self.stack)
            self.seconds.setdefault(path, 0.0)  # (listed in the order the stages start)
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                self.seconds[path] += time.perf_counter() - start
                self.stack.pop()
        return timed


def _install(timer):
    """Wrap every stage wherever its module or an importer holds it by name."""
    import importlib

    from fastir import _jit

    for module_name, name, label in STAGES:
        owner = importlib.import_module(module_name)
        *outer, attr = name.split(".")
        for part in outer:  # a method: wrapped on its class
            owner = getattr(owner, part)
        original = getattr(owner, attr)
        wrapped = timer.wrap(label, original)
        holders = [owner] if outer else [m for m in list(sys.modules.values())
                                         if getattr(m, "__name__", "").startswith("fastir")]
        for holder in holders:
            if getattr(holder, attr, None) is original:
                setattr(holder, attr, wrapped)
    launch = _jit._launch

    def timed_launch(function, args):
        name = getattr(getattr(function, "py_func", function), "__name__", "kernel")
        return timer.wrap(f"kernel {name}", launch)(function, args)
    _jit._launch = timed_launch


def in_process(qrels, run, rounds):
    """{stage path: [seconds per round]} of the command in this (warm) process."""
    os.environ["FASTIR_WORKER"] = "off"
    from fastir.cli.trec_eval import trec_eval_main

    timer = Timer()
    _install(timer)
    argv = [a for m in MEASURES for a in ("-m", m)] + [str(qrels), str(run)]
    command = timer.wrap("the command, in-process", trec_eval_main)
    found = {}
    for round_ in range(rounds + 1):  # the first round loads the kernels: not counted
        timer.seconds = {}
        with _quiet_stdout():
            command(argv)
        if round_:
            for path, seconds in timer.seconds.items():
                found.setdefault(path, []).append(seconds)
    return found


@contextlib.contextmanager
def _quiet_stdout():
    """Standard output to /dev/null (the command writes bytes to ``sys.stdout.buffer``)."""
    saved = sys.stdout
    with open(os.devnull, "w") as null:
        sys.stdout = null
        try:
            yield
        finally:
            sys.stdout = saved


def whole_process(argv, rounds):
    """Median wall seconds of a command run as a process (its output thrown away)."""
    walls = []
    for _ in range(rounds + 1):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - start)
    return statistics.median(walls[1:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qrels", type=Path, default=HERE / "data/msmarco-dev.qrels")
    parser.add_argument("--run", type=Path, default=HERE / "data/msmarco-dev.run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-worker", action="store_true")
    args = parser.parse_args(argv)
    print(f"load {os.getloadavg()[0]:.2f}; medians of {args.rounds} rounds")
    if not args.no_worker:
        fastir = [str(Path(sys.executable).parent / "fastir"), "trec_eval"]
        command = fastir + [a for m in MEASURES for a in ("-m", m)] + [str(args.qrels),
                                                                       str(args.run)]
        tiny = fastir + ["-m", "map", str(HERE / "tests/data/trec_eval/inputs/qrels.test"),
                         str(HERE / "tests/data/trec_eval/inputs/results.test")]
        for label, argv in (("the command through the worker", command),
                            ("the test pair through it (start, round trip)", tiny)):
            print(f"{label:<52} {whole_process(argv, args.rounds):7.3f} s")
    found = in_process(args.qrels, args.run, args.rounds)
    print("in one warm process (worker off), stages inclusive:")
    for path, seconds in found.items():
        label = "  " * path.count(" / ") + path.rsplit(" / ", 1)[-1]
        print(f"{label:<52} {statistics.median(seconds):7.3f} s")


if __name__ == "__main__":
    main()
