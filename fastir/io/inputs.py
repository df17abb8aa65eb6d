"""The forms qrels and runs are accepted in, in one table (:data:`FORMS`): each form's
detector, its conversions to :class:`~fastir.Qrels` and :class:`~fastir.Run`, and its size.
Every public entry point walks the table (:func:`as_qrels`, :func:`as_run`); a new form is
one entry. The conversions themselves are in bulk, without Python work per row: dicts in
:mod:`fastir.model.dicts`, DataFrames in :mod:`fastir.model.frames`, Arrow in
:mod:`fastir.model.arrow`, records in :mod:`fastir.io.records`, files in :mod:`fastir.io.trec`;
every one checks values as :func:`fastir.model.values.run_scores` and
:func:`~fastir.model.values.qrels_labels` do, so a bad value gets the same error in every form.
"""

import contextlib
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import NamedTuple

from fastir import _jit
from fastir.model.data import Qrels, Run
from fastir.model.errors import FastirWarning, InputError, MissingQueriesWarning


class Form(NamedTuple):
    """One accepted form of qrels and runs.

    ``detect(value)`` says whether a value is of this form; ``qrels(value, progress,
    labels)`` (``labels``: "int", "float" or "probability", as for :func:`as_qrels`) and
    ``run(value, progress)`` convert it; ``rows(value)`` is its size before conversion (for
    the choice between Python and compiled kernels, :func:`fastir._jit.tier`), and
    ``one_run(value)`` whether a value of ``{name: value}`` is a run of this form (several
    runs, ranx's shape) rather than one query's scores.
    """

    name: str
    detect: Callable
    qrels: Callable
    run: Callable
    rows: Callable
    one_run: Callable = None


def _is_container(value):
    return isinstance(value, (Qrels, Run))


def _is_fastir_ranx(value):
    return hasattr(value, "to_fastir")


def _is_ranx(value):
    return type(value).__module__.startswith("ranx") and hasattr(value, "to_dict")


def _is_frame(value):
    return hasattr(value, "columns") and hasattr(value, "to_numpy")


def _is_arrow(value):
    return type(value).__module__.startswith("pyarrow") and hasattr(value, "column_names")


def _is_file(value):
    return isinstance(value, (str, bytes, os.PathLike)) or hasattr(value, "read")


def is_records(value):
    """An iterable of records (namedtuples or tuples: :mod:`fastir.io.records`): iterable, and
    none of the other forms (a text, a path, an open file, a mapping, a DataFrame, an
    array)."""
    return (hasattr(value, "__iter__") and not isinstance(value, Mapping)
            and not _is_file(value) and not _is_frame(value)
            and not hasattr(value, "__array__") and not _is_ranx(value)
            and not _is_arrow(value))


# -- each form's conversions ---------------------------------------------------------------
def _same(kind, what):
    def same(value, progress, *labels):
        if not isinstance(value, kind):
            raise refused(value, what)
        return value
    return same


def _dict_qrels(value, progress, labels):
    return Qrels.from_dict(value, labels=labels)


def _dict_run(value, progress):
    return Run.from_dict(value)


QUERY_COLUMNS = ("query_id", "q_id")  # ir_measures', ranx's
LABEL_COLUMNS = ("relevance", "score")


def _column(table, names, candidates, what):
    """The first of ``candidates`` a table has (ir_measures' or ranx's column name)."""
    found = [c for c in candidates if c in names]
    if len(found) != 1:
        have = "both" if found else "none"
        raise InputError(f"{type(table).__name__}: the {what} column is one of "
                         f"{list(candidates)} (it has {have}; its columns: {list(names)}); "
                         "or use Qrels.from_pandas / Run.from_pandas (from_arrow) with the "
                         "column names")
    return found[0]


def _table_columns(table, names, values, what):
    return (_column(table, names, QUERY_COLUMNS, "query"), "doc_id",
            _column(table, names, values, what))


def _frame_qrels(frame, progress, labels):
    from fastir.model.frames import qrels_from_frame

    return qrels_from_frame(Qrels, frame, *_table_columns(frame, frame.columns, LABEL_COLUMNS,
                                                   "label"), labels=labels)


def _frame_run(frame, progress):
    from fastir.model.frames import run_from_frame

    return run_from_frame(Run, frame, *_table_columns(frame, frame.columns, ("score",), "score"))


def _arrow_qrels(table, progress, labels):
    from fastir.model.arrow import qrels_from_arrow

    return qrels_from_arrow(Qrels, table, *_table_columns(table, table.column_names, LABEL_COLUMNS,
                                                   "label"), labels=labels)


def _arrow_run(table, progress):
    from fastir.model.arrow import run_from_arrow

    return run_from_arrow(Run, table, *_table_columns(table, table.column_names, ("score",),
                                                 "score"))


def _ranx_qrels(value, progress, labels):
    return Qrels.from_dict(value.to_dict(), source="ranx Qrels", labels=labels)


def _ranx_run(value, progress):
    return Run.from_dict(value.to_dict(), name=value.name or "run", source="ranx Run")


def _records_qrels(value, progress, labels):
    from fastir.io.records import read_records

    return read_records(value, "qrels", labels)


def _records_run(value, progress):
    from fastir.io.records import read_records

    return read_records(value, "run")


def _file_qrels(value, progress, labels):
    from fastir.io.trec import read_qrels

    return read_qrels(value, progress=progress, labels=labels)


def _file_run(value, progress):
    from fastir.io.trec import read_run

    return read_run(value, progress=progress)


def _dict_rows(value):
    try:
        return sum(map(len, value.values()))  # (C-level: a loop's dict is sized per call)
    except TypeError:  # (a value without a size: an error when converted)
        return 0


def _sized_rows(value):
    return len(value) if hasattr(value, "__len__") else 0


def _arrow_rows(value):
    return value.num_rows


def _file_rows(value):
    try:
        return os.path.getsize(value) // 32  # (a line is about 32 bytes)
    except (OSError, TypeError, ValueError):
        return 0


def _no_rows(value):
    return 0


def _dict_is_run(value):  # (a query's scores are a dict of numbers)
    return isinstance(next(iter(value.values()), None), dict)


def _file_is_run(value):
    return isinstance(value, (str, os.PathLike)) and os.path.isfile(value)


def _records_are_run(value):  # (a query's docs are never a list)
    if isinstance(value, (list, tuple)):
        return bool(value) and isinstance(value[0], tuple)
    return True


#: Every form, in the order they are tried (the first whose detector says yes converts).
FORMS = (
    Form("Qrels or Run", _is_container, _same(Qrels, "qrels"), _same(Run, "run"), len),
    Form("fastir.ranx Qrels or Run", _is_fastir_ranx, lambda v, p, labels: v.to_fastir(),
         lambda v, p: v.to_fastir(), _no_rows),
    Form("ranx Qrels or Run", _is_ranx, _ranx_qrels, _ranx_run, _no_rows),
    Form("dict of dicts", lambda v: isinstance(v, dict), _dict_qrels, _dict_run, _dict_rows,
         _dict_is_run),
    Form("Arrow table", _is_arrow, _arrow_qrels, _arrow_run, _arrow_rows),
    Form("DataFrame", _is_frame, _frame_qrels, _frame_run, len),
    Form("records", is_records, _records_qrels, _records_run, _sized_rows, _records_are_run),
    Form("file", _is_file, _file_qrels, _file_run, _file_rows, _file_is_run),
)


def form_of(value, what="run"):
    """The :class:`Form` of ``value``, or a TypeError listing the forms (``what``: "qrels"
    or "run", for the message)."""
    for form in FORMS:
        if form.detect(value):
            return form
    raise refused(value, what)


def refused(value, what):
    """The TypeError for a ``value`` of no accepted form (preference judgments named as
    such, with where they are evaluated)."""
    container = "Run" if what == "run" else "Qrels"
    return TypeError(f"{what} must be a {container}, a dict {{query_id: {{doc_id: value}}}}, "
                     f"a file path or open file, a DataFrame, an Arrow table, a ranx "
                     f"{container} or an iterable of records, got {type(value).__name__}"
                     f"{_judgments_of_another_kind(value)}")


def _judgments_of_another_kind(value):
    kind = other_judgments(value)
    if kind:
        return (f" ({kind}: fastir.evaluate(judgments, run, measures) evaluates them; this "
                "takes qrels)")
    return ""


def other_judgments(value):
    """What judgments of another kind than qrels ``value`` is: "preference judgments"
    (:class:`~fastir.model.prefs.Prefs`), "judgment groups"
    (:class:`~fastir.model.prefs.JudgmentGroups`), or None."""
    prefs = sys.modules.get("fastir.model.prefs")  # (not imported: none was made)
    if prefs is not None and isinstance(value, (prefs.Prefs, prefs.JudgmentGroups)):
        return "preference judgments" if isinstance(value, prefs.Prefs) else "judgment groups"
    return None


def as_qrels(qrels, progress=False, labels="int"):
    """A :class:`Qrels` from any form in :data:`FORMS`, its labels integers (``labels="int"``),
    finite reals >= 0 (``"float"``: :attr:`Qrels.label_values`; a Qrels of integer labels
    is read as reals) or probabilistic (``"probability"``: :attr:`Qrels.label_probs`; a
    Qrels of real labels is read as probabilities of relevance, of integer labels as
    certain ones). Qrels of real or probabilistic labels under another ``labels`` are
    refused, saying which to pass."""
    if not isinstance(qrels, Qrels):
        qrels = form_of(qrels, "qrels").qrels(qrels, progress, labels)
    if labels == "probability":
        return qrels.with_probabilities()
    if qrels.label_probs is not None:
        raise ValueError(f"{qrels.source}: these qrels have probabilistic labels (read with "
                         "labels='probability'): evaluate them with labels='probability'")
    if labels == "float":
        return qrels.with_real_labels()
    if qrels.label_values is not None:
        raise ValueError(f"{qrels.source}: these qrels have real-valued labels (read with "
                         "labels='float'): evaluate them with labels='float'")
    return qrels


def as_run(run, compat=None, progress=False):
    """A :class:`Run` from any form in :data:`FORMS` (scores rounded to float32 under
    9.0.8)."""
    if not isinstance(run, Run):
        run = form_of(run, "run").run(run, progress)
    if compat == "9.0.8":
        run = run.in_float32()
    return run


@contextlib.contextmanager
def read(qrels, run, compat=None, progress=False, labels="int"):
    """What :func:`fastir.evaluate` was given, read: ``(qrels, run)``, a :class:`Qrels` (its
    labels as :func:`as_qrels` reads them under ``labels``; judgments of another kind,
    :func:`other_judgments`, as they are) and a :class:`Run`
    (scores rounded to float32 under 9.0.8); for several runs (:func:`is_several_runs`),
    the Qrels and ``{name: run}``, each run as given, to be read by an evaluation of its own.

    Records are read first, so that their size is known. A Qrels and a Run are read, and
    the block run, within one choice between Python and compiled kernels
    (:func:`fastir._jit.tier`) sized by both.
    """
    other = other_judgments(qrels)
    several = is_several_runs(run)  # (records are never several runs)
    qrels = qrels if other else records_read(qrels, "qrels", labels)
    run = records_read(run, "run")
    if several:
        yield (qrels if other else as_qrels(qrels, progress, labels)), run
        return
    # (judgments of another kind: their evaluation chooses, knowing its work)
    with contextlib.nullcontext() if other else \
            _jit.tier(lambda: size_hint(qrels) + size_hint(run)):
        yield (qrels if other else as_qrels(qrels, progress, labels)), \
            as_run(run, compat, progress)


def size_hint(data):
    """Rows of a qrels or run in any accepted form (0 when unknown), for choosing between
    Python and compiled kernels (:func:`fastir._jit.tier`)."""
    for form in FORMS:
        if form.detect(data):
            return form.rows(data)
    return 0


def records_read(value, kind, labels="int"):
    """``value`` as a Qrels or Run when it is an iterable of records (read once, so that its
    size is known before a size-dependent choice), else ``value`` itself (``labels``: a
    qrels' labels, "int", "float" or "probability")."""
    if is_records(value):
        from fastir.io.records import read_records

        return read_records(value, kind, labels) if kind == "qrels" else \
            read_records(value, kind)
    return value


def is_several_runs(run):
    """``{name: run}`` (ranx's several runs), not one run ``{query: {doc: score}}``: every
    value a run in some form (a dict of dicts, a Run, a DataFrame, a ranx Run, records, or a
    file that exists)."""
    return isinstance(run, dict) and bool(run) and all(map(_is_one_run, run.values()))


def _is_one_run(value):
    for form in FORMS:
        if form.detect(value):
            return (form.one_run or form.detect)(value)
    return False


def warn_of_queries(in_run, qrels, n_run_queries, run_source, zeros=True):
    """What an evaluation says of its queries (``in_run``: per evaluated query, whether the
    run has it): a :class:`FastirWarning` when no query is both in the run and judged (the
    means are then 0, or there is no query at all, which is rarely what was meant:
    mismatched query ids, swapped files); else, with ``zeros``, a
    :class:`MissingQueriesWarning` when judged queries the run lacks were scored 0
    (``missing="zero"`` evaluates them)."""
    if in_run.any():
        absent = len(in_run) - int(in_run.sum())
        if absent and zeros:
            warnings.warn(f"{absent} of the {len(in_run)} judged queries are not in the run "
                          f"(from {run_source}) and score 0 in its means (missing='zero', as "
                          "trec_eval -c); missing='skip' (--missing skip on the command line) "
                          "leaves them out, as pytrec_eval, BEIR and trec_eval without -c do",
                          MissingQueriesWarning, stacklevel=3)
        return
    outcome = ("every judged query scores 0 (missing='zero')" if len(in_run)
               else "nothing is evaluated and every mean is 0")
    warnings.warn(f"no query is both in the run ({n_run_queries} queries, from {run_source}) "
                  f"and judged ({qrels.n_queries} queries, from {qrels.source}): {outcome}; "
                  "check that the query ids match", FastirWarning, stacklevel=3)
