"""Qrels and runs from Arrow tables (needs pyarrow): text id columns from their Arrow
buffers (no Python string per row), a dictionary-encoded column as its dictionary taken at
its indices, values checked as every form's are; and id columns back to Arrow. Parquet files
are :mod:`fastir.io.parquet`'s."""

import numpy as np

from fastir._optional import require
from fastir.model.errors import InputError
from fastir.model.ids import Ids
from fastir.model.values import from_rows, qrels_labels, row_namer, run_scores


def qrels_from_arrow(cls, data, query_col="query_id", doc_col="doc_id", label_col="relevance",
                     source="qrels arrow", labels="int"):
    """A :class:`~fastir.Qrels` (``cls``) of three columns of an Arrow table or record batch (or
    ``{column: Arrow array}``); ``labels``: "int", "float" (real labels) or "probability"."""
    qids, docs, values = columns(data, (query_col, doc_col, label_col), source)
    codes, label_values = qrels_labels(values, source, row_namer(qids, docs), labels)
    return from_rows(cls, qids, docs, codes, source, label_values=label_values)


def run_from_arrow(cls, data, query_col="query_id", doc_col="doc_id", score_col="score",
                   name="run", source="run arrow"):
    """A :class:`~fastir.Run` (``cls``) of three columns of an Arrow table or record batch (or
    ``{column: Arrow array}``)."""
    qids, docs, scores = columns(data, (query_col, doc_col, score_col), source)
    return from_rows(cls, qids, docs, run_scores(scores, source, row_namer(qids, docs)), source,
                  name=name)


def pyarrow_module():
    """pyarrow, or a ModuleNotFoundError naming the ``arrow`` extra."""
    return require("pyarrow", "Arrow tables and Parquet files")


def columns(data, names, source):
    """(query Ids, doc Ids, values) of three named columns of equal length: the values as
    numpy, or as Python objects when some are null (their check names the first)."""
    pa = pyarrow_module()
    have = list(data.keys()) if isinstance(data, dict) else list(data.column_names)
    absent = [n for n in names if n not in have]
    if absent:
        raise InputError(f"{source}: no column {absent[0]!r} (columns: {have}); pass the "
                         "column names, e.g. query_col=, doc_col=")
    columns = [data[n] if isinstance(data, dict) else data.column(n) for n in names]
    columns = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else pa.array(c)
               if not isinstance(c, pa.Array) else c for c in columns]
    lengths = {n: len(c) for n, c in zip(names, columns)}
    if len(set(lengths.values())) > 1:
        raise InputError(f"{source}: columns differ in length ({lengths})")
    for n, c in zip(names[:2], columns):
        if c.null_count:
            raise InputError(f"{source}: column {n!r} has {c.null_count} nulls (first at row "
                             f"{_first_null(c)}): fill or drop them first")
    values = columns[2]
    return (ids_from_arrow(columns[0], f"{source}: {names[0]}"),
            ids_from_arrow(columns[1], f"{source}: {names[1]}"),
            values.to_pylist() if values.null_count else values.to_numpy(zero_copy_only=False))


def _first_null(column):
    return int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))


def ids_from_arrow(column, where):
    """An :class:`~fastir.model.ids.Ids` column from an Arrow array of text, binary or integers,
    or a dictionary of those."""
    pa = pyarrow_module()
    kind = column.type
    if pa.types.is_dictionary(kind):
        indices = column.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if column.dictionary.null_count:  # (the column's own null check sees indices only)
            null = column.dictionary.is_null().to_numpy(zero_copy_only=False)[indices]
            if null.any():
                raise InputError(f"{where}: {int(null.sum())} ids are null (its dictionary "
                                 f"holds a null; first at row {int(np.argmax(null))}): fill "
                                 "or drop them first")
        return ids_from_arrow(column.dictionary.filter(column.dictionary.is_valid()), where) \
            .take(_valid_positions(column.dictionary, indices))
    if pa.types.is_integer(kind):
        return Ids.from_array(column.to_numpy(zero_copy_only=False))
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        column = column.cast(pa.large_string())
    elif pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        column = column.cast(pa.large_binary())
    else:
        raise InputError(f"{where}: ids must be text, binary or integers, got Arrow type {kind}")
    _, offsets, data = column.buffers()
    offsets = np.frombuffer(offsets, dtype=np.int64)[column.offset:column.offset + len(column)
                                                     + 1]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return Ids(data[offsets[0]:offsets[-1]], offsets - offsets[0])


def _valid_positions(dictionary, indices):
    """``indices`` into a dictionary with its nulls filtered out (none are taken)."""
    valid = dictionary.is_valid().to_numpy(zero_copy_only=False)
    return (np.cumsum(valid) - 1)[indices]


def ids_to_arrow(ids):
    """An Arrow array of an :class:`~fastir.model.ids.Ids` column (integers kept as text when
    they came from text)."""
    pa = pyarrow_module()
    if ids.is_int:  # (canonical decimal text: Arrow's cast writes it back, digit for digit)
        return pa.array(ids.values).cast(pa.large_string()) if ids.text else \
            pa.array(ids.values)
    return pa.Array.from_buffers(pa.large_string(), len(ids),
                                 [None, pa.py_buffer(ids.offsets), pa.py_buffer(ids.data)])
