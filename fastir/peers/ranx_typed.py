"""ranx's form of a ``{query: {doc: value}}`` table: a numba typed dict (text ids) of typed
dicts, as ranx's ``run.run`` and ``qrels.qrels`` are and ranx's own numba functions take.

Imported when a table is first asked for in that form (it imports numba). Tables go in and
out of that form by compiled kernels over the rows laid end to end, ids in numpy text
arrays: Python pays a call into numba for each item it reads or writes in a typed dict
(about 5 us). numpy drops a text's trailing NULs, so each id crosses with one character
more, cut off on the other side.
"""

import numpy as np
from numba.typed import Dict

from fastir import _jit

_MARK = "|"  # (the character each id crosses with)


def typed_table(table, value):
    """``table`` in ranx's form, in the same order (``value`` ``float``: float64 values,
    ``int``: int64). Raises TypeError naming an id that is not text."""
    queries = np.array([text_id(q, "query") + _MARK for q in table], dtype=np.str_)
    docs = np.array([text_id(d, "doc") + _MARK for rows in table.values() for d in rows],
                    dtype=np.str_)
    values = np.fromiter((v for rows in table.values() for v in rows.values()),
                         dtype=_dtype(value), count=len(docs))
    bounds = np.zeros(len(queries) + 1, dtype=np.int64)
    np.cumsum([len(rows) for rows in table.values()], out=bounds[1:])
    return _jit.compiled(_filled)(queries, docs, values, bounds)


def typed_rows(rows, value):
    """One query's ``{doc: value}`` in ranx's form (see :func:`typed_table`)."""
    return typed_table({"": rows}, value)[""]


def plain_table(typed, value):
    """A table in ranx's form as plain dicts, in the same order."""
    n_rows, width = _jit.compiled(_extent)(typed)
    queries = np.empty(len(typed), dtype=f"U{width}")
    docs = np.empty(n_rows, dtype=f"U{width}")
    values = np.empty(n_rows, dtype=_dtype(value))
    bounds = np.empty(len(typed) + 1, dtype=np.int64)
    _jit.compiled(_flattened)(typed, queries, docs, values, bounds)
    docs, values = [d[:-1] for d in docs.tolist()], values.tolist()
    return {q[:-1]: dict(zip(docs[bounds[i]:bounds[i + 1]], values[bounds[i]:bounds[i + 1]]))
            for i, q in enumerate(queries.tolist())}


def text_id(name, what):
    """``name``, a ``what`` id (query, doc), if it is text (ranx's typed dicts hold text)."""
    if not isinstance(name, str):
        raise TypeError(f"ranx's typed tables hold text ids: {what} id {name!r} is of type "
                        f"{type(name).__name__}; give ids as str")
    return name


def _dtype(value):
    return np.float64 if value is float else np.int64


@_jit.jit
def _filled(queries, docs, values, bounds):
    """The typed dict of query ``queries[q]``'s docs ``docs[i]`` and values ``values[i]``,
    ``i`` in ``bounds[q]:bounds[q + 1]`` (each id less its last character)."""
    table = Dict()
    for q in range(len(queries)):
        rows = Dict()
        for i in range(bounds[q], bounds[q + 1]):
            doc = str(docs[i])
            rows[doc[:len(doc) - 1]] = values[i]
        query = str(queries[q])
        table[query[:len(query) - 1]] = rows
    return table


@_jit.jit
def _extent(typed):
    """A typed table's number of rows and its longest id's length, plus one."""
    n_rows, width = 0, 1
    for query, rows in typed.items():
        width = max(width, len(query) + 1)
        for doc in rows.keys():
            width = max(width, len(doc) + 1)
            n_rows += 1
    return n_rows, width


@_jit.jit
def _flattened(typed, queries, docs, values, bounds):
    """A typed table's rows end to end: query ``j``'s are ``bounds[j]:bounds[j + 1]`` of
    ``docs`` and ``values`` (each id with one character more)."""
    k = 0
    for j, (query, rows) in enumerate(typed.items()):
        queries[j] = query + _MARK
        bounds[j] = k
        for doc, value in rows.items():
            docs[k] = doc + _MARK
            values[k] = value
            k += 1
    bounds[len(typed)] = k
