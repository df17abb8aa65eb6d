"""The checks of fusion's arguments: each refuses bad input with one line naming it."""

import numpy as np

from fastir.io.inputs import as_run
from fastir.model.ranking import NOT_FINITE


def choice(value, table, what):
    """``table[value]`` (case-insensitive), or a ValueError listing the choices."""
    key = str(value).lower() if value is not None else None
    if key not in table:
        raise ValueError(f"{what}: unknown {what} {value!r}; choose one of "
                         f"{', '.join(sorted(set(table.values())))}")
    return table[key]


def load_runs(runs, at_least=2, what="fusion"):
    """``(names, [Run])`` of a list or ``{name: run}`` of ``at_least`` runs or more, of
    finite scores (checked as :meth:`Run.score_order` reads them: once per run)."""
    if isinstance(runs, dict):
        names, items = [str(n) for n in runs], list(runs.values())
    elif isinstance(runs, (list, tuple)):
        names, items = None, list(runs)
    else:
        raise TypeError("runs: give a list of runs or a {name: run} dict (runs are Run "
                        f"objects, {{query: {{doc: score}}}} dicts or paths), got "
                        f"{type(runs).__name__}")
    if len(items) < at_least:
        many = {1: "one", 2: "two"}.get(at_least, str(at_least))
        raise ValueError(f"runs: {what} needs {many} or more runs, got {len(items)}")
    loaded = [as_run(r) for r in items]
    names = names or [r.name for r in loaded]
    for i, (name, r) in enumerate(zip(names, loaded)):
        if not len(r.scores):
            raise ValueError(f"runs: run {i} ({name!r}) is empty (no query has a doc); give "
                             f"runs that retrieved something, or leave it out")
        if (r.score_order() == NOT_FINITE).any():  # (the bad row found only then)
            bad = np.flatnonzero(~np.isfinite(r.scores))
            q = int(np.searchsorted(r.stops, bad[0], side="right"))
            query = r.query_ids.take([q]).tolist()[0]
            doc = r.doc_ids.take([bad[0]]).tolist()[0]
            raise ValueError(f"runs: run {i} ({name!r}), query {query!r} doc {doc!r}: score "
                             f"{r.scores[bad[0]]} is not finite; give finite scores")
    return names, loaded


def real(x):
    """A real number, not a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_))


def finite(x):
    """A real number (:func:`real`) is finite (integers of any size are)."""
    return isinstance(x, (int, np.integer)) or bool(np.isfinite(x))


def numbers(value, n, what, *, unit=None):
    """``value`` as ``n`` finite floats (``unit``: each in [0, 1]), or a ValueError."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        array = None
    ok = not isinstance(value, (str, bytes)) and array is not None and \
        array.shape == (n,) and np.isfinite(array).all() and not any(
            isinstance(x, (bool, np.bool_)) for x in np.ravel(np.asarray(value, dtype=object)))
    if ok and unit and not ((array >= 0) & (array <= 1)).all():
        ok = False
    if not ok:
        each = " in [0, 1]" if unit else ""
        raise ValueError(f"{what}: give {n} finite numbers{each} (one per run), got "
                         f"{_short(value)}")
    return array


def vectors(value, n, what):
    """``value`` as ``n`` 1-d arrays of finite floats (one per run), or a ValueError."""
    try:
        arrays = None if isinstance(value, (str, bytes)) else \
            [np.asarray(v, dtype=np.float64) for v in value]
    except (TypeError, ValueError, OverflowError):
        arrays = None
    if arrays is None or len(arrays) != n or any(a.ndim != 1 or not np.isfinite(a).all()
                                                 for a in arrays):
        raise ValueError(f"{what}: give {n} arrays of finite numbers (one per run, as "
                         f"train_fusion returns them), got {_short(value)}")
    return arrays


def number(value, what, *, low=None, high=None, whole=False, rule=""):
    """``value`` as a finite float (int with ``whole``) within [low, high], or a
    ValueError saying ``rule``."""
    ok = real(value) and finite(value) and (not whole or int(value) == value) and \
        (low is None or value >= low) and (high is None or value <= high)
    if not ok:
        raise ValueError(f"{what}: {rule}, got {value!r}")
    return int(value) if whole else float(value)


def depth(value):
    if value is None:
        return None
    number(value, "depth", low=1, whole=True, rule="a positive whole number of docs per query")
    return int(min(value, 2**62))


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
