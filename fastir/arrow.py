"""Arrow and Parquet (needs pyarrow): runs and qrels from Arrow tables, Parquet files in and
out. Text id columns become fastir's id columns from their Arrow buffers (no Python string
per row); a dictionary-encoded column is its dictionary taken at its indices."""

import numpy as np

from fastir.data import InputError, Qrels, Run, _build, finite_scores, integer_labels
from fastir.ids import Ids

__all__ = ["qrels_from_arrow", "read_parquet", "run_from_arrow", "write_parquet"]


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        raise ImportError("Arrow and Parquet need pyarrow: pip install 'fastir[arrow]'") from None
    return pyarrow


def run_from_arrow(data, query_col="query_id", doc_col="doc_id", score_col="score", name="run",
                   source="run arrow"):
    """A :class:`Run` from an Arrow table or record batch (or ``{column: array}``)."""
    qids, docs, scores = _columns(data, (query_col, doc_col, score_col), source)
    return _build(Run, qids, docs, finite_scores(scores, f"{source}: {score_col}"), source,
                  name=name)


def qrels_from_arrow(data, query_col="query_id", doc_col="doc_id", label_col="relevance",
                     source="qrels arrow"):
    """A :class:`Qrels` from an Arrow table or record batch (or ``{column: array}``)."""
    qids, docs, labels = _columns(data, (query_col, doc_col, label_col), source)
    return _build(Qrels, qids, docs, integer_labels(labels, f"{source}: {label_col}"), source)


def _columns(data, names, source):
    """(query Ids, doc Ids, values as numpy) of three named columns of equal length."""
    pa = _pyarrow()
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
    for n, c in zip(names, columns):
        if c.null_count:
            raise InputError(f"{source}: column {n!r} has {c.null_count} nulls (first at row "
                             f"{_first_null(c)}): fill or drop them first")
    return (ids_from_arrow(columns[0], f"{source}: {names[0]}"),
            ids_from_arrow(columns[1], f"{source}: {names[1]}"),
            _numbers(columns[2], f"{source}: {names[2]}"))


def _first_null(column):
    return int(np.argmax(column.is_null().to_numpy(zero_copy_only=False)))


def ids_from_arrow(column, where):
    """An :class:`~fastir.ids.Ids` column from an Arrow array of text, binary or integers,
    or a dictionary of those."""
    pa = _pyarrow()
    kind = column.type
    if pa.types.is_dictionary(kind):
        indices = column.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        return ids_from_arrow(column.dictionary, where).take(indices)
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


def _numbers(column, where):
    pa = _pyarrow()
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        raise InputError(f"{where} must be numbers, got Arrow type {column.type}")
    return column.to_numpy(zero_copy_only=False)


def ids_to_arrow(ids):
    """An Arrow array of an :class:`~fastir.ids.Ids` column (integers kept as text when
    they came from text)."""
    pa = _pyarrow()
    if ids.is_int and not ids.text:
        return pa.array(ids.values)
    ids = ids.as_text() if ids.is_int else ids
    return pa.Array.from_buffers(pa.large_string(), len(ids),
                                 [None, pa.py_buffer(ids.offsets), pa.py_buffer(ids.data)])


def read_parquet(path, kind="run", *, query_col="query_id", doc_col="doc_id", value_col=None,
                 name=None):
    """A :class:`Run` (``kind="run"``; ``value_col`` defaults to ``score``) or
    :class:`Qrels` (``kind="qrels"``; ``relevance``) from a Parquet file. Only the three
    columns are read; the query ids as a dictionary."""
    if kind not in ("run", "qrels"):
        raise ValueError(f"kind must be 'run' or 'qrels', got {kind!r}")
    pa = _pyarrow()
    import pyarrow.parquet as pq

    value_col = value_col or ("score" if kind == "run" else "relevance")
    columns = [query_col, doc_col, value_col]
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"{path}: cannot read as Parquet: {exc}") from None
    absent = [c for c in columns if c not in schema.names]
    if absent:
        raise InputError(f"{path}: no column {absent[0]!r} (columns: {schema.names}); pass "
                         "query_col=, doc_col= or value_col=")
    table = pq.read_table(path, columns=columns, read_dictionary=[query_col])
    if kind == "run":
        return run_from_arrow(table, *columns, name=name or "run", source=str(path))
    return qrels_from_arrow(table, *columns, source=str(path))


def write_parquet(data, path):
    """Write a :class:`Run` (``query_id``, ``doc_id``, ``score``: each query's rows in
    order), a :class:`Qrels` (``query_id``, ``doc_id``, ``relevance``) or a
    :class:`~fastir.Results` (``query_id`` and one column per measure) as Parquet."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    from fastir.results import Results

    if isinstance(data, Results):
        columns = {"query_id": ids_to_arrow(data.ids)}
        for j, key in enumerate(data.measures):
            columns[key] = pa.array(data.strings[key]) if key in data.strings else \
                pa.array(data.values[:, j])
    elif isinstance(data, (Run, Qrels)):
        if isinstance(data, Run):
            starts, stops, values = data.starts, data.stops, ("score", data.scores)
        else:
            starts, stops = data.indptr[:-1], data.indptr[1:]
            values = ("relevance", data.labels)
        counts = stops - starts
        query = np.repeat(np.arange(len(counts)), counts)
        rows = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts) + \
            np.repeat(starts, counts)
        columns = {"query_id": pa.DictionaryArray.from_arrays(
                       pa.array(query.astype(np.int32)), ids_to_arrow(data.query_ids)),
                   "doc_id": ids_to_arrow(data.doc_ids.take(rows)),
                   values[0]: pa.array(values[1][rows])}
    else:
        raise TypeError(f"write_parquet writes a Run, Qrels or Results, got "
                        f"{type(data).__name__}")
    pq.write_table(pa.table(columns), path)
