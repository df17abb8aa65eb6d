"""Results over many datasets at once, as BEIR and MTEB report them: each dataset's means,
and their macro average (every dataset weighs the same, whatever its number of queries)."""

import numpy as np

from fastir._optional import require
from fastir.results import ResultsByRun

#: The name of the macro average's row in tables.
AVERAGE = "average"


def evaluate_datasets(datasets, measures, **options):
    """Evaluate one run per dataset, each on its own qrels, with the same measures.

    Parameters
    ----------
    datasets : dict
        ``{dataset: (qrels, run)}``, each in any form :func:`fastir.evaluate` takes (paths,
        dicts, DataFrames, ...).
    measures : str or list of str
    **options
        As for :func:`fastir.evaluate` (``relevance_level``, ``missing``, ``max_docs``...).
        BEIR and MTEB average over the queries both the run and the qrels have
        (pytrec_eval's results): ``missing="skip"`` gives their numbers; fastir's default
        counts a judged query the run misses as 0.

    Returns
    -------
    ResultsByDataset
        ``{dataset: Results}``, with ``mean`` (``{dataset: {measure: mean}}``) and ``macro``
        (``{measure: the mean of the datasets' means}``).

    Examples
    --------
    >>> import fastir
    >>> scifact = ({"q1": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.5}})
    >>> nfcorpus = ({"q1": {"d2": 1}, "q2": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.5}})
    >>> res = fastir.evaluate_datasets({"scifact": scifact, "nfcorpus": nfcorpus}, ["RR"])
    >>> res.mean, res.macro
    ({'scifact': {'RR': 1.0}, 'nfcorpus': {'RR': 0.25}}, {'RR': 0.625})
    """
    from fastir.api import evaluate

    if not isinstance(datasets, dict) or not datasets:
        raise ValueError("datasets must be a non-empty dict {dataset: (qrels, run)}")
    results = ResultsByDataset()
    for name, pair in datasets.items():
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ValueError(f"dataset {name!r}: give a (qrels, run) pair, got "
                             f"{type(pair).__name__}")
        results[name] = evaluate(pair[0], pair[1], measures, **options)
    return results


class ResultsByDataset(ResultsByRun):
    """Several datasets evaluated with the same measures: ``{dataset: Results}``, their
    means (``mean``) and macro average (``macro``), as a table with the average last."""

    @property
    def macro(self):
        """``{measure: mean over the datasets of their means}`` (BEIR's and MTEB's
        average); counts (``NumQ``, ``NumRel``...) are summed over the datasets, as each
        dataset's are over its queries."""
        first = next(iter(self.values()), None)
        if first is None:
            return {}
        summed = {key for key, m in zip(first.measures, first.parsed)
                  if m.spec.aggregate == "sum"}
        means = list(self.mean.values())
        return {key: float(np.sum(values) if key in summed else np.mean(values))
                for key, values in ((k, [m[k] for m in means]) for k in means[0])}

    def to_pandas(self, average=True):
        """A DataFrame of the means: one row per dataset and, with ``average``, the macro
        average last (needs pandas)."""
        pd = require("pandas", "ResultsByDataset.to_pandas")

        frame = super().to_pandas().rename_axis("dataset")
        if average and len(self):
            frame = pd.concat([frame, pd.DataFrame([self.macro], index=[AVERAGE])])
            frame.index.name = "dataset"
        return frame

    def format(self, fmt="table", digits=4):
        """The means as text, the macro average last (``fmt`` as
        :meth:`~fastir.results.ResultsByRun.format`)."""
        if not self:
            return ""
        return self._format(fmt, digits, [(AVERAGE, self.macro.values())], label="dataset")

    def __repr__(self):
        return f"ResultsByDataset({len(self)} datasets)\n{self.format()}"
