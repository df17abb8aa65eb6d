"""Measure names in the ir_measures, trec_eval and ranx dialects."""

import pytest
from checks import cases, useful
from conftest import MEASURES
from hypothesis import given
from hypothesis import strategies as st

import fastir
from fastir.measures.registry import TREC_NAMES, Measure, UnknownMeasureError, parse

SAME = [  # names that denote one measure, and its canonical string
    ("nDCG@10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"), ("ndcg@10", "nDCG@10"),
    ("ndcg_cut.10", "nDCG@10"), ("NDCG@10", "nDCG@10"),
    ("P(rel=2)@5", "P(rel=2)@5"), ("precision@5-l2", "P(rel=2)@5"),
    ("P@5", "P@5"), ("P_5", "P@5"), ("P.5", "P@5"), ("precision@5", "P@5"),
    ("AP", "AP"), ("map", "AP"), ("MAP", "AP"), ("AP@100", "AP@100"), ("map@100", "AP@100"),
    ("map_cut_100", "AP@100"), ("RR", "RR"), ("recip_rank", "RR"), ("RR@10", "RR@10"),
    ("mrr@10", "RR@10"), ("MRR@10", "RR@10"), ("R@1000", "R@1000"), ("recall_1000", "R@1000"),
    ("recall@1000", "R@1000"), ("Success@5", "Success@5"), ("success_5", "Success@5"),
    ("hit_rate@5", "Success@5"), ("Rprec", "Rprec"), ("r-precision", "Rprec"),
    ("Bpref", "Bpref"), ("bpref", "Bpref"), ("gm_map", "GMAP"),
    ("ndcg@10-l2", "nDCG(rel=2)@10"), ("ndcg_burges@10", "nDCG(dcg='exp-log2')@10"),
    ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
    ("nDCG(dcg=exp-log2)@10", "nDCG(dcg='exp-log2')@10"),
    ("iprec_at_recall_0.10", "IPrec@0.1"), ("IPrec@0.1", "IPrec@0.1"),
    ("num_ret", "NumRet"), ("set_F", "SetF"), ("SetF(beta=0.5)", "SetF(beta=0.5)"),
    ("infAP", "infAP"), ("gm_bpref", "GMBpref"), ("Rprec_mult_0.20", "RprecMult@0.2"),
    ("utility.2,-1,0,0", "Utility(a=2)"), ("Utility(a=2, b=-1)", "Utility(a=2)"),
    ("11pt_avg", "IPrecAvg"), ("11pt_avg..25,.5", "IPrecAvg(recalls='0.25,0.5')"),
    ("binG", "BinG"), ("G", "G"), ("ndcg_rel", "nDCGRel"), ("Rndcg", "RnDCG"),
    ("ndcg.1=3,2=9", "nDCG(gains='1=3,2=9')"), ("nDCG(gains={1: 3, 2: 9})",
                                                 "nDCG(gains='1=3,2=9')"),
    ("relative_P_5", "RelP@5"), ("set_relative_P", "SetRelP"), ("set_map", "SetAP"),
    ("rbp", "RBP"), ("rbp.p=0.8", "RBP(p=0.8)"), ("rbp_resid", "RBPResid"),
    ("unj_5", "Unj@5"), ("yaap", "YAAP"), ("relstring.20", "RelString@20"),
    ("ideal_dcg", "IDCG"), ("dcg", "DCG"), ("set_F.0.5", "SetF(beta=0.5)"),
]


def test_trec_labels_of_parameterised_single_measures():
    assert [m.trec_name() for _, m in parse("utility.2,-1,0,0")] == ["utility_2,-1,0,0"]
    assert [m.trec_name() for _, m in parse("ndcg.1=3,2=9")] == ["ndcg_1=3,2=9"]
    assert [m.trec_name() for _, m in parse("Rprec_mult")][-1] == "Rprec_mult_2.00"
    assert [m.trec_name() for _, m in parse("unj")] == ["unj_5", "unj_10", "unj_20"]


@pytest.mark.parametrize("name, canonical", SAME)
def test_dialects(name, canonical):
    [(key, measure)] = parse(name)
    base, dot, _ = name.partition(".")
    # the key rule: trec_eval names as trec_eval prints them, others as written
    assert key == (f"{base}_{name[len(base) + 1:]}" if dot and base in TREC_NAMES else name)
    assert str(measure) == canonical


def test_trec_lists_expand_sorted_with_trec_keys():
    assert [k for k, _ in parse("ndcg_cut.20,10")] == ["ndcg_cut_10", "ndcg_cut_20"]
    assert [k for k, _ in parse("P")][:3] == ["P_5", "P_10", "P_15"]
    assert [k for k, _ in parse("iprec_at_recall")][0] == "iprec_at_recall_0.00"
    assert [str(m) for _, m in parse("ndcg_cut.23.4")] == ["nDCG@23"]  # trec_eval's atol


def test_mean_is_keyed_by_the_callers_strings():
    res = fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}},
                          ["ndcg@10", "nDCG@10", "P.1,2"])
    assert list(res.mean) == ["ndcg@10", "nDCG@10", "P_1", "P_2"]


@pytest.mark.parametrize("name, hint", [
    ("nDGC@10", "nDCG"), ("ndcg_cutt_10", "ndcg_cut"), ("precison@5", "precision"),
    ("mapp", "map"), ("Foo", ""),
])
def test_unknown_measures_suggest_close_names(name, hint):
    with pytest.raises(UnknownMeasureError, match="unknown measure") as info:
        parse(name)
    assert hint in str(info.value)


@pytest.mark.parametrize("name, message", [
    ("P", None), ("P@0", "integer from 1 to 2147483647"), ("IPrec@1.5", r"\[0, 1\]"),
    ("P.inf", "finite"), ("P.99999999999", "from 1 to"), ("P..5", "from 1 to"),
    ("P@99999999999999999999", "from 1 to"),
    ("relstring.inf", "depth must be"), ("P(rel=-1)@3", "rel must be an integer from 0"),
    ("ndcg.1=nan", "finite"), ("SetF(beta=nan)", "finite"),
    ("AP(gain=2)", "no parameter 'gain'"), ("Rprec@5", "takes no cutoff"),
    ("nDCG(dcg=cubic)", "dcg must be"), ("R", None),
])
def test_bad_parameters(name, message):
    if message is None:  # bare trec names are valid (default cutoffs); bare "R" is not
        if name == "P":
            assert len(parse(name)) == 9
            return
        with pytest.raises(UnknownMeasureError, match="needs a cutoff"):
            parse(name)
        return
    with pytest.raises(UnknownMeasureError, match=message):
        parse(name)


@pytest.mark.parametrize("name, keys", [
    ("P.1e1", ["P_1"]), ("P.1e30", ["P_1"]), ("P.23.9", ["P_23"]), ("P.+5, 7", ["P_5", "P_7"]),
    ("success.1e1", ["success_1"]), ("map_cut.2e0,10", ["map_cut_2", "map_cut_10"]),
    ("Rprec_mult.1e0", ["Rprec_mult_1.00"]), ("iprec_at_recall.5e-1", ["iprec_at_recall_0.50"]),
])
def test_trec_cutoffs_are_read_as_trec_eval_reads_them(name, keys):
    """Rank cutoffs with atol (the leading integer: 1e1 is 1, as trec_eval and pytrec_eval
    read it), recall levels and multiples of R with atof."""
    assert [key for key, _ in parse(name)] == keys


def test_measure_objects_are_accepted():
    m = Measure("P", 5)
    assert parse(m) == [("P@5", m)]


def test_duplicate_keys_are_rejected():
    with pytest.raises(ValueError, match="twice"):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@5", "P@5"])


def test_trec_eval_measure_sets_as_library_names():
    keys = [k for k, _ in parse("official")]
    assert keys[:5] == ["num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert len(keys) == 29 and "iprec_at_recall_0.50" in keys and "P_1000" in keys
    all_keys = [k for k, _ in parse("all_trec")]
    assert "relstring" in all_keys and "unj_20" in all_keys and len(all_keys) == 99


# -- names as a careless or hostile user types them ------------------------------------------
MEASURE_TEXT = st.text(alphabet="PRnDCGAPapcut_.,@=()'\"0123456789-+eE infNa:{}", max_size=24)


@cases(500)
@given(MEASURE_TEXT | st.sampled_from(list(MEASURES)) | st.sampled_from(
    ["P.inf", "P@1e400", "relstring.inf", "ndcg.1=nan", "utility.1,2,3,nan", "P(rel=)@5",
     "nDCG(gains='1=')", "IPrec@-0", "RprecMult@1e308", "P@", "@5", "()", "P(rel=1,rel=2)@5"]))
def test_measure_names_give_a_clear_error(text):
    try:
        parsed = parse(text)
    except UnknownMeasureError as exc:
        useful(exc, text.strip()[:3], "cutoff", "rel", "must", "measure", "parameter", "gain")
        return
    except ValueError as exc:
        useful(exc, text)
        return
    assert parsed and all(isinstance(key, str) for key, _ in parsed)


