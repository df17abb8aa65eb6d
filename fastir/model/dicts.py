"""Qrels and runs from ``{query_id: {doc_id: value}}`` dicts (pytrec_eval's, ranx's and
BEIR's shape), converted in bulk: no Python work per row.

A dict's rows are gathered by C-level operations, once for all queries: the doc ids joined
into one text (a NUL between ids), encoded once and cut at the NULs by numpy; the values
copied into a C array by the ``array`` module, which refuses what is not a number. Only a
dict holding a bad value, or ids that are not text, takes a slower path, which finds the
bad row and names its query and doc (:func:`fastir.model.values.run_scores`).
"""

import itertools

import numpy as np

from fastir import _jit
from fastir.model import subtopics as subtopic_judgments
from fastir.model.errors import InputError
from fastir.model.ids import Ids, intern_blocks, listed
from fastir.model.values import assemble, qrels_labels, refuse_real_subtopics, run_scores


def run_from_dict(cls, run, name="run", source="run dict"):
    """A :class:`~fastir.Run` (``cls``) of ``{query_id: {doc_id: score}}``."""
    return _from_dict(cls, run, "score", run_scores, source, name=name)


def qrels_from_dict(cls, qrels, source="qrels dict", labels="int"):
    """A :class:`~fastir.Qrels` (``cls``) of ``{query_id: {doc_id: label}}``, or of subtopic
    judgments ``{query_id: {doc_id: {subtopic: label}}}`` (the diversity measures);
    ``labels``: "int", "float" (real labels) or "probability" (probabilities of relevance,
    or distributions ``{label: probability}``: :func:`~fastir.model.values.qrels_labels`)."""
    try:
        return _from_dict(cls, qrels, "label", lambda values, source, row_name: qrels_labels(
            values, source, row_name, labels), source)
    except InputError:  # (a probabilistic label may be a dict: a distribution)
        if labels == "probability" or not _holds_subtopics(qrels):
            raise
    refuse_real_subtopics(labels, source)
    return _from_subtopic_dict(cls, qrels, source)


def _from_dict(cls, mapping, what, checked_values, source, **extra):
    """``cls`` of a dict of dicts; ``checked_values(values, source, row_name)`` makes the
    values' array, or a qrels' (codes, label values) (its check names the row of a bad
    one)."""
    keys = list(mapping)
    tables = list(mapping.values())
    _check_tables(keys, tables, what, source)
    lengths = np.fromiter(map(len, tables), dtype=np.int64, count=len(tables))
    starts = np.cumsum(lengths) - lengths
    values = list(itertools.chain.from_iterable(map(dict.values, tables)))

    def row_name(i):
        q = int(np.searchsorted(starts, i, side="right")) - 1
        while not lengths[q]:  # (an empty query starts where the next one does)
            q -= 1
        doc = next(itertools.islice(iter(tables[q]), i - int(starts[q]), None))
        return f"query {keys[q]!r} doc {doc!r}"

    values = checked_values(values, source, row_name)
    if isinstance(values, tuple):  # (a qrels' labels: their codes, and their values)
        values, extra["label_values"] = values
    docs = _doc_column(tables, len(values), source)
    query_ids = id_column(keys, "query ids", source)
    with _jit.tier(len(values)):
        _distinct_keys(query_ids, keys, source)
        ranked = np.flatnonzero(lengths)
        return assemble(cls, query_ids, ranked, starts[ranked], docs, values, source, **extra)


def _check_tables(keys, tables, what, source):
    """Every query maps to a dict, or an InputError naming the first that does not."""
    if all(issubclass(kind, dict) for kind in set(map(type, tables))):
        return
    q = next(q for q, table in enumerate(tables) if not isinstance(table, dict))
    raise InputError(f"{source}: query {keys[q]!r} maps to {type(tables[q]).__name__}, "
                     f"expected a dict {{doc_id: {what}}}")


def _doc_column(tables, n_rows, source):
    """The doc ids of every row, packed: text ids joined and cut at once; other ids (bytes,
    integers, a text holding a NUL) one by one."""
    try:
        text = "\0".join(map("\0".join, filter(None, tables)))
        data = np.frombuffer(text.encode("utf-8", "surrogateescape"), dtype=np.uint8)
    except (TypeError, UnicodeEncodeError):
        data = None
    if data is not None:
        packed, offsets = _jit.select(_cut_at_nuls, len(data))(data, n_rows)
        if len(offsets):  # (else an id holds a NUL)
            return Ids(packed, offsets)
    return id_column(list(itertools.chain.from_iterable(tables)), "doc ids", source)


@_jit.jit
def _cut_at_nuls(data, n_rows):
    """``n_rows`` ids joined with a NUL between them, cut in one pass: (their bytes without
    the NULs, their offsets), or empty offsets when ``data`` holds another number of NULs
    (an id holding a NUL)."""
    offsets = np.empty(n_rows + 1, dtype=np.int64)
    packed = np.empty(len(data), dtype=np.uint8)
    offsets[0] = 0
    row = 0
    at = 0
    for p in range(len(data)):
        c = data[p]
        if c == 0:
            row += 1
            if row >= n_rows:
                return packed[:0], offsets[:0]
            offsets[row] = at
        else:
            packed[at] = c
            at += 1
    if row != max(n_rows - 1, 0):
        return packed[:0], offsets[:0]
    offsets[n_rows] = at
    return packed[:at], offsets


@_jit.python_variant(_cut_at_nuls)
def _cut_at_nuls(data, n_rows):
    cuts = np.flatnonzero(data == 0)
    if len(cuts) != max(n_rows - 1, 0):
        return data[:0], np.zeros(0, dtype=np.int64)
    offsets = np.empty(n_rows + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:-1] = cuts - np.arange(len(cuts))
    offsets[-1] = len(data) - len(cuts)
    return (data[data != 0] if len(cuts) else data), offsets


def id_column(items, what, source):
    """Python ids (a dict's keys) as an :class:`Ids` column, or an error naming them."""
    column = np.empty(len(items), dtype=object)
    column[:] = items
    try:
        return Ids.from_array(column)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: {what}: {exc}") from None


def _distinct_keys(query_ids, keys, source):
    """A dict whose keys name fewer queries than it has (``b"q1"`` and ``"q1"`` are one id):
    an error naming two such keys, rather than one query made of both."""
    if len(intern_blocks(query_ids.args())[2]) == len(keys):
        return
    seen = {}
    for key in keys:
        if listed(key) in seen:
            raise InputError(f"{source}: keys {seen[listed(key)]!r} and {key!r} are the same "
                             "query id: give each query once")
        seen[listed(key)] = key


def _holds_subtopics(qrels):
    """Whether some doc of a qrels dict maps to a dict (subtopic judgments)."""
    tables = [t for t in qrels.values() if isinstance(t, dict)]
    return dict in set(map(type, itertools.chain.from_iterable(map(dict.values, tables))))


def _from_subtopic_dict(cls, judged, source):
    """From ``{qid: {doc: {subtopic: label}}}`` (labels checked in place): the doc-level
    qrels (a doc's largest label), with their :class:`~fastir.model.subtopics.Subtopics`."""
    doc_level = {}
    for qid, docs in judged.items():
        if not isinstance(docs, dict) or not all(isinstance(p, dict) for p in docs.values()):
            raise InputError(f"{source}: query {qid!r}: subtopic qrels map each doc to "
                             "{subtopic: label}")
        for doc, pairs in docs.items():
            pairs.update(zip(pairs, qrels_labels(list(pairs.values()), source,
                                                 _subtopic_namer(qid, doc, list(pairs)))[0]
                             .tolist()))
        doc_level[qid] = {doc: max(pairs.values()) for doc, pairs in docs.items() if pairs}
    qrels = qrels_from_dict(cls, doc_level, source)
    qrels.subtopics = subtopic_judgments.of_qrels(qrels, judged)
    return qrels


def _subtopic_namer(qid, doc, subtopics):
    return lambda i: f"query {qid!r} doc {doc!r} subtopic {subtopics[i]!r}"
