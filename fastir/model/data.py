"""The data model: qrels and runs as CSR arrays, one row segment per query.

Both containers keep their query ids sorted in trec_eval order (``strcmp`` of the ids), the
rows of each query (qrels: an ``indptr``; runs: ``starts``/``stops``, so that a file keeps its
row order) and per-row columns: document ids (an exact :class:`~fastir.model.ids.Ids` column) and
int32 labels (qrels) or float64 scores (run).
The qrels also carry the hash of every judged doc id, for the join's per-query lookups.
"""

import array
import numbers
import warnings

import numpy as np

from fastir import _jit
from fastir._jit import helper, jit
from fastir.model import subtopics as subtopic_judgments
from fastir.model.errors import FastirWarning, InputError  # noqa: F401 (users import them here)
from fastir.model.ids import (
    HASH_KEY,
    Ids,
    frozen,
    id_equal,
    id_hash,
    intern_blocks,
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
        judgments ``{query_id: {doc_id: {subtopic: label}}}`` (the diversity measures);
        converted in bulk (:mod:`fastir.model.dicts`)."""
        from fastir.model.dicts import qrels_from_dict

        return qrels_from_dict(qrels, source)

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
        return from_rows(cls, qids, docs, qrels_labels(labels, source, row_namer(qids, docs)),
                      source)

    @classmethod
    def from_pandas(cls, frame, query_col="query_id", doc_col="doc_id", label_col="relevance",
                    subtopic_col=None, source="qrels frame"):
        """From a DataFrame with columns ``query_id``, ``doc_id``, ``relevance``
        (ir_measures names; ``q_id``/``doc_id``/``score`` and positional fallbacks are not
        guessed: pass the column names); ``subtopic_col`` names the subtopic column of
        subtopic judgments (ir_measures calls it ``iteration``). See :mod:`fastir.model.frames`."""
        from fastir.model.frames import qrels_from_frame

        return qrels_from_frame(frame, query_col, doc_col, label_col, subtopic_col, source)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", label_col="relevance",
                   source="qrels arrow"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, integer labels.
        See :mod:`fastir.model.arrow`."""
        from fastir.model.arrow import qrels_from_arrow

        return qrels_from_arrow(data, query_col, doc_col, label_col, source)

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
        """From ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape), converted in
        bulk (:mod:`fastir.model.dicts`)."""
        from fastir.model.dicts import run_from_dict

        return run_from_dict(run, name, source)

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, scores, name="run", source="run arrays"):
        """From three equal-length arrays: query ids, doc ids, scores (higher ranks first)."""
        qids, docs, scores = _columns(source, query_ids, doc_ids, scores, "scores")
        return from_rows(cls, qids, docs, run_scores(scores, source, row_namer(qids, docs)),
                      source, name=name)

    @classmethod
    def from_pandas(cls, frame, query_col="query_id", doc_col="doc_id", score_col="score",
                    name="run", source="run frame"):
        """From a DataFrame with columns ``query_id``, ``doc_id``, ``score`` (see
        :mod:`fastir.model.frames`)."""
        from fastir.model.frames import run_from_frame

        return run_from_frame(frame, query_col, doc_col, score_col, name, source)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", score_col="score",
                   name="run", source="run arrow"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, numeric scores.
        See :mod:`fastir.model.arrow`."""
        from fastir.model.arrow import run_from_arrow

        return run_from_arrow(data, query_col, doc_col, score_col, name, source)

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


def qrels_labels(values, source, row_name):
    """Qrels labels, one per row, as int32: integers (or floats holding integers, or bools)
    within 32 bits, else an InputError naming the first bad one's row and value (as
    :func:`run_scores`)."""
    labels, bad = _int32s(values)
    if bad is not None:
        raise InputError(f"{source}: {row_name(bad)}: label {_given(values, bad)!r} is not a "
                         "32-bit integer")
    return labels


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
        doubles = np.frombuffer(_c_doubles(values), dtype=np.float64)
    except (TypeError, OverflowError):
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


def _c_doubles(values):
    """``array("d", values)``: a C array of the doubles of numbers (a TypeError for anything
    else: a complex number too, which numpy's would turn into its real part with a warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        try:
            return array.array("d", values)
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

