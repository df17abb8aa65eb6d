"""Files to means and prepared containers, MS MARCO-like and TREC-DL-like (small sizes).
The JIT is warmed before timing; full sizes: scripts/bench_table.py."""

import numpy as np
import pytest

import fastir

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]
OFFICIAL = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P"]


@pytest.fixture(params=["msmarco", "trecdl"])
def files(request, msmarco_files, trecdl_files):
    return msmarco_files if request.param == "msmarco" else trecdl_files


def test_read_run(benchmark, files):
    fastir.read_run(files[1])
    benchmark(fastir.read_run, files[1])


def test_files_to_means(benchmark, files):
    def go():
        return fastir.evaluate(files[0], files[1], MEASURES).mean

    go()
    benchmark(go)


def test_prepared_official_set(benchmark, files):
    qrels, run = fastir.read_qrels(files[0]), fastir.read_run(files[1])
    fastir.evaluate(qrels, run, OFFICIAL)
    benchmark(lambda: fastir.evaluate(qrels, run, OFFICIAL).mean)


def test_from_arrays_100_queries_per_1000_rows(benchmark):
    rng = np.random.default_rng(1)
    n_queries, depth = 2000, 100
    qids = np.repeat(np.arange(n_queries), depth)
    docs = np.tile(np.arange(depth), n_queries)
    scores = rng.random(n_queries * depth)
    qrels = fastir.Qrels.from_arrays(qids[::50], docs[::50], np.ones(len(qids[::50]), int))

    def go():
        return fastir.evaluate(qrels, fastir.Run.from_arrays(qids, docs, scores), OFFICIAL).mean

    go()
    benchmark(go)
