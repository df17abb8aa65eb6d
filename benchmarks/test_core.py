"""Core engine benchmarks at small sizes (JIT warmed before timing)."""

import fastir

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def test_read_run(benchmark, msmarco_files):
    fastir.read_run(msmarco_files[1])  # warm the JIT
    benchmark(fastir.read_run, msmarco_files[1])


def test_evaluate_prepared(benchmark, msmarco_files):
    qrels, run = fastir.read_qrels(msmarco_files[0]), fastir.read_run(msmarco_files[1])
    fastir.evaluate(qrels, run, MEASURES)
    benchmark(fastir.evaluate, qrels, run, MEASURES)


def test_files_to_means(benchmark, msmarco_files):
    def go():
        return fastir.evaluate(msmarco_files[0], msmarco_files[1], MEASURES).mean

    go()
    benchmark(go)
