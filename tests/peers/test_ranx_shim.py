"""``from fastir import ranx``: ranx's Qrels, Run, evaluate, compare, fuse and
optimize_fusion side by side with ranx (and the cases its own suite raised: its array
form with repeated docs, scores saved in the run, the query-id check, a query no run
retrieved anything for kept by fusion, the fused run's name)."""

import pickle

import numpy as np
import pytest
from checks import useful
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compat import RANX_NAMES, graded_pair

from fastir import ranx as shim

pytestmark = pytest.mark.one_engine
ranx = pytest.importorskip("ranx")


def same_queries(seed, unique_scores=True):
    qrels, run = graded_pair(seed, unique_scores=unique_scores)
    run = {q: docs for q, docs in run.items() if q in qrels}
    return {q: labels for q, labels in qrels.items() if q in run}, run


@pytest.mark.parametrize("seed", [0, 1])
def test_evaluate_gives_ranxs_values_and_shapes(seed):
    qrels, run = same_queries(seed)
    names = RANX_NAMES + ["recall", "recall-l1", "recall@5", "hit_rate@3"]
    ours = shim.evaluate(shim.Qrels(qrels), shim.Run(run), names)
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names)
    assert list(ours) == names
    for name in names:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-12), name
    one = shim.evaluate(qrels, run, "ndcg@10")
    assert isinstance(one, float) and one == pytest.approx(theirs["ndcg@10"], abs=1e-12)
    per_query = shim.evaluate(qrels, run, "map", return_mean=False)
    assert per_query.shape == (len(qrels),) and per_query.mean() == shim.evaluate(qrels, run,
                                                                                "map")


def test_scores_saved_in_the_run_as_ranx_saves_them():
    qrels, run = same_queries(2)
    ours, theirs = shim.Run(run), ranx.Run(run)
    got = shim.evaluate(shim.Qrels(qrels), ours, ["map@5", "mrr"], return_std=True)
    want = ranx.evaluate(ranx.Qrels(qrels), theirs, ["map@5", "mrr"], return_std=True)
    for m in ("map@5", "mrr"):
        assert got[m]["std"] == np.std(list(ours.scores[m].values()))
        assert got[m] == pytest.approx(want[m], abs=1e-12)
        assert ours.scores[m] == pytest.approx(dict(theirs.scores[m]), abs=1e-12)
        assert ours.mean_scores[m] == got[m]["mean"] and ours.std_scores[m] == got[m]["std"]
    assert list(ours.scores["mrr"]) == list(theirs.scores["mrr"])


def test_ranxs_array_form():
    from numba.typed import List

    y_true = np.array([[[1, 1], [4, 1], [5, 1], [6, 1]]])
    y_pred = np.array([[[1, 1], [2, 1], [3, 1], [4, 1], [5, 1], [7, 1]]])
    assert shim.evaluate(y_true, y_pred, "hits@5") == 3
    assert shim.evaluate(y_true, y_pred, "map@6") == pytest.approx(0.525)
    # rows in rank order, whatever their scores; a repeated doc is another (unjudged) doc
    y_true = List([np.array([[3, 1]]), np.array([[1, 1]]), np.array([[3, 1]])])
    y_pred = List([np.array([[2, 1], [3, 1], [1, 1]]), np.array([[1, 1], [2, 1]]),
                   np.array([[1, 1], [1, 1], [1, 1], [4, 1]])])
    assert shim.evaluate(y_true, y_pred, "mrr@5") == 0.5
    assert list(shim.evaluate(y_true, y_pred, "mrr", return_mean=False)) == [0.5, 1.0, 0.0]


def test_the_query_id_check():
    qrels = {"q_1": {"d_1": 1}, "q_2": {"d_2": 1}}
    run = {"q_1": {"d_1": 0.5}, "q_3": {"d_2": 0.5}}
    with pytest.raises(ValueError, match="Qrels and Run query ids do not match"):
        shim.evaluate(shim.Qrels(qrels), shim.Run(run), "ndcg@5")
    with pytest.raises(AssertionError):
        ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@5")
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@5", make_comparable=True)
    assert shim.evaluate(shim.Qrels(qrels), shim.Run(run), "ndcg@5",
                         make_comparable=True) == theirs == 0.5
    made = shim.Run(run).make_comparable(shim.Qrels(qrels))
    assert made.to_dict() == {"q_1": {"d_1": 0.5}, "q_2": {}}


def runs_of(seed, n=3):
    qrels, run = same_queries(seed)
    rng = np.random.default_rng(seed)
    runs = [{q: {d: float(s) + float(rng.normal()) for d, s in docs.items()}
             for q, docs in run.items()} for _ in range(n)]
    return qrels, runs


def test_compare_reports_as_ranx():
    qrels, runs = runs_of(3)
    runs[2] = {q: {d: -s for d, s in docs.items()} for q, docs in runs[2].items()}
    names = ["ndcg@10", "map@100", "mrr"]
    ours = shim.compare(shim.Qrels(qrels), [shim.Run(r, name=f"m{i}") for i, r in
                                           enumerate(runs)], names, max_p=0.05)
    theirs = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=f"m{i}") for i, r in
                                             enumerate(runs)], names, max_p=0.05)
    assert ours.model_names == theirs.model_names and ours.metrics == names
    for model in ours.model_names:
        assert ours.results[model] == pytest.approx(theirs.results[model], abs=1e-12)
        for other in ours.model_names:
            if other == model:
                continue
            assert ours.win_tie_loss[(model, other)] == theirs.win_tie_loss[(model, other)]
            for m in names:
                mine, ranxs = ours.comparisons[model, other][m], theirs.comparisons[model,
                                                                                    other][m]
                assert mine["p_value"] == pytest.approx(ranxs["p_value"], rel=1e-9)
                assert mine["significant"] == ranxs["significant"]
    assert str(ours) == str(theirs)
    assert ours.to_latex() == theirs.to_latex()
    assert ours.to_dict()["m0"]["win_tie_loss"] == theirs.to_dict()["m0"]["win_tie_loss"]
    unnamed = shim.compare(qrels, [shim.Run(r) for r in runs[:2]], "ndcg@10")
    assert unnamed.model_names == ["run_1", "run_2"]
    for test in ("fisher", "tukey"):
        report = shim.compare(qrels, [shim.Run(r) for r in runs], names, stat_test=test)
        assert report.get_stat_test_label(test) in report.to_latex()


@pytest.mark.parametrize("method, norm, params", [
    ("rrf", None, {"k": 20}), ("wsum", "min-max", {"weights": [0.2, 0.3, 0.5]}),
    ("sum", "zmuv", {}), ("mnz", "sum", {}), ("max", "max", {}), ("isr", None, {}),
    ("bordafuse", None, {}), ("med", "rank", {})])
def test_fuse_as_ranx(method, norm, params):
    _, runs = runs_of(4)
    if norm != "zmuv":  # (ranx's zmuv drops other queries' docs when one has none)
        for run in runs:
            run["extra"] = {}  # (a query no run retrieved anything for: ranx keeps it)
    ours = shim.fuse([shim.Run(r) for r in runs], norm=norm, method=method, params=params)
    theirs = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method, params=params)
    assert ours.name == theirs.name and ours.keys() == theirs.keys()
    for q in theirs.keys():
        assert ours[q] == pytest.approx(dict(theirs[q]), abs=1e-12), q


def test_optimize_fusion_finds_ranxs_best():
    qrels, runs = runs_of(5, n=2)
    for method, options in (("wsum", {"step": 0.1}), ("wsum", {"step": 0.25}), ("rrf", {})):
        ours = shim.optimize_fusion(qrels, [shim.Run(r) for r in runs], method=method,
                                    metric="ndcg@10", **options)
        theirs = ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs],
                                      method=method, metric="ndcg@10", show_progress=False,
                                      **options)
        assert ours == theirs
    best, report = shim.optimize_fusion(qrels, [shim.Run(r) for r in runs], metric="map",
                                        return_optimization_report=True)
    assert str(best["weights"]) in report.configs and "map" in str(report)


def test_run_run_is_ranxs_typed_dict_and_stays_the_runs_table():
    """``run.run`` and ``qrels.qrels`` are ranx's numba typed dicts, which ranx's own numba
    helpers take (in typed lists); what is changed in them is the run's, ``add_score`` and
    ``sort`` keep them typed, and the run still pickles."""
    from numba.typed import Dict, List

    given = {"q1": {"d1": 0.1, "d2": 0.3}, "q2": {"d1": 0.5}}
    run = shim.Run(given, name="bm25")
    qrels = shim.Qrels({"q1": {"d3": 1}, "q2": {"d7": 2}})
    assert shim.evaluate(qrels, run, "map") == 0.0
    table = run.run
    assert isinstance(table, Dict) and run.run is table and list(table["q1"]) == ["d2", "d1"]
    assert len(List([table, run.run])) == 2
    table["q2"]["d7"] = 0.9
    run.add_score("q1", "d3", 0.2)
    assert run.run is table and table["q1"]["d3"] == 0.2
    run.sort()
    assert isinstance(run.run, Dict) and list(run.run["q1"]) == ["d2", "d3", "d1"]
    assert isinstance(qrels.qrels, Dict) and qrels.qrels["q2"]["d7"] == 2
    changed = {"q1": {"d1": 0.1, "d2": 0.3, "d3": 0.2}, "q2": {"d1": 0.5, "d7": 0.9}}
    assert run.to_dict() == changed and repr(run) == repr(shim.Run(changed))
    theirs = ranx.evaluate(ranx.Qrels({"q1": {"d3": 1}, "q2": {"d7": 2}}), ranx.Run(changed),
                           ["recall@1", "map"])
    assert shim.evaluate(qrels, run, ["recall@1", "map"]) == pytest.approx(theirs)
    again = pickle.loads(pickle.dumps(run))
    assert again.to_dict() == changed and isinstance(again.run, Dict)
    with pytest.raises(TypeError, match="query id 1 is of type int; give ids as str"):
        table = shim.Run({1: {"d1": 1.0}}).run


IDS = st.text(st.sampled_from(["a", "b", "é", "\0", " ", "\U0001F600"]), max_size=4)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_typed_tables_go_there_and_back_unchanged(data):
    """Any table, through ranx's typed form and back, comes back the same: ids with
    trailing NULs, outside the BMP or empty, queries without docs, no query at all."""
    from fastir.peers.ranx_typed import plain_table, typed_table

    value = data.draw(st.sampled_from([int, float]))
    values = st.integers(-3, 3) if value is int else st.floats(allow_nan=False)
    table = data.draw(st.dictionaries(IDS, st.dictionaries(IDS, values, max_size=5),
                                      max_size=4))
    typed = typed_table(table, value)
    assert [(q, list(rows.items())) for q, rows in typed.items()] == \
        [(q, list(rows.items())) for q, rows in table.items()]
    back = plain_table(typed, value)
    assert back == table and list(back) == list(table)
    assert all(list(back[q]) == list(table[q]) for q in table)


def test_qrels_and_run_as_ranxs(tmp_path):
    pd = pytest.importorskip("pandas")
    qrels = shim.Qrels()
    qrels.add_score("q2", "d1", 1)
    qrels.add_multi(["q1", "q2"], [["d1", "d2", "d3"], ["d1", "d2"]], [[1, 2, 3], [1, 2]])
    assert qrels.sorted and list(qrels.qrels) == ["q1", "q2"]
    assert list(qrels.qrels["q1"]) == ["d3", "d2", "d1"] and qrels.size == len(qrels) == 2
    qrels.set_relevance_level(2)
    assert qrels["q1"] == {"d1": 0, "d2": 1, "d3": 2}
    run = shim.Run({"q1": {"d1": 0.1, "d2": 0.3}, "q2": {"d1": 0.5}}, name="bm25")
    run.add_score("q1", "d3", 0.2)
    assert not run.sorted
    run.sort()
    assert list(run.run["q1"]) == ["d2", "d3", "d1"]
    for suffix in ("json", "trec", "txt", "parquet", "gz"):
        path = tmp_path / f"run.{suffix}"
        if suffix == "gz":
            import gzip

            path.write_bytes(gzip.compress((tmp_path / "run.trec").read_bytes()))
        else:
            run.save(str(path))
        loaded = shim.Run.from_file(str(path))
        assert loaded.to_dict() == run.to_dict(), suffix
    assert ranx.Run.from_file(str(tmp_path / "run.trec")).to_dict() == run.to_dict()
    assert shim.Run.from_file(str(tmp_path / "run.trec")).name == "bm25"
    frame = run.to_dataframe()
    assert list(frame.columns) == ["q_id", "doc_id", "score"]
    assert shim.Run.from_df(frame).to_dict() == run.to_dict()
    qrels.save(str(tmp_path / "qrels.trec"))
    assert shim.Qrels.from_file(str(tmp_path / "qrels.trec")).to_dict() == qrels.to_dict()
    assert shim.Qrels.from_df(pd.DataFrame(qrels.to_dataframe())).to_dict() == \
        qrels.to_dict()
    with pytest.raises(ValueError, match="LZ4"):
        run.save(str(tmp_path / "run.lz4"))
    with pytest.raises(ValueError, match="Fusion method nope not supported"):
        shim.fuse([run, run], method="nope")
    with pytest.raises(ValueError, match="log_odds: 'bayesfuse' needs log_odds"):
        shim.fuse([run, run], method="bayesfuse")


# -- bounded grids, ranx's own refusals --------------------------------------------------------
FB = {"q": {"d2": 0.9, "d3": 0.1}}


@pytest.mark.parametrize("options, names", [
    ({"step": 1e-9}, "step: a step of 1e-09"), ({"step": 0}, "step: a grid step"),
    ({"step": float("nan")}, "step: a grid step"), ({"step": 0.01, "runs": 4}, "step: a step"),
    ({"method": "rrf", "step": 0}, "step"), ({"method": "rrf", "max_k": 10**9}, "max_k"),
])
def test_the_ranx_switch_bounds_its_grids_up_front(options, names):
    runs = [{"q": {"d1": 3.0, "d2": 2.0}}] * (options.pop("runs", 2) - 1) + [FB]
    with pytest.raises(ValueError) as info:
        shim.optimize_fusion({"q": {"d2": 1}}, runs, **options)
    useful(info.value, names)


def test_the_ranx_switch_refuses_a_keyword_ranx_does_not_take_as_ranx_does():
    """ranx's optimize_rrf takes min_k, max_k and step: another keyword is its TypeError, one
    line naming it."""
    qrels, runs = {"q": {"d2": 1}}, [{"q": {"d1": 3.0, "d2": 2.0}}, FB]
    with pytest.raises(TypeError) as theirs:
        ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs], norm=None,
                             method="rrf", k_step=5, show_progress=False)
    with pytest.raises(TypeError) as ours:
        shim.optimize_fusion(qrels, runs, method="rrf", k_step=5)
    useful(ours.value, "'k_step'")
    assert str(ours.value) == str(theirs.value)
