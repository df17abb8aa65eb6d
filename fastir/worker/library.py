"""Library calls through the warm worker: ``fastir.evaluate`` and ``fastir.evaluate_file``
on files, in a process that has not loaded numba, run in a child of the user's warm worker,
which has numba and every kernel loaded (a fresh process would pay numba's start-up, or
run the kernels as Python). The caller gets what the call gives in-process: the same
Results (every attribute: values bit for bit, ids, measures, parsed measures, missing and
ignored queries), the same exception (type, message, cause), the same warnings (category,
message, the line they name) re-issued here through the caller's own filters, and the
progress bar on its standard error.

When (:func:`wanted`, the one rule): this process has not loaded numba (once it has, a
call runs faster here than through a round trip to the worker), the call comes from the
main thread, the qrels and the run are plain paths (not ``-``, not open files, dicts or
DataFrames, not several runs), the measures are names, ``progress`` is True, False or
"auto", no measure of this process's own definition exists (a worker does not know
it), and ``ties`` and ``unjudged`` are their defaults (``fastir warmup`` does not compile
the kernels of the others: a worker would compile them first, where a small input runs
here as Python). ``FASTIR_WORKER`` then decides (``off``: never; ``use``, the default
but under CI: a worker already running, which ``fastir worker start`` or a command of the
``fastir`` program started, for a library starts no process its caller did not ask for;
``auto``, asked for: start one when there is none; it exits after ``FASTIR_WORKER_IDLE``
seconds without a request). The ``fastir`` program's own calls stay in its process
(:func:`stay_in_process`): it offered the command to the worker already.

How: the client (:func:`call`) writes the request to an anonymous file (a memfd) and
hands the worker the hidden command ``fastir _call REQUEST_FD REPLY_FD PATH...`` through
:func:`fastir.worker.client.submit`, the command line's own door: the worker checks the
client's rights, and the command's process takes over the client's descriptors (so the
two anonymous files, and standard error for the progress bar, at the same numbers),
working folder, environment, umask and limits (the paths ride in the arguments only for
the client's check of files a process of its own must read: a terminal). The child
(:func:`answer`) runs the call, its warnings recorded, and writes the reply to the second
anonymous file; the client reads it once the command has ended (a pipe could fill while
the client waits for the end). Signals stay with the caller's own handlers (Ctrl-C:
KeyboardInterrupt here, and the command's process is killed); Ctrl-Z stops both.
Whatever fails before the call ran, or leaves no reply (the worker's process killed), the
call runs in-process, silently.

Request and reply are pickles (protocol 5: numpy arrays keep their read-only flags).
Unpickling runs code named by the data, which is acceptable here: the worker's socket is
in a folder of this user alone (checked from ``/`` down), the client checks that the
socket's process is this user's, and the worker that its client has its own rights; the
anonymous files are reachable only through descriptors these processes hold. Whoever
could write a pickle there could run code as this user already. The request is
``{"function": name, "args": (qrels, run, measures), "kwargs": {...}, "argv":
sys.argv}``; the reply ``{"value": result}`` or ``{"error": exception, "cause": ...,
"context": ..., "suppress_context": bool}``, with ``"warnings"``: (warning, category,
filename, lineno, module, depth) each, ``depth`` the number of frames above the call's
caller the warning names (None: a line of fastir's or a library's), and ``"pid"``, the
process that ran it; or ``{"in_process": reason}`` when the outcome could not be pickled.

Standard library only (the client imports this before numpy); what the child runs is
named in :data:`FUNCTIONS` and imported by the caller of :func:`answer`.
"""

import os
import pickle
import sys
import warnings

#: The functions a call may hand over: name -> the names of its arguments that must be
#: plain paths (the first ones), in the order of its signature.
FUNCTIONS = {"evaluate": ("qrels", "run"), "evaluate_file": ("qrels", "run_path")}
#: The hidden command of the child's side.
COMMAND = "_call"
_PROTOCOL = 5
_staying = []


def stay_in_process():
    """Keep this process's calls here: the ``fastir`` program's (it offered its command to
    the worker already) and a worker's processes'."""
    _staying.append(True)


def call(function, args, kwargs):
    """``function(*args, **kwargs)`` (``function``: a name of :data:`FUNCTIONS`, which
    calls this first, directly) run by the user's warm worker: its value, or its exception
    raised, its warnings re-issued here first; None when it is to run in-process
    (:func:`wanted` says no, or no worker ran it)."""
    if not wanted(args, kwargs):
        return None
    caller = sys._getframe(2)  # (the frame that called ``function``)
    reply = _submit(function, args, kwargs)
    if reply is None or "in_process" in reply:
        return None
    return _deliver(reply, caller)


def wanted(args, kwargs):
    """Whether a call is worth handing to a worker and may be (the module's docstring):
    this process has not loaded numba, the call comes from its main thread, its qrels and
    run are plain paths, its measures names, its progress a choice the child makes alike,
    its ties and unjudged options the defaults (the kernels the worker has warm), and this
    process defines no measure of its own."""
    progress = kwargs.get("progress", False)
    return ("numba" not in sys.modules and not _staying and _main_thread()
            and len(args) == 3 and _plain_path(args[0]) and _plain_path(args[1])
            and _names(args[2]) and progress in _PROGRESS.get(type(progress), ())
            and _warm_options(kwargs) and not _own_measures())


def _warm_options(kwargs):
    """Whether the call's ``ties`` and ``unjudged`` are the defaults, whose kernels
    ``fastir warmup`` compiles."""
    ties, unjudged = kwargs.get("ties", "trec_eval"), kwargs.get("unjudged", "nonrelevant")
    return type(ties) is str and ties == "trec_eval" and \
        type(unjudged) is str and unjudged == "nonrelevant"


#: The values of ``progress`` a worker's process shows alike (by type: no other compared).
_PROGRESS = {bool: (True, False), str: ("auto",)}


def _main_thread():
    import _thread

    return _thread.get_native_id() == os.getpid()  # (Linux: the first thread's id)


def _plain_path(value):
    if not isinstance(value, (str, os.PathLike)):
        return False
    try:
        path = os.fspath(value)
    except Exception:  # (the call says so, in-process)
        return False
    return isinstance(path, str) and path not in ("", "-")


def _names(measures):
    if isinstance(measures, str):
        return True
    return isinstance(measures, (list, tuple)) and all(isinstance(m, str) for m in measures)


def _own_measures():
    """Whether this process has defined measures (``fastir.define_measure``, or the
    packages' entry points it loaded): a worker's process does not have them."""
    registry = sys.modules.get("fastir.measures.registry")
    return registry is not None and bool(registry.user_families())


def _submit(function, args, kwargs):
    """The worker's reply (a dict), or None when it ran nothing or left no reply."""
    from fastir.worker import client

    request = {"function": function, "args": tuple(args), "kwargs": dict(kwargs),
               "argv": list(getattr(sys, "argv", []))}
    try:
        data = pickle.dumps(request, protocol=_PROTOCOL)
    except Exception:  # (an option that is not picklable: it is checked in-process)
        return None
    fds = []
    try:
        fds += [os.memfd_create("fastir-request", os.MFD_CLOEXEC),
                os.memfd_create("fastir-reply", os.MFD_CLOEXEC)]
        _write(fds[0], data)
        sys.stderr.flush()  # (the child writes the progress bar to the same descriptor)
        loading = _Preload()
        ended = client.submit([COMMAND, str(fds[0]), str(fds[1]),
                               *(os.fspath(path) for path in args[:2])], forwarded=(),
                              accepted=loading.start, default_mode="use")
        loading.join()
        if ended != ("exit", 0):
            return None
        return pickle.loads(_read(fds[1]))
    except Exception:  # (no memfd, a reply that does not load here: run it here)
        return None
    finally:
        for fd in fds:
            os.close(fd)


class _Preload:
    """Import what reading a reply needs (numpy, fastir's Results: most of a fresh
    process's time) on a thread while the worker computes, not after it."""

    MODULES = ("fastir.results",)

    def __init__(self):
        self.thread = None

    def start(self):
        import threading

        self.thread = threading.Thread(target=self._load, name="fastir preload", daemon=True)
        self.thread.start()

    @classmethod
    def _load(cls):
        import importlib

        for name in cls.MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # (reading the reply says so, and the call runs here)
                return

    def join(self):
        if self.thread is not None:
            self.thread.join()


def _deliver(reply, caller):
    """The call's value, its warnings re-issued first (those naming the call's caller, or
    a frame above it, name the same frame here), or its exception raised."""
    for message, category, filename, lineno, module, depth in reply["warnings"]:
        _reissue(message, category, filename, lineno, module, depth, caller)
    if "error" not in reply:
        return reply["value"]
    error = reply["error"]
    error.__cause__, error.__context__ = reply["cause"], reply["context"]
    error.__suppress_context__ = reply["suppress_context"]
    raise error


def _reissue(message, category, filename, lineno, module, depth, caller):
    """Issue a warning the child recorded as :func:`warnings.warn` would have here: the
    module's filters and its registry of warnings shown (a warning shown once per line
    is shown once)."""
    if depth is None:
        loaded = sys.modules.get(module)
        where = vars(loaded) if loaded is not None else _REGISTRIES.setdefault(module, {})
        registry, module_globals = where.setdefault("__warningregistry__", {}), None
    else:
        frame = caller
        for _ in range(depth):
            frame = frame.f_back if frame is not None else None
        if frame is None:  # (above the outermost frame: warnings.warn names "sys")
            module_globals, filename, lineno = sys.__dict__, "sys", 1
        else:
            module_globals = frame.f_globals
            filename, lineno = frame.f_code.co_filename, frame.f_lineno
        module = module_globals.get("__name__", "<string>")
        registry = module_globals.setdefault("__warningregistry__", {})
    warnings.warn_explicit(message, category, filename, lineno, module, registry,
                           module_globals)


#: The registries of warnings shown for modules this process has not loaded.
_REGISTRIES = {}


def _write(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _read(fd):
    size = os.fstat(fd).st_size
    data = bytearray()
    while len(data) < size:
        chunk = os.pread(fd, size - len(data), len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


# -- the child's side ------------------------------------------------------------------------
def answer(argv, resolve):
    """The hidden command ``_call REQUEST_FD REPLY_FD PATH...`` in a worker's child: run the
    request's call (``resolve(name)``: the function of that name) and write its reply.
    Its exit status: 0 once the reply is written, 2 when its arguments are not a request
    (it is no command of the command line's)."""
    stay_in_process()  # (a worker's process never hands a call on)
    try:
        request_fd, reply_fd = int(argv[0]), int(argv[1])
        data = _read(request_fd)
        os.fstat(reply_fd)
    except (IndexError, ValueError, OSError):
        print(f"fastir {COMMAND}: not a command (fastir's library calls use it to run in a "
              "warm worker)", file=sys.stderr)
        return 2
    try:
        request = pickle.loads(data)
        function = resolve(request["function"])
        args, kwargs = request["args"], request["kwargs"]
        sys.argv = request["argv"]
    except Exception as problem:  # (a value of a class this process has not: run it there)
        reply = {"in_process": repr(problem)}
    else:
        reply = _outcome(function, args, kwargs)
    _write(reply_fd, _pickled(reply))
    return 0


def _outcome(function, args, kwargs):
    """The reply of ``function(*args, **kwargs)``: its value or exception, and every
    warning it issued (the caller's filters decide which are shown)."""
    sites = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            reply = {"value": _invoke(function, args, kwargs, sites)}
        except Exception as error:
            reply = {"error": error, "cause": error.__cause__, "context": error.__context__,
                     "suppress_context": error.__suppress_context__}
    reply["warnings"] = [
        (w.message, w.category, w.filename, w.lineno, _module_of(w.filename),
         sites.index((w.filename, w.lineno)) if (w.filename, w.lineno) in sites else None)
        for w in caught]
    reply["pid"] = os.getpid()
    return reply


def _invoke(function, args, kwargs, sites):
    # (one line: the call's line is the one this frame stands at when ``sites`` is taken)
    return _frames(sys._getframe(), sites) or function(*args, **kwargs)


def _frames(frame, sites):
    """Put the (file, line) of ``frame`` and those above it in ``sites``."""
    while frame is not None:
        sites.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back


def _module_of(filename):
    """The name of the loaded module of file ``filename`` (what warnings.warn names), or
    the file's name without ``.py``, as warnings.warn_explicit makes it."""
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == filename:
            return name
    return filename[:-3] if filename.endswith(".py") else filename or "<unknown>"


def _pickled(reply):
    try:
        return pickle.dumps(reply, protocol=_PROTOCOL)
    except Exception as problem:  # (an exception that does not pickle: run it there)
        return pickle.dumps({"in_process": repr(problem)}, protocol=_PROTOCOL)
