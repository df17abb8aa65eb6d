"""Writers of TREC text: runs as trec_eval reads them."""

import os

import numpy as np

from fastir.io.inputs import as_run
from fastir.model.ranking import ranked_rows
from fastir.output.writing import atomic_write

__all__ = ["write_run"]


def write_run(run, file, tag=None):
    """Write a run as TREC text (``qid Q0 doc rank score tag``), ranked as fastir ranks
    (score descending, ties by doc id descending); scores as Python's shortest exact repr.

    ``file`` is a path (written whole or not at all: through a temporary file renamed over
    it, an :class:`~fastir.output.writing.OutputError` naming it when it cannot be) or an
    open text file; ``tag`` defaults to the run's name.
    """
    run = as_run(run)
    tag = run.name if tag is None else tag
    if not tag or any(c.isspace() for c in str(tag)):
        raise ValueError(f"tag: a run tag is one word without spaces, got {tag!r}")
    order, query = ranked_rows(run)
    lengths = run.stops - run.starts
    first = np.cumsum(lengths) - lengths
    ranks = (np.arange(len(order)) - first[query] + 1).tolist()
    qids, docs = run.query_ids.tolist(), run.doc_ids.take(order).tolist()
    scores = run.scores[order].tolist()
    lines = [f"{qids[q]} Q0 {d} {r} {s!r} {tag}\n"
             for q, d, r, s in zip(query.tolist(), docs, ranks, scores)]
    if isinstance(file, (str, os.PathLike)):
        with atomic_write(file) as f:
            f.writelines(lines)
    elif hasattr(file, "write"):
        file.writelines(lines)
    else:
        raise TypeError(f"file: a path or an open text file, got {type(file).__name__}")
