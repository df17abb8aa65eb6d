"""Parity with pytrec_eval (trec_eval 9.0.8 inside) on random runs, per query, to 1e-9.

Scores are float32-representable (pytrec_eval rounds them to float32 before ranking) and
iprec_at_recall is left out (9.0.8 rounds recall levels differently from 10.0).
"""

import numpy as np
import pytest

import fastir

pytrec_eval = pytest.importorskip("pytrec_eval")

PAIRS = {  # pytrec_eval name -> fastir name
    "map": "AP", "map_cut_10": "AP@10", "P_5": "P@5", "P_20": "P@20", "recall_10": "R@10",
    "recall_100": "R@100", "ndcg": "nDCG", "ndcg_cut_10": "nDCG@10", "recip_rank": "RR",
    "Rprec": "Rprec", "bpref": "Bpref", "success_5": "Success@5", "set_P": "SetP",
    "set_recall": "SetR", "set_F": "SetF", "num_ret": "NumRet", "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
}


def random_pair(seed, n_queries=40, n_docs=60):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = rng.choice(n_docs * 2, size=rng.integers(1, 30), replace=False)
        qrels[qid] = {f"d{d}": int(rng.integers(-1, 4)) for d in judged}
        if rng.random() < 0.9:
            ranked = rng.choice(n_docs * 2, size=rng.integers(0, n_docs), replace=False)
            scores = np.round(rng.normal(size=len(ranked)), 1).astype(np.float32)  # ties
            run[qid] = {f"d{d}": float(s) for d, s in zip(ranked, scores)}
    run["unjudged_query"] = {"d1": 1.0}
    return qrels, run


@pytest.mark.parametrize("seed", range(8))
def test_matches_pytrec_eval(seed):
    qrels, run = random_pair(seed)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PAIRS))
    expected = evaluator.evaluate(run)
    res = fastir.evaluate(qrels, run, list(PAIRS.values()), missing="skip")
    got = res.to_dict()
    # pytrec_eval evaluates queries present in both (an empty ranking is absent)
    assert set(got) == {q for q in expected}
    for qid, values in expected.items():
        for trec_name, name in PAIRS.items():
            assert got[qid][name] == pytest.approx(values[trec_name], abs=1e-9, rel=0), (
                trec_name, qid)
