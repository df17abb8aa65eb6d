"""The forms qrels and runs are accepted in (a container, a dict, a file path or open file, a
DataFrame, a ranx object, an iterable of records), turned into :class:`~fastir.Qrels` and
:class:`~fastir.Run` at every public entry point."""

import os
import warnings
from collections.abc import Mapping

from fastir.io.records import read_records
from fastir.io.trec import read_qrels, read_run
from fastir.model.data import Qrels, Run
from fastir.model.errors import FastirWarning, InputError


def warn_if_disjoint(in_run, qrels, n_run_queries, run_source):
    """A :class:`FastirWarning` when no query is both in the run and judged (``in_run``: per
    evaluated query, whether the run has it): the means are then 0 (or there is no query at
    all), which is rarely what was meant (mismatched query ids, swapped files)."""
    if in_run.any():
        return
    outcome = ("every judged query scores 0 (missing='zero')" if len(in_run)
               else "nothing is evaluated and every mean is 0")
    warnings.warn(f"no query is both in the run ({n_run_queries} queries, from {run_source}) "
                  f"and judged ({qrels.n_queries} queries, from {qrels.source}): {outcome}; "
                  "check that the query ids match", FastirWarning, stacklevel=3)


def _path(value, what):
    if isinstance(value, (str, bytes, os.PathLike)) or hasattr(value, "read"):
        return value
    container = "Run" if what == "run" else "Qrels"
    raise TypeError(f"{what} must be a {container}, a dict {{query_id: {{doc_id: value}}}}, "
                    f"a file path or open file, a DataFrame, a ranx {container} or an "
                    f"iterable of records, got {type(value).__name__}")


def _is_frame(value):
    return hasattr(value, "columns") and hasattr(value, "to_numpy")


def _is_ranx(value):
    return type(value).__module__.startswith("ranx") and hasattr(value, "to_dict")


def is_records(value):
    """An iterable of records (namedtuples or tuples: :mod:`fastir.io.records`): iterable, and
    none of the other forms (a text, a path, an open file, a mapping, a DataFrame, an
    array)."""
    return (hasattr(value, "__iter__") and not isinstance(value, (str, bytes, os.PathLike,
                                                                   Mapping))
            and not hasattr(value, "read") and not _is_frame(value)
            and not hasattr(value, "__array__") and not _is_ranx(value))


def records_read(value, kind):
    """``value`` as a Qrels or Run when it is an iterable of records (read once, so that its
    size is known before a size-dependent choice), else ``value`` itself."""
    return read_records(value, kind) if is_records(value) else value


def _column(frame, candidates, what):
    """The first of ``candidates`` the frame has (ir_measures' or ranx's column name)."""
    found = [c for c in candidates if c in frame.columns]
    if len(found) != 1:
        have = "both" if found else "none"
        raise InputError(f"DataFrame: the {what} column is one of {list(candidates)} (it has "
                         f"{have}; its columns: {list(frame.columns)}); or use "
                         "Qrels.from_pandas / Run.from_pandas with the column names")
    return found[0]


def is_several_runs(run):
    """``{name: run}`` (ranx's several runs), not one run ``{query: {doc: score}}``: every
    value a run (a dict of dicts, a Run, a DataFrame, a ranx Run, records, or a file that
    exists)."""
    return isinstance(run, dict) and bool(run) and all(map(_is_one_run, run.values()))


def _is_one_run(value):
    if isinstance(value, dict):
        return isinstance(next(iter(value.values()), None), dict)
    if isinstance(value, (str, os.PathLike)):
        return os.path.isfile(value)
    if isinstance(value, (list, tuple)):  # records (a query's docs are never a list)
        return bool(value) and isinstance(value[0], tuple)
    return (isinstance(value, Run) or _is_frame(value) or _is_ranx(value)
            or hasattr(value, "to_fastir") or is_records(value))


def size_hint(data):
    """Rows of a qrels or run in any accepted form (a file: its size over 32 bytes a line),
    for choosing between Python and compiled kernels (:func:`fastir._jit.tier`)."""
    if isinstance(data, (Qrels, Run)):
        return len(data)
    if isinstance(data, dict):
        return sum(len(v) for v in data.values() if isinstance(v, dict))
    if _is_frame(data) or (is_records(data) and hasattr(data, "__len__")):
        return len(data)
    try:
        return os.path.getsize(data) // 32
    except (OSError, TypeError, ValueError):
        return 0


QUERY_COLUMNS = ("query_id", "q_id")  # ir_measures', ranx's
LABEL_COLUMNS = ("relevance", "score")


def as_qrels(qrels, progress=False):
    """A :class:`Qrels` from any accepted form: Qrels, dict, a file path or open file, a
    DataFrame, a ranx Qrels (ranx's own, or :mod:`fastir.ranx`'s) or an iterable of
    records."""
    if isinstance(qrels, Qrels):
        return qrels
    if hasattr(qrels, "to_fastir"):  # fastir.ranx's Qrels
        return qrels.to_fastir()
    if isinstance(qrels, dict):
        return Qrels.from_dict(qrels)
    if _is_frame(qrels):
        return Qrels.from_pandas(qrels, _column(qrels, QUERY_COLUMNS, "query"), "doc_id",
                                 _column(qrels, LABEL_COLUMNS, "label"))
    if _is_ranx(qrels):
        return Qrels.from_dict(qrels.to_dict(), source="ranx Qrels")
    if is_records(qrels):
        return read_records(qrels, "qrels")
    return read_qrels(_path(qrels, "qrels"), progress=progress)


def as_run(run, compat=None, progress=False):
    """A :class:`Run` from any accepted form (scores rounded to float32 under 9.0.8)."""
    if hasattr(run, "to_fastir"):  # fastir.ranx's Run
        run = run.to_fastir()
    if not isinstance(run, Run):
        if isinstance(run, dict):
            run = Run.from_dict(run)
        elif _is_frame(run):
            run = Run.from_pandas(run, _column(run, QUERY_COLUMNS, "query"), "doc_id", "score")
        elif _is_ranx(run):
            run = Run.from_dict(run.to_dict(), name=run.name or "run", source="ranx Run")
        elif is_records(run):
            run = read_records(run, "run")
        else:
            run = read_run(_path(run, "run"), progress=progress)
    if compat == "9.0.8":
        run = run.in_float32()
    return run
