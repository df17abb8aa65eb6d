"""Inner loops (small sizes): dense batches against sklearn, bound candidates against a
reused pytrec_eval evaluator. Full sizes: scripts/bench_batch.py."""

import numpy as np
import pytest

import fastir

RNG = np.random.default_rng(0)
SMALL = (RNG.random((32, 100)), RNG.integers(0, 3, (32, 100)))
LARGE = (RNG.random((1024, 100)), RNG.integers(0, 3, (1024, 100)))


def test_matrix_32x100_call(benchmark):
    fastir.evaluate_matrix(*SMALL, "nDCG@10")
    benchmark(fastir.evaluate_matrix, *SMALL, "nDCG@10")


def test_matrix_1024x100_fastir(benchmark):
    fastir.evaluate_matrix(*LARGE, "nDCG@10")
    benchmark(fastir.evaluate_matrix, *LARGE, "nDCG@10")


def test_matrix_1024x100_sklearn(benchmark):
    metrics = pytest.importorskip("sklearn.metrics")
    scores, labels = LARGE
    value = benchmark(metrics.ndcg_score, labels, scores, k=10)
    assert value == pytest.approx(fastir.evaluate_matrix(*LARGE, "nDCG@10")["nDCG@10"])


def _candidates(n_queries=200, depth=100):
    qids = np.repeat(np.arange(n_queries), depth)
    docs = np.tile(np.arange(depth), n_queries)
    qrels = {int(q): {int(q % depth): 1} for q in range(n_queries)}
    vectors = np.round(RNG.normal(size=(10, len(qids))), 2)
    return qrels, qids, docs, vectors


def test_bound_10_vectors_fastir(benchmark):
    qrels, qids, docs, vectors = _candidates()
    bound = fastir.Evaluator(qrels, ["map", "ndcg_cut_10"]).bind(qids, docs)
    bound.evaluate(vectors)
    benchmark(bound.evaluate, vectors)


def test_bound_10_vectors_pytrec_eval(benchmark):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, qids, docs, vectors = _candidates()
    evaluator = pytrec_eval.RelevanceEvaluator(
        {str(q): {str(d): v for d, v in j.items()} for q, j in qrels.items()},
        {"map", "ndcg_cut"})
    runs = []
    for vector in vectors:
        run = {}
        for q, d, v in zip(qids.tolist(), docs.tolist(), vector.tolist()):
            run.setdefault(str(q), {})[str(d)] = v
        runs.append(run)
    benchmark(lambda: [evaluator.evaluate(run) for run in runs])
