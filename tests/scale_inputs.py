"""The pandas qrels and run of the distributed doors' tests (tests/scale/test_dask.py,
test_spark.py), and how their results are held to fastir.evaluate's: bit for bit."""

import numpy as np
import pytest


def frames(seed=0, n_queries=40, text=True):
    """Qrels and run frames: ties (scores in quarters), unjudged documents, judged queries
    the run lacks and run queries without judgments."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    qid = (lambda q: f"q{q}") if text else (lambda q: q)
    qrels, run = [], []
    for q in range(n_queries):
        if q % 5:
            for d in rng.choice(30, size=rng.integers(1, 10), replace=False):
                qrels.append((qid(q), f"d{d}", int(rng.integers(-1, 3))))
        if q % 3:
            for d in rng.choice(30, size=rng.integers(1, 20), replace=False):
                run.append((qid(q), f"d{d}", rng.integers(0, 5) / 4))
    return (pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
            pd.DataFrame(run, columns=["query_id", "doc_id", "score"]))


def assert_same(got, want):
    assert got.query_ids == want.query_ids
    np.testing.assert_array_equal(got.values, want.values)
    assert got.mean == want.mean
    assert got.ignored_queries == want.ignored_queries
    assert got.missing_queries == want.missing_queries
    assert got.strings == want.strings
