"""Parity with pytrec_eval (trec_eval 9.0.8 inside) on random runs, per query, to 1e-9.

With ``compat="9.0.8"`` fastir ranks float32-rounded scores and rounds recall levels as 9.0.8
does, so every measure pytrec_eval computes must agree. With the default (10.0) semantics
and float32-representable scores, every measure but the recall-level ones must agree too.
"""

import numpy as np
import pytest

import fastir
from fastir.measures.registry import parse

pytrec_eval = pytest.importorskip("pytrec_eval")

#: pytrec_eval's measures (trec_eval names with their default parameters).
TREC_MEASURES = ["map", "gm_map", "Rprec", "bpref", "gm_bpref", "recip_rank", "infAP",
                 "iprec_at_recall", "P", "recall", "Rprec_mult", "utility", "11pt_avg", "binG",
                 "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P",
                 "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
RECALL_LEVEL_MEASURES = ("iprec_at_recall", "11pt_avg")


def random_pair(seed, n_queries=30, n_docs=60, float32=True):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = rng.choice(n_docs * 2, size=rng.integers(1, 40), replace=False)
        qrels[qid] = {f"d{d}": int(rng.integers(-1, 4)) for d in judged}
        if rng.random() < 0.9:
            ranked = rng.choice(n_docs * 2, size=rng.integers(1, n_docs), replace=False)
            scores = np.round(rng.normal(size=len(ranked)), 1)  # many ties
            if float32:
                scores = scores.astype(np.float32)
            else:
                scores = scores + rng.normal(size=len(ranked)) * 1e-9  # float32 merges these
            run[qid] = {f"d{d}": float(s) for d, s in zip(ranked, scores)}
    run["unjudged_query"] = {"d1": 1.0}
    return qrels, run


def compare(qrels, run, names, compat):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(names))
    expected = evaluator.evaluate(run)
    keys = [k for name in names for k, _ in parse(name)]
    res = fastir.evaluate(qrels, run, names, missing="skip", compat=compat)
    got = res.to_dict()
    assert set(got) == set(expected)
    checked = 0
    for qid, values in expected.items():
        for key in keys:
            if key.startswith("gm_"):  # pytrec_eval reports the log-free AP/bpref per query
                continue
            assert got[qid][key] == pytest.approx(values[key], abs=1e-9, rel=0), (key, qid)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("seed", range(6))
def test_matches_pytrec_eval_in_908_mode(seed):
    qrels, run = random_pair(seed, float32=False)
    compare(qrels, run, TREC_MEASURES, "9.0.8")


@pytest.mark.parametrize("seed", range(6, 10))
def test_matches_pytrec_eval_with_float32_scores(seed):
    qrels, run = random_pair(seed)
    names = [m for m in TREC_MEASURES if m not in RECALL_LEVEL_MEASURES]
    compare(qrels, run, names, None)
