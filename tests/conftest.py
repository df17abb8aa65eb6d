"""Shared test helpers: data generators and the bridge from fastir measures to the naive
reference."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))

import naive  # noqa: E402

DATA = Path(__file__).parent / "data" / "trec_eval"

#: Measures every reference test covers (fastir's names, which the naive reference speaks):
#: each registered family at least once (tests/test_registry.py checks it).
MEASURES = [
    "NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet", "AP", "AP@3", "GMAP",
    "Rprec", "Bpref", "RR", "RR@2", "IPrec@0.0", "IPrec@0.3", "IPrec@0.5", "IPrec@1.0", "P@1",
    "P@5", "P(rel=2)@5", "R@3", "R@50", "nDCG", "nDCG@3", "nDCG@20",
    "nDCG(dcg='exp-log2')@5", "nDCG(rel=2)@5", "DCG@4", "DCG(gains='1=3,2=9')", "Success@2",
    "SetP", "SetR", "SetF", "SetF(beta=0.5)", "infAP", "GMBpref", "RprecMult@0.2",
    "RprecMult@1.5", "Utility", "Utility(a=2,b=-1,c=0.5,d=0.25)", "IPrecAvg",
    "IPrecAvg(recalls='0.25,0.5,0.75')", "BinG", "G", "nDCGRel", "RnDCG", "IDCG", "IDCG@3",
    "IDCG(dcg='exp-log2')@2", "nDCG(gains='1=3,2=9')", "RelP@3", "Unj@3", "SetRelP", "SetAP",
    "RBP", "RBP(p=0.8)", "RBPResid", "YAAP", "RelString@3",
]


def naive_values(qrels, run, names, **options):
    """{qid: [value per name]} from the naive reference (options as fastir.evaluate's)."""
    return naive.evaluate(qrels, run, names, **options)


# -- hypothesis strategies ------------------------------------------------------------------
# Small vocabularies make ties, shared docs and unjudged docs common. Doc ids share
# prefixes so that byte-order tie breaking is exercised ("d1" < "d10" < "d2").
DOC_IDS = st.sampled_from(["d1", "d10", "d2", "d20", "d3", "D3", "d4", "e", "é", "d5#x",
                           "d6", "d7", "d8", "d9", "d11", "d12"])
QUERY_IDS = st.sampled_from(["q1", "q2", "q10", "3", "20"])
LABELS = st.integers(min_value=-1, max_value=3)
SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.25, 1e-3])


@st.composite
def qrels_and_runs(draw):
    qrels = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, LABELS, max_size=10),
                                 min_size=1, max_size=4))
    run = draw(st.dictionaries(QUERY_IDS, st.dictionaries(DOC_IDS, SCORES, max_size=12),
                               max_size=4))
    return qrels, run


@pytest.fixture(scope="session")
def data_dir():
    return DATA


def pytest_collection_modifyitems(config, items):
    """Tests marked ``one_engine`` do not depend on the engine: they run once."""
    twice = [item for item in items if item.get_closest_marker("one_engine")
             and item.callspec.params.get("engine") == "python"]
    if twice:
        config.hook.pytest_deselected(items=twice)
        items[:] = [item for item in items if item not in twice]


@pytest.fixture(scope="session", params=["python", "numba"], autouse=True)
def engine(request):
    """Every test runs twice: with every kernel as Python and with every kernel compiled
    (also in the subprocesses a test starts), so both forms meet every assertion."""
    from fastir import _jit

    saved = os.environ.get("FASTIR_JIT")
    os.environ["FASTIR_JIT"] = request.param
    with _jit.forced(request.param):
        yield request.param
    if saved is None:
        del os.environ["FASTIR_JIT"]
    else:
        os.environ["FASTIR_JIT"] = saved
