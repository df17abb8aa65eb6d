"""The one JIT policy of fastir, and when not to JIT at all.

Kernels are plain Python functions registered here by the decorators below. numba is
imported only when a kernel is first needed compiled (:func:`compiled`); until then, and
for inputs too small to repay numba's start-up (about a second: importing numba, its
one-time LLVM set-up, loading the cached kernels), the very same functions run as Python
(:func:`select`), so every value has one definition and is bit-identical either way.

The choice is tiered, like a JIT's: a process runs its first inputs as Python until they
add up to ``PYTHON_ROWS`` rows (measured: the rows Python handles in the time numba takes
to start; see BENCHMARKS.md) or one input alone is larger; from then on, and whenever
numba is already loaded, kernels run compiled. A loop's calls (:func:`loop_tier`: calls
users repeat, whose Python costs more per row) go compiled sooner: from the call after
they have taken ``LOOP_PYTHON_SECONDS`` as Python. Within compiled work, each kernel is loaded
only when a call needs it and its Python form would cost more than loading it
(:func:`select`, :func:`launch`): once loaded, it runs compiled at every size.
``FASTIR_JIT=python`` or ``numba`` (or :func:`forced`) overrides the choice.

Compiled kernels are cached on disk (``cache=True``), release the GIL (``nogil=True``), use
numpy's error model (a division by zero gives inf/nan instead of raising; kernels guard
their denominators) and never use fastmath: sums must be bit-identical to trec_eval's.
Nothing here changes numba's global state (thread count, threading layer); a small
launch on a busy machine runs on the calling thread alone (:data:`SERIAL_ITEMS`: numba's
per-thread count, restored after it). What numba compiles for fastir's functions gets
machine code only where something asks for it, the kernels' own libraries
(:mod:`fastir._lazy_emit`); other compiles in the process are finished as numba does.

A kernel whose byte-level loops would be slow in Python may have a Python variant
(:func:`python_variant`): a faster Python function with the same results, which Python
callers get while compiled callers get the kernel. Tests check each variant against its
kernel.
"""

import contextlib
import contextvars
import functools
import hashlib
import os
import sys
import threading
import time

import numpy as np

from fastir import _lazy_emit

#: ``no_cfunc_wrapper``: kernels are called from Python (numba's Python entry) and from
#: kernels (their native entry), never through the C entry numba also compiles for each
#: (a first-class function value): a first run compiled one for every kernel and helper.
_POLICY = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": False,
           "no_cfunc_wrapper": True}

#: Rows a process evaluates as Python before it loads numba (see the module doc).
PYTHON_ROWS = 250_000

#: Seconds a loop's calls (:func:`loop_tier`: Evaluator, bound candidates, evaluate_matrix,
#: the training metrics) may run as Python before its next call runs compiled: a loop
#: repeats, so loading numba (about half a second quiet, once) repays within its next
#: calls, while a call's Python costs more per row than a file's (a 32 x 100 batch of
#: three measures: about 25 ms quiet; scripts/bench_first_calls.py).
LOOP_PYTHON_SECONDS = 0.02

#: What loading one cached kernel costs, about (4-16 ms quiet: BENCHMARKS.md): a kernel not
#: yet loaded runs as Python within compiled work while that costs less (see select).
KERNEL_LOAD_SECONDS = 0.01
#: A kernel's Python seconds per item until its own Python runs have measured them.
PYTHON_ITEM_SECONDS = 1e-6

note_compiles = True  # say on stderr when numba starts compiling fastir's kernels
#: The command line's (:mod:`fastir.cli.first_run`), when set: called with the kernel's
#: name (:func:`name_of`) as the first of fastir's kernels starts compiling in this process;
#: it returns whether it said so (else the note below is said).
first_compile = None
#: Kept for callers that set it: numba's set-up now skips its scipy probe in every
#: process, without changing anything a user sees (_set_up_without_blas_probe).
lean_start = False

prange = range  # kernel modules get numba.prange in its place when numba is loaded


class _Entry:
    __slots__ = ("source", "python", "options", "dispatcher", "python_entry", "python_items",
                 "python_seconds")

    def __init__(self, source, options):
        self.source = source
        self.python = source
        self.options = options
        self.dispatcher = None
        self.python_entry = None  # a helper's dispatcher for Python callers (_with_python_entry)
        self.python_items = 0  # items this kernel ran as Python within compiled work
        self.python_seconds = 0.0  # and what they took


_registry = []
_numba = None  # the numba module, once loaded
_load_lock = threading.Lock()
_launch_lock = threading.Lock()
_python_rows = 0
_loop_python_seconds = 0.0  # what loops' calls decided as Python took (loop_tier)
_FORCED_BY_ENV = os.environ.get("FASTIR_JIT")
_forced = contextvars.ContextVar("fastir_forced", default=None)
_only = contextvars.ContextVar("fastir_only", default=None)  # see compiling_only
_elsewhere = {}  # kernel name -> a wait for the process compiling it (compiled_elsewhere)
_python = contextvars.ContextVar("fastir_python", default=None)


def _register(func, **options):
    entry = _Entry(func, {**_POLICY, **options})
    func._fastir_entry = entry
    with _load_lock:
        _registry.append(entry)
        if _numba is not None:  # a module imported after numba was loaded
            _attach(_numba, entry)
    return func


def jit(func=None, *, nrt=True):
    """A serial kernel (``nrt=False``: it allocates nothing, so it is compiled without
    reference counting, as a helper is, but Python may call it)."""
    if func is None:
        return lambda f: jit(f, nrt=nrt)
    return _register(func, **({} if nrt else {"_nrt": False}))


def helper(func=None, *, inline=False):
    """A helper that never allocates: compiled without numba's reference counting.

    Kernels call helpers per row or per measure; a helper compiled with reference counting
    increments and decrements every array argument on each call (atomic operations, ~100 ns
    a call for a few arrays). Helpers must not create arrays (views are fine). With
    ``inline``, numba inlines the helper's code into each caller (a per-line call LLVM
    would keep, its arguments and its tuple passed through memory; each caller compiles
    a copy).

    Kernels call helpers; Python does not: a helper compiles without numba's Python entry
    (with the C entry no kernel compiles either, about a seventh of a first run's
    compiling), :func:`select` refuses one, and :func:`compiled` gives a Python caller (a
    test) a dispatcher of its own that has the entry. A helper is not cached on disk: each
    kernel's cache entry holds its helpers' code, and a helper's own entry would need the
    machine code it no longer gets (:mod:`fastir._lazy_emit`).
    """
    if func is None:
        return lambda f: helper(f, inline=inline)
    return _register(func, _nrt=False, no_cpython_wrapper=True, cache=False,
                     **({"inline": "always"} if inline else {}))


def pjit(func=None, *, nrt=True):
    """A kernel whose ``prange`` loops run in parallel (``nrt=False``: it allocates
    nothing, so it is compiled without reference counting)."""
    if func is None:
        return lambda f: pjit(f, nrt=nrt)
    return _register(func, parallel=True, **({} if nrt else {"_nrt": False}))


def python_variant(kernel):
    """Register the decorated function as ``kernel``'s Python variant and return it.

    Bind it to the kernel's name: Python callers then call the variant, while compiled
    callers (and :func:`compiled`) still get the kernel.
    """
    entry = kernel._fastir_entry

    def decorate(func):
        entry.python = func
        func._fastir_entry = entry
        if entry.dispatcher is not None:
            func._numba_type_ = entry.dispatcher._numba_type_
        return func

    return decorate


# -- numba, loaded on demand -------------------------------------------------------------
def _load_numba():
    global _numba
    with _load_lock:
        if _numba is not None:
            return _numba
        import numba
        from numba.core import codegen, event

        _set_up_without_blas_probe()
        event.register("numba:compile", _compile_note(event.Listener))
        _lazy_emit.install(codegen, event.Listener, event.register)
        for entry in _registry:
            _attach(numba, entry)
        _numba = numba
        return numba


class _BlasProbe:
    """numba's answer to "is there a BLAS?", asked when first needed."""

    def __init__(self, check):
        self.check, self.answer = check, None

    def __bool__(self):
        if self.answer is None:
            self.answer = bool(self.check())
        return self.answer


def _set_up_without_blas_probe():
    """numba's one-time set-up, less its BLAS probe: the set-up imports scipy.linalg (0.15
    to 0.2 s) to learn whether np.convolve and np.correlate may call a BLAS. The probe is
    left for the first compile that asks (a user's np.convolve gets the same answer, and
    the same code, as without fastir); nothing else is changed."""
    from numba.core.registry import cpu_target
    from numba.np import linalg

    if "numba.np.arraymath" in sys.modules:  # set up already: nothing to save
        return
    probe = linalg.ensure_blas

    def not_yet():
        raise ImportError("asked later")

    linalg.ensure_blas = not_yet
    try:
        cpu_target.target_context.refresh()
    finally:
        linalg.ensure_blas = probe
    from numba.np import arraymath

    arraymath.ensure_blas = probe
    arraymath._HAVE_BLAS = _BlasProbe(arraymath._check_blas)


def _attach(numba, entry):
    module_globals = entry.source.__globals__
    if module_globals.get("prange") is range:
        module_globals["prange"] = numba.prange
    dispatcher = numba.njit(**entry.options)(entry.source)
    _lazy_emit.follow(dispatcher)
    _typed_without_literals(dispatcher)
    _refuse_a_cache_of_others(numba, dispatcher, entry.source)
    _rebuild_a_damaged_cache(dispatcher)
    _run_when_uncachable(dispatcher)
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if hasattr(cache_file, "_source_stamp"):  # (numba's private layout; else its own check)
        cache_file._source_stamp = (cache_file._source_stamp, _sources_digest())
    entry.dispatcher = dispatcher
    for func in {entry.source, entry.python}:
        func._numba_type_ = dispatcher._numba_type_
        if "inline" in entry.options:  # what numba's inliner reads of a callee (a kernel
            # calls the module's Python function, not the dispatcher)
            func.targetoptions = dispatcher.targetoptions
            func.py_func = entry.source


def _typed_without_literals(dispatcher):
    """A kernel calling ``dispatcher`` with a constant integer or boolean argument (``0``,
    ``True``, a tuple of them) gets the variant compiled for integers and booleans: numba
    would compile a variant for the constant's literal type, and type inference first
    types a counter that starts at ``0`` as that literal, so a helper called in a loop
    was compiled twice (a first run's compiles, the scanner's loop the largest: 2 s)."""
    from numba.core import types

    def unliteral(t):
        if isinstance(t, (types.IntegerLiteral, types.BooleanLiteral)):
            return t.literal_type
        if isinstance(t, types.BaseTuple):
            items = [unliteral(e) for e in t]
            if items != list(t):
                return types.BaseTuple.from_types(items, getattr(t, "instance_class", tuple))
        return t

    get_call_template = dispatcher.get_call_template

    def typed_without_literals(args, kws):
        return get_call_template(tuple(map(unliteral, args)),
                                 {k: unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = typed_without_literals


def _refuse_a_cache_of_others(numba, dispatcher, source):
    """numba unpickles a kernel's cache index: a cache folder another user could change
    (``NUMBA_CACHE_DIR``, or numba's user-wide cache under ``XDG_CACHE_HOME`` when the
    kernel's own ``__pycache__`` cannot be written: :func:`fastir.trusted.folder_problem`)
    could run their code here, so the kernel compiles without a cache instead (said once a
    process for each folder, as a RuntimeWarning). Its own ``__pycache__`` is trusted as
    its source file is; a cache whose folder cannot be read (a numba laid out otherwise)
    is not."""
    from numba.core.caching import NullCache

    cache = getattr(dispatcher, "_cache", None)
    if cache is None or isinstance(cache, NullCache):
        return
    path = getattr(cache, "_cache_path", None)
    own = os.path.join(os.path.dirname(source.__code__.co_filename), "__pycache__")
    if path is not None and os.path.realpath(path) == os.path.realpath(own):
        return
    if _cache_problem(path) is not None:
        dispatcher._cache = NullCache()


def _rebuild_a_damaged_cache(dispatcher):
    """A kernel whose cache entry cannot be loaded (a file truncated by a full disk or a
    killed process: numba's unpickling fails, and kept failing at every later load) forgets
    its cache index, so that it compiles and its entry is written anew."""
    cache = getattr(dispatcher, "_cache", None)
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if index is None:
        return
    load = cache.load_overload

    def load_overload(sig, target_context):
        try:
            return load(sig, target_context)
        except Exception:  # (damaged: compiled and saved again)
            with contextlib.suppress(OSError):
                os.unlink(index)
            return None

    cache.load_overload = load_overload


def _run_when_uncachable(dispatcher):
    """A kernel compiled where its cache entry cannot be written (a full disk, ``ulimit
    -f``) runs all the same, uncached."""
    cache = getattr(dispatcher, "_cache", None)
    save = getattr(cache, "save_overload", None)
    if save is None:
        return

    def save_overload(sig, data):
        try:
            save(sig, data)
        except OSError:  # (the kernel runs, uncached)
            pass

    cache.save_overload = save_overload


@functools.cache
def _cache_problem(path):
    """Why numba's cache folder ``path`` (None: unknown) must not be used (said once), or
    None."""
    from fastir import trusted

    problem = "its folder is unknown" if path is None else trusted.folder_problem(path)
    if problem is not None:  # (a RuntimeWarning: the JIT policy is below fastir's model)
        import warnings

        warnings.warn(f"numba's compile cache: {problem}; fastir's kernels compile without "
                      "a cache in this process (set NUMBA_CACHE_DIR to a folder of yours)",
                      RuntimeWarning, stacklevel=2)
    return problem


#: Parts no kernel can reach (imports only go downward, and these are the top): their
#: sources are left out of the kernels' stamp, so editing them recompiles nothing.
_ABOVE_KERNELS = ("cli", "worker")


@functools.lru_cache(maxsize=1)
def _sources_digest():
    """A digest of fastir's source files, part of every cached kernel's stamp: numba checks
    a cached kernel against its own file only, so a kernel calling a helper of another
    module would otherwise keep the helper's old code after that module changed."""
    digest = hashlib.blake2b(digest_size=16)
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, dirs, files in os.walk(root):  # top-down, in sorted order
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not
                         (folder == root and d in _ABOVE_KERNELS))
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def _compile_note(listener_base):
    """A numba event listener that says once, on stderr, that fastir's kernels compile."""

    class CompileNote(listener_base):
        said = False

        def on_start(self, event):
            dispatcher = event.data.get("dispatcher")
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if self.said or not module.startswith("fastir") or not note_compiles:
                return
            self.said = True
            if first_compile is not None and first_compile(name_of(dispatcher.py_func)):
                return
            from fastir._estimate import about, compiling

            print(f"fastir: compiling numba kernels for this kind of input, once (cached "
                  f"on disk): {about(compiling('files'))}. `fastir warmup` compiles them "
                  "all ahead.", file=sys.stderr, flush=True)

        def on_end(self, event):
            pass

    return CompileNote()


def fork_safe():
    """Load numba for a process that forks after running parallel kernels (the warm
    worker): numba's workqueue threading layer survives a fork, GNU OpenMP's does not.
    Only for a process fastir owns; values do not depend on the layer."""
    numba = _load_numba()
    numba.config.THREADING_LAYER = "workqueue"
    return numba


def compiled(kernel):
    """The numba dispatcher of a registered kernel for a Python caller (loading numba on
    first use; a helper's: :func:`_with_python_entry`); under :func:`compiling_only`, a
    kernel not named runs as Python instead."""
    entry = kernel._fastir_entry
    only = _only.get()
    if only is not None and name_of(entry.source) not in only:
        return functools.partial(_run_python, entry.python)
    if _elsewhere:
        wait = _elsewhere.pop(name_of(entry.source), None)
        if wait is not None:
            wait()
    if entry.dispatcher is None:
        _load_numba()
    if _is_helper(entry):
        return _with_python_entry(entry)
    return entry.dispatcher


def _is_helper(entry):
    """Whether ``entry`` is a helper (:func:`helper`: compiled without numba's Python entry)."""
    return entry.options.get("no_cpython_wrapper", False)


def _with_python_entry(entry):
    """A helper's dispatcher for Python callers: compiled with numba's Python entry, which
    the kernels' dispatcher of it lacks (called from Python, that one would jump to
    nowhere). Not cached: numba's cache index does not tell the two apart."""
    with _load_lock:
        if entry.python_entry is None:
            options = {k: v for k, v in entry.options.items()
                       if k not in ("no_cpython_wrapper", "cache")}
            entry.python_entry = _numba.njit(**options)(entry.source)
            _lazy_emit.follow(entry.python_entry)
        return entry.python_entry


def name_of(function):
    """A kernel's name: ``module.function``."""
    return f"{function.__module__}.{function.__qualname__}"


def _entry(kernel_name):
    return next((e for e in _registry if name_of(e.source) == kernel_name), None)


def registered(kernel_name):
    """Whether ``kernel_name`` (:func:`name_of`) names a registered kernel."""
    return _entry(kernel_name) is not None


def loaded(kernel_name):
    """Whether this process has the kernel ``kernel_name`` (:func:`name_of`) compiled or
    loaded from the cache."""
    entry = _entry(kernel_name)
    return entry is not None and _loaded(entry)


def cached(kernel_name):
    """Whether numba's on-disk cache holds the kernel ``kernel_name`` (:func:`name_of`)
    compiled for some input, from fastir's current sources; None when that cannot be
    known (no cache, a numba laid out otherwise, a kernel not registered)."""
    _load_numba()
    entry = _entry(kernel_name)
    cache_file = getattr(getattr(entry and entry.dispatcher, "_cache", None), "_cache_file",
                         None)
    load_index = getattr(cache_file, "_load_index", None)  # (numba's private layout)
    return None if load_index is None else bool(load_index())


@contextlib.contextmanager
def compiling_only(names):
    """Run the block with the kernels ``names`` (:func:`name_of`) compiled, whatever their
    inputs' size, and every other kernel as Python: a command line's helper process
    compiling its share of the kernels a command needs, on a sample of its input
    (:mod:`fastir.cli.first_run`)."""
    token = _only.set(frozenset(names))
    try:
        yield
    finally:
        _only.reset(token)


def compiled_elsewhere(names, wait):
    """Have this process's first use of each kernel of ``names`` (:func:`name_of`) call
    ``wait()`` first: the kernel is being compiled into numba's cache by another process,
    from which it is then loaded (:mod:`fastir.cli.first_run`); ``wait`` None: no longer
    (the other process has ended)."""
    for kernel_name in names:
        if wait is None:
            _elsewhere.pop(kernel_name, None)
        else:
            _elsewhere[kernel_name] = wait


# -- the choice: Python or compiled ------------------------------------------------------
@contextlib.contextmanager
def forced(mode):
    """Run the block with every kernel as ``"python"`` or ``"numba"`` (None: automatic)."""
    if mode not in (None, "python", "numba"):
        raise ValueError(f"mode must be None, 'python' or 'numba', got {mode!r}")
    token = _forced.set(mode)
    try:
        yield
    finally:
        _forced.reset(token)


def _forced_mode():
    return _forced.get() or _FORCED_BY_ENV


def _choose_python(n_rows):
    global _python_rows
    mode = _forced_mode()
    if mode in ("python", "numba"):
        return mode == "python"
    if _numba is not None:
        return False
    n_rows = int(n_rows() if callable(n_rows) else n_rows)
    if _python_rows + n_rows > PYTHON_ROWS:
        return False
    _python_rows += n_rows
    return True


@contextlib.contextmanager
def tier(n_rows):
    """Decide, for the work of this block on ``n_rows`` rows, whether kernels run as Python.

    ``n_rows`` may be a function giving them, called only when the choice depends on them
    (not once numba is loaded: a loop's calls then skip sizing their inputs). Nested blocks
    keep the outermost decision (one input is evaluated one way).
    """
    if _python.get() is not None:
        yield
        return
    token = _python.set(_choose_python(n_rows))
    try:
        yield
    finally:
        _python.reset(token)


@contextlib.contextmanager
def outgrown(n_rows):
    """A block whose work, ``n_rows`` rows, outgrew the input its enclosing :func:`tier`
    was decided on (the worlds of probabilistic labels, :mod:`fastir.worlds`: each query
    evaluated once per assignment of its labels): compiled kernels when the enclosing
    block chose Python and ``n_rows`` are too many for it; else as decided."""
    token = None
    if _python.get() and not _choose_python(n_rows):
        token = _python.set(False)
    try:
        yield
    finally:
        if token is not None:
            _python.reset(token)


@contextlib.contextmanager
def loop_tier(n_rows):
    """:func:`tier` for one call of a loop (a call users repeat: an Evaluator's, bound
    candidates', evaluate_matrix's, a training metric's): as :func:`tier` decides, except
    that once loops' calls have run :data:`LOOP_PYTHON_SECONDS` as Python in this process,
    the next runs compiled (numba loaded then, once) whatever its size."""
    global _loop_python_seconds
    if _python.get() is not None or _forced_mode() in ("python", "numba"):
        with tier(n_rows):
            yield
        return
    python = _loop_python_seconds < LOOP_PYTHON_SECONDS and _choose_python(n_rows)
    token = _python.set(python)
    start = time.perf_counter()
    try:
        yield
    finally:
        _python.reset(token)
        if python:
            _loop_python_seconds += time.perf_counter() - start


def python_mode(n_rows=0):
    """Whether kernels run as Python here: the enclosing :func:`tier`'s decision, else the
    decision for one call on ``n_rows`` rows."""
    if _only.get() is not None:  # (compiled work: compiled() runs the others as Python)
        return False
    decided = _python.get()
    return _choose_python(n_rows) if decided is None else decided


def select(kernel, n_items=None, python=None):
    """``kernel`` as the current tier runs it: its Python form or its dispatcher.

    With ``n_items`` (the size of this call's work), a kernel that this process has not
    loaded yet also runs as Python within compiled work while that is cheaper than loading
    it (:func:`_python_pays`): loading one cached kernel costs about 10 ms, more than Python
    takes on a few thousand items (the query ids of a large run, say); a kernel whose Python
    runs have cost that much is loaded, and then runs compiled at every size. ``python``
    overrides the tier's decision (a caller that decided already). A helper is refused:
    kernels call it, and compiled for Python it would compile anew in each process.
    """
    entry = kernel._fastir_entry
    if _is_helper(entry):
        raise TypeError(f"{name_of(entry.source)} is a helper, which kernels call: a kernel "
                        "that Python calls is registered with jit (jit(nrt=False) for one "
                        "that allocates nothing)")
    if python is None:
        python = python_mode()
        if not python and n_items is not None and not _loaded(entry):
            python = _python_pays(entry, n_items)
            if python:
                return functools.partial(_run_timed, entry, n_items)
    if python:
        return functools.partial(_run_python, entry.python)
    return compiled(kernel)


def _loaded(entry):
    return entry.dispatcher is not None and bool(entry.dispatcher.overloads)


def _python_pays(entry, n_items):
    """Whether a call of ``n_items`` to a kernel not loaded yet runs as Python: while what
    its Python runs cost, this one's estimated at the rate of the earlier ones (or
    ``PYTHON_ITEM_SECONDS``), stays under what loading it costs."""
    if _forced_mode() == "numba" or _only.get() is not None:
        return False
    rate = entry.python_seconds / entry.python_items if entry.python_items else \
        PYTHON_ITEM_SECONDS
    return entry.python_seconds + rate * n_items <= KERNEL_LOAD_SECONDS


def _run_timed(entry, n_items, *args):
    """Run a kernel's Python form within compiled work, counting its items and seconds."""
    start = time.perf_counter()
    try:
        return _run_python(entry.python, *args)
    finally:
        entry.python_items += max(n_items, 1)
        entry.python_seconds += time.perf_counter() - start


def _run_python(function, *args):
    """Run a kernel's Python form under numba's error model: a float division by zero or
    an overflow gives inf/nan silently (kernels guard the denominators that matter)."""
    with np.errstate(all="ignore"):
        return function(*args)


def n_threads():
    """Threads a parallel kernel may use here (1 for Python)."""
    if python_mode() or _numba is None:
        return 1
    return _numba.get_num_threads()


#: Items of work (rows and queries) under which a parallel kernel runs on the calling thread
#: alone when the machine is busy (:func:`busy`; :func:`launch`): a team of threads waits at
#: its end for its slowest thread, and when another process holds a core that thread waits
#: for the scheduler, a few ms a launch: more than a second thread saves on small work.
#: Measured on the 2-core project machine (BENCHMARKS.md, 2026-11-27), the 50 x 1,000 call
#: (two launches of 55,000 items): at load 1.7, 6.3-6.6 ms on one thread against 14.5-20.5
#: ms on two; idle (load 0.9), 7.4-9.0 ms on one against 5.9-6.9 on two. Values never
#: depend on the thread count.
SERIAL_ITEMS = 200_000


def busy():
    """Whether the machine's cores are taken: a load average of all of them but half of one
    (this process's own thread counts in it), when the system reports one."""
    try:
        return os.getloadavg()[0] >= (os.cpu_count() or 1) - 0.5
    except OSError:
        return False


def launch(kernel, *args, python=None, n_items=None):
    """Run a parallel kernel in the current tier (or as ``python`` says; with ``n_items``,
    the size of its work, a kernel not loaded yet runs as Python while that is cheaper, as
    in :func:`select`, and work under :data:`SERIAL_ITEMS` on a :func:`busy` machine runs on
    the calling thread alone: numba's thread count, which is per thread, is set to 1 for the
    launch and restored).
    Compiled launches are serialised under numba's workqueue threading layer, which is not
    safe for concurrent launches from several Python threads."""
    function = select(kernel, n_items, python)
    if isinstance(function, functools.partial):  # (its Python form: no threads to guard)
        return function(*args)
    if n_items is not None and n_items < SERIAL_ITEMS and busy():
        threads = _numba.get_num_threads()
        if threads > 1:
            _numba.set_num_threads(1)
            try:
                return _launch(function, args)
            finally:
                _numba.set_num_threads(threads)
    return _launch(function, args)


def _launch(function, args):
    try:
        layer = _numba.threading_layer()
    except ValueError:  # no parallel kernel has run yet
        layer = "workqueue"
    if layer == "workqueue":
        if _abandoned and _abandoned[-1].is_alive():
            raise RuntimeError("a compiled loop that Ctrl-C interrupted still runs in this "
                               "process, and numba's workqueue threading layer runs one "
                               "parallel kernel at a time: start a new process (restart "
                               "the kernel of a notebook) to evaluate again")
        with _launch_lock:
            return function(*args)
    return function(*args)


#: The threads of compiled launches that Ctrl-C interrupted and that still run (a compiled
#: loop cannot be stopped: it ends, or the process does).
_abandoned = []


def launch_interruptible(kernel, *args, python=None):
    """:func:`launch` for a kernel that may never end (a user's measure: its loop is theirs):
    compiled, it runs on a thread of its own while the calling thread waits, so that a
    Ctrl-C raises KeyboardInterrupt in the caller as it does between the built-in kernels
    (compiled code never returns to Python to see it). The interrupted loop runs on in the
    background until it ends or the process does (:data:`_abandoned`)."""
    function = select(kernel, None, python)
    if isinstance(function, functools.partial):  # (its Python form: Python sees Ctrl-C)
        return function(*args)
    threads = _numba.get_num_threads()  # (per thread: the caller's, on the launching one)
    outcome = {}

    def run():
        try:
            _numba.set_num_threads(threads)
            outcome["value"] = _launch(function, args)
        except BaseException as exc:  # (passed to the caller)
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="fastir compiled loop", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.05)  # (a lock wait with a timeout: a signal's handler runs)
    except BaseException:
        _abandoned.append(thread)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def chunk_bounds(weights, n_threads):
    """Split ``len(weights)`` items into contiguous chunks of roughly equal total weight.

    Returns ``bounds`` with ``bounds[c]:bounds[c + 1]`` the items of chunk ``c``. Chunks are
    a pure function of the weights and the thread count, and every kernel computes each item
    independently of its chunk, so results never depend on the chunking.
    """
    n = len(weights)
    n_chunks = max(1, min(n, 4 * n_threads))
    cum = np.cumsum(np.asarray(weights, dtype=np.int64) + 1)
    total = int(cum[-1]) if n else 0
    targets = (np.arange(1, n_chunks) * total) // n_chunks
    inner = np.searchsorted(cum, targets, side="left") + 1
    bounds = np.concatenate(([0], inner, [n])).astype(np.int64)
    return bounds[np.concatenate(([True], np.diff(bounds) > 0))]
