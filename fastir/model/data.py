"""The data model: qrels and runs as CSR arrays, one row segment per query.

Both containers keep their query ids sorted in trec_eval order (``strcmp`` of the ids), the
rows of each query (qrels: an ``indptr``; runs: ``starts``/``stops``, so that a file keeps its
row order) and per-row columns: document ids (an exact :class:`~fastir.model.ids.Ids` column) and
int32 labels (qrels) or float64 scores (run).
The qrels also carry the hash of every judged doc id, for the join's per-query lookups.
"""


from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import jit
from fastir.model import subtopics as subtopic_judgments
from fastir.model.arrow import qrels_from_arrow, run_from_arrow
from fastir.model.dicts import qrels_from_dict, run_from_dict
from fastir.model.errors import FastirWarning, InputError  # noqa: F401 (users import them here)
from fastir.model.frames import qrels_from_frame, run_from_frame
from fastir.model.ids import (
    HASH_KEY,
    Ids,
    frozen,
    id_equal,
    id_hash,
)
from fastir.model.ranking import score_order
from fastir.model.values import (
    Distributions,
    _columns,
    finite_scores,
    float32_scores,
    from_rows,
    qrels_labels,
    real_labels,
    real_values,
    refuse_real_subtopics,
    row_namer,
    run_scores,
)

#: Each judged query's labels, descending: ``labels[indptr[q]:indptr[q + 1]]`` (the kernels'
#: ideal rankings: ``Qrels.ideal_labels``, or the judgments augmented by a join).
Ideals = namedtuple("Ideals", "indptr labels")


class Qrels:
    """Relevance judgments: ``{query: {doc: integer label}}`` in CSR form (real labels, or
    probabilistic ones: ``label_values``, ``label_probs``).

    Attributes
    ----------
    query_ids : Ids
        Sorted query ids (``n_queries``).
    indptr : ndarray of int64
        Rows of query ``q`` are ``indptr[q]:indptr[q + 1]``.
    doc_ids : Ids
        Document id of each row.
    labels : ndarray of int32
        Relevance label of each row (negative: pooled but unjudged); of qrels read with
        ``labels="float"``, the code of its real label (see ``label_values``).
    label_values : ndarray of float64 or None
        Of qrels read with ``labels="float"``: the distinct labels, ascending, code ``c``'s
        label ``label_values[c]`` (codes keep the labels' order, so a comparison of labels
        is one of codes; :meth:`fastir.engine.Plan.sized` turns levels and gains into
        codes); None for integer labels.
    label_probs : Distributions or None
        Of qrels read with ``labels="probability"``: each row's label distribution (row
        ``r``'s, ``label_probs.take(r)``; ``labels`` then holds each row's number); None
        otherwise. Given to the constructor as ``label_values`` (the distributions of the
        codes ``labels``).
    source : str
        Where the judgments came from, for messages.
    """

    ROWS_IN_PLACE = False  # (each query's rows together: an indptr)

    def __init__(self, query_ids, indptr, doc_ids, labels, source="qrels", label_values=None):
        self.query_ids = query_ids
        self.indptr = frozen(indptr, np.int64)
        self.doc_ids = doc_ids
        self.label_probs = None
        if isinstance(label_values, Distributions):  # (of codes: each row's, by number)
            self.label_probs = label_values.take(np.asarray(labels))
            labels, label_values = np.arange(len(labels), dtype=np.int32), None
        self.labels = frozen(labels, np.int32)
        self.label_values = None if label_values is None else frozen(label_values,
                                                                      np.float64)
        self.source = source
        self.allow_duplicates = False  # a doc judged twice in a query is an error
        self._hashes = {}
        self._conversions = {}
        self._ideal = None
        self._repeated = None  # per row: judges a doc its query judged before
        self.subtopics = None  # subtopic judgments (fastir.model.subtopics), when read with them

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, qrels, source="qrels dict", labels="int"):
        """From ``{query_id: {doc_id: label}}`` (the pytrec_eval / ranx shape), or subtopic
        judgments ``{query_id: {doc_id: {subtopic: label}}}`` (the diversity measures);
        converted in bulk (:mod:`fastir.model.dicts`). ``labels="float"`` takes real
        labels (finite, >= 0; not with subtopics), ``labels="probability"`` probabilities
        of relevance in [0, 1] or distributions ``{label: probability}``."""
        return qrels_from_dict(cls, qrels, source, labels)

    @classmethod
    def from_arrays(cls, query_ids, doc_ids, labels, subtopics=None, source="qrels arrays",
                    kind="int"):
        """From three equal-length arrays: query ids, doc ids, integer labels (and a fourth,
        ``subtopics``, for subtopic judgments).

        Integer id arrays are kept as integers; text ids as exact UTF-8 bytes. Labels are
        integers (or floats holding integers) within 32 bits; with ``kind="float"`` (the
        ``labels=`` of :func:`fastir.evaluate`), finite reals >= 0; with
        ``kind="probability"``, probabilities of relevance in [0, 1].
        """
        qids, docs, labels = _columns(source, query_ids, doc_ids, labels, "labels")
        if subtopics is not None:
            refuse_real_subtopics(kind, source)
            names = np.asarray(subtopics)
            if names.shape != labels.shape:
                raise InputError(f"{source}: subtopics {names.shape} and labels "
                                 f"{labels.shape} differ in shape")
            return cls.from_dict(subtopic_judgments.by_subtopic(
                zip(qids.tolist(), names.tolist(), docs.tolist(), labels.tolist()), source),
                source)
        codes, values = qrels_labels(labels, source, row_namer(qids, docs), kind)
        return from_rows(cls, qids, docs, codes, source, label_values=values)

    @classmethod
    def from_pandas(cls, frame, query_col="query_id", doc_col="doc_id", label_col="relevance",
                    subtopic_col=None, source="qrels frame", labels="int"):
        """From a DataFrame with columns ``query_id``, ``doc_id``, ``relevance``
        (ir_measures names; ``q_id``/``doc_id``/``score`` and positional fallbacks are not
        guessed: pass the column names); ``subtopic_col`` names the subtopic column of
        subtopic judgments (ir_measures calls it ``iteration``); ``labels="float"`` takes
        real labels, ``labels="probability"`` probabilities of relevance. See
        :mod:`fastir.model.frames`."""
        return qrels_from_frame(cls, frame, query_col, doc_col, label_col, subtopic_col, source,
                                labels)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", label_col="relevance",
                   source="qrels arrow", labels="int"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, integer labels
        (``labels="float"``: real ones; ``"probability"``: probabilities of relevance). See
        :mod:`fastir.model.arrow`."""
        return qrels_from_arrow(cls, data, query_col, doc_col, label_col, source, labels)

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

    def with_real_labels(self):
        """These qrels with real-valued labels (``labels="float"``): themselves when they
        have them, else their integer labels as reals (a negative one refused, naming its
        query and doc)."""
        if self.label_values is not None:
            return self
        query = np.repeat(np.arange(self.n_queries), np.diff(self.indptr))
        codes, values = real_labels(self.labels, self.source, lambda i: (
            f"query {self.query_ids[int(query[i])]!r} doc {self.doc_ids[i]!r}"))
        qrels = Qrels(self.query_ids, self.indptr, self.doc_ids, codes, self.source, values)
        qrels.allow_duplicates = self.allow_duplicates
        return qrels

    def with_probabilities(self):
        """These qrels with probabilistic labels (``labels="probability"``): themselves when
        they have them; real labels as probabilities of relevance (each in [0, 1]); integer
        labels as certain ones (each >= 0); else an InputError naming its query and doc."""
        if self.label_probs is not None:
            return self
        query = np.repeat(np.arange(self.n_queries), np.diff(self.indptr))

        def row_name(i):
            return f"query {self.query_ids[int(query[i])]!r} doc {self.doc_ids[i]!r}"

        if self.label_values is not None:  # (real labels: probabilities of relevance)
            dists = Distributions.of_probabilities(real_values(
                self.label_values[self.labels], self.source, row_name, "probability"))
        else:
            negative = self.labels < 0
            if negative.any():
                i = int(np.argmax(negative))
                raise InputError(f"{self.source}: {row_name(i)}: label {int(self.labels[i])} "
                                 "is not a label >= 0 (labels='probability')")
            dists = Distributions.certain(self.labels)
        codes = np.arange(len(self), dtype=np.int32)
        qrels = Qrels(self.query_ids, self.indptr, self.doc_ids, codes, self.source, dists)
        qrels.allow_duplicates = self.allow_duplicates
        return qrels

    def to_dict(self):
        qids, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        labels = self.label_probs.as_python() if self.label_probs is not None else (
            self.labels if self.label_values is None else self.label_values[self.labels]
        ).tolist()
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

    ROWS_IN_PLACE = True  # (each query's rows where they were given: starts, stops)

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
        return run_from_dict(cls, run, name, source)

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
        return run_from_frame(cls, frame, query_col, doc_col, score_col, name, source)

    @classmethod
    def from_arrow(cls, data, query_col="query_id", doc_col="doc_id", score_col="score",
                   name="run", source="run arrow"):
        """From an Arrow table or record batch (or ``{column: Arrow array}``; needs
        pyarrow): text, binary, integer or dictionary-encoded id columns, numeric scores.
        See :mod:`fastir.model.arrow`."""
        return run_from_arrow(cls, data, query_col, doc_col, score_col, name, source)

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

    def of_queries(self, chosen, query_ids):
        """The rankings of this run's queries ``chosen`` (a query may be chosen several
        times), as the queries ``query_ids``: their rows shared, not copied."""
        return Run(query_ids, self.starts[chosen], self.stops[chosen], self.doc_ids,
                   self.scores, self.name, self.source)

    def in_float32(self):
        """The run as trec_eval 9.0.8 and pytrec_eval rank it: every score rounded to
        float32 (:func:`float32_scores`; beyond its range, +inf or -inf)."""
        return Run(self.query_ids, self.starts, self.stops, self.doc_ids,
                   float32_scores(self.scores), self.name, self.source)

    def score_order(self):
        """Per query, what its rows' scores say of their order (uint8:
        :data:`~fastir.model.ranking.DESCENDING`, ``LEVEL``, ``RISING`` or ``NOT_FINITE``;
        :func:`~fastir.model.ranking.score_order`). Computed once per run: the columns are
        read-only, so it stays true while they are the same arrays."""
        known = self.__dict__.get("_score_order")
        if known is None or known[0] is not self.scores or known[1] is not self.starts \
                or known[2] is not self.stops:
            order = np.empty(self.n_queries, dtype=np.uint8)
            _jit.launch(score_order, _jit.chunk_bounds(self.stops - self.starts,
                                                       _jit.n_threads()),
                        self.starts, self.stops, self.scores, order, n_items=len(self))
            order.flags.writeable = False
            known = self._score_order = (self.scores, self.starts, self.stops, order)
        return known[3]

    def __repr__(self):
        return f"Run({self.name!r}: {self.n_queries} queries, {len(self)} rows, from {self.source})"

    def to_dict(self):
        qids, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        scores = self.scores.tolist()
        return {qids[q]: {docs[r]: scores[r] for r in range(self.starts[q], self.stops[q])}
                for q in range(self.n_queries)}


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

