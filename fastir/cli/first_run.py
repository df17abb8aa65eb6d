"""A fresh install's first run: the kernels ``fastir eval`` needs, compiled on every core.

When the first of fastir's kernels starts compiling in the command (numba's cache lacks it:
a fresh install, or fastir's sources changed; :data:`fastir._jit.first_compile`), the
command takes the kernels it is going to need that the cache lacks
(:data:`fastir._estimate.KERNEL_SECONDS`, in the order it calls them) and cuts them into
runs of about equal compile time, one per process (:func:`shares`): this process keeps the
first; a helper process for each other (``fastir eval --compile-only``) runs the same
command on a sample of its input (the first lines of each file: the same kinds of input,
so the same kernels), compiling its share into numba's cache and running every other
kernel as Python. This process waits for a helper when it first needs a kernel of the
helper's share (:func:`fastir._jit.compiled_elsewhere`), then loads it from the cache. A
line says so, with the count of kernels and an estimate (a bar too, on a terminal). The
helpers end with the command. The library itself never starts a process.
"""

import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from fastir import _jit
from fastir._estimate import (
    KERNEL_LOAD,
    KERNEL_SECONDS,
    PROCESS_SECONDS,
    Measured,
    _cores,
    about,
    shared,
)

#: Bytes of each file a helper reads (cut at a line's end): enough for a query or two.
SAMPLE_BYTES = 1 << 16


@contextlib.contextmanager
def helped(argv, paths, bar):
    """Run the block (the command ``fastir eval`` with arguments ``argv``, reading the
    files ``paths``: the qrels, then the runs) with helpers compiling its kernels if it
    has to compile some (see the module's doc), and a bar of them if ``bar``. A command
    reading standard input (or no ``paths``: a run evaluated in chunks) compiles in this
    process alone."""
    if not paths or not all(p != "-" and os.path.isfile(p) for p in paths):
        yield
        return
    helpers = _Helpers(argv, paths, bar)
    previous, _jit.first_compile = _jit.first_compile, helpers.start
    try:
        yield
    finally:
        _jit.first_compile = previous
        helpers.close()


def shares(names, cores):
    """``names`` (kernels, in the order they are needed) cut into runs of consecutive
    kernels, one per process, the first this process's, and each process's measurement:
    the cut whose last process ends soonest on ``cores`` idle cores (each process's start
    counted), at most one process more than the cores (the runs are uneven)."""
    def measured(cut):
        runs = [names[a:b] for a, b in zip((0, *cut), (*cut, len(names)))]
        return runs, [Measured(sum(KERNEL_SECONDS[n] for n in run) + PROCESS_SECONDS,
                               KERNEL_LOAD) for run in runs]

    cuts = [cut for k in range(min(len(names), cores + 1))
            for cut in itertools.combinations(range(1, len(names)), k)]
    best = min(cuts, key=lambda cut: shared(measured(cut)[1], [0.0], cores)[1])
    return measured(best)


class _Helpers:
    def __init__(self, argv, paths, bar):
        self.argv, self.paths, self.wanted = argv, paths, bar
        self.folder = None
        self.processes = []
        self.bar = None

    def start(self, first):
        """At the first compile (of the kernel ``first``): start the helpers and say
        what is compiled; False when this process compiles alone as before (a kernel
        unknown here first, or a cache that cannot be read)."""
        known = [n for n in KERNEL_SECONDS if _jit.registered(n)]
        if first not in known:
            return False
        later = known[known.index(first) + 1:]
        missing = [_jit.cached(n) for n in later]
        if None in missing:
            return False
        names = [first] + [n for n, m in zip(later, missing) if not m]
        runs, measured = shares(names, _cores())
        started = self._start_helpers(runs[1:])
        if started < len(runs) - 1:  # (a process that could not start: this one compiles)
            runs, measured = runs[:started + 1], None
        line = (f"fastir: compiling numba kernels, the {len(names)} this input needs, once "
                f"(cached on disk), in {len(runs)} process{'es' if len(runs) > 1 else ''}: "
                f"{about(measured or shares(names, 1)[1])}. `fastir warmup` compiles them "
                "all ahead.")
        if self.wanted:  # (above the bars shown)
            from tqdm import tqdm

            tqdm.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)
        self._show(names)
        return True

    def _start_helpers(self, runs):
        """Start a helper for each share of ``runs``: how many started (an OSError stops
        the starting, and this process compiles the rest)."""
        if not runs:
            return 0
        try:
            self.folder = tempfile.mkdtemp(prefix="fastir-first-run-")
            inputs = _samples(self.paths, self.folder)
        except OSError:
            return 0
        parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        code = (f"import sys; sys.path.insert(0, {parent!r}); "  # (this fastir, not another)
                "from fastir.cli.main import dispatch; sys.exit(dispatch(sys.argv[1:]))")
        for run in runs:
            try:
                process = subprocess.Popen(
                    [sys.executable, "-c", code, "eval", "--compile-only", ",".join(run),
                     "--compile-inputs", inputs, "--no-progress", *self.argv],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
            except OSError:
                break
            self.processes.append((process, run))
            _jit.compiled_elsewhere(run, process.wait)
        return len(self.processes)

    def _show(self, names):
        """A bar of the kernels ``names`` compiled (when wanted)."""
        from fastir.progress import Progress

        if not self.wanted:
            return
        self.bar = Progress(len(names), "compiling numba kernels", True, unit="kernel")
        elsewhere = {n for _, run in self.processes for n in run}
        own = [n for n in names if n not in elsewhere]
        self.done = threading.Event()

        def tick():
            shown = 0
            while not self.done.wait(0.25):
                n = sum(map(_jit.loaded, own)) + sum(
                    len(run) for process, run in self.processes if process.poll() is not None)
                self.bar.advance(n - shown)
                shown = n

        self.ticker = threading.Thread(target=tick, daemon=True)
        self.ticker.start()

    def close(self):
        """End the helpers still running (their kernels were not needed), the bar, the
        samples."""
        for process, run in self.processes:
            if process.poll() is None:
                process.terminate()
            process.wait()
            _jit.compiled_elsewhere(run, None)
        if self.bar is not None:
            self.done.set()
            self.ticker.join()
            self.bar.close()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _samples(paths, folder):
    """Write the first lines of each file of ``paths`` (decompressed) into ``folder``:
    ``qrels``, then ``run0``, ``run1``... Returns ``folder``."""
    from fastir.io.trec import _compression, _decompressor

    for i, path in enumerate(paths):
        with open(path, "rb") as f:
            head = f.read(SAMPLE_BYTES)
            kind = _compression(head[:10])
            if kind is not None:
                head = _decompressor(kind).decompress(head + f.read(SAMPLE_BYTES),
                                                      SAMPLE_BYTES)
        end = head.rfind(b"\n") + 1
        with open(os.path.join(folder, "qrels" if i == 0 else f"run{i - 1}"), "wb") as f:
            f.write(head[:end] if end else head)
    return folder


def compile_share(args, evaluate_runs):
    """A helper's work (``--compile-only``): evaluate the samples of ``--compile-inputs``
    with only the kernels named compiled; nothing is printed."""
    folder = args.compile_inputs
    args.qrels = os.path.join(folder, "qrels")
    runs = sorted((n for n in os.listdir(folder) if n.startswith("run")),
                  key=lambda n: int(n[3:]))
    with _jit.compiling_only(args.compile_only.split(",")):
        evaluate_runs([os.path.join(folder, n) for n in runs], runs)
    return 0
