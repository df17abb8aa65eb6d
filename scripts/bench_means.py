"""The means of map, recip_rank, ndcg_cut_10, P_10 and recall_1000 of a run, as one library
computes them from the files, printed as JSON: what ``./dev bench`` times as a whole process.

    python scripts/bench_means.py SYSTEM QRELS RUN

SYSTEM: ``fastir`` (``fastir.evaluate`` on the files: through the user's warm worker when
one runs, unless ``FASTIR_WORKER=off``), ``pytrec_eval``, ``ranx`` or ``naive`` (the tests'
plain-Python reference).
"""

import json
import sys

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def fastir_means(qrels, run):
    import fastir

    return fastir.evaluate(qrels, run, MEASURES, missing="skip").mean


def pytrec_eval_means(qrels, run):
    import pytrec_eval

    with open(qrels) as f:
        judged = pytrec_eval.parse_qrel(f)
    with open(run) as f:
        ranked = pytrec_eval.parse_run(f)
    per_query = pytrec_eval.RelevanceEvaluator(judged, set(MEASURES)).evaluate(ranked)
    return {m: sum(v[m] for v in per_query.values()) / len(per_query) for m in MEASURES}


def ranx_means(qrels, run):
    from ranx import Qrels, Run, evaluate

    names = {"map": "map", "recip_rank": "mrr", "ndcg_cut_10": "ndcg@10",
             "P_10": "precision@10", "recall_1000": "recall@1000"}
    scores = evaluate(Qrels.from_file(qrels, kind="trec"), Run.from_file(run, kind="trec"),
                      list(names.values()), make_comparable=False)
    return {m: float(scores[n]) for m, n in names.items()}


def naive_means(qrels, run):
    import collections
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import naive

    def read(path, value):
        out = collections.defaultdict(dict)
        with open(path) as f:
            for line in f:
                fields = line.split()
                if fields and not fields[0].startswith("#"):
                    out[fields[0]][fields[2]] = value(fields)
        return out

    names = ["AP", "RR", "nDCG@10", "P@10", "R@1000"]
    per_query = naive.evaluate(read(qrels, lambda f: int(f[3])),
                               read(run, lambda f: float(f[4])), names, missing="skip")
    order = sorted(per_query, key=lambda q: q.encode())
    return {m: naive.aggregate(naive.parse(names[i])[0], [per_query[q][i] for q in order])
            for i, m in enumerate(MEASURES)}


SYSTEMS = {"fastir": fastir_means, "pytrec_eval": pytrec_eval_means, "ranx": ranx_means,
           "naive": naive_means}

if __name__ == "__main__":
    system, qrels_path, run_path = sys.argv[1:4]
    print(json.dumps(SYSTEMS[system](qrels_path, run_path)))
