"""torchmetrics' retrieval metrics computed by fastir: ``from fastir.torchmetrics import
RetrievalMAP`` (and ``RetrievalMRR``, ``RetrievalNormalizedDCG``, ``RetrievalPrecision``,
``RetrievalRecall``, ``RetrievalHitRate``, ``RetrievalRPrecision``, ``RetrievalFallOut``,
``RetrievalAUROC``, ``RetrievalPrecisionRecallCurve``, ``RetrievalRecallAtFixedPrecision``)
with torchmetrics' arguments, ``update`` / ``forward`` / ``compute`` / ``reset`` and tensor
outputs, equal to torchmetrics' on its documented semantics:

- rows are grouped by ``indexes`` at ``compute`` (a query may span updates); ``preds`` are
  rounded to float32 first, as torchmetrics casts them;
- MAP, MRR, precision and recall count a row whose prediction is <= 0 as non-relevant;
  MAP with ``top_k`` divides by the relevant rows found in the top k, precision by k (or the
  query's row count: ``top_k=None``, or ``adaptive_k`` with fewer rows than k), recall by
  all the query's relevant rows;
- nDCG's gains are the targets (graded), tied predictions share their gains (sklearn's
  ``ndcg_score``), its ideal is the query's rows sorted by target;
- AUROC is the area under each query's ROC curve (its top k), 0 without both a relevant
  and a non-relevant row, scores outside [0, 1] through a sigmoid first, with ``max_fpr``
  the McClish-standardised partial area (:func:`fastir.loops.roc.auroc`);
- the precision-recall curve is each query's precision and recall at k = 1..``max_k``
  (``max_k``: the longest query's rows by default; ``adaptive_k``: k at most the query's
  rows), aggregated position by position; the recall at fixed precision is its largest
  recall whose precision reaches ``min_precision``, with its k;
- a query without a positive target (fall-out: without a negative one) counts as
  ``empty_target_action`` says; ``aggregation`` is applied to the per-query values.

torch is imported by this module only. fastir's own definitions (AP@k over all relevant,
scores <= 0 ranked like any other) are ``fastir.MetricAccumulator`` and ``evaluate_flat``.
"""

import numpy as np

from fastir._optional import require
from fastir.loops import roc
from fastir.loops.evaluator import as_array
from fastir.loops.training import evaluate_flat

torch = require("torch", "fastir.torchmetrics")

__all__ = ["RetrievalAUROC", "RetrievalFallOut", "RetrievalHitRate", "RetrievalMAP",
           "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalPrecision",
           "RetrievalPrecisionRecallCurve", "RetrievalRPrecision", "RetrievalRecall",
           "RetrievalRecallAtFixedPrecision"]

EMPTY_ACTIONS = ("error", "skip", "neg", "pos")
AGGREGATIONS = ("mean", "median", "min", "max")


class _Groups:
    """The rows of a compute, grouped by query: ``scores`` (float32 values as float64),
    ``labels``, ``indexes``; per query (ascending index): ``n`` rows, ``positives`` (the
    sum of its targets)."""

    def __init__(self, preds, target, indexes):
        self.scores = preds.astype(np.float32).astype(np.float64)
        self.labels, self.indexes = target, indexes
        _, self.n = np.unique(indexes, return_counts=True)
        order = np.argsort(indexes, kind="stable")
        self.positives = np.add.reduceat(target[order], np.r_[0, np.cumsum(self.n)[:-1]]) \
            if len(target) else np.zeros(0)

    def ranked(self):
        """The rows by query (ascending index), then score descending: (order, bounds)."""
        return roc.ranked_groups(self.scores, self.indexes)

    def values(self, measures, filtered=False, ties="column"):
        """The measures' per-query values (n_queries, n_measures); ``filtered``: rows whose
        prediction is <= 0 count as non-relevant (torchmetrics' AP, MRR, P, R)."""
        labels = np.where(self.scores > 0, self.labels, 0) if filtered else self.labels
        return evaluate_flat(self.scores, labels, self.indexes, measures, ties=ties,
                             per_query=True)[2]


class RetrievalMetric:
    """What the retrieval metrics share: torchmetrics' ``empty_target_action``,
    ``ignore_index`` and ``aggregation``, and its ``update`` / ``forward`` / ``compute`` /
    ``reset``. Other torchmetrics keyword arguments (``dist_sync_on_step``...) are accepted
    and ignored: the state is gathered by the caller, not across processes."""

    binary_target = True

    def __init__(self, empty_target_action="neg", ignore_index=None, aggregation="mean",
                 **kwargs):
        if empty_target_action not in EMPTY_ACTIONS:
            raise ValueError(f"Argument `empty_target_action` received a wrong value "
                             f"`{empty_target_action}`.")
        if ignore_index is not None and not isinstance(ignore_index, int):
            raise ValueError("Argument `ignore_index` must be an integer or None.")
        if not (aggregation in AGGREGATIONS or callable(aggregation)):
            raise ValueError("Argument `aggregation` must be one of `mean`, `median`, `min`, "
                             f"`max` or a custom callable function, but got {aggregation}.")
        self.empty_target_action, self.ignore_index = empty_target_action, ignore_index
        self.aggregation = aggregation
        self.reset()

    def reset(self):
        """Forget every row."""
        self._rows = []
        self._like = torch.tensor(0.0)

    def update(self, preds, target, indexes):
        """Keep a batch of rows: ``preds`` (float scores), ``target`` (binary; graded for
        nDCG), ``indexes`` (the query of each row, long integers), any equal shapes."""
        if indexes is None:
            raise ValueError("Argument `indexes` cannot be None")
        self._rows.append(self._checked(preds, target, indexes))
        if isinstance(preds, torch.Tensor):
            self._like = torch.empty(0, dtype=torch.float32, device=preds.device)

    def forward(self, preds, target, indexes):
        """Keep the batch (as ``update``) and return the metric on this batch alone."""
        self.update(preds, target, indexes)
        return self._compute([self._rows[-1]])

    __call__ = forward

    def compute(self):
        """The metric over every row kept: a scalar tensor."""
        return self._compute(self._rows)

    def to(self, *args, **kwargs):
        """Returns the metric itself (its state is kept on the host)."""
        return self

    def _checked(self, preds, target, indexes):
        preds, target, indexes = (as_array(x) for x in (preds, target, indexes))
        if not indexes.shape == preds.shape == target.shape:
            raise ValueError("`indexes`, `preds` and `target` must be of the same shape")
        if indexes.dtype != np.int64:
            raise ValueError("`indexes` must be a tensor of long integers")
        preds, target, indexes = preds.ravel(), target.ravel(), indexes.ravel()
        if self.ignore_index is not None:
            keep = target != self.ignore_index
            preds, target, indexes = preds[keep], target[keep], indexes[keep]
        if not indexes.size:
            raise ValueError("`indexes`, `preds` and `target` must be non-empty and "
                             "non-scalar tensors")
        if target.dtype.kind not in "biuf":
            raise ValueError("`target` must be a tensor of booleans, integers or floats")
        if preds.dtype.kind != "f":
            raise ValueError("`preds` must be a tensor of floats")
        if self.binary_target and (target.max() > 1 or target.min() < 0):
            raise ValueError("`target` must contain `binary` values")
        target = target.astype(np.float64)
        fractions = np.flatnonzero(target != np.round(target))
        if len(fractions):
            row = int(fractions[0])
            raise ValueError(f"`target` holds {float(target[row])!r} (row {row}): fastir's "
                             f"{type(self).__name__} takes whole-number targets (0 or 1; "
                             "graded 0, 1, 2... for nDCG); round or scale them first")
        return preds, target, indexes

    def _compute(self, rows):
        if not rows:
            return torch.tensor(0.0).to(self._like)
        groups = _Groups(*(np.concatenate(column) for column in zip(*rows)))
        empty = self._empty(groups)
        if empty.any() and self.empty_target_action == "error":
            raise ValueError(f"`compute` method was provided with a query with no "
                             f"{self._empty_kind} target.")
        results = np.full(len(empty), 1.0 if self.empty_target_action == "pos" else 0.0)
        if not empty.all():
            results[~empty] = self._values(groups)[~empty]
        if self.empty_target_action == "skip":
            results = results[~empty]
        if not len(results):
            return torch.tensor(0.0).to(self._like)
        return self._aggregate(torch.from_numpy(results).to(self._like))

    _empty_kind = "positive"

    def _empty(self, groups):
        return groups.positives == 0

    def _aggregate(self, values):
        if self.aggregation == "mean":
            return values.mean()
        if self.aggregation == "median":
            return values.median()
        if self.aggregation == "min":
            return values.min()
        if self.aggregation == "max":
            return values.max()
        return self.aggregation(values, dim=None)

    def _values(self, groups):
        """Per-query values of the queries (ascending index), as a float64 array."""
        raise NotImplementedError


class _TopK(RetrievalMetric):
    """A metric with torchmetrics' ``top_k`` (None: every row of the query)."""

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        if top_k is not None and not (isinstance(top_k, int) and top_k > 0):
            raise ValueError("`top_k` has to be a positive integer or None")
        self.top_k = top_k
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)

    def _at(self, name):
        return name if self.top_k is None else f"{name}@{self.top_k}"


class RetrievalMAP(_TopK):
    """torchmetrics' ``RetrievalMAP``: average precision of the top k over the relevant rows
    found there (a prediction <= 0 is not relevant)."""

    def _values(self, groups):
        if self.top_k is None:
            return groups.values(["AP"], filtered=True)[:, 0]
        ap, hits, relevant = groups.values([f"AP@{self.top_k}", f"Hits@{self.top_k}",
                                            "NumRel"], filtered=True).T
        with np.errstate(divide="ignore", invalid="ignore"):  # (AP@k divides by R)
            return np.where(hits > 0, ap * relevant / hits, 0.0)


class RetrievalMRR(_TopK):
    """torchmetrics' ``RetrievalMRR``: 1 / rank of the first relevant row of the top k (a
    prediction <= 0 is not relevant)."""

    def _values(self, groups):
        return groups.values([self._at("RR")], filtered=True)[:, 0]


class RetrievalPrecision(_TopK):
    """torchmetrics' ``RetrievalPrecision``: relevant rows of the top k (a prediction <= 0
    is not relevant) over k; the query's row count when ``top_k`` is None, or with
    ``adaptive_k`` when it has fewer rows than k."""

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 adaptive_k=False, aggregation="mean", **kwargs):
        if not isinstance(adaptive_k, bool):
            raise ValueError("`adaptive_k` has to be a boolean")
        self.adaptive_k = adaptive_k
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)

    def _values(self, groups):
        hits = groups.values([self._at("Hits")], filtered=True)[:, 0]
        if self.top_k is None:
            return hits / groups.n
        k = np.minimum(self.top_k, groups.n) if self.adaptive_k else self.top_k
        return hits / k


class RetrievalRecall(_TopK):
    """torchmetrics' ``RetrievalRecall``: relevant rows of the top k (a prediction <= 0 is
    not relevant) over the query's relevant rows."""

    def _values(self, groups):
        hits = groups.values([self._at("Hits")], filtered=True)[:, 0]
        return hits / np.maximum(groups.positives, 1)


class RetrievalHitRate(_TopK):
    """torchmetrics' ``RetrievalHitRate``: 1 when a relevant row is in the top k."""

    def _values(self, groups):
        return (groups.values([self._at("Hits")])[:, 0] > 0).astype(np.float64)


class RetrievalRPrecision(RetrievalMetric):
    """torchmetrics' ``RetrievalRPrecision``: precision at rank R."""

    def _values(self, groups):
        return groups.values(["Rprec"])[:, 0]


class RetrievalNormalizedDCG(_TopK):
    """torchmetrics' ``RetrievalNormalizedDCG``: nDCG of the top k, the targets (graded,
    integers) as gains, tied predictions sharing their gains."""

    binary_target = False

    def _values(self, groups):
        return groups.values([self._at("nDCG")], ties="average")[:, 0]


class RetrievalFallOut(_TopK):
    """torchmetrics' ``RetrievalFallOut``: non-relevant rows in the top k over the query's
    non-relevant rows; a query without one counts as ``empty_target_action`` says (default
    ``"pos"``: 1). Lower is better."""

    _empty_kind = "negative"

    def __init__(self, empty_target_action="pos", ignore_index=None, top_k=None,
                 aggregation="mean", **kwargs):
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)

    def _empty(self, groups):
        return groups.positives == groups.n

    def _values(self, groups):
        return groups.values([self._at("FallOut")])[:, 0]


class RetrievalAUROC(_TopK):
    """torchmetrics' ``RetrievalAUROC``: the area under each query's ROC curve (its top k),
    0 without both a relevant and a non-relevant row; with ``max_fpr``, the partial area up
    to that false-positive rate, McClish-standardised."""

    def __init__(self, empty_target_action="neg", ignore_index=None, top_k=None,
                 max_fpr=None, aggregation="mean", **kwargs):
        if max_fpr is not None and not (isinstance(max_fpr, float) and 0 < max_fpr <= 1):
            raise ValueError(f"Arguments `max_fpr` should be a float in range (0, 1], but got: "
                             f"{max_fpr}")
        self.max_fpr = max_fpr
        super().__init__(empty_target_action, ignore_index, top_k, aggregation, **kwargs)

    def _values(self, groups):
        order, bounds = groups.ranked()
        return roc.auroc(groups.scores[order], groups.labels[order], bounds,
                         self.top_k or 0, self.max_fpr)


class RetrievalPrecisionRecallCurve(RetrievalMetric):
    """torchmetrics' ``RetrievalPrecisionRecallCurve``: precision and recall at k = 1..max_k,
    aggregated over the queries position by position: ``(precisions, recalls, top_k)``."""

    def __init__(self, max_k=None, adaptive_k=False, empty_target_action="neg",
                 ignore_index=None, aggregation="mean", **kwargs):
        if max_k is not None and not (isinstance(max_k, int) and max_k > 0):
            raise ValueError("`max_k` has to be a positive integer or None")
        if not isinstance(adaptive_k, bool):
            raise ValueError("`adaptive_k` has to be a boolean")
        self.max_k, self.adaptive_k = max_k, adaptive_k
        super().__init__(empty_target_action, ignore_index, aggregation, **kwargs)

    def _compute(self, rows):
        if not rows:
            if self.max_k is None:
                raise ValueError("the precision-recall curve of no rows: call update first "
                                 "(or give max_k)")
            zeros = torch.zeros(self.max_k).to(self._like)
            return zeros, zeros.clone(), torch.arange(1, self.max_k + 1)
        groups = _Groups(*(np.concatenate(column) for column in zip(*rows)))
        max_k = self.max_k or int(groups.n.max())
        order, bounds = groups.ranked()
        hits = roc.hits_by_rank(groups.labels[order], bounds, max_k)
        k = np.arange(1, max_k + 1)
        shown = np.minimum(k, groups.n[:, None]) if self.adaptive_k else k
        empty = groups.positives == 0
        if empty.any() and self.empty_target_action == "error":
            raise ValueError("`compute` method was provided with a query with no positive "
                             "target.")
        with np.errstate(divide="ignore", invalid="ignore"):
            precision, recall = hits / shown, hits / groups.positives[:, None]
        fill = 1.0 if self.empty_target_action == "pos" else 0.0
        precision[empty], recall[empty] = fill, fill
        if self.empty_target_action == "skip":
            precision, recall = precision[~empty], recall[~empty]
        top_k = torch.arange(1, max_k + 1)
        if not len(precision):
            zeros = torch.zeros(max_k).to(self._like)
            return zeros, zeros.clone(), top_k
        return (self._aggregate_rows(precision), self._aggregate_rows(recall), top_k)

    def _aggregate_rows(self, values):
        """Aggregate (queries, k) values over the queries, as torchmetrics does in float32."""
        values = torch.from_numpy(values.astype(np.float32)).to(self._like)
        if self.aggregation == "mean":
            return values.mean(dim=0)
        if self.aggregation in ("median", "min", "max"):
            return getattr(values, self.aggregation)(dim=0).values
        return self.aggregation(values, dim=0)


class RetrievalRecallAtFixedPrecision(RetrievalPrecisionRecallCurve):
    """torchmetrics' ``RetrievalRecallAtFixedPrecision``: the largest recall of the
    precision-recall curve whose precision is at least ``min_precision``, and its k (the
    largest such k; ``max_k`` when there is none or the recall is 0): ``(recall, k)``."""

    def __init__(self, min_precision=0.0, max_k=None, adaptive_k=False,
                 empty_target_action="neg", ignore_index=None, **kwargs):
        super().__init__(max_k=max_k, adaptive_k=adaptive_k,
                         empty_target_action=empty_target_action, ignore_index=ignore_index,
                         **kwargs)
        if not (isinstance(min_precision, float) and 0.0 <= min_precision <= 1.0):
            raise ValueError("`min_precision` has to be a positive float between 0 and 1")
        self.min_precision = min_precision

    def _compute(self, rows):
        precision, recall, top_k = super()._compute(rows)
        reached = (precision >= self.min_precision).nonzero().flatten()
        if not len(reached):
            return torch.tensor(0.0).to(recall), torch.tensor(len(top_k))
        best = recall[reached].max()
        k = top_k[reached][recall[reached] == best].max()
        if best == 0.0:
            k = torch.tensor(len(top_k), dtype=top_k.dtype)
        return best, k
