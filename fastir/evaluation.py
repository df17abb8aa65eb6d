"""The evaluation in this process: :func:`fastir.evaluate` once :mod:`fastir.api` has
offered the call to the warm worker (:mod:`fastir.worker.library`) and made its options.
The inputs are read by :func:`fastir.io.inputs.read`; qrels go to the plan's fused pass
(:class:`fastir.engine.Plan`), preference judgments and judgment groups to
:mod:`fastir.preferences`, several runs to an evaluation each."""

from fastir import preferences
from fastir.engine import Plan
from fastir.io.inputs import read
from fastir.model.prefs import JudgmentGroups, Prefs
from fastir.progress import Progress, wanted
from fastir.results import ResultsByRun


def evaluate_with(qrels, run, measures, options, progress=False):
    """:func:`fastir.evaluate` with its options made (:class:`~fastir.options.Options`), in
    this process."""
    other = isinstance(qrels, (Prefs, JudgmentGroups))
    plan = None if other else Plan.of(measures, options)
    if other and options.labels != "int":
        raise ValueError(f"labels={options.labels!r} takes qrels; preference judgments and "
                         "judgment groups have integer labels")
    with read(qrels, run, options.compat, progress, options.labels) as (qrels, run):
        if isinstance(run, dict):  # (several runs: {name: run})
            return ResultsByRun((name, evaluate_with(qrels, r, measures, options, progress))
                                for name, r in run.items())
        if not other:
            with Progress(len(run), "evaluating", wanted(progress), unit="row") as bar, \
                    bar.stage("evaluating", len(run)):
                return plan.evaluate(qrels, run, options)[0]
        return preferences.evaluate(qrels, run, measures, options)
