"""Comparing systems honestly: paired significance tests, corrected p-values, bootstrap
confidence intervals and effect sizes over the same queries (:func:`compare`).

Tests (two-sided, paired by query, on the per-query differences d of two systems):

- ``"randomization"`` (default; Fisher's, as Smucker et al. 2007 recommend): the signs of
  the d are flipped at random; p = (1 + #resamples with |mean| >= the observed) /
  (1 + n_resamples), or every sign pattern enumerated when 2^n_queries <= n_resamples
  (then p = #as extreme / 2^n, exact).
- ``"t"``: the paired t-test.
- ``"bootstrap"``: the paired bootstrap test (resampled means shifted to the null):
  p = (1 + #|mean* - mean| >= |mean|) / (1 + n_resamples).
- ``"wilcoxon"``: the signed-rank test (zeros dropped; exact distribution up to 50 queries
  without ties, normal approximation otherwise). Available, not recommended: it tests
  medians of ranks, not the mean the measure reports.
- ``"tukey"``: the randomized Tukey HSD over all systems (Carterette 2012; Sakai): the
  systems' values are permuted within each query, and a pair's p-value is the share of
  resamples whose largest difference of system means reaches the pair's. Its p-values are
  adjusted for all pairs already.

Corrections (within each measure, over the pairs compared): ``"holm"``, ``"bonferroni"``,
``"bh"`` (Benjamini-Hochberg) or ``"none"``. Every test also reports the 95% bootstrap
percentile interval of the mean difference, the effect size (mean difference over the
standard deviation of the differences) and wins / ties / losses over the queries.

Random draws come from numpy generators seeded by ``(seed, stream, block)``: the same seed
gives the same p-values and intervals whatever the thread count.
"""

import json
import math
import warnings

import numpy as np

from fastir import _jit
from fastir._optional import require
from fastir.analysis import stats_kernels as SK
from fastir.measures import kernels
from fastir.model.errors import FastirWarning
from fastir.output.tables import latex_escape, markdown_row

TESTS = ("randomization", "t", "bootstrap", "wilcoxon", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
MAX_RESAMPLES = 10_000_000  # (the bootstrap keeps every resample's statistics)
BLOCK = 1024  # resamples drawn and evaluated together (fixed: results depend on the seed only)
TOLERANCE = 1e-12  # relative: a resampled statistic this close to the observed one ties it
_STREAM = {"randomization": 0, "bootstrap": 1, "tukey": 2}


def compare(qrels, runs, measures, *, baseline=None, test="randomization",
            n_resamples=10_000, correction="holm", alpha=0.05, seed=0, missing="zero",
            progress=False, **options):
    """Compare systems over the same queries.

    Parameters
    ----------
    qrels : Qrels, dict or path
        The judgments (may be None when every run is a :class:`~fastir.Results`).
    runs : dict
        ``{name: run}``, each a :class:`~fastir.Run`, dict, path, or :class:`~fastir.Results`
        already computed (holding the measures' keys). At least two.
    measures : str or list of str
        Measure names, as for :func:`fastir.evaluate`.
    baseline : str, optional
        Compare every system with this one; default: every pair.
    test : {"randomization", "t", "bootstrap", "wilcoxon", "tukey"}
    n_resamples : int
        Resamples of the randomization, bootstrap and Tukey tests, and of the intervals.
    correction : {"holm", "bonferroni", "bh", "none"}
        Multiple-comparison correction, within each measure over the pairs.
    alpha : float
        Significance level of the reports' marks.
    seed : int
        Seed of the random draws.
    missing : {"zero", "skip"}
        As for :func:`fastir.evaluate`; with "skip", systems are compared on the queries
        every run has (a :class:`~fastir.FastirWarning` says when that drops some).
    progress : bool
        Show a progress bar on standard error (runs evaluated, resamples drawn).
    **options
        ``relevance_level``, ``max_docs``, ``judged_only``, ``num_docs``, ``compat``,
        ``ties``, ``unjudged``: as for :func:`fastir.evaluate`.

    Returns
    -------
    Comparison
    """
    if test not in TESTS:
        raise ValueError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got "
                         f"{correction!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) \
            or not 1 <= n_resamples <= MAX_RESAMPLES:
        raise ValueError(f"n_resamples must be an integer from 1 to {MAX_RESAMPLES:,}, got "
                         f"{n_resamples!r}")
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(runs, dict) or len(runs) < 2:
        raise ValueError("runs must be a dict {name: run} of at least two systems, got "
                         f"{len(runs) if isinstance(runs, dict) else type(runs).__name__}")
    systems = [str(name) for name in runs]
    if len(set(systems)) < len(systems):
        raise ValueError("runs has two systems of the same name")
    if baseline is not None and str(baseline) not in systems:
        raise ValueError(f"baseline {baseline!r} is not among the runs ({', '.join(systems)})")
    from fastir.progress import Progress, wanted

    with Progress(len(runs), "evaluating runs", wanted(progress)) as bar:
        keys, summarised, per_system = _per_query_values(qrels, runs, measures, missing,
                                                         options, bar)
        queries, values = _common_queries(systems, per_system)
        if baseline is None:
            pairs = [(a, b) for a in range(len(systems)) for b in range(a + 1, len(systems))]
        else:
            base = systems.index(str(baseline))
            pairs = [(a, base) for a in range(len(systems)) if a != base]
        return Comparison(systems, keys, queries, values, pairs, baseline, test,
                          int(n_resamples), correction, float(alpha), int(seed), bar,
                          summarised)


def _per_query_values(qrels, runs, measures, missing, options, bar):
    """The measure keys, how each is summarised over queries (its aggregate:
    :func:`fastir.measures.registry.how`), and per system its (query ids, values
    (n_queries, n_measures))."""
    from fastir.loops.evaluator import Evaluator
    from fastir.measures.registry import how
    from fastir.results import Results

    evaluator = None
    keys = summarised = None
    out = []
    for name, run in runs.items():
        if isinstance(run, Results):
            res = run
        else:
            if evaluator is None:
                if qrels is None:
                    raise ValueError(f"run {name!r} needs qrels to be evaluated (qrels is None)")
                evaluator = Evaluator(qrels, measures, missing=missing, **options)
            res = evaluator.evaluate(run)
        if keys is None:
            keys = _measure_keys(measures, res, name)
        missing_keys = [k for k in keys if k not in res.measures]
        if missing_keys:
            raise ValueError(f"results of {name!r} lack {', '.join(missing_keys)}")
        if summarised is None:
            summarised = how([res.parsed[res.measures.index(k)] for k in keys])
        text = [k for k in keys if k in res.strings]
        if text:
            raise ValueError(f"{', '.join(text)}: text measures cannot be compared")
        columns = [res.measures.index(k) for k in keys]
        values = res.values[:, columns]
        _check_finite(values, keys, res.query_ids, name)
        out.append((res.query_ids, values))
        bar.advance(description=f"evaluated {name}")
    return keys, summarised, out


def _check_finite(values, keys, query_ids, name):
    """A ValueError naming the run, the measure and the query of a value that is not a
    finite number: a test on it would declare a winner from nothing."""
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        row, column = bad[0]
        raise ValueError(f"run {name!r}: {keys[column]} is {values[row, column]} on query "
                         f"{query_ids[row]!r}; a comparison needs finite per-query values")


def _measure_keys(measures, res, name):
    from fastir.measures.registry import parse_all

    try:
        return parse_all(measures)[0]
    except ValueError as exc:
        raise ValueError(f"measures: {exc} (comparing {name!r})") from None


def _common_queries(systems, per_system):
    """The queries every system has (in the first system's order), and the values there."""
    first = per_system[0][0]
    common = set(first)
    for ids, _ in per_system[1:]:
        common &= set(ids)
    queries = [q for q in first if q in common]
    if len(queries) < 2:
        raise ValueError(f"the systems have {len(queries)} queries in common; a comparison "
                         "needs at least 2 (check the query ids, or use missing='zero')")
    dropped = [(name, len(ids) - len(queries)) for name, (ids, _) in zip(systems, per_system)
               if len(ids) != len(queries)]
    if dropped:
        said = ", ".join(f"{name} {n}" for name, n in dropped)
        warnings.warn(f"compared on the {len(queries)} queries every run has; left out: "
                      f"{said} (missing='zero' scores absent queries 0 instead)",
                      FastirWarning, stacklevel=3)
    values = []
    for ids, vals in per_system:
        where = {q: i for i, q in enumerate(ids)}
        values.append(vals[[where[q] for q in queries]])
    return queries, np.stack(values)


class Comparison:
    """Systems compared over the same queries (see :func:`compare`).

    Attributes
    ----------
    systems, measures, queries : lists
    values : ndarray (n_systems, n_queries, n_measures)
    means : ndarray (n_systems, n_measures)
        Each measure summarised over the queries as :func:`fastir.evaluate` summarises it
        (a mean; counts summed, GMAP a geometric mean).
    summarised : ndarray of int (n_measures)
        How: a code of :data:`fastir.measures.registry.HOW` per measure.
    pairs : list of (system, other) names: each row of the pair arrays below is
        ``system - other``.
    difference, p_value, p_adjusted, ci_low, ci_high, effect_size : ndarrays
        (n_pairs, n_measures).
    wins, ties, losses : ndarrays of int (n_pairs, n_measures): queries where the system
        scores above, equal to, below the other.
    notes : list of str
        What the numbers need said (zero variances, exact enumeration, ...).
    """

    def __init__(self, systems, measures, queries, values, pairs, baseline, test,
                 n_resamples, correction, alpha, seed, progress=None, summarised=None):
        self.systems, self.measures, self.queries = systems, list(measures), queries
        self.values, self.baseline, self.test = values, baseline, test
        self.n_resamples, self.correction, self.alpha, self.seed = (n_resamples, correction,
                                                                    alpha, seed)
        self.notes = []
        self._progress = progress
        n = len(queries)
        self._pair_index = pairs
        self.pairs = [(systems[a], systems[b]) for a, b in pairs]
        n_measures = len(self.measures)
        if summarised is None:  # (every measure a mean)
            summarised = np.zeros(len(self.measures), dtype=np.int64)
        self.summarised = summarised
        self.means = _jit.select(kernels.summaries, values.size)(values, summarised)
        diffs = np.concatenate([values[a] - values[b] for a, b in pairs], axis=1) \
            if pairs else np.zeros((n, 0))  # (n_queries, n_pairs * n_measures)
        shape = (len(pairs), n_measures)
        total = _sequential_sum(diffs, axis=0)
        self.difference = (total / n).reshape(shape)
        self.wins = (diffs > 0).sum(axis=0).reshape(shape)
        self.ties = (diffs == 0).sum(axis=0).reshape(shape)
        self.losses = (diffs < 0).sum(axis=0).reshape(shape)
        spread = diffs.std(axis=0, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = np.where(spread > 0, (total / n) / spread,
                              np.where(total == 0, 0.0, np.copysign(np.inf, total)))
        self.effect_size = effect.reshape(shape)
        if np.any(spread == 0):
            self.notes.append("some pairs differ by the same amount on every query (zero "
                              "variance): effect size 0 when equal, infinite otherwise")
        with _jit.forced(_jit_mode(n_resamples * diffs.size)):
            boot = self._bootstrap(diffs)
            self.ci_low, self.ci_high = (np.percentile(boot / n, [2.5, 97.5], axis=0)
                                         .reshape((2,) + shape))
            p = self._p_values(diffs, total, boot).reshape(shape)
        self.p_value = p
        self.p_adjusted = np.array([adjust(p[:, m], correction if test != "tukey" else "none")
                                    for m in range(n_measures)]).T.reshape(shape)
        if test == "tukey" and correction != "none":
            self.notes.append("Tukey HSD p-values are adjusted for all pairs already: no "
                              f"{correction} correction on top")
        self._progress = None  # (the bar closes with compare)

    # -- the tests -------------------------------------------------------------------------
    def _blocks(self, stream, count, size=BLOCK):
        """(generator, resamples) per block of ``size`` resamples: seeded by the seed, the
        stream and the block only."""
        if self._progress is not None:
            self._progress.add_total((count + size - 1) // size)
        for block, lo in enumerate(range(0, count, size)):
            yield np.random.default_rng([self.seed, _STREAM[stream], block]), \
                min(size, count - lo)
            if self._progress is not None:
                self._progress.advance(description=f"{stream} resamples")

    def _bootstrap(self, diffs):
        """Sums of the differences over n_resamples bootstrap resamples of the queries."""
        n = diffs.shape[0]
        out = np.empty((self.n_resamples, diffs.shape[1]))
        at = 0
        for rng, size in self._blocks("bootstrap", self.n_resamples):
            picks = rng.integers(0, n, size=(size, n), dtype=np.int64)
            _jit.launch(SK.resample_sums, diffs, picks, out[at:at + size])
            at += size
        return out

    def _p_values(self, diffs, total, boot):
        n = diffs.shape[0]
        if self.test == "t":
            return np.array([self._t_test(diffs[:, k], k) for k in range(diffs.shape[1])])
        if self.test == "wilcoxon":
            return np.array([wilcoxon(diffs[:, k]) for k in range(diffs.shape[1])])
        if self.test == "bootstrap":
            return (1 + _as_extreme(boot - total, total)) / (1 + self.n_resamples)
        if self.test == "tukey":
            return self._tukey()
        if 2 ** min(n, 63) <= self.n_resamples:  # every sign pattern: exact
            self.notes.append(f"randomization: all 2^{n} sign patterns enumerated (exact)")
            flips = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(np.int8)
            sums = np.empty((len(flips), diffs.shape[1]))
            _jit.launch(SK.sign_flip_sums, diffs, flips, sums)
            return _as_extreme(sums, total) / len(flips)
        count = np.zeros(diffs.shape[1])
        for rng, size in self._blocks("randomization", self.n_resamples):
            flips = rng.integers(0, 2, size=(size, n), dtype=np.int8)
            sums = np.empty((size, diffs.shape[1]))
            _jit.launch(SK.sign_flip_sums, diffs, flips, sums)
            count += _as_extreme(sums, total)
        return (1 + count) / (1 + self.n_resamples)

    def _t_test(self, d, k):
        n = len(d)
        mean = d.mean()
        sd = d.std(ddof=1)
        if sd == 0:
            if mean == 0:
                return 1.0
            self.notes.append("t-test: a pair differs by the same amount on every query "
                              "(zero variance): p = 0")
            return 0.0
        return t_two_sided(mean / (sd / math.sqrt(n)), n - 1)

    def _tukey(self):
        n_systems = len(self.systems)
        values = np.ascontiguousarray(self.values.transpose(1, 0, 2))  # (n, S, M)
        n = values.shape[0]
        sums = _sequential_sum(values, axis=0)  # (S, M)
        observed = np.array([np.abs(sums[a] - sums[b]) for a, b in self._pair_index])
        count = np.zeros_like(observed)
        per_block = max(1, min(BLOCK, (1 << 22) // (n * (n_systems - 1))))  # (32 MB of draws)
        for rng, size in self._blocks("tukey", self.n_resamples, per_block):
            draws = rng.random((size, n, n_systems - 1))
            ranges = np.empty((size, values.shape[2]))
            _jit.launch(SK.permuted_ranges, values, draws, ranges)
            count += (ranges[:, None, :] >= observed[None] * (1 - TOLERANCE)).sum(axis=0)
        return ((1 + count) / (1 + self.n_resamples)).ravel()

    # -- marks and reports -----------------------------------------------------------------
    def significant(self):
        """(n_pairs, n_measures) booleans: corrected p-value below alpha."""
        return self.p_adjusted < self.alpha

    def _beats(self):
        """Per (system, measure): the systems it is significantly better than."""
        beats = [[[] for _ in self.measures] for _ in self.systems]
        sig = self.significant()
        for i, (a, b) in enumerate(self._pair_index):
            for m in range(len(self.measures)):
                if sig[i, m] and self.difference[i, m] != 0:
                    winner, loser = (a, b) if self.difference[i, m] > 0 else (b, a)
                    beats[winner][m].append(loser)
        return beats

    def caption(self):
        """The test, correction, level and seed, in a sentence (the reports' caption)."""
        how = {"randomization": f"paired randomization test ({self.n_resamples} resamples)",
               "t": "paired t-test", "bootstrap": f"paired bootstrap test "
               f"({self.n_resamples} resamples)", "wilcoxon": "Wilcoxon signed-rank test",
               "tukey": f"randomized Tukey HSD ({self.n_resamples} resamples)"}[self.test]
        names = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg"}
        corrected = "" if self.correction == "none" or self.test == "tukey" else \
            f", {names[self.correction]}-corrected"
        scope = f"against {self.baseline}" if self.baseline is not None else "all pairs"
        return (f"{len(self.systems)} systems, {len(self.queries)} queries, {scope}: "
                f"{how}{corrected}, alpha {self.alpha:g}, seed {self.seed}")

    def to_markdown(self, digits=4):
        """Means per system (a mark per system it is significantly better than), then every
        pair: difference, 95% interval, p-values, effect size, wins / ties / losses."""
        letters = [_letter(i) for i in range(len(self.systems))]
        beats = self._beats()
        lines = [f"| system | {' | '.join(self.measures)} |",
                 "|---" * (len(self.measures) + 1) + "|"]
        for s, name in enumerate(self.systems):
            cells = [f"{self.means[s, m]:.{digits}f}"
                     + "".join(_SUPERSCRIPT.get(letters[o], letters[o]) for o in beats[s][m])
                     for m in range(len(self.measures))]
            lines.append(markdown_row([f"{letters[s]}) {name}", *cells]))
        lines += ["", f"{self.caption()}. A superscript names a system this one is "
                  "significantly better than.", "",
                  "| measure | system | vs | difference | 95% CI | p | p adjusted | effect | "
                  "W / T / L |", "|---|---|---|---|---|---|---|---|---|"]
        for m, key in enumerate(self.measures):
            for i, (a, b) in enumerate(self.pairs):
                mark = " *" if self.significant()[i, m] else ""
                lines.append(markdown_row([
                    key, a, b, f"{self.difference[i, m]:+.{digits}f}",
                    f"[{self.ci_low[i, m]:+.{digits}f}, {self.ci_high[i, m]:+.{digits}f}]",
                    _p(self.p_value[i, m]), f"{_p(self.p_adjusted[i, m])}{mark}",
                    f"{self.effect_size[i, m]:+.2f}",
                    f"{self.wins[i, m]} / {self.ties[i, m]} / {self.losses[i, m]}"]))
        lines += [f"\n{note}" for note in self.notes]
        return "\n".join(lines)

    def to_latex(self, digits=4, label="tab:comparison"):
        """A booktabs table of the means: the best per measure in bold, superscripts naming
        the systems each is significantly better than, explained in the caption."""
        letters = [_letter(i) for i in range(len(self.systems))]
        beats = self._beats()
        best = self.means.max(axis=0)
        head = " & ".join(latex_escape(k) for k in self.measures)
        rows = []
        for s, name in enumerate(self.systems):
            cells = []
            for m in range(len(self.measures)):
                text = f"{self.means[s, m]:.{digits}f}"
                if self.means[s, m] == best[m]:
                    text = rf"\textbf{{{text}}}"
                if beats[s][m]:
                    text += "$^{" + "".join(letters[o] for o in beats[s][m]) + "}$"
                cells.append(text)
            rows.append(f"({letters[s]}) {latex_escape(name)} & {' & '.join(cells)} \\\\")
        caption = (latex_escape(self.caption()) + r". The best value of each measure is in "
                   r"bold; a superscript names a system this one is significantly better than.")
        return "\n".join([r"\begin{table}", r"\centering",
                          r"\begin{tabular}{l" + "r" * len(self.measures) + "}",
                          r"\toprule", f"System & {head} \\\\", r"\midrule", *rows,
                          r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}",
                          rf"\label{{{label}}}", r"\end{table}"])

    def to_dict(self):
        """Everything as plain Python (the JSON of :meth:`to_json`)."""
        pairs = []
        for m, key in enumerate(self.measures):
            for i, (a, b) in enumerate(self.pairs):
                pairs.append({
                    "measure": key, "system": a, "vs": b,
                    "difference": float(self.difference[i, m]),
                    "ci95": [float(self.ci_low[i, m]), float(self.ci_high[i, m])],
                    "p_value": float(self.p_value[i, m]),
                    "p_adjusted": float(self.p_adjusted[i, m]),
                    "significant": bool(self.significant()[i, m]),
                    "effect_size": float(self.effect_size[i, m]),
                    "wins": int(self.wins[i, m]), "ties": int(self.ties[i, m]),
                    "losses": int(self.losses[i, m])})
        return {"test": self.test, "correction": self.correction, "alpha": self.alpha,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "baseline": self.baseline, "n_queries": len(self.queries),
                "means": {s: dict(zip(self.measures, self.means[i].tolist()))
                          for i, s in enumerate(self.systems)},
                "pairs": pairs, "notes": list(self.notes)}

    def to_json(self, **kwargs):
        return json.dumps(self.to_dict(), **kwargs)

    def to_pandas(self):
        """One row per (measure, pair) (needs pandas)."""
        pd = require("pandas", "Comparison.to_pandas")

        rows = self.to_dict()["pairs"]
        for row in rows:
            row["ci_low"], row["ci_high"] = row.pop("ci95")
        return pd.DataFrame(rows)

    def plot_delta(self, measure=None, pair=0, ax=None):
        """The per-query differences of a pair on a measure (default: the first), sorted;
        returns the matplotlib axes."""
        from fastir.output.plots import plot_delta

        m = 0 if measure is None else self.measures.index(measure)
        a, b = self._pair_index[pair]
        label = (f"{self.systems[a]} - {self.systems[b]}: mean {self.difference[pair, m]:+.4f}"
                 f", p adjusted {_p(self.p_adjusted[pair, m])}")
        return plot_delta(self.values[a, :, m] - self.values[b, :, m], self.measures[m], label,
                          ax=ax)

    def __str__(self):
        return self.to_markdown()

    def _repr_markdown_(self):
        return self.to_markdown()

    def __repr__(self):
        return (f"Comparison({len(self.systems)} systems x {len(self.measures)} measures x "
                f"{len(self.queries)} queries, {self.test})")


# -- helpers -----------------------------------------------------------------------------
def _jit_mode(work):
    """Run the resampling kernels as Python when the work is small and numba is not
    loaded (numpy: about 20 element operations per kernel row), else compiled."""
    forced = _jit._forced_mode()
    if forced:
        return forced
    return "python" if _jit.python_mode(work // 20) else "numba"


def _sequential_sum(values, axis):
    """A sum in index order (as the kernels sum), from 0.0."""
    moved = np.moveaxis(values, axis, 0)
    zero = np.zeros((1,) + moved.shape[1:])
    return np.cumsum(np.concatenate((zero, moved)), axis=0)[-1]


def _as_extreme(null, observed):
    """How many null statistics (rows) are at least as far from 0 as the observed ones."""
    return (np.abs(null) >= np.abs(observed) * (1 - TOLERANCE)).sum(axis=0)


def adjust(p, method):
    """Corrected p-values of one family: "holm", "bonferroni", "bh" or "none"."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        steps = np.maximum.accumulate((m - np.arange(m)) * ranked)
    elif method == "bh":
        steps = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
    else:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    out = np.empty(m)
    out[order] = np.minimum(1.0, steps)
    return out


def t_two_sided(t, df):
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom:
    I_{df / (df + t^2)}(df / 2, 1 / 2)."""
    if math.isinf(t):
        return 0.0
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def _betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - _betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for i in range(1, 100_000):
        for numerator in (i * (b - i) * x / ((a + 2 * i - 1) * (a + 2 * i)),
                          -(a + i) * (a + b + i) * x / ((a + 2 * i) * (a + 2 * i + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return front * result / a


def wilcoxon(d):
    """Two-sided p of the Wilcoxon signed-rank test (zeros dropped, average ranks for
    ties): exact up to 50 differences without ties, else the normal approximation with the
    tie correction (as scipy's ``wilcoxon`` default, without a continuity correction)."""
    d = np.asarray(d, dtype=np.float64)
    d = d[d != 0]
    n = len(d)
    if n == 0:
        return 1.0
    magnitude = np.abs(d)
    order = np.argsort(magnitude, kind="stable")
    ranks = np.empty(n)
    sorted_magnitude = magnitude[order]
    i, tie_term = 0, 0.0
    while i < n:
        j = i
        while j + 1 < n and sorted_magnitude[j + 1] == sorted_magnitude[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        size = j - i + 1
        tie_term += size ** 3 - size
        i = j + 1
    r_plus = float(ranks[d > 0].sum())
    if n <= 50 and tie_term == 0:
        counts = [1] + [0] * (n * (n + 1) // 2)  # subsets of ranks 1..n by their sum
        for rank in range(1, n + 1):
            for total in range(len(counts) - 1, rank - 1, -1):
                counts[total] += counts[total - rank]
        all_ = 2 ** n
        k = int(r_plus)
        upper = sum(counts[k:]) / all_
        lower = sum(counts[:k + 1]) / all_
        return min(1.0, 2 * min(upper, lower))
    mean = n * (n + 1) / 4.0
    se = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0 - tie_term / 48.0)
    z = (r_plus - mean) / se
    return math.erfc(abs(z) / math.sqrt(2.0))


def _p(value):
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))


def _letter(i):
    """a, b, ..., z, then a1, b1, ... (q is skipped: it has no superscript form)."""
    alphabet = "abcdefghijklmnoprstuvwxyz"
    return alphabet[i % 25] + (str(i // 25) if i >= 25 else "")
