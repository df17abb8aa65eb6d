"""A run's mean from a few human judgments and many machine ones: prediction-powered
inference (:func:`ppi`; Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi &
Zrnic 2023).

A machine assessor (an LLM) judges many queries, humans judge a few of them. On the ``n``
queries humans judge, ``Y`` is a measure's value under the human qrels and ``Yhat`` its value
under the machine's; on the ``N`` queries only the machine judges, ``Yhat_u``. The estimate of
the mean is the machine's mean, corrected by how far the machine is off where humans say::

    theta = lam * mean(Yhat_u) + mean(Y - lam * Yhat)

and its ``1 - alpha`` interval the normal one, ``theta -+ z(1 - alpha / 2) * se``, with
``se^2 = lam^2 var(Yhat_u) / N + var(Y - lam * Yhat) / n`` (variances over the queries, divided
by their count). ``lam = 1`` is plain PPI, ``lam = 0`` the classical interval of the human
values alone; by default (``lam=None``) PPI++ tunes it to the narrowest interval,

    lam = cov(Y, Yhat) / ((1 + n / N) var(Yhat, Yhat_u))

(the covariance over the human-judged queries, divided by n; the variance over all the
machine-judged queries, divided by n + N - 1), clipped to [0, 1]: a machine that
agrees with the humans weighs close to 1, one that says nothing of them 0, and the interval
is never much wider than the classical one. These are ppi-python's ``ppi_mean_pointestimate``
and ``ppi_mean_ci`` (two-sided); where the machine's values are all equal, ppi-python's tuned
``lam`` is 0 / 0, fastir's is 0 (the classical interval).
"""

import json
import math
from collections import namedtuple
from statistics import NormalDist

import numpy as np

from fastir._optional import require
from fastir.output.tables import markdown_row

#: The interval's error level by default: 95% intervals.
ALPHA = 0.05

#: One measure's estimate: ``estimate``, the ``1 - alpha`` interval ``ci_low`` to
#: ``ci_high``, the ``lam`` used (tuned or given), ``n_human`` (queries judged by humans) and
#: ``n_machine`` (queries judged by the machine, those included).
PPIEstimate = namedtuple("PPIEstimate", "estimate ci_low ci_high lam n_human n_machine")


def ppi_mean(y, yhat, yhat_unlabelled, alpha=ALPHA, lam=None):
    """The prediction-powered estimate of a mean and its two-sided ``1 - alpha`` interval.

    Parameters
    ----------
    y : array_like, shape (n,)
        The true values where they are known (a measure under human qrels), n >= 2.
    yhat : array_like, shape (n,)
        The predicted values of the same items (the measure under machine qrels).
    yhat_unlabelled : array_like, shape (N,)
        The predicted values of the items whose true value is unknown, N >= 1.
    alpha : float
        The error level, in (0, 1): the interval covers the mean with probability about
        ``1 - alpha``.
    lam : float, optional
        The weight of the predictions, in [0, 1]: 1 is PPI, 0 the classical interval of ``y``
        alone; None (default) tunes it (PPI++, see the module doc).

    Returns
    -------
    PPIEstimate
        ``(estimate, ci_low, ci_high, lam, n_human=n, n_machine=n + N)``.

    Examples
    --------
    >>> from fastir.analysis.ppi import ppi_mean
    >>> est = ppi_mean([0.5, 0.2, 0.9], [0.6, 0.2, 0.8], [0.4, 0.7, 0.1, 0.3], lam=1)
    >>> round(est.estimate, 4), est.n_human, est.n_machine  # 0.375 + mean(y - yhat) = 0
    (0.375, 3, 7)
    """
    y, yhat, unlabelled = (_vector(v, name) for v, name in
                           ((y, "y"), (yhat, "yhat"), (yhat_unlabelled, "yhat_unlabelled")))
    n, big_n = len(y), len(unlabelled)
    if len(yhat) != n:
        raise ValueError(f"yhat must have one value per value of y ({n}), got {len(yhat)}")
    if n < 2:
        raise ValueError(f"y must have at least 2 values (an interval needs a spread), got {n}")
    if big_n < 1:
        raise ValueError("yhat_unlabelled must have at least 1 value")
    check_alpha(alpha)
    check_lam(lam)
    if lam is None:
        lam = tuned_lam(y, yhat, unlabelled)
    lam = float(lam)
    estimate = float((lam * unlabelled).mean() + (y - lam * yhat).mean())
    imputed_se = (lam * unlabelled).std() / math.sqrt(big_n)
    rectifier_se = (y - lam * yhat).std() / math.sqrt(n)
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(imputed_se ** 2 + rectifier_se ** 2)
    return PPIEstimate(estimate, estimate - half, estimate + half, lam, n, n + big_n)


def tuned_lam(y, yhat, yhat_unlabelled):
    """PPI++'s weight of the predictions for a mean (ppi-python's ``_calc_lam_glm`` for the
    mean, clipped): ``cov(y, yhat) / ((1 + n / N) var(yhat, yhat_unlabelled))`` in [0, 1];
    0 when the predictions are all equal (they tell nothing)."""
    n, big_n = len(y), len(yhat_unlabelled)
    every = np.concatenate((yhat, yhat_unlabelled))
    if (every == every[0]).all():
        return 0.0
    covariance = float(((y - y.mean()) * (yhat - yhat.mean())).sum()) / n
    variance = float(every.var(ddof=1))
    return min(1.0, max(0.0, covariance / ((1 + n / big_n) * variance)))


def check_alpha(alpha):
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) \
            or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")


def check_lam(lam):
    if lam is None:
        return
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)) \
            or not 0 <= lam <= 1:
        raise ValueError(f"lam must be None (tuned, PPI++) or a number in [0, 1] (1: PPI, "
                         f"0: human judgments only), got {lam!r}")


def _vector(values, name):
    try:
        out = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of numbers") from None
    if out.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError(f"{name} holds a value that is not a finite number")
    return out


def ppi(human_qrels, machine_qrels, run, measures, *, baseline=None, alpha=ALPHA, lam=None,
        missing="zero", **options):
    """Estimate a run's mean of each measure over the queries a machine judged, from the
    few that humans judged too (prediction-powered inference, PPI++).

    Parameters
    ----------
    human_qrels : Qrels, dict or path
        The human judgments, of at least 2 queries, each judged by ``machine_qrels`` too.
    machine_qrels : Qrels, dict or path
        The machine judgments (an LLM's, say), of more queries than the humans judge.
    run : Run, dict or path
        The run, in any form :func:`fastir.evaluate` takes.
    measures : str or list of str
        Measure names, as for :func:`fastir.evaluate`; each summarised by its mean.
    baseline : Run, dict or path, optional
        Estimate the mean difference ``run - baseline`` instead, paired by query.
    alpha : float
        The intervals' error level: ``1 - alpha`` intervals (95% by default).
    lam : float, optional
        The weight of the machine's values, in [0, 1]: None (default) tunes it per measure
        (PPI++), 1 is PPI, 0 the classical interval of the human values alone.
    missing : {"zero", "skip"}
        As for :func:`fastir.evaluate`: with "skip" the queries the run (or the baseline)
        lacks are left out of both sets.
    **options
        ``relevance_level``, ``max_docs``, ``judged_only``, ``num_docs``, ``compat``,
        ``ties``, ``unjudged``: as for :func:`fastir.evaluate`, under both qrels.

    Returns
    -------
    PPIEstimates
        ``result[measure]`` is a :data:`PPIEstimate` (``estimate``, ``ci_low``,
        ``ci_high``, ``lam``, ``n_human``, ``n_machine``).

    Notes
    -----
    Per measure, ``Y`` are the run's values under ``human_qrels`` on the queries it judges,
    ``Yhat`` its values under ``machine_qrels`` on the same queries, ``Yhat_u`` those on the
    queries only ``machine_qrels`` judges (ppi-python's convention); the estimate and interval
    are :func:`ppi_mean`'s (the module doc has the formulas). The interval is asymptotic
    (normal): with few human-judged queries it is optimistic, as the classical one is.

    References
    ----------
    A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan and T. Zrnic, Prediction-powered
    inference, Science 382 (2023). A. N. Angelopoulos, J. C. Duchi and T. Zrnic, PPI++:
    Efficient prediction-powered inference, arXiv:2311.01453 (2023).

    Examples
    --------
    >>> import fastir
    >>> machine = {f"q{i}": {"a": i % 2, "b": 1} for i in range(8)}  # P@1: 0, 1, 0, 1, ...
    >>> human = {f"q{i}": {"a": int(i < 3), "b": 1} for i in range(4)}  # P@1: 1, 1, 1, 0
    >>> run = {f"q{i}": {"a": 2.0, "b": 1.0} for i in range(8)}
    >>> est = fastir.ppi(human, machine, run, "P@1", lam=1)["P@1"]
    >>> est.estimate, est.n_human, est.n_machine  # 0.5 + (3/4 - 1/2)
    (0.75, 4, 8)
    """
    from fastir.io.inputs import as_qrels
    from fastir.loops.evaluator import Evaluator

    check_alpha(alpha)
    check_lam(lam)
    if isinstance(run, (tuple, list)):
        raise ValueError("run must be one run; for the difference of two runs give the other "
                         "as baseline=")
    human_qrels, machine_qrels = as_qrels(human_qrels), as_qrels(machine_qrels)
    human_ids = [str(q) for q in human_qrels.query_ids]
    machine_ids = {str(q) for q in machine_qrels.query_ids}
    unjudged = [q for q in human_ids if q not in machine_ids]
    if unjudged:
        raise ValueError(f"human_qrels judges {len(unjudged)} queries that machine_qrels "
                         f"does not: {_some(unjudged)} (the human-judged queries must be "
                         "among the machine-judged ones)")
    if len(human_ids) < 2:
        raise ValueError(f"human_qrels judges {len(human_ids)} queries; ppi needs at least 2")
    keys, canonical = _mean_measures(measures)
    runs = [run] if baseline is None else [run, baseline]
    per_qrels = []
    for qrels in (human_qrels, machine_qrels):
        evaluator = Evaluator(qrels, keys, missing=missing, **options)
        per_qrels.append(_per_query(evaluator, runs, keys))
    human, machine = per_qrels
    human_set = set(human_ids)
    labelled = [q for q in human if q in machine]
    unlabelled = [q for q in machine if q not in human_set]
    if len(labelled) < 2:
        raise ValueError(f"the run has {len(labelled)} of the queries human_qrels judges; ppi "
                         "needs at least 2 (check the query ids, or use missing='zero')")
    if not unlabelled:
        raise ValueError("machine_qrels judges no query that human_qrels does not: there is "
                         "nothing to predict (the classical mean of the human values is the "
                         "answer)")
    y = np.array([human[q] for q in labelled])
    yhat = np.array([machine[q] for q in labelled])
    yhat_u = np.array([machine[q] for q in unlabelled])
    estimates = [ppi_mean(y[:, m], yhat[:, m], yhat_u[:, m], alpha, lam)
                 for m in range(len(keys))]
    lam = None if lam is None else float(lam)
    return PPIEstimates(keys, estimates, float(alpha), lam, baseline is not None,
                        labelled, unlabelled, canonical)


def _mean_measures(measures):
    """The measures' keys and canonical names, each summarised by a mean (PPI estimates
    means)."""
    from fastir.measures.registry import parse_all

    try:
        keys, parsed = parse_all(measures)
    except ValueError as exc:
        raise ValueError(f"measures: {exc}") from None
    other = [f"{k} ({m.spec.aggregate})" for k, m in zip(keys, parsed)
             if m.spec.aggregate != "mean"]
    if other:
        raise ValueError(f"measures must be summarised by their mean (ppi estimates means); "
                         f"not so: {', '.join(other)}")
    return keys, [str(m) for m in parsed]


def _per_query(evaluator, runs, keys):
    """``{query: values (n_measures,)}`` of the run (``runs[0]``), less the baseline's
    (``runs[1]``) if any, on the queries all of them have."""
    tables = []
    for which, run in zip(("run", "baseline"), runs):
        res = evaluator.evaluate(run)
        values = res.values[:, [res.measures.index(k) for k in keys]]
        bad = np.argwhere(~np.isfinite(values))
        if len(bad):
            row, column = bad[0]
            raise ValueError(f"{which}: {keys[column]} is {values[row, column]} on query "
                             f"{res.query_ids[row]!r}; ppi needs finite per-query values")
        tables.append(dict(zip((str(q) for q in res.query_ids), values)))
    if len(tables) == 1:
        return tables[0]
    first, second = tables
    return {q: v - second[q] for q, v in first.items() if q in second}


def _some(items, shown=5):
    said = ", ".join(repr(i) for i in items[:shown])
    return said + (f" and {len(items) - shown} more" if len(items) > shown else "")


class PPIEstimates:
    """Per measure, a run's prediction-powered mean and its interval (see :func:`ppi`).

    Attributes
    ----------
    measures : list of str
    estimates : dict
        ``{measure: PPIEstimate}``; ``result[measure]`` is one.
    alpha : float
    lam : float or None
        The ``lam`` asked for (None: tuned per measure; each estimate holds its own).
    difference : bool
        Whether the estimates are of ``run - baseline``.
    human_queries, machine_queries : list of str
        The queries both qrels judge (``Y``, ``Yhat``), and those only the machine judges
        (``Yhat_u``).
    """

    def __init__(self, measures, estimates, alpha, lam, difference, human_queries,
                 machine_queries, canonical=None):
        self.measures = list(measures)
        self._keys = dict(zip(canonical or self.measures, self.measures))
        self.estimates = dict(zip(self.measures, estimates))
        self.alpha, self.lam, self.difference = alpha, lam, difference
        self.human_queries, self.machine_queries = list(human_queries), list(machine_queries)
        self.n_human = len(self.human_queries)
        self.n_machine = self.n_human + len(self.machine_queries)

    def __getitem__(self, measure):
        if measure in self.estimates:
            return self.estimates[measure]
        from fastir.measures.registry import parse_all

        try:
            parsed = parse_all(measure)[1]
        except ValueError:
            parsed = []
        if len(parsed) == 1 and str(parsed[0]) in self._keys:
            return self.estimates[self._keys[str(parsed[0])]]
        raise KeyError(f"{measure!r} is not among the measures estimated "
                       f"({', '.join(self.measures)})")

    def __iter__(self):
        return iter(self.measures)

    def __len__(self):
        return len(self.measures)

    def _caption(self):
        what = "the mean difference run - baseline" if self.difference else "the run's mean"
        how = "PPI++ (lambda tuned per measure)" if self.lam is None else \
            "classical (human judgments only)" if self.lam == 0 else \
            "PPI" if self.lam == 1 else f"PPI++ (lambda {self.lam:g})"
        return (f"{how} estimates of {what} over the {self.n_machine} machine-judged queries, "
                f"{self.n_human} of them judged by humans; {self._level()} normal intervals")

    def _level(self):
        return f"{100 * (1 - self.alpha):g}%"

    def to_markdown(self, digits=4):
        """One row per measure: the estimate, its interval and the lambda used."""
        lines = [f"| measure | estimate | {self._level()} CI | lambda |", "|---|---|---|---|"]
        sign = "+" if self.difference else ""
        for key, e in self.estimates.items():
            lines.append(markdown_row([
                key, f"{e.estimate:{sign}.{digits}f}",
                f"[{e.ci_low:{sign}.{digits}f}, {e.ci_high:{sign}.{digits}f}]",
                f"{e.lam:.3f}"]))
        lines.append(f"\n{self._caption()}.")
        return "\n".join(lines)

    def to_dict(self):
        """Everything as plain Python (the JSON of :meth:`to_json`)."""
        return {"alpha": self.alpha, "lam": self.lam, "difference": self.difference,
                "n_human": self.n_human, "n_machine": self.n_machine,
                "estimates": {k: {"estimate": e.estimate, "ci_low": e.ci_low,
                                  "ci_high": e.ci_high, "lam": e.lam}
                              for k, e in self.estimates.items()}}

    def to_json(self, **kwargs):
        return json.dumps(self.to_dict(), **kwargs)

    def to_pandas(self):
        """One row per measure (needs pandas)."""
        pd = require("pandas", "PPIEstimates.to_pandas")

        return pd.DataFrame([e._asdict() for e in self.estimates.values()],
                            index=pd.Index(self.measures, name="measure"))

    def __str__(self):
        return self.to_markdown()

    def _repr_markdown_(self):
        return self.to_markdown()

    def __repr__(self):
        said = ", ".join(f"{k} {e.estimate:.4f} [{e.ci_low:.4f}, {e.ci_high:.4f}]"
                         for k, e in list(self.estimates.items())[:3])
        more = ", ..." if len(self.estimates) > 3 else ""
        return (f"PPIEstimates({self.n_human} human of {self.n_machine} queries: "
                f"{said}{more})")
