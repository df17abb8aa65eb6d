"""Subtopic judgments: the qrels of the diversity measures (``alpha_nDCG@k``, ``ERR_IA@k``...).

A diversity qrels file has ndeval's ``qid subtopic docno label`` lines (the TREC qrels format
with the subtopic in the second column). fastir reads them, as ``{qid: {doc: {subtopic:
label}}}``, into a :class:`~fastir.Qrels` whose labels are each document's largest label
(what every other measure reads) and whose ``subtopics`` (a :class:`Subtopics`) hold, per
query, its judged documents in docno byte order with their (subtopic, label) pairs: the
diversity kernel's input.
"""

import numpy as np

from fastir.model.errors import InputError
from fastir.model.ids import listed


class Subtopics:
    """The subtopic judgments of a :class:`~fastir.Qrels` (``qrels.subtopics``).

    A query ``q``'s documents are its qrels rows, placed in docno byte order: the document
    at place ``j`` is position ``p = qrels.indptr[q] + j``, whose pairs are
    ``pairs[p]:pairs[p + 1]`` of ``subtopic`` (the query's subtopic numbers, ascending:
    subtopic ids sorted numerically when they are integers) and ``label``.

    Attributes
    ----------
    codes : ndarray of int32
        Per qrels row: its document's place ``j``, or -1 when all its labels are negative
        (it then joins as a judged but unjudged document). The join looks ranked documents
        up in these instead of the labels.
    pairs, subtopic, label : ndarrays
        As above (int64, int32, int32).
    n_subtopics : ndarray of int64
        Per query: how many subtopics it judges.
    names : list of lists
        Per query: its subtopic ids, by number.
    """

    def __init__(self, codes, pairs, subtopic, label, n_subtopics, names):
        self.codes = codes
        self.pairs = pairs
        self.subtopic = subtopic
        self.label = label
        self.n_subtopics = n_subtopics
        self.names = names

    def longest(self, indptr):
        """The most documents (rows ``indptr``) or subtopics of a query: the kernel's
        scratch length."""
        return max(int(self.n_subtopics.max(initial=0)), int(np.diff(indptr).max(initial=0)))


def _doc_key(doc):
    """Docno byte order (integer ids compare as their decimal strings)."""
    return doc if isinstance(doc, bytes) else str(doc).encode("utf-8", "surrogateescape")


def _subtopic_order(names):
    """Subtopic ids by number when they are all integers, else by their bytes."""
    try:
        return sorted(names, key=lambda s: int(s))
    except (TypeError, ValueError):
        return sorted(names, key=_doc_key)


def by_subtopic(rows, source):
    """``{qid: {doc: {subtopic: label}}}`` of ``(qid, subtopic, doc, label)`` rows.

    A (query, subtopic, doc) judged twice is an error, as every duplicate judgment is.
    """
    judged = {}
    for qid, subtopic, doc, label in rows:
        pairs = judged.setdefault(qid, {}).setdefault(doc, {})
        if subtopic in pairs:
            raise InputError(f"{source}: query {qid!r} judges doc {doc!r} twice for subtopic "
                             f"{subtopic!r}")
        pairs[subtopic] = label
    return judged


def of_qrels(qrels, judged):
    """The :class:`Subtopics` of ``judged`` (``{qid: {doc: {subtopic: label}}}``, labels
    checked) laid out on ``qrels``, its doc-level qrels."""
    judged = {listed(q): {listed(d): p for d, p in docs.items()}
              for q, docs in judged.items()}  # (keyed as the id columns list them)
    docs_of = qrels.doc_ids.tolist()
    qids = qrels.query_ids.tolist()
    n_rows = len(qrels.labels)
    codes = np.full(n_rows, -1, dtype=np.int32)
    n_subtopics = np.zeros(qrels.n_queries, dtype=np.int64)
    counts = np.zeros(n_rows + 1, dtype=np.int64)
    subtopic, label, names = [], [], []
    for q in range(qrels.n_queries):
        lo, hi = int(qrels.indptr[q]), int(qrels.indptr[q + 1])
        by_doc = judged[qids[q]]
        order = sorted(range(lo, hi), key=lambda r: _doc_key(docs_of[r]))
        query_names = _subtopic_order({s for r in order for s in by_doc[docs_of[r]]})
        number = {s: i for i, s in enumerate(query_names)}
        names.append(query_names)
        n_subtopics[q] = len(query_names)
        for j, r in enumerate(order):
            pairs = by_doc[docs_of[r]]
            if qrels.labels[r] >= 0:
                codes[r] = j
            counts[lo + j + 1] = len(pairs)
            for s in sorted(pairs, key=number.__getitem__):
                subtopic.append(number[s])
                label.append(pairs[s])
    return Subtopics(codes, np.cumsum(counts), np.array(subtopic, dtype=np.int32),
                     np.array(label, dtype=np.int32), n_subtopics, names)
