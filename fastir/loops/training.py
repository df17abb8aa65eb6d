"""Training loops: epoch-level metrics over batches (:class:`MetricAccumulator`) and
torchmetrics' flat form, one row per (query, document) with the query's index
(:func:`evaluate_flat`).

Each query is evaluated when its batch arrives (by :func:`fastir.evaluate_matrix`), so a
query's candidates come in one update, and only one row of values per query is kept.
"""

from collections.abc import Mapping

import numpy as np

from fastir import _jit
from fastir.loops.evaluator import (
    _MATRIX_TIES,
    _as_float_array,
    _matrix_plan,
    as_array,
    dense_values,
    evaluate_matrix,
    matrix_labels,
)
from fastir.measures import kernels
from fastir.options import checked_level


def _names(measures):
    return (measures,) if isinstance(measures, str) else tuple(measures)


def _indexes(indexes, n, name="indexes", lowest=0):
    """Query indexes as int64, integers from ``lowest``, shape (n,)."""
    x = as_array(indexes)
    if x.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {x.shape}")
    if x.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers (the query of each row), got dtype {x.dtype}")
    if x.size and x.min() < lowest:
        raise ValueError(f"{name} must be integers from {lowest}, got {x.min().item()}")
    if x.size and x.dtype == np.uint64 and x.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must be integers below 2**63 (kept as int64), got "
                         f"{x.max().item()}")
    return x.astype(np.int64, copy=False)


def _flat_batch(preds, target, indexes):
    """Rows grouped by query: the query indexes (ascending), and dense scores, labels and
    validity (each query's rows in their given order, then padding)."""
    scores = _as_float_array(preds, "preds")
    if scores.ndim != 1:
        raise ValueError(f"preds must be 1-d (one score per row), got shape {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("preds must be finite")
    labels = as_array(target)
    if labels.shape != scores.shape:
        raise ValueError(f"target {labels.shape} and preds {scores.shape} differ in shape")
    labels = matrix_labels(labels, "evaluate_flat: target")
    if labels.size and labels.min() < 0:
        raise ValueError(f"target must be integers from 0, got {labels.min().item()}")
    query = _indexes(indexes, len(scores))
    order = np.argsort(query, kind="stable")
    query = query[order]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else \
        np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[starts, len(query)])
    shape = (len(starts), int(counts.max(initial=0)))
    row = np.repeat(np.arange(shape[0]), counts)
    col = np.arange(len(query)) - np.repeat(starts, counts)
    dense_scores, dense_labels = np.zeros(shape), np.zeros(shape, dtype=np.int64)
    valid = np.zeros(shape, dtype=np.bool_)
    dense_scores[row, col] = scores[order]
    dense_labels[row, col] = labels[order]
    valid[row, col] = True
    return query[starts], dense_scores, dense_labels, valid


def evaluate_flat(preds, target, indexes, measures, *, relevance_level=1, ties="column",
                  per_query=False):
    """Evaluate torchmetrics' flat form: one row per (query, document).

    Parameters
    ----------
    preds : array-like, shape (n,)
        Scores (numpy, or tensors through DLPack as for :func:`fastir.evaluate_matrix`).
    target : array-like, shape (n,)
        Graded relevance (integers from 0, booleans, or floats holding integers).
    indexes : array-like of int, shape (n,)
        The query of each row (integers from 0); a query's rows need not be contiguous.
    measures, relevance_level, ties
        As for :func:`fastir.evaluate_matrix`; equal scores rank in row order under
        ``ties="column"``.
    per_query : bool
        Also return the query indexes (ascending) and their (n_queries, n_measures) values.

    Returns
    -------
    dict
        ``{measure: mean over queries}``, then the indexes and values when ``per_query``.

    Examples
    --------
    >>> import fastir
    >>> fastir.evaluate_flat([0.9, 0.2, 0.4, 0.7], [0, 1, 1, 0], [0, 0, 1, 1], ["RR", "P@1"])
    {'RR': 0.5, 'P@1': 0.0}
    """
    ids, scores, labels, valid = _flat_batch(preds, target, indexes)
    means, values = dense_values(scores, labels, measures, valid=valid, per_row=True,
                                 relevance_level=relevance_level, ties=ties,
                                 query_ids=_QueryIndexes(ids))
    return (means, ids, values) if per_query else means


class _QueryIndexes:
    """The query index of each row of a flat batch, as an error names it (an int)."""

    def __init__(self, ids):
        self.ids = ids

    def __getitem__(self, row):
        return int(self.ids[row])


class MetricAccumulator:
    """Epoch-level metrics over batches: per-query values are computed at each update and
    kept (one row per query), their summaries on :meth:`~MetricAccumulator.compute`.

    Parameters
    ----------
    measures, relevance_level, ties
        As for :func:`fastir.evaluate_matrix`.

    Rows are summarised in order of their query index (rows given without one first, in
    update order), so accumulators merged in any order give the same digits when every
    row has an index. A query's rows must come in one update.

    Examples
    --------
    >>> import numpy as np, fastir
    >>> acc = fastir.MetricAccumulator(["RR", "P@1"])
    >>> acc.update(np.array([[0.9, 0.2]]), np.array([[0, 1]]))
    >>> acc.update_flat([0.4, 0.7], [1, 0], [5, 5])
    >>> acc.compute()
    {'RR': 0.5, 'P@1': 0.0}
    """

    def __init__(self, measures, *, relevance_level=1, ties="column"):
        if not isinstance(ties, str) or ties not in _MATRIX_TIES:
            raise ValueError(f"ties must be one of {', '.join(_MATRIX_TIES)}, got {ties!r}")
        self.measures = _names(measures)
        self.relevance_level = checked_level(relevance_level)
        self.ties = ties
        self.plan = _matrix_plan(self.measures, self.relevance_level, ties == "expected")[0]
        self.keys = list(self.plan.keys)
        self.reset()

    def update(self, scores, labels, *, valid=None, n_relevant=None, indexes=None):
        """Add a dense batch (arguments as :func:`fastir.evaluate_matrix`'s); ``indexes``,
        shape (batch,): each row's query index (integers from 0), if known."""
        _, values = evaluate_matrix(scores, labels, self.measures, valid=valid,
                                    n_relevant=n_relevant, relevance_level=self.relevance_level,
                                    ties=self.ties, per_row=True)
        batch = len(values)
        self._append(values, np.full(batch, -1, dtype=np.int64) if indexes is None else
                     _indexes(indexes, batch))

    def update_flat(self, preds, target, indexes):
        """Add a batch in torchmetrics' flat form (as :func:`evaluate_flat`); every row of
        a query must be in this batch."""
        _, ids, values = evaluate_flat(preds, target, indexes, self.measures, per_query=True,
                                       relevance_level=self.relevance_level, ties=self.ties)
        self._append(values, ids)

    def _append(self, values, indexes):
        self._values.append(values)
        self._indexes.append(indexes)

    def _rows(self):
        """All rows so far as one (indexes, values) pair, in summary order."""
        if len(self._values) > 1:
            values, indexes = np.concatenate(self._values), np.concatenate(self._indexes)
            order = np.argsort(indexes, kind="stable")
            self._values, self._indexes = [values[order]], [indexes[order]]
        indexes = self._indexes[0]
        again = (indexes[1:] == indexes[:-1]) & (indexes[1:] >= 0)
        if again.any():
            raise ValueError(f"query index {indexes[1:][again][0]} came in more than one "
                             "update: give all rows of a query in one update (each query is "
                             "evaluated when it arrives)")
        return indexes, self._values[0]

    def per_query(self):
        """The query indexes (-1: given without one) and the (n_queries, n_measures)
        values, in summary order."""
        indexes, values = self._rows()
        return indexes.copy(), values.copy()

    def compute(self):
        """``{measure: summary over every query so far}`` (the mean for most measures;
        0 without queries)."""
        values = self._rows()[1]
        with _jit.tier(values.size):
            means = _jit.select(kernels.summaries, values.size)(values[None], self.plan.how)[0]
        return dict(zip(self.keys, means.tolist()))

    def __len__(self):
        return sum(len(v) for v in self._values)

    def reset(self):
        """Forget every update (for the next epoch)."""
        self._values = [np.zeros((0, len(self.keys)))]
        self._indexes = [np.zeros(0, dtype=np.int64)]

    def state_dict(self):
        """The state as numpy arrays, to gather across processes (pickle, or concatenate
        ``values`` and ``indexes`` of states with equal settings) and :meth:`merge`."""
        indexes, values = self._rows()
        return {"values": values.copy(), "indexes": indexes.copy(),
                "measures": np.array(self.measures), "relevance_level":
                np.array(self.relevance_level), "ties": np.array(self.ties)}

    @classmethod
    def from_state(cls, state):
        """An accumulator holding ``state`` (from :meth:`state_dict`)."""
        keys = ("values", "indexes", "measures", "relevance_level", "ties")
        if not isinstance(state, Mapping) or any(k not in state for k in keys):
            raise ValueError(f"state must be a dict from MetricAccumulator.state_dict() (keys "
                             f"{', '.join(keys)}), got {type(state).__name__}"
                             + (f" with keys {sorted(state)}" if isinstance(state, Mapping)
                                else ""))
        acc = cls(state["measures"].tolist(), relevance_level=int(state["relevance_level"]),
                  ties=str(state["ties"]))
        acc.merge(state)
        return acc

    def merge(self, other):
        """Add the rows of another accumulator or of a :meth:`state_dict` (same measures,
        relevance level and ties); returns ``self``."""
        state = other.state_dict() if isinstance(other, MetricAccumulator) else other
        mine = (list(self.measures), self.relevance_level, self.ties)
        theirs = (np.asarray(state["measures"]).tolist(), int(state["relevance_level"]),
                  str(state["ties"]))
        if mine != theirs:
            raise ValueError(f"cannot merge accumulators of different settings: (measures, "
                             f"relevance_level, ties) {mine} and {theirs}")
        values = np.asarray(state["values"], dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != len(self.keys):
            raise ValueError(f"state values must have shape (n, {len(self.keys)}), got "
                             f"{values.shape}")
        self._append(values, _indexes(state["indexes"], len(values), "state indexes", -1))
        return self


__all__ = ["MetricAccumulator", "evaluate_flat"]
