"""Preference judgments and judgment groups (trec_eval's ``-R prefs``, ``-R qrels_prefs`` and
``-R qrels_jg``) as CSR arrays, one row segment per query, as :class:`~fastir.model.data.Qrels`
keeps ordinary judgments.

A judgment group (JG) is one user's judgments of one information need. In a preference file
each JG holds subgroups (JSG): within a subgroup, every document is preferred to the
documents of a lower level (levels only order the documents; 0 marks a non-relevant one).
Within a JG preferences are transitive; different JGs may disagree.
"""

import math
import numbers
from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir._jit import pjit, prange, python_variant
from fastir.model.data import Qrels
from fastir.model.errors import InputError
from fastir.model.ids import Ids, id_equal, intern_blocks, order_keys
from fastir.model.ranking import RankKey, rank_sort, sort_ids
from fastir.model.values import _columns, finite_scores, integer_labels, qrels_labels

#: Each query's distinct judged documents in strcmp order (``qrels``: a :class:`Qrels` of
#: them, labels 0, for matching run documents) and, per row, its document's place among
#: them (``row_doc``).
JudgedDocs = namedtuple("JudgedDocs", "qrels row_doc")


class Prefs:
    """Preference judgments: per query, judgment groups of subgroups of ``(doc, level)``
    (trec_eval's ``qid jg jsg docno level`` lines).

    Attributes
    ----------
    query_ids : Ids
        Sorted query ids (trec_eval order, ``strcmp``).
    indptr : ndarray of int64
        Rows of query ``q`` are ``indptr[q]:indptr[q + 1]``, ordered by judgment group,
        subgroup, then level descending (input order among equals).
    doc_ids : Ids
        Document of each row.
    levels : ndarray of float64
        Level of each row (finite; its order within a subgroup is all that counts, and 0
        marks a non-relevant document).
    groups, subgroups : ndarray of int32
        Each row's judgment group and subgroup: its place in ``group_names`` /
        ``subgroup_names`` (sorted in ``strcmp`` order, the order trec_eval goes through
        the groups in).
    group_names, subgroup_names : Ids
    source : str
    """

    def __init__(self, query_ids, indptr, doc_ids, levels, groups, subgroups, group_names,
                 subgroup_names, source="prefs"):
        self.query_ids, self.indptr, self.doc_ids = query_ids, indptr, doc_ids
        self.levels, self.groups, self.subgroups = levels, groups, subgroups
        self.group_names, self.subgroup_names = group_names, subgroup_names
        self.source = source
        self._judged = None

    @classmethod
    def from_arrays(cls, query_ids, groups, subgroups, doc_ids, levels, source="prefs arrays"):
        """From five equal-length arrays: query ids, judgment groups, subgroups, doc ids and
        levels (finite numbers). Ids may be integers or text."""
        qids, docs, levels = _columns(source, query_ids, doc_ids, levels, "levels")
        levels = finite_scores(levels, f"{source}: levels")
        names = [_id_array(a, what, len(levels), source)
                 for a, what in ((groups, "groups"), (subgroups, "subgroups"))]
        return build_prefs(qids, docs, levels, names[0], names[1], source)

    @classmethod
    def from_dict(cls, prefs, source="prefs dict"):
        """From ``{query_id: {group: {subgroup: {doc_id: level}}}}``."""
        rows = [(q, g, s, d, v) for q, by_group in _items(prefs, source)
                for g, by_sub in _items(by_group, source) for s, docs in _items(by_sub, source)
                for d, v in _items(docs, source)]
        if not rows:
            _no_rows(source)
        columns = [np.array([r[k] for r in rows], dtype=object) for k in range(4)]
        levels = np.array([_level(r, source) for r in rows], dtype=np.float64)
        return cls.from_arrays(*columns, levels, source=source)

    @classmethod
    def from_qrels(cls, qrels):
        """Ordinary judgments read as preferences, as trec_eval's ``-R qrels_prefs`` reads a
        qrels file: one judgment group and one subgroup per query (trec_eval names the group
        by the qrels' second column, which a :class:`Qrels` does not keep: read the file with
        ``read_prefs(path, format="qrels_prefs")`` to keep it), levels the labels."""
        n = len(qrels.labels)
        zeros = Ids.from_strings([b"0"]).take(np.zeros(n, dtype=np.int64))
        query = np.repeat(np.arange(qrels.n_queries), np.diff(qrels.indptr))
        return build_prefs(qrels.query_ids.take(query), qrels.doc_ids,
                           qrels.labels.astype(np.float64), zeros, zeros,
                           f"{qrels.source} (as preferences)")

    @property
    def n_queries(self):
        return len(self.indptr) - 1

    def __len__(self):
        return len(self.levels)

    def __repr__(self):
        return (f"Prefs({self.n_queries} queries, {len(self)} judgments, "
                f"{len(self.group_names)} judgment groups, from {self.source})")

    def judged(self):
        """The :data:`JudgedDocs` of these judgments (built once)."""
        if self._judged is None:
            with _jit.tier(len(self)):
                bounds = _jit.chunk_bounds(np.diff(self.indptr), _jit.n_threads())
                row_doc, n_docs, first = _jit.launch(_judged_docs, bounds, self.indptr,
                                                     self.doc_ids.args())
            indptr = np.zeros(self.n_queries + 1, dtype=np.int64)
            np.cumsum(n_docs, out=indptr[1:])
            qrels = Qrels(self.query_ids, indptr, self.doc_ids.take(first),
                          np.zeros(len(first), dtype=np.int32), self.source)
            self._judged = JudgedDocs(qrels, row_doc)
        return self._judged

    def to_dict(self):
        """``{query_id: {group: {subgroup: {doc_id: level}}}}`` (a doc given twice in one
        subgroup keeps its last level)."""
        qids, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        groups, subs = self.group_names.tolist(), self.subgroup_names.tolist()
        out = {}
        for q in range(self.n_queries):
            judged = out.setdefault(qids[q], {})
            for r in range(self.indptr[q], self.indptr[q + 1]):
                by_sub = judged.setdefault(groups[self.groups[r]], {})
                by_sub.setdefault(subs[self.subgroups[r]], {})[docs[r]] = float(self.levels[r])
        return out


class JudgmentGroups:
    """Relevance judgments in judgment groups (trec_eval's ``-R qrels_jg``: ``qid jg docno
    label``): every group is a qrels of its own, and the judgment-group measures average
    over a query's groups.

    Attributes
    ----------
    query_ids : Ids
        Sorted query ids.
    indptr : ndarray of int64
        Rows of query ``q`` are ``indptr[q]:indptr[q + 1]``, ordered by group.
    groups : ndarray of int32
        Each row's group: its place in ``group_names`` (``strcmp`` order).
    group_names : Ids
    doc_ids : Ids
    labels : ndarray of int32
        Labels (negative: pooled but unjudged).
    source : str
    """

    def __init__(self, query_ids, indptr, groups, group_names, doc_ids, labels,
                 source="judgment groups"):
        self.query_ids, self.indptr, self.groups = query_ids, indptr, groups
        self.group_names, self.doc_ids, self.labels = group_names, doc_ids, labels
        self.source = source
        self._expanded = None

    @classmethod
    def from_arrays(cls, query_ids, groups, doc_ids, labels, source="judgment group arrays"):
        """From four equal-length arrays: query ids, groups, doc ids, integer labels."""
        qids, docs, labels = _columns(source, query_ids, doc_ids, labels, "labels")
        names = _id_array(groups, "groups", len(labels), source)
        return build_groups(qids, docs, integer_labels(labels, f"{source}: labels"), names,
                            source)

    @classmethod
    def from_dict(cls, judged, source="judgment groups dict"):
        """From ``{query_id: {group: {doc_id: label}}}``."""
        rows = [(q, g, d, v) for q, by_group in _items(judged, source)
                for g, docs in _items(by_group, source) for d, v in _items(docs, source)]
        if not rows:
            _no_rows(source)
        columns = [np.array([r[k] for r in rows], dtype=object) for k in range(3)]
        labels = [_label(row, source) for row in rows]
        return cls.from_arrays(columns[0], columns[1], columns[2],
                               np.array(labels, dtype=np.int32), source=source)

    @property
    def n_queries(self):
        return len(self.indptr) - 1

    def __len__(self):
        return len(self.labels)

    def __repr__(self):
        return (f"JudgmentGroups({self.n_queries} queries, {len(self)} judgments, "
                f"{len(self.group_names)} groups, from {self.source})")

    def expanded(self):
        """(a :class:`Qrels` with one query per (query, group) of these judgments, in
        order, named by its position as fixed-width decimal text; the query of each of its
        queries; the number of groups of each query). Built once."""
        if self._expanded is None:
            query = np.repeat(np.arange(self.n_queries), np.diff(self.indptr))
            starts = np.flatnonzero(np.r_[True, (np.diff(query) != 0)
                                          | (np.diff(self.groups) != 0)]) if len(query) else \
                np.zeros(0, dtype=np.int64)
            indptr = np.append(starts, len(query)).astype(np.int64)
            owner = query[starts]
            qrels = Qrels(position_ids(len(starts)), indptr, self.doc_ids, self.labels,
                          self.source)
            qrels.allow_duplicates = True  # (said below, naming the query and the group)
            self._check_twice(qrels, owner)
            self._expanded = (qrels, owner, np.bincount(owner, minlength=self.n_queries))
        return self._expanded

    def _check_twice(self, qrels, owner):
        twice = np.flatnonzero(qrels.queries_judging_twice())
        if len(twice):
            k = int(twice[0])
            rows = range(qrels.indptr[k], qrels.indptr[k + 1])
            keys = [self.doc_ids[r] for r in rows]
            doc = next(d for i, d in enumerate(keys) if d in keys[:i])
            group = self.group_names[self.groups[qrels.indptr[k]]]
            raise InputError(f"{self.source}: query {self.query_ids[owner[k]]!r} judgment "
                             f"group {group!r} judges doc {doc!r} twice")


# -- building ------------------------------------------------------------------------------
def build_prefs(row_qids, docs, levels, group_ids, subgroup_ids, source):
    """A :class:`Prefs` from per-row columns (query, doc, group and subgroup ids as
    :class:`Ids`, float64 levels) in any order."""
    query, query_ids = row_codes(row_qids)
    groups, group_names = row_codes(group_ids)
    subgroups, subgroup_names = row_codes(subgroup_ids)
    order = np.lexsort((-levels, subgroups, groups, query))
    indptr = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=len(query_ids)), out=indptr[1:])
    return Prefs(query_ids, indptr, docs.take(order), levels[order],
                 groups[order].astype(np.int32), subgroups[order].astype(np.int32),
                 group_names, subgroup_names, source)


def build_groups(row_qids, docs, labels, group_ids, source):
    """A :class:`JudgmentGroups` from per-row columns in any order."""
    query, query_ids = row_codes(row_qids)
    groups, group_names = row_codes(group_ids)
    order = np.lexsort((groups, query))
    indptr = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(query, minlength=len(query_ids)), out=indptr[1:])
    built = JudgmentGroups(query_ids, indptr, groups[order].astype(np.int32), group_names,
                           docs.take(order), labels[order].astype(np.int32), source)
    built.expanded()  # a doc judged twice in one group is an error, as in trec_eval
    return built


def row_codes(ids):
    """(each row's place among the distinct ids in strcmp order, the distinct ids sorted)
    of an :class:`Ids` column."""
    if len(ids) == 0:
        return np.zeros(0, dtype=np.int64), ids
    block_first, block_code, first = intern_blocks(ids.args())
    unique = ids.take(first)
    order = _jit.select(sort_ids, len(unique))(unique.args())
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    lengths = np.diff(np.append(block_first, len(ids)))
    return np.repeat(rank[block_code], lengths), unique.take(order)


def position_ids(n):
    """``n`` ids that sort as their positions: fixed-width decimal text."""
    width = len(str(max(n - 1, 0)))
    text = np.char.zfill(np.arange(n).astype(str), width).astype(f"S{width}")
    return Ids.from_array(text) if n else Ids.from_strings([])


def _id_array(values, what, n, source):
    array = np.asarray(values)
    if array.ndim != 1 or len(array) != n:
        raise InputError(f"{source}: {what} must be 1-d with one id per level ({n}), got "
                         f"shape {array.shape}")
    try:
        return Ids.from_array(array)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{source}: {what}: {exc}") from None


def _level(row, source):
    """The level of a ``(query, group, subgroup, doc, level)`` row of a dict, as a float:
    a number (not a bool) finite as a double; else an InputError naming the row."""
    q, g, sub, doc, level = row
    if not isinstance(level, bool) and isinstance(level, numbers.Real):
        try:
            value = float(level)
        except OverflowError:  # (an int beyond a double's range)
            value = math.inf
        if math.isfinite(value):
            return value
    raise InputError(f"{source}: query {q!r} group {g!r} subgroup {sub!r} doc {doc!r}: level "
                     f"{_shown(level)} is not a finite number (a level is a number within a "
                     "double's range; only its order counts, 0 marks a non-relevant document)")


def _label(row, source):
    """The label of a ``(query, group, doc, label)`` row of a dict: a 32-bit integer; else
    an InputError naming the row."""
    q, g, doc, label = row
    try:
        if isinstance(label, (bool, np.bool_)):  # (a judgment group's label: no bool)
            raise InputError(source)
        return int(qrels_labels([label], source, str)[0][0])
    except InputError:
        raise InputError(f"{source}: query {q!r} group {g!r} doc {doc!r}: label "
                         f"{_shown(label)} is not a 32-bit integer") from None


def _shown(value):
    """``repr(value)``, cut when long (an integer of 400 digits)."""
    text = repr(value)
    return text if len(text) <= 30 else f"{text[:12]}... ({len(text)} characters)"


def _items(mapping, source):
    if not isinstance(mapping, dict):
        raise InputError(f"{source}: expected nested dicts, got {type(mapping).__name__}")
    return mapping.items()


def _no_rows(source):
    raise InputError(f"{source}: no judgments")


@pjit
def _judged_docs(bounds, indptr, docs):
    """Per row, its doc's place among its query's distinct docs in strcmp order; per query,
    the number of distinct docs; per distinct doc (query after query), a row naming it (its
    first). Parallel over chunks of queries (``bounds``): each query writes its distinct
    docs' rows from its first row on, packed together after."""
    n_queries = len(indptr) - 1
    longest = 0
    for q in range(n_queries):
        longest = max(longest, indptr[q + 1] - indptr[q])
    row_doc = np.empty(indptr[-1], dtype=np.int64)
    n_docs = np.zeros(n_queries, dtype=np.int64)
    first = np.empty(indptr[-1], dtype=np.int64)
    zeros = np.zeros(indptr[-1])
    for c in prange(len(bounds) - 1):
        # ascending ids: the ranking order of equal scores (doc id descending) read
        # backwards, from the rows reversed (so that equal ids keep their order), as sort_ids
        key = RankKey(zeros, None, docs)  # (made in the loop: a parallel loop takes no
        # namedtuple within a namedtuple)
        descending = np.empty(longest, dtype=np.int64)
        buf = np.empty(longest, dtype=np.int64)
        for q in range(bounds[c], bounds[c + 1]):
            lo = indptr[q]
            m = indptr[q + 1] - lo
            for i in range(m):
                descending[i] = lo + m - 1 - i
            rank_sort(descending[:m], key, buf)
            k = -1
            for i in range(m):
                row = descending[m - 1 - i]
                if i == 0 or not id_equal(docs, descending[m - i], docs, row):
                    k += 1
                    first[lo + k] = row
                row_doc[row] = k
            n_docs[q] = k + 1
    out = 0
    for q in range(n_queries):
        for k in range(n_docs[q]):
            first[out + k] = first[indptr[q] + k]
        out += n_docs[q]
    return row_doc, n_docs, first[:out].copy()


@python_variant(_judged_docs)
def _judged_docs(bounds, indptr, docs):
    keys = order_keys(docs)
    row_doc = np.empty(len(keys), dtype=np.int64)
    n_docs, first = [], []
    bounds = indptr.tolist()
    for lo, hi in zip(bounds, bounds[1:]):
        distinct = sorted({keys[r]: r for r in range(hi - 1, lo - 1, -1)}.items())
        place = {key: k for k, (key, _) in enumerate(distinct)}
        for r in range(lo, hi):
            row_doc[r] = place[keys[r]]
        n_docs.append(len(distinct))
        first += [r for _, r in distinct]
    return row_doc, np.array(n_docs, dtype=np.int64), np.array(first, dtype=np.int64)
