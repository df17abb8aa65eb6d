"""Parquet files (needs pyarrow): runs and qrels in, runs, qrels and results out."""

import os

import numpy as np

from fastir._optional import require
from fastir.model.arrow import ids_to_arrow, pyarrow_module
from fastir.model.data import Qrels, Run
from fastir.model.errors import InputError
from fastir.output.writing import atomic_write
from fastir.results import Results

__all__ = ["read_parquet", "write_parquet"]


def read_parquet(path, kind="run", *, query_col="query_id", doc_col="doc_id", value_col=None,
                 name=None):
    """A :class:`Run` (``kind="run"``; ``value_col`` defaults to ``score``) or
    :class:`Qrels` (``kind="qrels"``; ``relevance``) from a Parquet file. Only the three
    columns are read; the query ids as a dictionary."""
    if kind not in ("run", "qrels"):
        raise ValueError(f"kind must be 'run' or 'qrels', got {kind!r}")
    pa = pyarrow_module()
    pq = require("pyarrow.parquet", "Parquet files")

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
        return Run.from_arrow(table, *columns, name=name or "run", source=str(path))
    return Qrels.from_arrow(table, *columns, source=str(path))


def write_parquet(data, path):
    """Write a :class:`Run` (``query_id``, ``doc_id``, ``score``: each query's rows in
    order), a :class:`Qrels` (``query_id``, ``doc_id``, ``relevance``) or a
    :class:`~fastir.Results` (``query_id`` and one column per measure) as Parquet. A path is
    written whole or not at all (:func:`~fastir.output.writing.atomic_write`); a file object
    or pyarrow sink as pyarrow writes it."""
    pa = pyarrow_module()
    pq = require("pyarrow.parquet", "Parquet files")

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
    table = pa.table(columns)
    if not isinstance(path, (str, os.PathLike)):
        pq.write_table(table, path)
        return
    with atomic_write(path, binary=True) as f:
        pq.write_table(table, f)
