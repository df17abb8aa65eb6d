"""Qrels and runs from an iterable of records: ir_measures' ``Qrel`` / ``ScoredDoc``,
ir_datasets' ``TrecQrel`` / ``ScoredDoc`` (any namedtuple with ``query_id``, ``doc_id`` and
``relevance`` or ``score`` fields) or plain ``(query_id, doc_id, value)`` tuples.

The records are read in chunks: each chunk's ids are packed into a byte column (or an integer
column) and its values into an array before the next chunk is read, so a generator over a
large file never holds a Python object per row, let alone a dict per query.
"""

import functools
import itertools
import operator

import numpy as np

from fastir import _jit
from fastir.model.data import Qrels, Run
from fastir.model.errors import InputError
from fastir.model.ids import Ids, ascii_column, intern_blocks
from fastir.model.values import (
    Distributions,
    assemble,
    label_codes,
    qrels_labels,
    real_values,
    run_scores,
)

#: The fields a record is read by, per kind (ir_measures' and ir_datasets' names).
FIELDS = {"qrels": ("query_id", "doc_id", "relevance"), "run": ("query_id", "doc_id", "score")}
CHUNK = 1 << 16  # records packed at a time


def read_records(records, kind, labels="int"):
    """A :class:`~fastir.Qrels` (``kind="qrels"``) or :class:`~fastir.Run` (``"run"``)
    from an iterable of records.

    Parameters
    ----------
    records : iterable
        Namedtuples with the fields ``query_id``, ``doc_id`` and ``relevance`` (qrels) or
        ``score`` (run), other fields ignored (``iteration``), or plain 3-tuples in that
        order; each record is read by its own layout (namedtuples of several kinds may be
        mixed). Read once, in chunks of 65,536 records.
    kind : {"qrels", "run"}
    labels : {"int", "float", "probability"}
        A qrels' labels: integers, finite reals >= 0 (``labels="float"``), or probabilities
        of relevance in [0, 1] (``"probability"``).

    Returns
    -------
    Qrels or Run
        As from :meth:`~fastir.Qrels.from_arrays`: ids stay integers when every one is an
        integer, labels are checked to be 32-bit integers, scores finite numbers.

    Raises
    ------
    InputError
        Naming the first record that is not one (its position and value), or the query and
        doc of the first bad value.

    Examples
    --------
    >>> from fastir.io.records import read_records
    >>> read_records([("q1", "d1", 2), ("q1", "d2", 0)], "qrels")
    Qrels(1 queries, 2 judgments, from qrels records)
    """
    source = f"{kind} records"
    container = Qrels if kind == "qrels" else Run
    check = run_scores if kind == "run" else qrels_labels if labels == "int" else \
        functools.partial(real_values, labels=labels)
    parts = [_pack(chunk, first, kind, source, check) for first, chunk in
             _chunks(iter(records))]
    if not parts:
        return container.from_dict({}, source=source, **({} if kind == "run" else
                                                          {"labels": labels}))
    qids, docs = (_concat([part[i] for part in parts], source) for i in (0, 1))
    values = np.concatenate([part[2] for part in parts])
    with _jit.tier(len(values)):
        block_first, block_code, first_rows = intern_blocks(qids.args())
        extra = {} if kind == "qrels" else {"name": "run"}
        if kind == "qrels" and labels != "int":  # (codes of the labels of every chunk)
            values, extra["label_values"] = label_codes(values)
            if labels == "probability":
                extra["label_values"] = Distributions.of_probabilities(extra["label_values"])
        return assemble(container, qids.take(first_rows), block_code, block_first, docs,
                        values, source, **extra)


def _chunks(records):
    """(position of its first record, list of records) of successive chunks."""
    first = 0
    while True:
        chunk = list(itertools.islice(records, CHUNK))
        if not chunk:
            return
        yield first, chunk
        first += len(chunk)


def _pack(chunk, first, kind, source, check):
    """One chunk of records as two id columns and an array of values checked by ``check``
    (:func:`~fastir.model.values.qrels_labels`, ``real_values`` or ``run_scores``)."""
    qids, docs, values = _fields(chunk, first, kind, source)
    columns = [_ids(qids, "query ids", source), _ids(docs, "doc ids", source)]

    def row_name(i):
        return f"query {qids[i]!r} doc {docs[i]!r}"

    checked = check(values, source, row_name)
    return (*columns, checked[0] if check is qrels_labels else checked)


def _fields(chunk, first, kind, source):
    """The query ids, doc ids and values of a chunk's records, each read by its own layout:
    at once (C-level getters) when every record has one layout, as is usual."""
    kinds = set(map(type, chunk))
    getters = {k: _getters(k, chunk, first, kind, source) for k in kinds}
    plain = {k for k in kinds if getattr(k, "_fields", None) is None}
    if plain:  # (a plain tuple of another length is not a record)
        rows = chunk if len(kinds) == 1 else [r for r in chunk if type(r) in plain]
        if set(map(len, rows)) != {3}:
            i = next(i for i, r in enumerate(chunk) if type(r) in plain and len(r) != 3)
            _not_a_record(chunk[i], first + i, kind, source)
    if len(kinds) == 1:
        return [list(map(get, chunk)) for get in getters.popitem()[1]]
    return [[getters[type(r)][f](r) for r in chunk] for f in range(3)]


def _getters(record_type, chunk, first, kind, source):
    """How to read the query id, the doc id and the value from a record of ``record_type``."""
    fields = getattr(record_type, "_fields", None)
    wanted = FIELDS[kind]
    if fields is not None and issubclass(record_type, tuple):
        missing = [f for f in wanted if f not in fields]
        if missing:
            i = next(i for i, r in enumerate(chunk) if type(r) is record_type)
            raise InputError(f"{source}: records need the fields {list(wanted)}; record "
                             f"{first + i} ({record_type.__name__}) has {list(fields)} "
                             f"(missing {missing})")
        return [operator.itemgetter(fields.index(f)) for f in wanted]
    if issubclass(record_type, (tuple, list)):
        return [operator.itemgetter(i) for i in range(3)]
    i = next(i for i, r in enumerate(chunk) if type(r) is record_type)
    _not_a_record(chunk[i], first + i, kind, source)


def _not_a_record(record, position, kind, source):
    wanted = FIELDS[kind]
    raise InputError(f"{source}: record {position} is {record!r}: a record is a namedtuple "
                     f"with fields {list(wanted)} or a tuple ({', '.join(wanted)})")


def _ids(items, what, source):
    """A chunk's ids as a column: ASCII text packed at once, anything else (integers, bytes,
    other text) as :meth:`~fastir.model.ids.Ids.from_array` packs it."""
    packed = ascii_column(items)
    if packed is not None:
        return packed
    array = np.empty(len(items), dtype=object)
    array[:] = items
    try:
        return Ids.from_array(array)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: {what}: {exc}") from None


def _concat(columns, source):
    """Id columns of successive chunks as one column (all integers or all text)."""
    if len(columns) == 1:
        return columns[0]
    if len({c.is_int for c in columns}) > 1:
        raise InputError(f"{source}: ids must be all str/bytes or all integers, got both")
    if columns[0].is_int:
        return Ids(values=np.concatenate([c.values for c in columns]))
    shifts = np.cumsum([0] + [int(c.offsets[-1]) for c in columns[:-1]])
    offsets = np.concatenate([[0]] + [c.offsets[1:] + s for c, s in zip(columns, shifts)])
    return Ids(np.concatenate([c.data for c in columns]), offsets)
