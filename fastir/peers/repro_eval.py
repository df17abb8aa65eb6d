"""repro_eval's interface computed by fastir: ``from fastir.repro_eval import RpdEvaluator,
RplEvaluator`` in place of ``from repro_eval.Evaluator import ...`` (and repro_eval's
``util`` and ``measure`` functions from the same module), and a repro_eval script runs on
fastir.

The evaluators take repro_eval's keyword arguments (``qrels_orig_path``, ``run_b_orig_path``,
``run_a_orig_path``, ``run_b_rep_path``, ``run_a_rep_path``, ``qrels_rpl_path``) and have its
methods, arguments and return shapes: ``trim``, ``evaluate``, ``ktu``, ``rbo``, ``rmse``,
``nrmse``, ``er``, ``dri``, ``ttest``; the per-query scores (``run_b_orig_score``, ...) are
its ``{topic: {measure: value}}`` dicts, with its measure names (ir_measures', trec_eval
9.0.8's values, as ir_measures computes them with pytrec_eval). The values are
:mod:`fastir.analysis.reproducibility`'s: repro_eval's digits, NaN and inf.

Differs, and why: runs are kept as :class:`fastir.Run` (``run_b_orig``...), not dicts, and
ranked by score (ties by document id descending, as trec_eval): repro_eval takes a run's
order from its file, the same order for a run listed in rank order; a topic of the
reproduction missing from the original, or rankings of unequal length for KTU, is an error
naming the topic (repro_eval stops on an ``AttributeError`` or scipy's ``ValueError``); an
unknown keyword argument is an error (repro_eval ignores it); ``trim`` needs a positive ``t``;
``print_feedback`` prints repro_eval's lines without progress bars.
"""

import numpy as np

from fastir.analysis import reproducibility as R
from fastir.io.inputs import as_qrels, as_run
from fastir.model.data import InputError, Run

__all__ = ["DRI", "ER", "ERR_MSG", "KTU", "RBO", "RBO_DEPTH", "RBO_P", "RMSE", "RUN_LENGTH",
           "RplEvaluator", "RpdEvaluator", "arp", "arp_scores", "break_ties", "evaluate_run",
           "exclude", "load_measures", "load_qrels", "load_run", "nRMSE", "print_base_adv",
           "print_simple_line", "topic_scores", "trim_run", "ttest"]

RUN_LENGTH = R.KTU_DEPTH
RBO_DEPTH = R.RBO_DEPTH
RBO_P = R.RBO_P
ERR_MSG = "Please provide adequate run combinations and have them evaluated first."
#: trec_eval's counts and texts, left out of the reproduction measures (as repro_eval).
exclude = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
           "relstring"]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
#: repro_eval's measures (trec_eval's P, recall, ndcg, ndcg_cut, map_cut, set_*, Rprec,
#: infAP, bpref, recip_rank, map, iprec_at_recall in ir_measures' names), in the order its
#: score dicts list them (ir_measures' order for pytrec_eval).
MEASURES = (["AP", "Rprec", "Bpref", "RR"] + [f"IPrec@{r / 10:.1f}" for r in range(11)]
            + [f"P@{k}" for k in _CUTS] + [f"R@{k}" for k in _CUTS] + ["infAP", "nDCG"]
            + [f"nDCG@{k}" for k in _CUTS] + [f"AP@{k}" for k in _CUTS]
            + ["SetP", "SetP(relative=True)", "SetR", "SetAP", "SetF"])

_UNSET = object()


# -- repro_eval.util ------------------------------------------------------------------------
def load_measures():
    """repro_eval's measures, as names (fastir reads them; repro_eval gives ir_measures'
    objects, whose names these are)."""
    return list(MEASURES)


def load_run(path):
    """A run file as repro_eval's ``{topic: {doc: score}}`` (topics sorted, documents in
    ranking order)."""
    return _ranked_dict(_run(path))


def load_qrels(path):
    """A qrels file as ``{topic: {doc: label}}`` (topics sorted)."""
    return as_qrels(path).to_dict()


def evaluate_run(measures, qrels, run):
    """``{topic: {measure: value}}`` of ``run`` on ``qrels`` (repro_eval's ``evaluate_run``:
    every judged topic, 0 where the run has none)."""
    return _Scores(qrels, measures).of(run)


def break_ties(run):
    """Order each topic of a ``{topic: {doc: score}}`` run as trec_eval ranks it: within each
    stretch of equal scores, documents by id descending (in place; returns ``run``)."""
    for topic, ranking in run.items():
        items = list(ranking.items())
        ordered, start = [], 0
        for i in range(1, len(items) + 1):
            if i == len(items) or items[i][1] != items[start][1]:
                ordered += sorted(items[start:i], reverse=True)
                start = i
        run[topic] = dict(ordered)
    return run


def trim_run(run, thresh):
    """Keep the first ``thresh`` documents of each topic of a dict run (in place)."""
    for topic, ranking in run.items():
        run[topic] = dict(list(ranking.items())[:thresh])


def topic_scores(run_scores):
    """``{measure: [value per topic]}`` of a ``{topic: {measure: value}}`` dict."""
    measures = list(next(iter(run_scores.values())))
    return {m: [row.get(m) for row in run_scores.values()] for m in measures}


def arp(topic_scores):
    """The average retrieval performance: the mean of ``{topic: value}``'s values."""
    return np.array(list(topic_scores.values())).mean()


def arp_scores(run):
    """``{measure: mean over topics}`` of a ``{topic: {measure: value}}`` dict."""
    return {m: np.array(values).mean() for m, values in topic_scores(run).items()}


def print_base_adv(measure_topic, repro_measure, base_value, adv_value=None):
    """A line of repro_eval's report: a measure's baseline (and advanced) value."""
    line = f"{measure_topic:25s}{repro_measure:8s}{'BASE':8s}{base_value:.4f}"
    if adv_value:
        line += f"{'':3s}" if base_value < 0 else f"{'':4s}"
        line += f"{'ADV':8s}{adv_value:.4f}"
    print(line)


def print_simple_line(measure, repro_measure, value):
    """A line of repro_eval's report: one value."""
    print(f"{measure:25s}{repro_measure:8s}{value:.4f}")


# -- repro_eval.measure ---------------------------------------------------------------------
def KTU(orig_run, rep_run, trim_thresh=RUN_LENGTH, pbar=False, per_topic=False):
    """Kendall's tau Union between the original and reproduced rankings: its mean over
    topics, or ``{topic: value}`` with ``per_topic``."""
    ids, values = R.ktu(_run(orig_run), _run(rep_run), trim_thresh)
    return _per_topic(rep_run, ids, values, per_topic)


def RBO(orig_run, rep_run, p=RBO_P, depth=RBO_DEPTH, pbar=False, per_topic=False):
    """Rank-biased overlap between the original and reproduced rankings: its mean over
    topics, or ``{topic: value}`` with ``per_topic``."""
    ids, values = R.rbo(_run(orig_run), _run(rep_run), p, depth)
    return _per_topic(rep_run, ids, values, per_topic)


def RMSE(orig_score, rep_score, pbar=False):
    """``{measure: root mean square error}`` between two score dicts of the same topics."""
    measures, orig, rep = _paired(orig_score, rep_score)
    return dict(zip(measures, R.rmse(orig, rep).tolist()))


def nRMSE(orig_score, rep_score, pbar=False):
    """``{measure: RMSE / its largest value for the original scores}``."""
    measures, orig, rep = _paired(orig_score, rep_score)
    return dict(zip(measures, R.nrmse(orig, rep).tolist()))


def ER(orig_score_a, orig_score_b, rep_score_a, rep_score_b, pbar=False):
    """``{measure: effect ratio}``: the reproduced mean improvement of the advanced run over
    the baseline, over the original one."""
    orig = _improvement(orig_score_a, orig_score_b, "original")
    rep = _improvement(rep_score_a, rep_score_b, "reproduced")
    with np.errstate(all="ignore"):
        return {m: float(np.float64(value) / orig[m]) for m, value in _in(rep, orig)}


def DRI(orig_score_a, orig_score_b, rep_score_a, rep_score_b, pbar=False):
    """``{measure: delta relative improvement}``: the original relative improvement minus
    the reproduced one."""
    orig = _relative(orig_score_a, orig_score_b, "original")
    rep = _relative(rep_score_a, rep_score_b, "reproduced")
    return {m: float(np.float64(value) - rep[m]) for m, value in _in(orig, rep)}


def ttest(orig_score, rep_score, rpd=True, pbar=False):
    """``{measure: p-value}`` of the two-sided t-test between two score dicts: paired by
    topic (``rpd``: a reproduction), else unpaired (a replication). Every p NaN for equal
    dicts becomes 1."""
    measures, orig = _table(orig_score, "original scores", drop=())
    rep = _column_values(rep_score, measures, "reproduced scores")
    if rpd:
        if list(rep_score) != list(orig_score):
            raise InputError("ttest pairs the topics of the original and reproduced scores: "
                             f"they differ ({len(orig_score)} and {len(rep_score)} topics, "
                             f"first {_first_difference(orig_score, rep_score)!r})")
    pvals = dict(zip(measures, R.t_test(orig, rep, paired=rpd).tolist()))
    if all(np.isnan(v) for v in pvals.values()) and orig_score == rep_score:
        pvals = dict.fromkeys(pvals, 1.0)
    return pvals


def _per_topic(rep_run, ids, values, per_topic):
    """The mean, or ``{topic: value}``; topics in the order of ``rep_run`` when it is a dict
    (repro_eval's order), else in id order."""
    if isinstance(rep_run, dict):
        place = {str(q): i for i, q in enumerate(ids)}
        ids = list(rep_run)
        values = values[[place[str(q)] for q in ids]]
    if per_topic:
        return dict(zip(ids, values.tolist()))
    return float(np.mean(values))


# -- score dicts as arrays -------------------------------------------------------------------
def _table(scores, what, drop=exclude):
    """(measures, values): the measures of the first topic of a ``{topic: {measure:
    value}}`` dict (but ``drop``) and the (topics, measures) values."""
    if not isinstance(scores, dict) or not scores:
        raise ValueError(f"{what} must be a non-empty dict {{topic: {{measure: value}}}} "
                         "(from evaluate()), got "
                         f"{scores if not isinstance(scores, dict) else 'an empty dict'!r}")
    measures = [m for m in next(iter(scores.values())) if m not in drop]
    return measures, _column_values(scores, measures, what)


def _column_values(scores, measures, what, topics=None):
    rows = scores.values() if topics is None else [_topic(scores, t, what) for t in topics]
    try:
        return np.array([[row[m] for m in measures] for row in rows], dtype=np.float64)
    except KeyError as e:
        raise InputError(f"{what}: a topic has no value of {e.args[0]!r}; give scores of "
                         "the same measures (from evaluate())") from None
    except (TypeError, ValueError):
        raise InputError(f"{what}: the values must be numbers") from None


def _topic(scores, topic, what):
    row = scores.get(topic)
    if row is None:
        raise InputError(f"{what}: topic {topic!r} is missing (compare scores of the same "
                         "topics)")
    return row


def _paired(orig_score, rep_score):
    measures, orig = _table(orig_score, "original scores")
    return measures, orig, _column_values(rep_score, measures, "reproduced scores",
                                          list(orig_score))


def _improvement(score_a, score_b, what):
    measures, advanced = _table(score_a, f"{what} advanced scores")
    baseline = _column_values(score_b, measures, f"{what} baseline scores", list(score_a))
    return dict(zip(measures, R.mean_improvement(advanced, baseline).tolist()))


def _relative(score_a, score_b, what):
    measures, advanced = _table(score_a, f"{what} advanced scores")
    baseline = _column_values(score_b, measures, f"{what} baseline scores")
    return dict(zip(measures, R.relative_improvement(advanced, baseline).tolist()))


def _in(values, other):
    missing = [m for m in values if m not in other]
    if missing:
        raise InputError(f"measure {missing[0]!r} is in one side's scores only; give scores "
                         "of the same measures")
    return values.items()


def _first_difference(a, b):
    return next((x for x, y in zip(a, b) if x != y), None)


# -- runs ------------------------------------------------------------------------------------
def _run(run):
    """A :class:`Run` of a path, a dict or a Run (ranked by score)."""
    return as_run(run)


def _ranked_dict(run):
    """``{topic: {doc: score}}`` of a Run, documents in ranking order."""
    rankings = R.rankings(run)
    docs, scores = run.doc_ids.take(rankings.rows).tolist(), run.scores[rankings.rows].tolist()
    bounds = rankings.offsets.tolist()
    return {q: dict(zip(docs[lo:hi], scores[lo:hi]))
            for q, lo, hi in zip(run.query_ids.tolist(), bounds, bounds[1:])}


def _trimmed(run, t):
    """The top ``t`` documents of each topic of ``run``, in ranking order."""
    rankings = R.rankings(run)
    place = np.arange(len(rankings.rows)) - np.repeat(rankings.offsets[:-1], rankings.lengths)
    rows = rankings.rows[place < t]
    counts = np.minimum(rankings.lengths, t)
    stops = np.cumsum(counts)
    return Run(run.query_ids, stops - counts, stops, run.doc_ids.take(rows), run.scores[rows],
               run.name, run.source)


class _Scores:
    """Per-topic scores of runs on one qrels (prepared once): repro_eval's dicts."""

    def __init__(self, qrels, measures):
        from fastir.engine import disjoint_warning
        from fastir.loops.evaluator import Evaluator

        self.names = [str(m) for m in measures]
        self.evaluator = Evaluator(qrels, self.names, missing="zero", compat="9.0.8")
        self.evaluator.check = disjoint_warning  # (repro_eval scores a topic it lacks 0)

    def of(self, run):
        """``{topic: {measure: value}}``: every judged topic, in id order; a topic the run
        misses scores 0 with its measures in name order (as ir_measures adds it)."""
        results = self.evaluator.evaluate(_run(run))
        names = self.names
        absent = sorted(range(len(names)), key=names.__getitem__)
        absent_names = [names[j] for j in absent]
        return {q: dict(zip(names, row)) if present else
                dict(zip(absent_names, [row[j] for j in absent]))
                for q, row, present in zip(results.query_ids, results.values.tolist(),
                                           results.in_run.tolist())}


# -- the evaluators ----------------------------------------------------------------------------
_PATHS = ("qrels_orig_path", "run_b_orig_path", "run_a_orig_path", "run_b_rep_path",
          "run_a_rep_path")


class Evaluator:
    """What repro_eval's two evaluators share: the original baseline and advanced runs, their
    reproductions, their scores, and ER, DRI and the t-test."""

    _KEYWORDS = _PATHS

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(self._KEYWORDS))
        if unknown:
            raise TypeError(f"{type(self).__name__} got an unexpected keyword argument "
                            f"{unknown[0]!r} (it takes {', '.join(self._KEYWORDS)})")
        for name in _PATHS:
            setattr(self, name, kwargs.get(name))
        if self.qrels_orig_path is None:
            raise ValueError(f"{type(self).__name__} needs qrels_orig_path (the original "
                             "qrels)")
        self.qrels_orig = as_qrels(self.qrels_orig_path)
        self.run_b_orig = _run(self.run_b_orig_path) if self.run_b_orig_path else None
        self.run_a_orig = _run(self.run_a_orig_path) if self.run_a_orig_path else None
        self.run_b_rep = _run(self.run_b_rep_path) if self.run_b_rep_path else None
        self.run_a_rep = _run(self.run_a_rep_path) if self.run_a_rep_path else None
        self.run_b_orig_score = None
        self.run_a_orig_score = None
        self.run_b_rep_score = None
        self.run_a_rep_score = None
        self.measures = load_measures()
        self._prepared = {}

    def _scores(self, qrels, run):
        """repro_eval's score dict of ``run`` on ``qrels`` (the Qrels prepared once per
        measures)."""
        key = (id(qrels), tuple(str(m) for m in self.measures))
        if key not in self._prepared:
            self._prepared[key] = _Scores(qrels, self.measures)
        return self._prepared[key].of(run)

    @property
    def _rep_qrels(self):
        """The qrels of the reproduced runs: the replication's, else the original."""
        rpl = getattr(self, "qrels_rpl", None)
        return self.qrels_orig if rpl is None else rpl

    def trim(self, t=RUN_LENGTH, run=None):
        """Keep the top ``t`` documents of each topic of every run (or of ``run`` alone, a
        dict run, in place)."""
        if not (isinstance(t, (int, np.integer)) and not isinstance(t, bool) and t > 0):
            raise ValueError(f"t must be a positive integer (documents per topic), got {t!r}")
        if run:
            if not isinstance(run, dict):
                raise TypeError("trim(run=...) trims a dict run in place; give a "
                                "{topic: {doc: score}} dict")
            trim_run(break_ties(run), t)
            return
        for name in ("run_b_orig", "run_a_orig", "run_b_rep", "run_a_rep"):
            if getattr(self, name):
                setattr(self, name, _trimmed(getattr(self, name), t))

    def evaluate(self):
        """Score the original baseline and advanced runs (``run_b_orig_score``,
        ``run_a_orig_score``)."""
        if self.run_b_orig:
            self.run_b_orig_score = self._scores(self.qrels_orig, self.run_b_orig)
        if self.run_a_orig:
            self.run_a_orig_score = self._scores(self.qrels_orig, self.run_a_orig)

    def _effect(self, function, label, run_b_score, run_a_score, run_b_path, run_a_path,
                print_feedback):
        if print_feedback:
            print(f"Determining {label}")
        orig = self.run_b_orig_score and self.run_a_orig_score
        if orig and run_b_path and run_a_path:
            run_b_score = self._scores(self._rep_qrels, run_b_path)
            run_a_score = self._scores(self._rep_qrels, run_a_path)
        elif not (orig and run_b_score and run_a_score):
            run_b_score, run_a_score = self.run_b_rep_score, self.run_a_rep_score
            if not (orig and run_b_score and run_a_score):
                print(ERR_MSG)
                return None
        return function(self.run_a_orig_score, self.run_b_orig_score, run_a_score,
                        run_b_score)

    def er(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
           print_feedback=False):
        """``{measure: effect ratio}`` of the reproduced runs (or the scores or runs given)
        against the original ones."""
        return self._effect(ER, "Effect Ratio (ER)", run_b_score, run_a_score, run_b_path,
                            run_a_path, print_feedback)

    def dri(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
            print_feedback=False):
        """``{measure: delta relative improvement}`` of the reproduced runs (or the scores or
        runs given) against the original ones."""
        return self._effect(DRI, "Delta Relative Improvement (DRI)", run_b_score,
                            run_a_score, run_b_path, run_a_path, print_feedback)

    def _ttest(self, rpd=True, run_b_score=None, run_a_score=None, print_feedback=False):
        if not (self.run_b_orig_score and (self.run_b_rep_score or run_b_score)):
            print(ERR_MSG)
            return None
        if run_b_score:
            pairs = {"baseline": (self.run_b_orig_score, run_b_score)}
            if run_a_score:
                pairs["advanced"] = (self.run_a_orig_score, run_a_score)
        else:
            pairs = {"baseline": (self.run_b_orig_score, self.run_b_rep_score)}
            if self.run_a_orig_score and self.run_a_rep_score:
                pairs["advanced"] = (self.run_a_orig_score, self.run_a_rep_score)
        if print_feedback:
            runs = "baseline and advanced run" if len(pairs) == 2 else "baseline run"
            print(f"Determining p-values of t-test for {runs}.")
        return {side: ttest(orig, rep, rpd=rpd) for side, (orig, rep) in pairs.items()}

    def _ttest_paths(self, rpd, qrels, run_b_score, run_a_score, run_b_path, run_a_path,
                     print_feedback):
        if run_b_path:
            run_b_score = self._scores(qrels, run_b_path)
            run_a_score = self._scores(qrels, run_a_path) if run_a_path else None
        return self._ttest(rpd=rpd, run_b_score=run_b_score, run_a_score=run_a_score,
                           print_feedback=print_feedback)


class RpdEvaluator(Evaluator):
    """repro_eval's reproducibility evaluator: runs reproduced on the original test
    collection (the same qrels), compared by document order (KTU, RBO), effectiveness (RMSE,
    nRMSE, the paired t-test) and overall effects (ER, DRI)."""

    def evaluate(self, run=None, run_path=None):
        """Score the original and reproduced runs; with ``run`` (a dict or Run) or
        ``run_path``, return that run's scores instead."""
        if run or run_path:
            return self._scores(self.qrels_orig, run_path if run_path else run)
        super().evaluate()
        if self.run_b_rep:
            self.run_b_rep_score = self._scores(self.qrels_orig, self.run_b_rep)
        if self.run_a_rep:
            self.run_a_rep_score = self._scores(self.qrels_orig, self.run_a_rep)

    def _rep_runs(self, run_b_rep, run_a_rep, run_b_path, run_a_path):
        """The reproduced runs a document-order measure compares: the paths given, else the
        runs given, else the evaluator's; None when there is none."""
        if not self.run_b_orig:
            return None
        if run_b_path:
            return run_b_path, run_a_path
        if run_b_rep:
            return run_b_rep, run_a_rep
        if self.run_b_rep:
            return self.run_b_rep, self.run_a_rep
        return None

    def _order(self, function, label, runs, print_feedback):
        if runs is None:
            print(ERR_MSG)
            return None
        rep_b, rep_a = runs
        both = bool(self.run_a_orig and rep_a)
        if print_feedback:
            print(f"Determining {label} for {'baseline and advanced' if both else 'baseline'}"
                  " run.")
        out = {"baseline": function(self.run_b_orig, rep_b)}
        if both:
            out["advanced"] = function(self.run_a_orig, rep_a)
        return out

    def ktu(self, run_b_rep=None, run_a_rep=None, run_b_path=None, run_a_path=None,
            print_feedback=False, per_topic=False):
        """Kendall's tau Union between the original and reproduced rankings: ``{'baseline':
        mean (or {topic: value} with per_topic), 'advanced': ...}``."""
        runs = self._rep_runs(run_b_rep, run_a_rep, run_b_path, run_a_path)
        return self._order(lambda orig, rep: KTU(orig, rep, per_topic=per_topic),
                           "Kendall's tau Union (KTU)", runs, print_feedback)

    def rbo(self, run_b_rep=None, run_a_rep=None, run_b_path=None, run_a_path=None,
            print_feedback=False, p=RBO_P, depth=RBO_DEPTH, per_topic=False):
        """Rank-biased overlap between the original and reproduced rankings (persistence
        ``p``, to ``depth``): ``{'baseline': mean (or {topic: value}), 'advanced': ...}``."""
        runs = self._rep_runs(run_b_rep, run_a_rep, run_b_path, run_a_path)
        return self._order(lambda orig, rep: RBO(orig, rep, p, depth, per_topic=per_topic),
                           "Rank-biased Overlap (RBO)", runs, print_feedback)

    def _closeness(self, function, label, run_b_score, run_a_score, run_b_path, run_a_path,
                   print_feedback):
        if self.run_b_orig and run_b_path:
            run_b_score = self._scores(self.qrels_orig, run_b_path)
            run_a_score = self._scores(self.qrels_orig, run_a_path) if \
                self.run_a_orig and run_a_path else None
        elif not (self.run_b_orig_score and run_b_score):
            run_b_score, run_a_score = self.run_b_rep_score, self.run_a_rep_score
            if not (self.run_b_orig_score and run_b_score):
                print(ERR_MSG)
                return None
        both = bool(self.run_a_orig_score and run_a_score)
        if print_feedback:
            print(f"Determining {label} for {'baseline and advanced' if both else 'baseline'}"
                  " run.")
        out = {"baseline": function(self.run_b_orig_score, run_b_score)}
        if both:
            out["advanced"] = function(self.run_a_orig_score, run_a_score)
        return out

    def rmse(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
             print_feedback=False):
        """Root mean square error between the original and reproduced topic scores:
        ``{'baseline': {measure: value}, 'advanced': ...}``."""
        return self._closeness(RMSE, "Root Mean Square Error (RMSE)", run_b_score,
                               run_a_score, run_b_path, run_a_path, print_feedback)

    def nrmse(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
              print_feedback=False):
        """Normalised root mean square error: ``{'baseline': {measure: value}, ...}``."""
        return self._closeness(nRMSE, "normalized Root Mean Square Error (RMSE)",
                               run_b_score, run_a_score, run_b_path, run_a_path,
                               print_feedback)

    def ttest(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
              print_feedback=False):
        """Paired two-sided t-test between the original and reproduced topic scores:
        ``{'baseline': {measure: p}, 'advanced': ...}``."""
        return self._ttest_paths(True, self.qrels_orig, run_b_score, run_a_score,
                                 run_b_path, run_a_path, print_feedback)


class RplEvaluator(Evaluator):
    """repro_eval's replicability evaluator: runs replicated on another test collection
    (``qrels_rpl_path``), compared by overall effects (ER, DRI) and the unpaired t-test."""

    _KEYWORDS = _PATHS + ("qrels_rpl_path",)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.qrels_rpl_path = kwargs.get("qrels_rpl_path")
        if self.qrels_rpl_path:
            self.qrels_rpl = as_qrels(self.qrels_rpl_path)

    def evaluate(self, run=None, run_path=None, rpl=True):
        """Score the original runs on the original qrels and the replicated ones on
        ``qrels_rpl``; with ``run`` or ``run_path``, return that run's scores instead (on
        ``qrels_rpl``, or the original qrels with ``rpl=False``)."""
        if run or run_path:
            qrels = self._qrels_rpl() if rpl else self.qrels_orig
            return self._scores(qrels, run_path if run_path else run)
        super().evaluate()
        if self.run_b_rep:
            self.run_b_rep_score = self._scores(self._qrels_rpl(), self.run_b_rep)
        if self.run_a_rep:
            self.run_a_rep_score = self._scores(self._qrels_rpl(), self.run_a_rep)

    def _qrels_rpl(self):
        if getattr(self, "qrels_rpl", None) is None:
            raise ValueError("RplEvaluator needs qrels_rpl_path (the qrels of the replication's "
                             "test collection) to score replicated runs")
        return self.qrels_rpl

    def ttest(self, run_b_score=None, run_a_score=None, run_b_path=None, run_a_path=None,
              print_feedback=False):
        """Unpaired two-sided t-test between the original and replicated topic scores:
        ``{'baseline': {measure: p}, 'advanced': ...}``."""
        qrels = self._qrels_rpl() if run_b_path else None
        return self._ttest_paths(False, qrels, run_b_score, run_a_score, run_b_path,
                                 run_a_path, print_feedback)
