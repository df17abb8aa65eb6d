"""Measures users define: a per-query Python function, compiled with numba and evaluated in
the same pass as the built-ins, in every entry point (:func:`define_measure`).

A measure's function sees what the built-in kernels see for a query::

    def function(ranked, judged, n_rel, <parameters with defaults>): -> float

``ranked``: the ranking's label codes in trec_eval's order (score descending, ties by doc id
descending), cut at the measure's cutoff: the label when judged, -1 for a document absent
from the qrels, -2 for one judged with a negative label. ``judged``: the query's judged
labels, descending (the ideal ranking; negative labels last). ``n_rel``: the judged
documents with a label >= the relevance level (the measure's ``rel=``, else the
evaluation's). Two parameter names are fastir's: ``cutoff`` receives the cutoff (0: none
given) and ``rel`` the relevance level; every other parameter is the measure's, typed by its
default (float, int or bool; no default: a required float).

Per family, fastir writes one small module (the query loop calling the function, in the
user cache directory, :func:`cache_dir`) and registers it with :mod:`fastir._jit` as a
parallel kernel under Python's error model (a division by zero raises, compiled as in
Python; the built-ins use numpy's): numba caches it on disk like the built-ins (the
module's name is a digest of the function's code and its source file, so an edited
function compiles afresh), and the "python" engine runs the same loop as plain Python
(:func:`python_queries`).
"""

import functools
import hashlib
import importlib.util
import inspect
import os
import re
import sys
import tempfile
import threading
import types

import numpy as np

from fastir import _jit, trusted
from fastir._version import __version__
from fastir.measures import registry
from fastir.measures.registry import RANK, REALS_USER, REL, Family, Param

#: The kernel case of every user family (the fused kernel gives it NaN; the family's own
#: loop fills its columns).
USER = 1000
#: Parameter names whose values fastir gives: the cutoff (0: none) and the relevance level.
FASTIR_ARGUMENTS = ("cutoff", "rel")
AGGREGATES = ("mean", "sum", "gmean")
#: The start of the name of every family's loop module (:func:`_loop_module`).
MODULE_PREFIX = "fastir_measure_"
#: What a NaN value of a user measure means (the engine's check names the query).
RETURNED_NAN = "the function returned NaN (a measure's value must be a number)"

_lock = threading.Lock()


class UserFamily(Family):
    """A family whose values a user's function computes (see the module doc).
    ``function``: the Python function; ``arguments``: the names of its parameters after
    ``n_rel``; ``jit``: compiled with numba (False: always plain Python)."""

    def __init__(self, function, name, *, cutoff, aggregate, aliases, doc, jit):
        self.function, self.jit = function, jit
        self.arguments, params = _arguments(function, name)
        self.definition = (function, name, cutoff, aggregate, tuple(aliases), doc, jit)
        where = self.where()
        super().__init__(
            name, USER, doc or f"Defined by {where}.", path="own",
            cutoff=RANK if cutoff else None, cutoff_required=cutoff == "required",
            params=(REL, *params), aggregate=aggregate, ideal="whole", aliases=tuple(aliases),
            invalid=RETURNED_NAN,
            formula=f"{where}(ranked, judged, n_rel{''.join(', ' + a for a in self.arguments)})",
            examples=(_example(name, cutoff, params),), reals=REALS_USER)
        self._kernels = {}  # digest -> the loop compiled for it
        if jit:
            digest(self)  # (a value numba cannot be trusted to compile in: refused now)

    def where(self):
        """The function's dotted name, for messages."""
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def measure_of(self, cutoff, values, label):
        """The measure of this family with these (pickled) cutoff and values, the family
        defined again when this process lacks it (a dask worker)."""
        current = registry.user_family(self.name)
        if current is None or current.definition != self.definition:
            _register(self)
        return registry.Measure(self.name, cutoff, label=label, **dict(values))

    def __reduce__(self):
        return _family, self.definition

    def kernel(self):
        """The family's query loop (a parallel kernel of :mod:`fastir._jit`; its Python
        variant :func:`python_queries`), written and imported on first use: one for each
        :func:`digest`, taken anew at each call, since the values of the closure and
        globals the function reads may have changed since the last."""
        key = digest(self)
        with _lock:
            if key not in self._kernels:
                loop = _loop_module(self, key).user_queries
                _jit.python_variant(loop)(functools.partial(python_queries, self))
                self._kernels[key] = loop
            return self._kernels[key]


def _family(*definition):
    return UserFamily(*definition[:2], cutoff=definition[2], aggregate=definition[3],
                      aliases=definition[4], doc=definition[5], jit=definition[6])


def define_measure(function=None, *, name=None, cutoff=False, aggregate="mean", aliases=(),
                   doc=None, jit=True, replace=False):
    """Define a measure by a per-query function; fastir compiles it with numba and
    evaluates it with the built-ins in every entry point (``evaluate``, ``Evaluator``,
    ``evaluate_matrix``, ``compare``, ``fastir.dask``, the command line...).

    Parameters
    ----------
    function : callable
        ``function(ranked, judged, n_rel, <parameters>)`` -> a number, for one query (see
        :mod:`fastir.measures.user`): ``ranked`` the ranking's label codes cut at the cutoff
        (-1 not judged, -2 a negative label), ``judged`` the judged labels descending,
        ``n_rel`` the relevant ones. Parameters with defaults are the measure's (typed by
        the default); ``cutoff`` and ``rel``, when declared, receive the cutoff (0: none)
        and the relevance level. Without ``function``: a decorator.
    name : str, optional
        The measure's name, as ir_measures writes one (default: the function's name).
    cutoff : bool or "required"
        Whether the measure takes ``@k`` (``ranked`` is then cut at k).
    aggregate : {"mean", "sum", "gmean"}
        How the values are summarised over queries.
    aliases : sequence of str
        Other names of the measure (ranx's lower case, say).
    doc : str, optional
        The description ``fastir measures`` lists.
    jit : bool
        False: run the function as plain Python, never compiled (a function numba cannot
        compile; slower).
    replace : bool
        Replace a user measure of the same name defined by another function (one of the
        same module and name, a cell run again or a module reloaded, replaces it anyway).

    Returns
    -------
    The function, unchanged (it is the measure's plain-Python reference).

    Examples
    --------
    >>> import fastir
    >>> @fastir.define_measure(cutoff=True)
    ... def found(ranked, judged, n_rel, rel):
    ...     return float((ranked >= rel).sum())
    >>> fastir.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, "found@1").mean
    {'found@1': 1.0}
    """
    if function is None:
        return functools.partial(define_measure, name=name, cutoff=cutoff,
                                 aggregate=aggregate, aliases=aliases, doc=doc, jit=jit,
                                 replace=replace)
    if not callable(function):
        raise TypeError(f"define_measure: function must be callable, got {function!r}")
    name = function.__name__ if name is None else name
    _check_definition(name, cutoff, aggregate, aliases)
    family = UserFamily(function, name, cutoff=cutoff, aggregate=aggregate,
                        aliases=aliases, doc=doc, jit=jit)
    current = registry.user_family(name)
    if current is not None and current.definition == family.definition:
        return function  # (defined again, the same: nothing changes)
    if current is not None and not replace and current.where() != family.where():
        raise ValueError(f"define_measure: {name!r} is defined already, by "
                         f"{current.where()}; give replace=True to replace it")
    _register(family)
    function.fastir_measure = name
    return function


def undefine_measure(name):
    """Take the user measure ``name`` (defined by :func:`define_measure`) out of the
    registry; a ValueError when no user measure has that name."""
    with _lock:
        try:
            registry.remove_user_family(name)
        except KeyError:
            raise ValueError(f"undefine_measure: no user measure is named {name!r}") from None
    _forget_plans()


def _check_definition(name, cutoff, aggregate, aliases):
    """A ValueError for a name that is not a name or names a built-in measure in any dialect
    (:func:`fastir.measures.registry.names_a_builtin`: ``P_5``, ``ndcg_cut_10``, ``runid``),
    or a bad cutoff or aggregate."""
    for text in (name, *aliases):
        if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", text):
            raise ValueError(f"define_measure: a measure's name is letters, digits and _ "
                             f"from a letter, got {text!r}")
        if registry.names_a_builtin(text):
            raise ValueError(f"define_measure: {text!r} names a built-in measure; choose "
                             "another name")
    if cutoff not in (False, True, "required"):
        raise ValueError(f"define_measure: cutoff must be False, True or 'required', got "
                         f"{cutoff!r}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"define_measure: aggregate must be one of {', '.join(AGGREGATES)}, "
                         f"got {aggregate!r}")


def _register(family):
    """Put ``family`` in the registry's user table (replacing a user family of its name) and
    forget the plans made with the one it replaces."""
    with _lock:
        registry.add_user_family(family)
    _forget_plans()


#: The clear() of every cache of plans (each module that caches plans adds its own): a plan
#: holds the registry as it was when it was made.
PLAN_CACHES = []


def _forget_plans():
    """Forget the plans made with the registry as it was (a measure defined or removed)."""
    for clear in PLAN_CACHES:
        clear()


def _arguments(function, name):
    """(the names of the function's parameters after ``n_rel``, the measure's
    :class:`Param` of each but ``cutoff`` and ``rel``)."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise ValueError(f"define_measure: {name}: cannot read the parameters of "
                         f"{function!r}") from None
    parameters = list(signature.parameters.values())
    plain = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) < 3 or any(p.kind not in plain for p in parameters) or \
            any(p.default is not inspect.Parameter.empty for p in parameters[:3]):
        raise ValueError(f"define_measure: {name}: the function must take (ranked, judged, "
                         "n_rel, <parameters>): three arguments, then named parameters "
                         f"(no *args, **kwargs); got {signature}")
    params = []
    for p in parameters[3:]:
        if p.name in FASTIR_ARGUMENTS:
            continue
        default = None if p.default is inspect.Parameter.empty else p.default
        kind = "bool" if isinstance(default, (bool, np.bool_)) else \
            "int" if isinstance(default, (int, np.integer)) else "float"
        if default is not None and not isinstance(default, (int, float, np.number, np.bool_)):
            raise ValueError(f"define_measure: {name}: parameter {p.name}'s default must be "
                             f"a number or a bool, got {default!r}")
        if kind == "float" and default is not None:
            default = float(default)
        params.append(Param(p.name, kind, default, required=default is None,
                            doc=f"{kind}, the function's {p.name}"))
    return tuple(p.name for p in parameters[3:]), params


def _example(name, cutoff, params):
    required = [f"{p.name}=1" for p in params if p.required]
    return name + (f"({','.join(required)})" if required else "") + ("@10" if cutoff else "")


# -- the query loop ---------------------------------------------------------------------
#: The loop every family's module holds (its arguments: the family's, in order).
_LOOP = '''"""fastir's query loop of the measure {name!r}: {where} (written by
fastir.measures.user; digest {digest})."""

import functools

import numpy as np

from fastir import _jit

prange = range  # numba.prange once numba is loaded (fastir._jit)
function = None  # the measure's function, compiled (set by fastir.measures.user)


@functools.partial(_jit._register, parallel=True, error_model="python")
def user_queries(bounds, rankings, ideals, table, params, columns, out):
    """Fill ``out[e, m]`` for the queries of ``bounds``' chunks and the columns ``m`` of
    this measure (``table``, ``params``: the engine's measure table and parameters)."""
    for c in prange(len(bounds) - 1):
        for e in range(bounds[c], bounds[c + 1]):
            whole = rankings.labels[rankings.indptr[e]:rankings.indptr[e + 1]]
            q = rankings.qrels_query[e]
            judged = ideals.labels[ideals.indptr[q]:ideals.indptr[q + 1]]
            for i in range(len(columns)):
                m = columns[i]
                n = len(whole)
                if n == 0:
                    out[e, m] = 0.0
                    continue
                cutoff = table[m, {cutoff_column}]
                level = table[m, {level_column}]
                ranked = whole[:cutoff] if 0 < cutoff < n else whole
                n_rel = 0
                for label in judged:
                    if label < level:
                        break
                    n_rel += 1
                out[e, m] = function(ranked, judged, n_rel{arguments})
'''


def _argument_code(family):
    """The loop's arguments after ``n_rel``: the cutoff, the level, or a parameter read
    from the measure's row (as its type)."""
    parts = []
    row = 0
    for name in family.arguments:
        if name == "cutoff":
            parts.append("cutoff")
        elif name == "rel":
            parts.append("level")
        else:
            kind = family.params[name].kind
            value = f"params[m, {row}]"
            parts.append({"int": f"np.int64({value})", "bool": f"{value} != 0.0"}.get(kind,
                                                                                     value))
            row += 1
    return "".join(", " + p for p in parts)


def python_queries(family, bounds, rankings, ideals, table, params, columns, out, rows=None):
    """The loop as plain Python (the "python" engine and ``jit=False``; ``rows``: only
    these queries): the function on each query, a value that is not a number or an
    exception refused naming the query's row (:func:`fill` names its id)."""
    from fastir.measures.kernels import CUTOFF, LEVEL

    function = family.function
    names = family.arguments
    places = {name: j for j, name in enumerate(a for a in names if a not in FASTIR_ARGUMENTS)}
    kinds = {name: family.params[name].kind for name in places}
    for e in range(bounds[0], bounds[-1]) if rows is None else rows:
        whole = rankings.labels[rankings.indptr[e]:rankings.indptr[e + 1]]
        q = rankings.qrels_query[e]
        judged = ideals.labels[ideals.indptr[q]:ideals.indptr[q + 1]]
        for m in columns.tolist():
            n = len(whole)
            if n == 0:
                out[e, m] = 0.0
                continue
            cutoff, level = int(table[m, CUTOFF]), int(table[m, LEVEL])
            ranked = whole[:cutoff] if 0 < cutoff < n else whole
            n_rel = int(np.count_nonzero(judged >= level))
            arguments = [cutoff if a == "cutoff" else level if a == "rel" else
                         _typed(params[m, places[a]], kinds[a]) for a in names]
            try:
                value = function(ranked, judged, n_rel, *arguments)
            except Exception as exc:
                raise QueryError(e, f"{family.where()} raised {type(exc).__name__}: "
                                    f"{exc}") from exc
            out[e, m] = _number(value, family, e)


def _typed(value, kind):
    return int(value) if kind == "int" else bool(value) if kind == "bool" else float(value)


def _number(value, family, e):
    """A function's value as a float; a QueryError when it is not a real number."""
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)) or \
            (isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "biuf"):
        return float(value)
    raise QueryError(e, f"{family.where()} returned {type(value).__name__} {value!r:.60}, "
                        "not a number")


class QueryError(Exception):
    """A user function's failure on the query of row ``row`` (:func:`fill` names it)."""

    def __init__(self, row, message):
        super().__init__(message)
        self.row = row


def fill(plan_parsed, columns_by_family, bounds, rankings, ideals, spec, out, query_ids,
         what="query"):
    """Fill the user measures' columns of ``out`` (every query of ``rankings``): each
    family's loop, compiled or Python as the tier says. A function that raises or returns
    something else than a number: a ValueError naming the measure and the query; one numba
    cannot compile: a :class:`FunctionError` naming it and numba's reason."""
    for family, columns in columns_by_family:
        kernel = family.kernel()
        python = not family.jit or _jit.python_mode()
        names = ", ".join(str(plan_parsed[j]) for j in columns)
        where = f"{names} on {what}"
        try:
            if not python:
                module = sys.modules[kernel.__module__]
                if module.function is None:
                    module.function = _jit._load_numba().njit(**FUNCTION_OPTIONS)(
                        family.function)
                out[:, columns] = np.nan  # (what an exception in a thread leaves)
            _jit.launch_interruptible(kernel, bounds, rankings, ideals, spec.table,
                                      spec.params, columns, out, python=python)
        except QueryError as exc:
            raise ValueError(f"{where} {query_ids[exc.row]!r}: {exc}") from None
        except Exception as exc:
            if type(exc).__module__.startswith("numba"):
                raise FunctionError(f"{names}: numba cannot compile {family.where()}: "
                                    f"{_reason(exc)} (write it over numpy arrays and "
                                    "numbers, or define it with jit=False to run it as "
                                    "plain Python)") from None
            out[:, columns] = np.nan  # (raised from a thread: look at every query)
        if not python:
            _explain_nan(family, bounds, rankings, ideals, spec, columns, out, query_ids,
                         where)


def _explain_nan(family, bounds, rankings, ideals, spec, columns, out, query_ids, where):
    """After a compiled loop: the queries with a NaN value run again as Python, which names
    the exception a compiled function raised in a thread (numba does not always pass it
    on), or a value that is not a number; a NaN the Python run gives too is left for the
    engine's check (:data:`RETURNED_NAN`)."""
    rows = np.flatnonzero(np.isnan(out[:, columns]).any(axis=1))
    if not len(rows):
        return
    again = np.empty_like(out)
    try:
        python_queries(family, bounds, rankings, ideals, spec.table, spec.params, columns,
                       again, rows.tolist())
    except QueryError as exc:
        raise ValueError(f"{where} {query_ids[exc.row]!r}: {exc}") from None
    differs = ~np.isnan(again[rows][:, columns]).all(axis=1)
    if differs.any():
        row = int(rows[np.argmax(differs)])
        raise ValueError(f"{where} {query_ids[row]!r}: compiled, {family.where()} gave NaN "
                         "where it gives a number as Python")


class FunctionError(ValueError):
    """A user function numba cannot compile (one line: the function and numba's reason)."""


def _reason(exc):
    """numba's reason in one line: its first lines, without colours or its traceback."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Failed in nopython mode pipeline"):
            continue
        if line.startswith(("During:", "File ", "<source", "^")) or not line:
            if lines:
                break
            continue
        lines.append(line)
    return " ".join(lines)[:400] or type(exc).__name__


def columns_of(parsed):
    """[(family, int64 columns)] of the user measures of a request, by family."""
    found = {}
    for j, m in enumerate(parsed):
        if isinstance(m.spec, UserFamily):
            found.setdefault(m.spec, []).append(j)
    return [(f, np.array(js, dtype=np.int64)) for f, js in found.items()]


# -- rankings of the loops that rank themselves ------------------------------------------
def _segments(lengths):
    """The CSR offsets of segments of these lengths."""
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


def fill_bound(plan, candidates, parts, weights, as_float32, ideals, spec, out, query_ids):
    """The user measures' columns of bound candidates' ``out[r, e, m]`` (vector ``r`` of
    ``weights`` over ``parts``: :class:`fastir.loops.evaluator.BoundCandidates`): each
    vector's rankings laid out as the join lays them out (score descending, ties by tie
    position; ``limit``, then ``judged_only``), then :func:`fill`."""
    from fastir.measures.kernels import Rankings
    from fastir.model.values import float32_scores

    n_queries = len(candidates.indptr) - 1
    query = np.repeat(np.arange(n_queries), np.diff(candidates.indptr))
    rows = candidates.rows
    place = np.arange(len(rows)) - candidates.indptr[query]
    for r in range(len(weights.indptr) - 1):
        vector = 0.0
        for k in range(weights.indptr[r], weights.indptr[r + 1]):
            vector = vector + weights.weight[k] * parts[weights.part[k], rows]
        vector = np.broadcast_to(vector, rows.shape)
        if as_float32:
            vector = float32_scores(vector)
        order = np.lexsort((candidates.tie[rows], -vector, query))  # (queries stay in place)
        codes = candidates.codes[rows[order]]
        kept = (place < candidates.limit) & ((codes >= 0) | (not candidates.judged_only))
        lengths = np.bincount(query[kept], minlength=n_queries)
        rankings = Rankings(_segments(lengths), np.ascontiguousarray(codes[kept],
                                                                     dtype=np.int32),
                            candidates.qrels_query)
        fill(plan.parsed, plan.user, np.array([0, n_queries], dtype=np.int64), rankings,
             ideals, spec, out[r], query_ids)


def fill_matrix(plan, scores, labels, valid, n_relevant, level, spec, out, query_ids=None):
    """The user measures' columns of a dense batch's ``out[b, m]``: each row ranked by score
    descending, ties by column, over its valid candidates; its judged labels are its valid
    candidates' and, when ``n_relevant`` says more are relevant, as many more of label
    ``level`` (as :func:`fastir.evaluate_matrix` counts them); then :func:`fill`, its
    queries named by ``query_ids`` (else by row)."""
    from fastir.measures.kernels import Rankings
    from fastir.model.data import Ideals

    batch = scores.shape[0]
    order = np.argsort(-scores, axis=1, kind="stable")
    ranked_valid = np.take_along_axis(valid, order, axis=1)
    ranked = np.take_along_axis(labels, order, axis=1)[ranked_valid].astype(np.int32)
    counts = valid.sum(axis=1)
    have = ((labels >= level) & valid).sum(axis=1)
    extra = np.maximum(np.asarray(n_relevant, dtype=np.int64) - have, 0)
    judged = []
    for b in range(batch):
        own = labels[b][valid[b]].astype(np.int32)
        judged.append(np.sort(np.concatenate((own, np.full(extra[b], level, np.int32))))[::-1])
    rankings = Rankings(_segments(counts), ranked, np.arange(batch, dtype=np.int64))
    ideals = Ideals(_segments(counts + extra),
                    np.concatenate(judged).astype(np.int32) if batch else np.zeros(0, np.int32))
    for array in ideals:  # (read-only, as the qrels' are: the loop compiled for those)
        array.flags.writeable = False
    fill(plan.parsed, plan.user, np.array([0, batch], dtype=np.int64), rankings, ideals,
         spec, out, np.arange(batch) if query_ids is None else query_ids,
         what="row" if query_ids is None else "query")


# -- the module of a family's loop ------------------------------------------------------
def cache_dir():
    """Where the loops' modules are written (numba caches them beside, in __pycache__):
    ``FASTIR_CACHE_DIR``, else ``$XDG_CACHE_HOME/fastir`` (``~/.cache/fastir``), in
    ``measures/``. Its modules are imported and numba's index files there unpickled, so a
    folder another user could change (:func:`fastir.trusted.folder_problem`), or one that
    cannot be written, is not used: a private temporary folder is, said once in a
    FastirWarning."""
    root = os.environ.get("FASTIR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "fastir")
    return _usable_cache(os.path.join(root, "measures"))


#: The problems of cache folders said so far (each once a process).
_CACHE_PROBLEMS_SAID = set()


def _usable_cache(folder):
    """``folder`` (created if missing) when it is this user's to write alone, else a
    private temporary folder (said once a process for each problem)."""
    problem = trusted.folder_problem(folder, create=True)
    if problem is None and not os.access(folder, os.W_OK):
        problem = f"{folder} cannot be written"
    if problem is None:
        return folder
    temporary = _temporary_dir()
    if problem in _CACHE_PROBLEMS_SAID:
        return temporary
    _CACHE_PROBLEMS_SAID.add(problem)
    import warnings

    from fastir.model.errors import FastirWarning

    warnings.warn(f"fastir's compile cache: {problem}; compiled measures are cached in "
                  f"{temporary} for this process only (set FASTIR_CACHE_DIR to a folder of "
                  "yours)", FastirWarning, stacklevel=2)
    return temporary


@functools.lru_cache(maxsize=1)
def _temporary_dir():
    """A private folder for this process's compiled measures, removed as it exits."""
    import atexit
    import shutil

    folder = tempfile.mkdtemp(prefix="fastir-measures-")  # (mode 0700, made anew)
    atexit.register(shutil.rmtree, folder, True)
    problem = trusted.folder_problem(folder)
    if problem is not None:
        raise OSError(f"fastir's temporary compile cache: {problem}; set FASTIR_CACHE_DIR "
                      "(or TMPDIR) to a folder of yours")
    return folder


#: The options the user's function is compiled with: bounds checked, so that a read past
#: an array raises IndexError as in Python (part of every loop's digest: a loop compiled
#: with other options is another module).
FUNCTION_OPTIONS = {"boundscheck": True}


def digest(family):
    """A digest of what the compiled loop depends on: the function's code (nested code
    too), the values its closure holds and the globals its code reads (numba compiles them
    in as they are: so does the digest, recursively through the functions it calls), its
    module's source file, the loop's text and options, its arguments and fastir's version.
    A value numba would compile in that the digest cannot read raises
    :class:`FunctionError` (define the measure with ``jit=False``)."""
    h = hashlib.blake2b(digest_size=10)
    h.update(f"{__version__}\0{family.name}\0{family.arguments}\0".encode())
    h.update(f"{_LOOP}\0{sorted(FUNCTION_OPTIONS.items())}".encode())
    _function_digest(h, family.function, family, set())
    source = getattr(sys.modules.get(family.function.__module__), "__file__", None)
    try:
        info = os.stat(source) if source else None
    except OSError:
        info = None
    if info is not None:
        h.update(_file_digest(source, info.st_size, info.st_mtime_ns))
    return h.hexdigest()


@functools.lru_cache(maxsize=64)
def _file_digest(path, size, mtime_ns):
    """A digest of the file at ``path`` (read again when its size or time changes)."""
    with open(path, "rb") as f:
        return hashlib.blake2b(f.read(), digest_size=16).digest()


def _function_digest(h, function, family, seen):
    """Put in ``h`` a function's code, closure values and the values of its globals."""
    if id(function) in seen:
        return
    seen.add(id(function))
    code = function.__code__
    _code_digest(h, code)
    for name, cell in zip(code.co_freevars, function.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # (a cell not filled yet)
            value = None
        h.update(f"\0cell {name}\0".encode())
        _value_digest(h, value, f"its closure's {name!r}", family, seen)
    for name in _global_names(code):
        if name in function.__globals__:
            h.update(f"\0global {name}\0".encode())
            _value_digest(h, function.__globals__[name], f"its global {name!r}", family, seen)


def _code_digest(h, code):
    h.update(_code_bytes(code))


@functools.lru_cache(maxsize=256)
def _code_bytes(code):
    """A digest of a code object: its bytecode, names and constants, nested code too
    (code objects do not change: computed once)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        h.update(_code_bytes(const) if inspect.iscode(const) else repr(const).encode())
    return h.digest()


@functools.lru_cache(maxsize=256)
def _global_names(code):
    """The global names ``code`` (and the code nested in it) reads, sorted."""
    import dis

    names = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if inspect.iscode(const):
            names.update(_global_names(const))
    return tuple(sorted(names))


#: The values a digest reads as their text (type and repr).
_PLAIN = (type(None), bool, int, float, complex, str, bytes, np.generic)


def _value_digest(h, value, where, family, seen):
    """Put in ``h`` a value numba compiles in: a number, text, array, tuple of them, a
    module (by name), a function (recursively), a class or built-in (by name)."""
    if isinstance(value, _PLAIN):
        h.update(f"{type(value).__name__}:{value!r}".encode())
    elif isinstance(value, np.ndarray):
        h.update(f"array:{value.dtype.str}:{value.shape}:".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (tuple, list)):
        h.update(f"{type(value).__name__}:{len(value)}:".encode())
        for item in value:
            _value_digest(h, item, where, family, seen)
    elif isinstance(value, types.ModuleType):
        h.update(f"module:{value.__name__}".encode())
    elif isinstance(value, types.FunctionType):
        _function_digest(h, value, family, seen)
    elif isinstance(getattr(value, "py_func", None), types.FunctionType):  # numba's
        _function_digest(h, value.py_func, family, seen)
    elif isinstance(value, (type, types.BuiltinFunctionType)) or callable(value) and \
            type(value).__module__.startswith("numpy"):  # (np.float64, math.log, np.sqrt)
        h.update(f"name:{getattr(value, '__module__', '')}."
                 f"{getattr(value, '__qualname__', repr(value))}".encode())
    elif family.jit:
        raise FunctionError(f"define_measure: {family.name}: {where} is a "
                            f"{type(value).__name__}, which numba would compile in as it is "
                            "when first compiled, and a later change would go unseen: give "
                            "it as a number, text, tuple or numpy array, or define the "
                            "measure with jit=False")
    else:  # (plain Python reads it anew at each call)
        h.update(f"other:{type(value).__qualname__}".encode())


def _loop_module(family, key):
    """The imported module of the family's loop of :func:`digest` ``key``, written first
    when it is not there."""
    from fastir.measures.kernels import CUTOFF, LEVEL

    safe = re.sub(r"\W", "_", family.name)
    module_name = f"{MODULE_PREFIX}{safe}_{key}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    text = _LOOP.format(name=family.name, where=family.where(), digest=key,
                        cutoff_column=CUTOFF, level_column=LEVEL,
                        arguments=_argument_code(family))
    folder = cache_dir()
    path = os.path.join(folder, module_name + ".py")
    if not _same_text(path, text):
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(partial, path)  # (atomic: another process may read it meanwhile)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _same_text(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except OSError:
        return False


# -- measures packages provide ----------------------------------------------------------
def load_definition(text):
    """Define the measures of ``module:function`` (``fastir eval --define``): importing the
    module defines those made with :func:`define_measure`; ``function`` is defined too
    when it is not yet (with the default options). Returns the measure's name."""
    module_name, sep, attribute = text.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"--define {text!r}: give module:function (a module importable "
                         "from here, or a path.py:function)")
    try:
        if module_name.endswith(".py"):
            spec = importlib.util.spec_from_file_location(
                os.path.splitext(os.path.basename(module_name))[0], module_name)
            if spec is None:
                raise ImportError(f"no such file {module_name!r}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            sys.path.insert(0, os.getcwd())
            try:
                module = importlib.import_module(module_name)
            finally:
                sys.path.remove(os.getcwd())
        function = getattr(module, attribute)
        if not hasattr(function, "fastir_measure"):
            define_measure(function)
    except (ImportError, AttributeError, OSError) as exc:
        raise ValueError(f"--define {text!r}: {type(exc).__name__}: {exc}") from None
    return function.fastir_measure


__all__ = ["FunctionError", "define_measure", "load_definition",
           "undefine_measure"]
