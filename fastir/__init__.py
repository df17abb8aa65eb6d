"""fastir: fast, exact information-retrieval evaluation.

>>> import fastir
>>> res = fastir.evaluate("qrels.txt", "run.txt", ["nDCG@10", "map", "P_5"])  # doctest: +SKIP
>>> res.mean  # doctest: +SKIP
"""

from fastir.api import Results, evaluate
from fastir.batch import BoundCandidates, Evaluator, evaluate_matrix
from fastir.data import InputError, Qrels, Run
from fastir.io.trec import read_qrels, read_run
from fastir.measures import Measure, UnknownMeasureError

__version__ = "0.1.0"

__all__ = ["BoundCandidates", "Evaluator", "InputError", "Measure", "Qrels", "Results", "Run",
           "UnknownMeasureError", "evaluate", "evaluate_matrix", "read_qrels", "read_run"]
