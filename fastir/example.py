"""The bundled example: two systems on a small deterministic TREC-style collection.

``fastir example`` builds 25 queries with graded judgments (seeded, so identical on every
machine), ranks 100 documents per query with a weak and a strong system, and prints a table
of the usual measures. It needs no file and no network.
"""

import numpy as np

from fastir.api import evaluate
from fastir.data import Qrels, Run

MEASURES = ["AP", "nDCG@10", "nDCG", "P@10", "R@20", "RR@10", "Bpref", "Success@1",
            "NumRelRet", "NumRel"]


def collection(seed=2024, n_queries=25, n_docs=100):
    """(qrels, {system: run}) of the example, as fastir containers."""
    rng = np.random.default_rng(seed)
    qids, docs, labels = [], [], []
    run_rows = {"weak": ([], [], []), "strong": ([], [], [])}
    for q in range(n_queries):
        qid = f"q{q + 1:02d}"
        grades = rng.choice([0, 0, 0, 0, 1, 1, 2, 3], size=n_docs)
        judged = rng.random(n_docs) < 0.6
        for d in np.flatnonzero(judged):
            qids.append(qid)
            docs.append(f"doc{q:02d}-{d:03d}")
            labels.append(int(grades[d]))
        for system, signal in (("weak", 0.4), ("strong", 1.2)):
            scores = np.round(signal * grades + rng.normal(size=n_docs), 3)
            rows = run_rows[system]
            rows[0].extend([qid] * n_docs)
            rows[1].extend(f"doc{q:02d}-{d:03d}" for d in range(n_docs))
            rows[2].extend(scores.tolist())
    qrels = Qrels.from_arrays(np.array(qids), np.array(docs), np.array(labels),
                              source="example qrels")
    runs = {name: Run.from_arrays(np.array(q), np.array(d), np.array(s), name=name,
                                  source=f"example run {name}")
            for name, (q, d, s) in run_rows.items()}
    return qrels, runs


def table(qrels, runs, measures=MEASURES):
    """A markdown table: one row per measure, one column per run."""
    results = {name: evaluate(qrels, run, measures) for name, run in runs.items()}
    lines = ["| measure | " + " | ".join(results) + " |",
             "|---|" + "---:|" * len(results)]
    for m in measures:
        cells = []
        for res in results.values():
            v = res.mean[m]
            cells.append(f"{int(v)}" if v == int(v) and m.startswith("Num") else f"{v:.4f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    n = len(next(iter(results.values())).query_ids)
    lines.append(f"\n{n} queries; means over queries (counts summed).")
    return "\n".join(lines)


def main(argv=()):
    qrels, runs = collection()
    print(table(qrels, runs))
    return 0
