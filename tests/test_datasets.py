"""``fastir.evaluate_datasets``: each dataset's means as ``fastir.evaluate`` gives them, their
macro average as BEIR and MTEB take it (a dataset weighs one, whatever its queries)."""

import numpy as np
import pytest

import fastir

pytestmark = pytest.mark.one_engine


def dataset(seed, n_queries):
    rng = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in range(20)}
             for q in range(n_queries)}
    run = {q: {f"d{d}": float(rng.random()) for d in range(15)}
           for q in list(qrels)[:-1]}  # (a judged query the run misses)
    return qrels, run


def test_means_and_macro_average():
    datasets = {"scifact": dataset(0, 5), "nfcorpus": dataset(1, 40), "fiqa": dataset(2, 11)}
    measures = ["nDCG@10", "R@100", "NumQ"]
    res = fastir.evaluate_datasets(datasets, measures, missing="skip")
    for name, (qrels, run) in datasets.items():
        assert res.mean[name] == fastir.evaluate(qrels, run, measures, missing="skip").mean
    assert res.macro["nDCG@10"] == np.mean([m["nDCG@10"] for m in res.mean.values()])
    assert res.macro["NumQ"] == 4 + 39 + 10  # (counts add up)
    table = res.to_pandas()
    assert list(table.index) == ["scifact", "nfcorpus", "fiqa", "average"]
    assert table.loc["average", "R@100"] == res.macro["R@100"]
    assert res.format().splitlines()[-1].startswith("average")


def test_as_beir_computes_it_with_pytrec_eval():
    """BEIR's EvaluateRetrieval: pytrec_eval per query, averaged over the queries it
    scores, then MTEB's average over the datasets."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    datasets = {"a": dataset(3, 7), "b": dataset(4, 23)}
    per_dataset = []
    for qrels, run in datasets.values():
        scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        per_dataset.append(np.mean([s["ndcg_cut_10"] for s in scores.values()]))
    got = fastir.evaluate_datasets(datasets, ["ndcg_cut.10"], missing="skip", compat="9.0.8")
    assert got.macro["ndcg_cut_10"] == pytest.approx(np.mean(per_dataset), rel=1e-15)


def test_files_and_bad_pairs(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 2.0 r\n")
    res = fastir.evaluate_datasets({"x": (str(qrels), str(run))}, "P@1")
    assert res.macro == {"P@1": 1.0} and "ResultsByDataset(1 datasets)" in repr(res)
    with pytest.raises(ValueError, match="dataset 'x': give a \\(qrels, run\\) pair"):
        fastir.evaluate_datasets({"x": str(run)}, "P@1")
    with pytest.raises(ValueError, match="non-empty dict"):
        fastir.evaluate_datasets({}, "P@1")
