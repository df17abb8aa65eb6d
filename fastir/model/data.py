"""The data model: qrels and runs as CSR arrays, one row segment per query.

Both containers keep their query ids sorted in trec_eval order (``strcmp`` of the ids), the
rows of each query (qrels: an ``indptr``; runs: ``starts``/``stops``, so that a file keeps its
row order) and per-row columns: document ids (an exact :class:`~fastir.model.ids.Ids` column) and
int32 labels (qrels) or float64 scores (run).
The qrels also carry the hash of every judged doc id, for the join's per-query lookups.
"""

import math
import numbers

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit
from fastir.model import arrow as arrow_columns
from fastir.model import subtopics as subtopic_judgments
from fastir.model.errors import FastirWarning, InputError  # noqa: F401 (users import them here)
from fastir.model.ids import (
    HASH_KEY,
    Ids,
    frozen,
    id_equal,
    id_hash,
    intern_blocks,
    listed,
)
from fastir.model.ranking import sort_ids


class Qrels:
    """Relevance judgments: ``{query: {doc: integer label}}`` in CSR form.

    Attributes
    ----------
    query_ids : Ids
        Sorted query ids (``n_queries``).
    indptr : ndarray of int64
        Rows of query ``q`` are ``indptr[q]:indptr[q + 1]``.
    doc_ids : Ids
        Document id of each row.
    labels : ndarray of int32
        Relevance label of each row (negative: pooled but unjudged).
    source : str
        Where the judgments came from, for messages.
    """

    def __init__(self, query_ids, indptr, doc_ids, labels, source="qrels"):
        self.query_ids = query_ids
        self.indptr = frozen(indptr, np.int64)
        self.doc_ids = doc_ids
        self.labels = frozen(labels, np.int32)
        self.source = source
        self.allow_duplicates = False  # a doc judged twice in a query is an error
        self._hashes = {}
        self._conversions = {}
        self._ideal = None
        self._repeated = None  # per row: judges a doc its query judged before
        self.subtopics = None  # subtopic judgments (fastir.model.subtopics), when read with them

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, qrels, source="qrels dict"):
        """From ``{query_id: {doc_id: label}}`` (the pytrec_eval / ranx shape), or subtopic
        judgments ``{query_id: {doc_id: {subtopic: label}}}`` (the diversity measures)."""
        if any(isinstance(judged, dict) and any(isinstance(v, dict) for v in judged.values())
               for judged in qrels.values()):
            return cls._from_subtopic_dict(qrels, source)
        qids, docs, labels = [], [], []
        for qid, judged in qrels.items():
            if not isinstance(judged, dict):
                raise InputError(f"{source}: query {qid!r} maps to {type(judged).__name__}, "
                                 "expected a dict {doc_id: label}")
            for doc, label in judged.items():
                qids.append(qid)
                docs.append(doc)
                labels.append(_integer_label(label, source, qid, doc))
        empty = [qid for qid, judged in qrels.items() if not judged]
        built = _build(cls, _id_column(qids + empty, "query ids", source),
                       _id_column(docs, "doc ids", source), np.array(labels, dtype=np.int32),
                       source, n_rows=len(labels))
        _keys_distinct(built.n_queries, qrels, source)
        return built

    @classmethod
    def _from_subtopic_dict(cls, judged, source):
        """From ``{qid: {doc: {subtopic: label}}}`` (labels checked in place): the doc-level
        qrels (a doc's largest label), with their :class:`~fastir.model.subtopics.Subtopics`."""
        doc_level = {}
        for qid, docs in judged.items():
            if not isinstance(docs, dict) or not all(isinstance(p, dict) for p in docs.values()):
                raise InputError(f"{source}: query {qid!r}: subtopic qrels map each doc to "
                                 "{subtopic: label}")
            for doc, pairs in docs.items():
                for subtopic, label in pairs.items():
                    pairs[subtopic] = _integer_label(label, source, qid, doc)
            doc_level[qid] = {doc: max(pairs.values()) for doc, pairs in docs.items() if pairs}
        qrels = cls.from_dict(doc_level, source)
        qrels.subtopics = subtopic_judgments.of_qrels(qrels, judged)
        return qrels

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, labels, subtopics=None, source="qrels arrays"):
        """From three equal-length arrays: query ids, doc ids, integer labels (and a fourth,
        ``subtopics``, for subtopic judgments).

        Integer id arrays are kept as integers; text ids as exact UTF-8 bytes. Labels are
        integers (or floats holding integers) within 32 bits.
        """
        qids, docs, labels = _columns(source, query_ids, doc_ids, labels, "labels")
        if subtopics is not None:
            names = np.asarray(subtopics)
            if names.shape != labels.shape:
                raise InputError(f"{source}: subtopics {names.shape} and labels "
                                 f"{labels.shape} differ in shape")
            return cls.from_dict(subtopic_judgments.by_subtopic(
                zip(qids.tolist(), names.tolist(), docs.tolist(), labels.tolist()), source),
                source)
        return _build(cls, qids, docs, integer_labels(labels, f"{source}: labels"), source)

    @classmethod
    def from_pandas(cls, frame, query_col="query_id", doc_col="doc_id", label_col="relevance",
                    subtopic_col=None, source="qrels frame"):
        """From a DataFrame with columns ``query_id``, ``doc_id``, ``relevance``
        (ir_measures names; ``q_id``/``doc_id``/``score`` and positional fallbacks are not
        guessed: pass the column names); ``subtopic_col`` names the subtopic column of
        subtopic judgments (ir_measures calls it ``iteration``)."""
        columns = (query_col, doc_col, label_col) + ((subtopic_col,) if subtopic_col else ())
        _require_columns(frame, columns, source)
        return cls.from_arrays(_frame_ids(frame[query_col]), _frame_ids(frame[doc_col]),
                               frame[label_col].to_numpy(),
                               None if subtopic_col is None else frame[subtopic_col].to_numpy(),
                               source=source)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", label_col="relevance",
                   source="qrels arrow"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, integer labels."""
        qids, docs, labels = arrow_columns.columns(data, (query_col, doc_col, label_col),
                                                   source)
        return _build(cls, qids, docs, integer_labels(labels, f"{source}: {label_col}"), source)

    # -- derived structures -------------------------------------------------------------
    @property
    def n_queries(self):
        return len(self.indptr) - 1

    def __len__(self):
        return len(self.labels)

    def __repr__(self):
        return f"Qrels({self.n_queries} queries, {len(self)} judgments, from {self.source})"

    def docs_matching(self, run_docs):
        """(qrels doc column, run doc column, qrels doc hashes) in one representation:
        integers match text by their decimal strings (see :func:`fastir.model.ids.common_kind`).
        The qrels side is converted and hashed once per representation, and the hashing
        checks that no query judges a doc twice."""
        q_docs, r_docs = self.doc_ids, run_docs
        if q_docs.is_int != r_docs.is_int:
            if r_docs.is_int:
                q_docs = self._converted("ints") or self._converted("text")
                if not q_docs.is_int:
                    r_docs = r_docs.as_text()
            else:
                r_docs_int = r_docs.as_canonical_ints()
                if r_docs_int is not None:
                    r_docs = r_docs_int
                else:
                    q_docs = self._converted("text")
        key = (q_docs.is_int, q_docs is self.doc_ids, int(HASH_KEY))
        python = _jit.python_mode()
        if key not in self._hashes:  # first use of this representation: check duplicates
            if python:
                row_hash, repeated = None, _repeated_rows(self.indptr, q_docs.keys())
            else:
                row_hash, repeated = _jit.compiled(_hash_judgments)(self.indptr,
                                                                     q_docs.args(), HASH_KEY)
            if repeated.any() and not self.allow_duplicates:
                r = int(np.argmax(repeated))
                q = int(np.searchsorted(self.indptr, r, side="right") - 1)
                raise InputError(f"{self.source}: query {self.query_ids[q]!r} judges doc "
                                 f"{self.doc_ids[r]!r} twice")
            self._hashes[key] = row_hash
            self._repeated = repeated
        elif self._hashes[key] is None and not python:
            self._hashes[key] = _jit.compiled(_hash_judgments)(self.indptr, q_docs.args(),
                                                                HASH_KEY)[0]
        return q_docs, r_docs, self._hashes[key]

    def queries_judging_twice(self):
        """Whether each query judges a doc twice (only with ``allow_duplicates``, which
        trec_eval's mode sets: trec_eval stops at such a query, not at reading)."""
        if self._repeated is None:
            self.docs_matching(self.doc_ids)
        query = np.repeat(np.arange(self.n_queries), np.diff(self.indptr))
        return np.bincount(query[self._repeated], minlength=self.n_queries) > 0

    def _converted(self, kind):
        """The doc column as canonical integers (None if some id is not) or as text."""
        if kind not in self._conversions:
            convert = Ids.as_canonical_ints if kind == "ints" else Ids.as_text
            self._conversions[kind] = convert(self.doc_ids)
        return self._conversions[kind]

    def ideal_labels(self):
        """Each query's labels sorted in descending order (the ideal ranking's gains)."""
        if self._ideal is None:
            query = np.repeat(np.arange(self.n_queries), np.diff(self.indptr))
            order = np.lexsort((-self.labels.astype(np.int64), query))
            self._ideal = frozen(self.labels[order], np.int32)
        return self._ideal

    def to_dict(self):
        qids, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        labels = self.labels.tolist()
        return {qids[q]: {docs[r]: labels[r] for r in range(self.indptr[q], self.indptr[q + 1])}
                for q in range(self.n_queries)}


class Run:
    """A ranked run: ``{query: {doc: score}}``, one row segment per query.

    Rows keep their input order; ranking (score descending, ties by doc id descending) is
    done by the join, which also applies ``max_docs``. The segments need not be in query
    order (a file grouped by query keeps its row order: no copy), so a run has per-query
    ``starts`` and ``stops`` where qrels have an ``indptr``.

    Attributes
    ----------
    query_ids : Ids
        Sorted query ids.
    starts, stops : ndarray of int64
        Rows of query ``q`` are ``starts[q]:stops[q]``.
    doc_ids : Ids
        Document id of each row.
    scores : ndarray of float64
        Score of each row (finite).
    name : str
        The run tag (trec_eval's ``runid``).
    source : str
    """

    def __init__(self, query_ids, starts, stops, doc_ids, scores, name="run", source="run"):
        self.query_ids = query_ids
        self.starts = frozen(starts, np.int64)
        self.stops = frozen(stops, np.int64)
        self.doc_ids = doc_ids
        self.scores = frozen(scores, np.float64)
        self.name = name
        self.source = source

    @classmethod
    def from_dict(cls, run, name="run", source="run dict"):
        """From ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        qids, docs, scores = [], [], []
        for qid, ranked in run.items():
            if not isinstance(ranked, dict):
                raise InputError(f"{source}: query {qid!r} maps to {type(ranked).__name__}, "
                                 "expected a dict {doc_id: score}")
            for doc, score in ranked.items():
                if not isinstance(score, numbers.Real) or isinstance(score, bool):
                    raise InputError(f"{source}: query {qid!r} doc {doc!r}: score {score!r} "
                                     "is not a number")
                qids.append(qid)
                docs.append(doc)
                scores.append(score)
        empty = [qid for qid, ranked in run.items() if not ranked]
        given = scores
        try:
            scores = np.array(given, dtype=np.float64)
        except OverflowError:  # an integer beyond a double's range
            scores = np.array([float(s) if abs(s) < 2**1024 else math.inf for s in given])
        bad = ~np.isfinite(scores)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"{source}: query {qids[i]!r} doc {docs[i]!r}: score "
                             f"{given[i]!r} is not finite (as a double)")
        built = _build(cls, _id_column(qids + empty, "query ids", source),
                       _id_column(docs, "doc ids", source), scores, source,
                       n_rows=len(scores), name=name)
        _keys_distinct(built.n_queries, run, source)
        return built

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, scores, name="run", source="run arrays"):
        """From three equal-length arrays: query ids, doc ids, scores (higher ranks first)."""
        qids, docs, scores = _columns(source, query_ids, doc_ids, scores, "scores")
        return _build(cls, qids, docs, finite_scores(scores, f"{source}: scores"), source,
                      name=name)

    @classmethod
    def from_pandas(cls, frame, query_col="query_id", doc_col="doc_id", score_col="score",
                    name="run", source="run frame"):
        """From a DataFrame with columns ``query_id``, ``doc_id``, ``score``."""
        _require_columns(frame, (query_col, doc_col, score_col), source)
        return cls.from_arrays(_frame_ids(frame[query_col]), _frame_ids(frame[doc_col]),
                               frame[score_col].to_numpy(), name=name, source=source)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", score_col="score",
                   name="run", source="run arrow"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, numeric scores."""
        qids, docs, scores = arrow_columns.columns(data, (query_col, doc_col, score_col),
                                                   source)
        return _build(cls, qids, docs, finite_scores(scores, f"{source}: {score_col}"), source,
                      name=name)

    @property
    def n_queries(self):
        return len(self.starts)

    def __len__(self):
        return len(self.scores)

    def with_scores(self, scores):
        """The same run with other scores (same rows, same order)."""
        scores = finite_scores(scores, f"{self.source}: with_scores")
        if scores.shape != self.scores.shape:
            raise InputError(f"{self.source}: with_scores needs {len(self.scores)} scores (one "
                             f"per row), got shape {scores.shape}")
        return Run(self.query_ids, self.starts, self.stops, self.doc_ids, scores, self.name,
                   self.source)

    def in_float32(self):
        """The run as trec_eval 9.0.8 and pytrec_eval rank it: every score rounded to
        float32 (:func:`float32_scores`; beyond its range, +inf or -inf)."""
        return Run(self.query_ids, self.starts, self.stops, self.doc_ids,
                   float32_scores(self.scores), self.name, self.source)

    def __repr__(self):
        return f"Run({self.name!r}: {self.n_queries} queries, {len(self)} rows, from {self.source})"

    def to_dict(self):
        qids, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        scores = self.scores.tolist()
        return {qids[q]: {docs[r]: scores[r] for r in range(self.starts[q], self.stops[q])}
                for q in range(self.n_queries)}


# ---------------------------------------------------------------------------------------
def _build(cls, row_qids, doc_ids, values, source, n_rows=None, **extra):
    """Group rows by query (each query keeps its input row order).

    ``row_qids`` may hold, after the ``n_rows`` row ids, ids of queries with no rows.
    """
    n_rows = len(values) if n_rows is None else n_rows
    with _jit.tier(n_rows):
        block_first, block_code, first = intern_blocks(row_qids.args())
        in_rows = block_first < n_rows
        return assemble(cls, row_qids.take(first), block_code[in_rows], block_first[in_rows],
                        doc_ids, values, source, **extra)


def assemble(cls, unique, block_code, block_first, doc_ids, values, source, **extra):
    """A Qrels or Run from rows in blocks: rows ``block_first[b]`` up to the next block's
    first row have query ``unique[block_code[b]]``.

    Queries are sorted by id. A Run whose queries each sit in one block keeps its rows in
    place (no copy); otherwise, and for Qrels unless already in order, rows are stably
    regrouped.
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
    if sorted_blocks or (cls is Run and one_block_each):
        starts[block_rank] = block_first
    else:
        permutation = np.argsort(np.repeat(block_rank, block_len), kind="stable")
        doc_ids = doc_ids.take(permutation)
        values = values[permutation]
    stops = starts + counts
    if cls is Run:
        return cls(query_ids, starts, stops, doc_ids, values, source=source, **extra)
    return cls(query_ids, np.append(starts, n_rows), doc_ids, values, source=source, **extra)


def _integer_label(label, source, qid, doc):
    if isinstance(label, bool) or not isinstance(label, numbers.Real):
        raise InputError(f"{source}: query {qid!r} doc {doc!r}: label {label!r} is not a "
                         "32-bit integer")
    if isinstance(label, numbers.Integral) or (math.isfinite(label) and label == int(label)):
        if -(2**31) <= int(label) < 2**31:
            return int(label)
    raise InputError(f"{source}: query {qid!r} doc {doc!r}: label {label!r} is not a "
                     "32-bit integer")


def _id_column(items, what, source):
    """Python ids (a dict's keys) as an :class:`Ids` column, or an error naming them."""
    array = np.empty(len(items), dtype=object)
    array[:] = items
    try:
        return Ids.from_array(array)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: {what}: {exc}") from None


def _keys_distinct(n_queries, mapping, source):
    """A dict whose keys name fewer queries than it has (``b"q1"`` and ``"q1"`` are one id):
    an error naming two such keys, rather than one query made of both."""
    if n_queries == len(mapping):
        return
    seen = {}
    for key in mapping:
        if listed(key) in seen:
            raise InputError(f"{source}: keys {seen[listed(key)]!r} and {key!r} are the same "
                             "query id: give each query once")
        seen[listed(key)] = key


def _frame_ids(column):
    """A DataFrame's id column as ``from_arrays`` takes it: an Arrow-backed text column
    without nulls as :class:`Ids` from its buffers (no Python string per row), any other
    column as its numpy values."""
    array = column.array
    if column.dtype != object and hasattr(array, "__arrow_array__"):
        arrow = array.__arrow_array__()
        pa = arrow_columns.pyarrow_module()
        if (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type)) and \
                not arrow.null_count:
            return arrow_columns.ids_from_arrow(arrow.combine_chunks(), "column")
    return column.to_numpy()


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


def _require_columns(frame, columns, source):
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {missing}; has {list(frame.columns)}")


def _repeated_rows(indptr, keys):
    """Per row, whether it judges a doc its query judged before (Python; the compiled path
    finds them with :func:`_hash_judgments`)."""
    repeated = np.zeros(len(keys), dtype=np.bool_)
    bounds = indptr.tolist()
    for lo, hi in zip(bounds, bounds[1:]):
        seen = set()
        for r in range(lo, hi):
            repeated[r] = keys[r] in seen
            seen.add(keys[r])
    return repeated


@jit
def _hash_judgments(indptr, docs, key):
    """Hash of every row's doc id, and whether each row judges a doc its query judged
    before: each query's docs go through a small hash set."""
    n = indptr[-1]
    row_hash = np.empty(n, dtype=np.uint64)
    repeated = np.zeros(n, dtype=np.bool_)
    most = 0
    for q in range(len(indptr) - 1):
        most = max(most, indptr[q + 1] - indptr[q])
    size = 16
    while size < 2 * most:
        size *= 2
    table = np.empty(size, dtype=np.int64)
    for q in range(len(indptr) - 1):
        q_size = 16
        while q_size < 2 * (indptr[q + 1] - indptr[q]):
            q_size *= 2
        mask = np.uint64(q_size - 1)
        table[:q_size] = -1
        for r in range(indptr[q], indptr[q + 1]):
            h = id_hash(docs, r, key)
            row_hash[r] = h
            slot = h & mask
            while table[slot] >= 0:
                other = table[slot]
                if row_hash[other] == h and id_equal(docs, other, docs, r):
                    repeated[r] = True
                    break
                slot = (slot + np.uint64(1)) & mask
            if not repeated[r]:
                table[slot] = r
    return row_hash, repeated

