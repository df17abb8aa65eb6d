"""``fastir.repro_eval``: repro_eval's evaluators and functions, every value equal to
repro_eval's on drawn runs (ties, topics the runs miss, runs of other lengths), NaN and inf
where repro_eval gives them, and one clear error where repro_eval stops on a traceback."""

import math
import random
import warnings

import pytest

import fastir
import fastir.repro_eval as F
from fastir.analysis import reproducibility as R

P = pytest.importorskip("repro_eval.Evaluator")
PM = pytest.importorskip("repro_eval.measure.document_order")
PS = pytest.importorskip("repro_eval.measure.statistics")

RUNS = ("b_orig", "a_orig", "b_rep", "a_rep")
P_VALUE_TOLERANCE = 1e-11  # (the t distribution: scipy's and fastir's own)


def write_run(path, rng, n_topics, depth, pool, lengths=None):
    """A run file in rank order with tied scores (one decimal); ``lengths``: per topic."""
    with open(path, "w") as f:
        for q in range(n_topics):
            n = depth if lengths is None else lengths[q]
            docs = rng.sample(range(pool), n)
            scores = sorted((round(rng.random() * 4, 1) for _ in docs), reverse=True)
            for i, (d, s) in enumerate(zip(docs, scores)):
                f.write(f"{q} Q0 D{d} {i + 1} {s} run\n")


def write_qrels(path, rng, n_topics, pool):
    """Qrels of one topic more than the runs have (a judged topic they miss)."""
    with open(path, "w") as f:
        for q in range(n_topics + 1):
            for d in rng.sample(range(pool), pool // 3):
                f.write(f"{q} 0 D{d} {rng.choice([0, 0, 1, 2])}\n")


@pytest.fixture(params=[0, 1])
def files(request, tmp_path):
    rng = random.Random(request.param)
    n_topics, depth, pool = 12 + request.param, 30, 60
    paths = {"qrels_orig_path": tmp_path / "qrels", "qrels_rpl_path": tmp_path / "qrels_rpl"}
    write_qrels(paths["qrels_orig_path"], rng, n_topics, pool)
    write_qrels(paths["qrels_rpl_path"], rng, n_topics, pool)
    lengths = [1] + [rng.randint(2, depth) for _ in range(n_topics - 1)]  # (topic 0: one doc)
    for name in RUNS:
        paths[f"run_{name}_path"] = tmp_path / name
        write_run(paths[f"run_{name}_path"], rng, n_topics, depth, pool, lengths)
    return {key: str(path) for key, path in paths.items()}


def assert_same(want, got, tolerance=0.0, where=""):
    """Equal dicts (the same keys in the same order) of equal values, NaN for NaN."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want), where
        for key in want:
            assert_same(want[key], got[key], tolerance, f"{where}/{key}")
        return
    assert type(got) is float, (where, type(got))
    if math.isnan(want):
        assert math.isnan(got), where
    else:
        assert got == pytest.approx(want, rel=tolerance, abs=0), where


def both(cls, files, trim=True):
    kwargs = {k: v for k, v in files.items() if cls == "Rpl" or k != "qrels_rpl_path"}
    peer = getattr(P, f"{cls}Evaluator")(**kwargs)
    ours = getattr(F, f"{cls}Evaluator")(**kwargs)
    for evaluator in (peer, ours):
        if trim:
            evaluator.trim(20)
        evaluator.evaluate()
    return peer, ours


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (repro_eval's 0 / 0)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def test_reproducibility_equals_repro_eval(files):
    peer, ours = both("Rpd", files)
    for name in ("run_b_orig_score", "run_a_orig_score", "run_b_rep_score", "run_a_rep_score"):
        assert_same(getattr(peer, name), getattr(ours, name), where=name)
    for method, kwargs in [("ktu", {}), ("ktu", {"per_topic": True}), ("rbo", {}),
                           ("rbo", {"per_topic": True, "p": 0.8, "depth": 12}),
                           ("rmse", {}), ("nrmse", {}), ("er", {}), ("dri", {})]:
        assert_same(getattr(peer, method)(**kwargs), getattr(ours, method)(**kwargs),
                    where=f"{method}{kwargs}")
    assert_same(peer.ttest(), ours.ttest(), P_VALUE_TOLERANCE)


def test_other_runs_by_path_score_and_dict(files):
    peer, ours = both("Rpd", files, trim=False)
    b, a = files["run_a_rep_path"], files["run_b_rep_path"]  # (other runs: swapped)
    for method in ("ktu", "rbo", "rmse", "nrmse", "er", "dri"):
        assert_same(getattr(peer, method)(run_b_path=b, run_a_path=a),
                    getattr(ours, method)(run_b_path=b, run_a_path=a), where=method)
        assert_same(getattr(peer, method)(run_b_path=b), getattr(ours, method)(run_b_path=b),
                    where=method)
    assert_same(peer.ttest(run_b_path=b, run_a_path=a), ours.ttest(run_b_path=b, run_a_path=a),
                P_VALUE_TOLERANCE)
    scores_b, scores_a = peer.evaluate(run_path=b), ours.evaluate(run_path=a)
    assert_same(scores_b, ours.evaluate(run=F.load_run(b)))
    assert_same(peer.rmse(run_b_score=scores_b, run_a_score=scores_a),
                ours.rmse(run_b_score=scores_b, run_a_score=scores_a))
    assert_same(peer.er(run_b_score=scores_b, run_a_score=scores_a),
                ours.er(run_b_score=scores_b, run_a_score=scores_a))
    run = F.load_run(b)
    assert_same(peer.ktu(run_b_rep=dict(run)), ours.ktu(run_b_rep=run))
    assert_same(peer.rbo(run_b_rep=dict(run), per_topic=True),
                ours.rbo(run_b_rep=run, per_topic=True))


def test_replicability_equals_repro_eval(files):
    peer, ours = both("Rpl", files)
    assert_same(peer.run_b_rep_score, ours.run_b_rep_score)
    assert_same(peer.er(), ours.er())
    assert_same(peer.dri(), ours.dri())
    assert_same(peer.ttest(), ours.ttest(), P_VALUE_TOLERANCE)
    b = files["run_a_rep_path"]
    assert_same(peer.ttest(run_b_path=b), ours.ttest(run_b_path=b), P_VALUE_TOLERANCE)
    assert_same(peer.evaluate(run_path=b, rpl=False), ours.evaluate(run_path=b, rpl=False))


def test_nan_and_inf_where_repro_eval_gives_them(files):
    """ER of an original without effect (advanced = baseline) divides by 0; DRI of a
    reproduction scoring 0 too (0 / 0); KTU of a topic of one document is NaN; the t-test
    of equal scores is 1."""
    same_runs = dict(files, run_a_orig_path=files["run_b_orig_path"])
    peer, ours = both("Rpd", same_runs)
    er = ours.er()
    assert_same(peer.er(), er)
    assert any(math.isinf(v) for v in er.values()) and any(math.isnan(v) for v in er.values())
    zero = {t: dict.fromkeys(s, 0.0) for t, s in peer.run_b_orig_score.items()}
    assert_same(peer.dri(run_b_score=zero, run_a_score=zero),
                ours.dri(run_b_score=zero, run_a_score=zero))
    assert all(math.isnan(v) for v in ours.dri(run_b_score=zero, run_a_score=zero).values())
    ktu = ours.ktu(per_topic=True)["baseline"]
    assert any(math.isnan(v) for v in ktu.values()) and math.isnan(ours.ktu()["baseline"])
    assert_same(PS.ttest(zero, zero), F.ttest(zero, zero))
    assert set(F.ttest(zero, zero).values()) == {1.0}


def test_module_functions_equal_repro_eval(files):
    from repro_eval import util as U
    from repro_eval.measure import effectiveness as E
    from repro_eval.measure import overall_effects as O

    peer, _ = both("Rpd", files)
    orig, rep = peer.run_b_orig_score, peer.run_b_rep_score
    assert_same(E.RMSE(orig, rep), F.RMSE(orig, rep))
    assert_same(E.nRMSE(orig, rep), F.nRMSE(orig, rep))
    scores = (peer.run_a_orig_score, orig, peer.run_a_rep_score, rep)
    assert_same(O.ER(*scores), F.ER(*scores))
    assert_same(O.DRI(*scores), F.DRI(*scores))
    assert_same(PS.ttest(orig, rep, rpd=False), F.ttest(orig, rep, rpd=False),
                P_VALUE_TOLERANCE)
    assert U.arp_scores(orig) == F.arp_scores(orig)
    assert U.topic_scores(orig) == F.topic_scores(orig)
    assert U.arp(orig["0"]) == F.arp(orig["0"])
    run = U.load_run(files["run_b_orig_path"])
    assert F.break_ties(F.load_run(files["run_b_orig_path"])) == U.break_ties(run)
    assert list(F.load_run(files["run_b_orig_path"])["3"]) == list(run["3"])
    assert F.load_qrels(files["qrels_orig_path"]) == U.load_qrels(files["qrels_orig_path"])
    assert sorted(F.load_measures()) == sorted(str(m) for m in U.load_measures())


def test_report_lines_as_repro_eval(capsys):
    from repro_eval import util as U

    for function, args in [("print_base_adv", ("P@10", "RMSE", 0.1234, 0.5)),
                           ("print_base_adv", ("KTU", "all", -0.25, 0.5)),
                           ("print_base_adv", ("KTU", "all", 0.25)),
                           ("print_simple_line", ("AP", "ER", 1.5))]:
        getattr(U, function)(*args)
        want = capsys.readouterr().out
        getattr(F, function)(*args)
        assert capsys.readouterr().out == want


@pytest.mark.parametrize("p, depth", [(0.95, 1000), (0.5, 3), (1.0, 7)])
def test_rbo_and_ktu_of_dict_runs(p, depth):
    """Runs of other lengths (RBO), text and numeric document ids, a topic of one document."""
    rng = random.Random(depth)

    def run(n_topics=15):
        return {f"t{q}": {str(d) if q % 2 else f"doc-{d}": float(40 - i) for i, d in
                          enumerate(rng.sample(range(50), rng.randint(1, 40)))}
                for q in range(n_topics)}

    orig, rep = run(), run()
    assert_same(PM.RBO(orig, rep, p=p, depth=depth, pbar=False, per_topic=True),
                F.RBO(orig, rep, p=p, depth=depth, per_topic=True))
    same_lengths = {q: dict(zip(ranking, orig[q].values())) for q, ranking in rep.items()
                    if len(ranking) == len(orig[q])} or {"t0": dict(orig["t0"])}
    subset = {q: orig[q] for q in same_lengths}
    assert_same(PM.KTU(subset, same_lengths, per_topic=True),
                F.KTU(subset, same_lengths, per_topic=True))


def test_rbo_and_ktu_at_scale_of_a_query():
    """A topic of 1000 documents (the merge sorts and the overlap counts)."""
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(3000)]
    orig = {"q": {d: float(1000 - i) for i, d in enumerate(rng.sample(docs, 1000))}}
    top = list(orig["q"])
    mixed = top[:500] + rng.sample(docs, 700)
    rep = {"q": {d: float(2000 - i) for i, d in enumerate(dict.fromkeys(mixed))}}
    rep["q"] = dict(list(rep["q"].items())[:1000])
    assert_same(PM.RBO(orig, rep, p=0.95, depth=1000, pbar=False, per_topic=True),
                F.RBO(orig, rep, per_topic=True))
    assert_same(PM.KTU(orig, rep, per_topic=True), F.KTU(orig, rep, per_topic=True))


def test_clear_errors_where_repro_eval_stops(files, tmp_path):
    with pytest.raises(TypeError, match="run_b_org_path"):
        F.RpdEvaluator(qrels_orig_path=files["qrels_orig_path"], run_b_org_path="x")
    with pytest.raises(ValueError, match="qrels_orig_path"):
        F.RpdEvaluator(run_b_orig_path=files["run_b_orig_path"])
    orig = {"1": {"a": 2.0, "b": 1.0}, "2": {"a": 1.0}}
    with pytest.raises(fastir.InputError, match="query '1' ranks 2 documents in the original"):
        F.KTU(orig, {"1": {"a": 1.0}, "2": {"a": 1.0}})
    with pytest.raises(fastir.InputError, match="query '3' of the reproduced run"):
        F.RBO(orig, {"3": {"a": 1.0}})
    twice = tmp_path / "twice.run"
    twice.write_text("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n1 Q0 a 3 0.5 r\n")
    with pytest.raises(fastir.InputError, match="ranks doc 'a'"):
        F.KTU(str(twice), str(twice))
    scores = {"1": {"AP": 0.5}, "2": {"AP": 0.25}}
    with pytest.raises(fastir.InputError, match="pairs the topics"):
        F.ttest(scores, {"1": {"AP": 0.5}, "3": {"AP": 0.25}})
    with pytest.raises(fastir.InputError, match="topic '2' is missing"):
        F.RMSE(scores, {"1": {"AP": 0.5}})
    evaluator = F.RpdEvaluator(qrels_orig_path=files["qrels_orig_path"])
    with pytest.raises(ValueError, match="t must be a positive integer"):
        evaluator.trim(0)
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        F.RBO(orig, orig, depth=0)


def test_nothing_to_compare_says_repro_eval_s_message(files, capsys):
    ours = F.RpdEvaluator(qrels_orig_path=files["qrels_orig_path"],
                          run_b_orig_path=files["run_b_orig_path"])
    for method in ("ktu", "rbo", "rmse", "er", "dri", "ttest"):
        assert getattr(ours, method)() is None
        assert capsys.readouterr().out == F.ERR_MSG + "\n"


def test_trim_keeps_the_top_of_each_ranking(files):
    from fastir.peers.repro_eval import _ranked_dict, _trimmed

    trimmed = _trimmed(fastir.read_run(files["run_b_orig_path"]), 3)
    want = {q: dict(list(docs.items())[:3])
            for q, docs in F.break_ties(F.load_run(files["run_b_orig_path"])).items()}
    assert R.Rankings(trimmed).lengths.max() == 3
    assert _ranked_dict(trimmed) == want
