"""Rows into a :class:`~fastir.Qrels` or :class:`~fastir.Run` (given as ``cls``), and the
checks every input form's values pass: labels are 32-bit integers (or, read with
``labels="float"``, finite reals >= 0; with ``labels="probability"``, probabilities of
relevance or distributions over labels: :func:`qrels_labels`), scores finite numbers, each
error naming the first bad value's row (its query and doc) and the value itself.
"""

import array
import contextlib
import math
import numbers
import struct
import warnings
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from fastir import _jit
from fastir._jit import helper
from fastir.model.errors import InputError
from fastir.model.ids import Ids, intern_blocks
from fastir.model.ranking import sort_ids
from fastir.options import checked_labels


def from_rows(cls, row_qids, doc_ids, values, source, **extra):
    """A Qrels or Run of rows given with their query ids: rows grouped by query (each query
    keeps its input row order)."""
    with _jit.tier(len(values)):
        block_first, block_code, first = intern_blocks(row_qids.args())
        return assemble(cls, row_qids.take(first), block_code, block_first, doc_ids, values,
                        source, **extra)


def assemble(cls, unique, block_code, block_first, doc_ids, values, source, **extra):
    """A Qrels or Run from rows in blocks: rows ``block_first[b]`` up to the next block's
    first row have query ``unique[block_code[b]]``.

    Queries are sorted by id. A Run (``cls.ROWS_IN_PLACE``: its queries' rows are
    ``starts``/``stops``) whose queries each sit in one block keeps its rows in place (no
    copy); otherwise, and for Qrels (an ``indptr``) unless already in order, rows are
    stably regrouped.
    """
    n_rows = len(values)
    if len(block_code) > 1:  # merge neighbouring blocks of one query
        keep = np.concatenate(([True], block_code[1:] != block_code[:-1]))
        block_code, block_first = block_code[keep], block_first[keep]
    block_len = np.diff(np.append(block_first, n_rows))
    order = _jit.select(sort_ids, len(unique))(unique.args())
    n_queries = len(order)
    rank = np.empty(n_queries, dtype=np.int64)
    rank[order] = np.arange(n_queries)
    block_rank = rank[block_code]
    query_ids = unique.take(order)
    counts = np.zeros(n_queries, dtype=np.int64)
    np.add.at(counts, block_rank, block_len)
    sorted_blocks = bool(np.all(np.diff(block_rank) > 0))
    one_block_each = len(block_rank) == 0 or int(np.bincount(block_rank).max()) == 1
    starts = np.cumsum(counts) - counts
    if sorted_blocks or (cls.ROWS_IN_PLACE and one_block_each):
        starts[block_rank] = block_first
    else:
        permutation = np.argsort(np.repeat(block_rank, block_len), kind="stable")
        doc_ids = doc_ids.take(permutation)
        values = values[permutation]
    stops = starts + counts
    if cls.ROWS_IN_PLACE:
        return cls(query_ids, starts, stops, doc_ids, values, source=source, **extra)
    return cls(query_ids, np.append(starts, n_rows), doc_ids, values, source=source, **extra)


def _columns(source, query_ids, doc_ids, values, values_name):
    """The three columns of ``from_arrays`` checked: 1-d, equal lengths, ids of one kind
    (an id column may already be :class:`Ids`)."""
    arrays = {"query_ids": query_ids, "doc_ids": doc_ids, values_name: values}
    for key, value in arrays.items():
        if isinstance(value, Ids):
            continue
        arrays[key] = np.asarray(value)
        if arrays[key].ndim != 1:
            raise InputError(f"{source}: {key} must be 1-d, got shape {arrays[key].shape}")
    lengths = {key: len(value) for key, value in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{source}: query_ids, doc_ids and {values_name} differ in length "
                         f"({', '.join(f'{k} {n}' for k, n in lengths.items())})")
    ids = []
    for key in ("query_ids", "doc_ids"):
        try:
            ids.append(arrays[key] if isinstance(arrays[key], Ids) else
                       Ids.from_array(arrays[key]))
        except (TypeError, ValueError) as exc:
            raise InputError(f"{source}: {key}: {exc}") from None
    return ids[0], ids[1], arrays[values_name]


def integer_labels(labels, where):
    """``labels`` as int32 if they are integers (or floats holding integers) in 32 bits;
    ``where`` names them in the error."""
    labels = np.asarray(labels)
    if labels.dtype.kind == "f":
        bad = ~np.isfinite(labels) | (labels != np.round(labels))
        if bad.any():
            i = np.unravel_index(int(np.argmax(bad)), labels.shape)
            raise InputError(f"{where}: {labels[i].item()!r} at {_position(i)} is not an integer")
    elif labels.dtype.kind not in "iub":
        raise InputError(f"{where} must be integers, got dtype {labels.dtype}")
    if labels.size and (labels.min() < -(2**31) or labels.max() >= 2**31):
        i = np.unravel_index(int(np.argmax((labels < -(2**31)) | (labels >= 2**31))),
                             labels.shape)
        raise InputError(f"{where}: {labels[i].item()!r} at {_position(i)} does not fit in 32 bits")
    return labels.astype(np.int32)


def finite_scores(scores, where):
    """``scores`` as float64 if they are numbers and finite; ``where`` names them."""
    scores = np.asarray(scores)
    if scores.dtype.kind not in "iuf":
        raise InputError(f"{where} must be numbers, got dtype {scores.dtype}")
    scores = scores.astype(np.float64, copy=False)
    bad = ~np.isfinite(scores)
    if bad.any():
        i = np.unravel_index(int(np.argmax(bad)), scores.shape)
        raise InputError(f"{where}: {scores[i].item()!r} at {_position(i)} is not finite")
    return scores


def row_namer(query_ids, doc_ids):
    """What an error calls row ``i`` of two id columns: ``query 'q1' doc 'd7'``."""
    return lambda i: f"query {query_ids[i]!r} doc {doc_ids[i]!r}"


def run_scores(values, source, row_name):
    """A run's scores, one per row, as float64: numbers and finite, else an InputError naming
    the first bad one's row (``row_name(i)``) and value, worded alike for every input form.

    A number is anything a C double is made from (``float``, ``int``, numpy's numbers, an
    object with ``__float__``) but a bool or text. ``values``: a numpy array, or a list of
    Python objects (checked in bulk by the ``array`` module, never one by one unless one is
    bad)."""
    doubles, bad = _doubles(values)
    why = "is not finite (as a double)" if bad is not None and _overflows(values[bad]) \
        else "is not a number"
    if bad is None:
        infinite = ~np.isfinite(doubles)
        if infinite.any():
            bad, why = int(np.argmax(infinite)), "is not finite"
    if bad is not None:
        raise InputError(f"{source}: {row_name(bad)}: score {_given(values, bad)!r} {why}")
    return doubles


FLOAT_HINT = " (real-valued labels: read them with labels='float')"


def qrels_labels(values, source, row_name, labels="int"):
    """Qrels labels, one per row: (int32 labels, None), or with ``labels="float"`` (int32
    codes, their values: :func:`real_labels`). Integers (or floats holding integers, or
    bools) within 32 bits, else an InputError naming the first bad one's row and value (as
    :func:`run_scores`); a real number is told to pass ``labels='float'``."""
    kind = checked_labels(labels)
    if kind != "int":
        return (real_labels if kind == "float" else probability_labels)(values, source,
                                                                        row_name)
    ints, bad = _int32s(values)
    if bad is not None:
        given = _given(values, bad)
        raise InputError(f"{source}: {row_name(bad)}: label {given!r} is not a 32-bit "
                         f"integer{_float_hint(given)}")
    return ints, None


def _float_hint(given):
    """:data:`FLOAT_HINT` for a label ``labels="float"`` would take (a finite real >= 0),
    else nothing."""
    if not isinstance(given, numbers.Real) or isinstance(given, _BOOLS):
        return ""
    try:
        return FLOAT_HINT if math.isfinite(given) and given >= 0 else ""
    except OverflowError:  # (an integer beyond a double: not a label either way)
        return ""


def real_labels(values, source, row_name):
    """Real-valued labels (``labels="float"``), one per row: (int32 codes, float64 values).
    A row's code is the rank of its label among the distinct labels (code 0 the smallest),
    ``values[code]`` its label: comparisons of labels are comparisons of codes. A label is
    a finite real >= 0 (a bool reads as 1 or 0), else an InputError naming the first bad
    one's row and value."""
    return label_codes(real_values(values, source, row_name))


def real_values(values, source, row_name, labels="float"):
    """Real-valued labels as float64, checked as :func:`real_labels` checks them (with
    ``labels="probability"``, each in [0, 1])."""
    doubles, bad = _doubles(values, bools=True)
    why = "is not a number"
    if bad is None:
        wrong = ~np.isfinite(doubles) | (doubles < 0)
        why = "is not a finite number >= 0"
        if labels == "probability":
            wrong |= doubles > 1
            why = "is not a probability in [0, 1]"
        if wrong.any():
            bad = int(np.argmax(wrong))
    if bad is not None:
        raise InputError(f"{source}: {row_name(bad)}: label {_given(values, bad)!r} {why} "
                         f"(labels={labels!r})")
    return doubles


class Distributions(NamedTuple):
    """Probabilistic labels (``labels="probability"``): ``probs[i, j]`` is the probability
    that label ``i`` (a row's, or a code's) is the integer ``levels[j]`` (``levels``
    ascending, each >= 0; each row of ``probs`` sums to 1). A probability of relevance
    ``p`` is the distribution ``{0: 1 - p, 1: p}``."""

    levels: np.ndarray
    probs: np.ndarray

    def take(self, index):
        """The distributions of labels ``index``."""
        return Distributions(self.levels, self.probs[index])

    def as_python(self):
        """Each label as given: a probability of relevance when the levels are 0 and 1,
        else ``{label: probability}`` (its nonzero ones)."""
        levels = self.levels.tolist()
        if levels == [0, 1]:
            return self.probs[:, 1].tolist()
        return [{levels[j]: p for j, p in enumerate(row) if p > 0}
                for row in self.probs.tolist()]

    @staticmethod
    def of_probabilities(p):
        """Each probability of relevance ``p`` in [0, 1] as ``{0: 1 - p, 1: p}``."""
        return Distributions(np.array([0, 1], dtype=np.int32),
                             np.column_stack((1.0 - p, p)).reshape(-1, 2))

    @staticmethod
    def certain(labels):
        """Integer labels >= 0, each certain."""
        levels, index = np.unique(np.asarray(labels, dtype=np.int32), return_inverse=True)
        return Distributions(levels, np.eye(len(levels))[index.reshape(-1)])


#: How far from 1 a distribution's probabilities may sum (labels="probability").
SUM_TOLERANCE = 1e-9


def probability_labels(values, source, row_name):
    """Probabilistic labels (``labels="probability"``), one per row: (int32 codes, their
    :class:`Distributions`). A label is a probability of relevance in [0, 1], or a
    distribution ``{label: probability}`` over integer labels >= 0 whose probabilities sum
    to 1 (within :data:`SUM_TOLERANCE`; kept divided by their sum); else an InputError
    naming the first bad one's row."""
    try:
        codes, distinct = label_codes(real_values(values, source, row_name, "probability"))
        return codes, Distributions.of_probabilities(distinct)
    except InputError:
        if not any(isinstance(value, Mapping) for value in values):
            raise
    rows = [_distribution(value, source, row_name, i) for i, value in enumerate(values)]
    levels = np.unique(np.fromiter((k for row in rows for k in row), dtype=np.int64))
    probs = np.zeros((len(rows), len(levels)))
    for i, row in enumerate(rows):
        probs[i, np.searchsorted(levels, list(row))] = list(row.values())
    probs /= probs.sum(axis=1, keepdims=True)
    return np.arange(len(rows), dtype=np.int32), Distributions(levels.astype(np.int32), probs)


def _distribution(value, source, row_name, i):
    """Row ``i``'s label (a probability, or ``{label: probability}``) as ``{label:
    probability}``, checked."""
    if not isinstance(value, Mapping):
        p = float(real_values([value], source, lambda _: row_name(i), "probability")[0])
        return {0: 1.0 - p, 1: p}
    where = f"{source}: {row_name(i)}: label distribution {dict(value)!r}"
    labels, bad = _int32s(list(value))
    if bad is not None or (labels < 0).any():
        raise InputError(f"{where}: its labels must be integers >= 0 (labels='probability')")
    probs, bad = _doubles(list(value.values()))
    if bad is not None or not (np.isfinite(probs) & (probs >= 0) & (probs <= 1)).all():
        raise InputError(f"{where}: its probabilities must be numbers in [0, 1] "
                         "(labels='probability')")
    if abs(probs.sum() - 1.0) > SUM_TOLERANCE:
        raise InputError(f"{where}: its probabilities sum to {float(probs.sum())!r}, not 1 "
                         "(labels='probability')")
    return dict(zip(labels.tolist(), probs.tolist()))


def refuse_real_subtopics(labels, source):
    """An InputError when subtopic judgments are asked with ``labels="float"`` or
    ``"probability"``."""
    if labels != "int":
        raise InputError(f"{source}: subtopic judgments take integer labels only "
                         f"(labels={labels!r}): the diversity measures count a document "
                         "relevant to an intent by its integer label")


def label_codes(doubles):
    """(int32 codes, sorted distinct float64 values) of finite labels >= 0."""
    distinct, codes = np.unique(np.asarray(doubles, dtype=np.float64) + 0.0,
                                return_inverse=True)  # (+ 0.0: -0.0 is 0.0)
    return codes.astype(np.int32).reshape(-1), distinct


def _given(values, i):
    value = values[i]
    return value.item() if isinstance(value, np.generic) else value


def _doubles(values, bools=False):
    """(float64 array, None), or (None, the first row that is not a number: with ``bools``,
    True and False are the numbers 1 and 0). An integer beyond a double's range is a number
    (inf: refused as not finite)."""
    if isinstance(values, np.ndarray):
        if values.dtype.kind in ("iufb" if bools else "iuf"):
            return values.astype(np.float64, copy=False), None
        if values.dtype.kind != "O":
            return None, 0  # (text, bools, dates...: the first row is not a number)
        values = values.tolist()
    try:
        doubles = _packed_doubles(values)
    except (TypeError, OverflowError, struct.error):
        return None, _first_not_double(values, bools)
    zero_one = [] if bools else np.flatnonzero((doubles == 0.0) | (doubles == 1.0)).tolist()
    if zero_one and any(issubclass(kind, _BOOLS) for kind in
                        set(map(type, map(values.__getitem__, zero_one)))):
        return None, next(i for i in zero_one if isinstance(values[i], _BOOLS))
    return doubles, None


_BOOLS = (bool, np.bool_)  # (the array module reads them as 1 and 0)


def _overflows(value):
    """Whether a real number is beyond a double's range (an integer such as 10**400)."""
    if not isinstance(value, numbers.Real) or isinstance(value, _BOOLS):
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False


#: Values packed per ``struct.pack_into`` call (its arguments are one tuple: bounded memory).
_PACK_CHUNK = 1 << 16


def _packed_doubles(values):
    """``values`` (a list) as float64, at C speed: ``struct``'s ``d`` takes a value as
    ``array("d")`` does (``PyFloat_AsDouble``: a float, an int, an object with ``__float__``
    or ``__index__``), about twice as fast; any value it refuses raises (a ``struct.error``,
    a ``TypeError`` for a complex number: see :func:`_c_doubles`), and the caller then finds
    the row one value at a time, as ``array("d")`` reads it."""
    n = len(values)
    out = np.empty(n, dtype=np.float64)
    with _complex_refused():
        for lo in range(0, n, _PACK_CHUNK):
            part = values[lo:lo + _PACK_CHUNK]
            struct.pack_into(f"{len(part)}d", out, 8 * lo, *part)
    return out


def _c_doubles(values):
    """``array("d", values)``: a C array of the doubles of numbers (a TypeError for anything
    else: a complex number too, which numpy's would turn into its real part with a warning)."""
    with _complex_refused():
        return array.array("d", values)


@contextlib.contextmanager
def _complex_refused():
    """A numpy complex scalar read as a double (numpy's ComplexWarning: its real part kept)
    raises a TypeError instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            yield
        except np.exceptions.ComplexWarning:
            raise TypeError("a complex number is not a score") from None


def _first_not_double(values, bools):
    """The first value that is not a number (or a bool, unless ``bools``), or that
    overflows a double (then refused as not finite, as a NaN would be)."""
    for i, value in enumerate(values):
        if not bools and isinstance(value, _BOOLS):
            return i
        try:
            _c_doubles([value])
        except (TypeError, OverflowError):
            return i
    raise AssertionError("array('d') refused a list whose every value it takes")


def _int32s(values):
    """(int32 array, None), or (None, the first row that is not a 32-bit integer)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iub":
        wide = values.astype(np.int64)
        outside = (wide < -(2**31)) | (wide >= 2**31)
        return (None, int(np.argmax(outside))) if outside.any() else (wide.astype(np.int32),
                                                                       None)
    if not isinstance(values, np.ndarray):
        try:  # (Python ints and bools, in range: at once)
            return np.frombuffer(array.array("i", values), dtype=np.int32), None
        except (TypeError, OverflowError):  # (floats holding integers, or a bad value)
            pass
    doubles, bad = _doubles(values, bools=True)
    if bad is not None:
        return None, bad
    wrong = ~np.isfinite(doubles) | (doubles != np.round(doubles)) | (doubles < -(2**31)) | \
        (doubles >= 2**31)
    if wrong.any():
        return None, int(np.argmax(wrong))
    return doubles.astype(np.int32), None


def float32_scores(scores):
    """Finite float64 ``scores`` as trec_eval 9.0.8 (and pytrec_eval) keep them: stored in a
    C ``float``, so rounded to float32, and a value beyond float32's range (``1e39``)
    becomes +inf or -inf; the ranking then breaks ties among them by docno, as 9.0.8 does.
    Returned as float64. With :func:`float32_score` (the same for one score, in kernels),
    the one place fastir applies 9.0.8's rounding."""
    with np.errstate(over="ignore"):  # (overflow to +-inf is the point)
        return np.asarray(scores, dtype=np.float64).astype(np.float32).astype(np.float64)


@helper
def float32_score(score):
    """:func:`float32_scores` of one finite score, in a kernel."""
    return np.float64(np.float32(score))


def _position(index):
    return f"row {index[0]}" if len(index) == 1 else f"index {tuple(int(k) for k in index)}"
