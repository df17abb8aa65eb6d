"""The bundled example: two systems on a small deterministic TREC-style collection.

``fastir example`` builds 25 queries with graded judgments (seeded, so identical on every
machine), ranks 100 documents per query with a weak and a strong system, and prints a table
of the usual measures. It needs no file and no network.
"""

from pathlib import Path

import numpy as np

from fastir.api import evaluate
from fastir.model.data import Qrels, Run
from fastir.output.writing import NOTHING, OutputError, atomic_write, write_stdout

MEASURES = ["AP", "nDCG@10", "nDCG", "P@10", "R@20", "RR@10", "Bpref", "Success@1",
            "NumRelRet", "NumRel"]


def _rows(seed, n_queries, n_docs):
    """The example's judgments [(qid, doc, label)] and {system: [(qid, doc, score)]}."""
    rng = np.random.default_rng(seed)
    judgments = []
    runs = {"weak": [], "strong": []}
    for q in range(n_queries):
        qid = f"q{q + 1:02d}"
        grades = rng.choice([0, 0, 0, 0, 1, 1, 2, 3], size=n_docs)
        judged = rng.random(n_docs) < 0.6
        judgments.extend((qid, f"doc{q:02d}-{d:03d}", int(grades[d]))
                         for d in np.flatnonzero(judged))
        for system, signal in (("weak", 0.4), ("strong", 1.2)):
            scores = np.round(signal * grades + rng.normal(size=n_docs), 3)
            # (plus a millionth per document number: no two documents of a query tie, and
            # each query ranks as trec_eval ranks the 3 decimals, ties by doc id descending)
            scores = np.round(scores + np.arange(n_docs) * 1e-6, 6)
            runs[system].extend((qid, f"doc{q:02d}-{d:03d}", s)
                                for d, s in enumerate(scores.tolist()))
    return judgments, runs


def collection(seed=2024, n_queries=25, n_docs=100):
    """(qrels, {system: run}) of the example, as fastir containers."""
    judgments, runs = _rows(seed, n_queries, n_docs)
    qrels = Qrels.from_arrays(*map(np.array, zip(*judgments)), source="example qrels")
    return qrels, {name: Run.from_arrays(*map(np.array, zip(*rows)), name=name,
                                         source=f"example run {name}")
                   for name, rows in runs.items()}


def write(directory, seed=2024, n_queries=25, n_docs=100):
    """The example as TREC files: ``qrels.txt``, ``weak.run`` and ``strong.run`` (ranked by
    score) in ``directory`` (made if need be), each whole or not at all; the paths written."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(exc.errno, exc.strerror, str(directory), NOTHING) from None
    judgments, runs = _rows(seed, n_queries, n_docs)
    texts = {directory / "qrels.txt": "".join(f"{q} 0 {d} {label}\n"
                                               for q, d, label in judgments)}
    for name, rows in runs.items():
        lines, rank = [], 0
        for i, (q, d, s) in enumerate(sorted(rows, key=lambda r: (r[0], -r[2], r[1]))):
            rank = 1 if i == 0 or q != lines[-1][0] else rank + 1
            lines.append((q, f"{q} Q0 {d} {rank} {s} {name}\n"))
        texts[directory / f"{name}.run"] = "".join(line for _, line in lines)
    for path, text in texts.items():
        with atomic_write(path) as f:
            f.write(text)
    return list(texts)


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
    import argparse

    parser = argparse.ArgumentParser(prog="fastir example", description="Evaluate the "
                                     "bundled example: its qrels and two runs, a table of "
                                     "means.")
    parser.add_argument("--write", metavar="DIR", help="write the example's qrels and two "
                        "runs as TREC files into DIR instead")
    args = parser.parse_args(argv)
    if args.write is not None:
        write_stdout("".join(f"{path}\n" for path in write(args.write)))
        return 0
    qrels, runs = collection()
    write_stdout(table(qrels, runs) + "\n")
    return 0
