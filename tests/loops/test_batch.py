"""Evaluator, bound candidates and evaluate_matrix agree with fastir.evaluate (and so with
the naive reference) on the same inputs."""

import threading

import numpy as np
import pytest
from checks import cases, useful
from conftest import matrix_to_dicts, naive_values, qrels_and_runs, run_rows
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import InputError

NAMES = ["AP", "AP@3", "GMAP", "nDCG", "nDCG@3", "nDCG(dcg='exp-log2')@5", "P@2", "R@3",
         "RR", "Bpref", "IPrec@0.5", "NumRelRet", "Rprec", "SetF", "infAP", "Unj@3"]


@settings(max_examples=80, deadline=None)
@given(qrels_and_runs(), st.sampled_from(["zero", "skip"]), st.integers(0, 2),
       st.one_of(st.none(), st.integers(0, 4)), st.booleans())
def test_evaluator_matches_evaluate(data, missing, level, max_docs, judged_only):
    qrels, run = data
    options = {"missing": missing, "relevance_level": level, "max_docs": max_docs,
               "judged_only": judged_only}
    want = fastir.evaluate(qrels, run, NAMES, **options)
    ev = fastir.Evaluator(qrels, NAMES, **options)
    got = ev.evaluate(run)
    assert got.query_ids == want.query_ids
    assert np.array_equal(got.values, want.values)
    assert got.mean == want.mean
    assert np.array_equal(ev.evaluate(run).values, want.values)  # reusable


@settings(max_examples=80, deadline=None)
@given(qrels_and_runs(), st.sampled_from(["zero", "skip"]),
       st.one_of(st.none(), st.integers(0, 4)), st.booleans(), st.randoms())
def test_bound_candidates_match_evaluate(data, missing, max_docs, judged_only, rnd):
    qrels, run = data
    run = {q: d for q, d in run.items() if d}  # a bound query always has candidates
    qids, docs, scores = run_rows(run)
    if not qids:
        return
    options = {"missing": missing, "max_docs": max_docs, "judged_only": judged_only}
    ev = fastir.Evaluator(qrels, NAMES, **options)
    perm = list(range(len(qids)))
    rnd.shuffle(perm)  # candidates in any order
    bound = ev.bind(np.array([qids[i] for i in perm]), np.array([docs[i] for i in perm]))
    runs = [scores[perm]]
    for _ in range(3):  # other score vectors over the same candidates, with ties
        runs.append(np.array([rnd.choice([0.0, 0.5, 1.0, 2.0]) for _ in perm]))
    expected = []
    for vector in runs:
        rerun = {}
        for k, i in enumerate(perm):
            rerun.setdefault(qids[i], {})[docs[i]] = float(vector[k])
        expected.append(fastir.evaluate(qrels, rerun, NAMES, **options))
    one = bound.evaluate(runs[0])
    assert one.query_ids == expected[0].query_ids
    assert np.array_equal(one.values, expected[0].values)
    means, values = bound.evaluate(np.stack(runs), per_query=True)
    for r, want in enumerate(expected):
        assert np.array_equal(values[r], want.values)
        assert means[r].tolist() == [want.mean[k] for k in NAMES]


def test_bind_rejects_duplicates_and_bad_scores():
    ev = fastir.Evaluator({"q": {"a": 1}}, ["AP"])
    with pytest.raises(InputError, match="ranks doc 'a' twice"):
        ev.bind(np.array(["q", "q"]), np.array(["a", "a"]))
    bound = ev.bind(np.array(["q", "q"]), np.array(["a", "b"]))
    with pytest.raises(ValueError, match="shape"):
        bound.evaluate(np.zeros(3))
    with pytest.raises(ValueError, match="finite"):
        bound.evaluate(np.array([np.nan, 1.0]))


MATRIX_NAMES = ["AP", "nDCG", "nDCG@3", "nDCG(dcg='exp-log2')@5", "P@2", "R@3", "RR",
                "IPrec@0.5", "Rprec", "Success@1", "NumRelRet", "SetP"]
CUTOFF_NAMES = ["nDCG@3", "nDCG(dcg='exp-log2')@5", "P@2", "R@3", "RR@4", "Success@1",
                "AP@3"]  # all with cutoffs: the top ranks are selected, not sorted


def _many_judged(rng, n_queries, width):
    """Candidates of which most are judged (beyond the few whose ranks are counted, so
    they are sorted or their top ranks selected), with tied scores."""
    qids = np.repeat([f"q{e}" for e in range(n_queries)], width)
    docs = np.array([f"doc{d}" for d in rng.permutation(n_queries * width)])  # strcmp ties
    judged = rng.random(len(qids)) < 0.8
    labels = rng.integers(-1, 4, size=len(qids))
    qrels = {}
    for q, d, j, label in zip(qids, docs, judged, labels):
        if j:
            qrels.setdefault(q, {})[d] = int(label)
    qrels.setdefault("q0", {})[docs[0]] = 1
    return qrels, qids, docs


def _as_run(qids, docs, vector):
    run = {}
    for q, d, s in zip(qids, docs, vector):
        run.setdefault(q, {})[d] = float(s)
    return run


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(30, 150), st.one_of(st.none(), st.integers(1, 80)),
       st.booleans(), st.sampled_from([NAMES, CUTOFF_NAMES, ["nDCG@10", "P@5"], ["RR@70"]]),
       st.randoms())
def test_bound_candidates_with_many_judged_are_ranked_like_evaluate(n_queries, width, max_docs,
                                                                   judged_only, names, rnd):
    """Many judged candidates are sorted, or their top ranks selected when every measure
    stops at a cutoff; the values are evaluate's on the same scores."""
    rng = np.random.default_rng(rnd.randrange(2**32))
    qrels, qids, docs = _many_judged(rng, n_queries, width)
    options = {"max_docs": max_docs, "judged_only": judged_only}
    bound = fastir.Evaluator(qrels, names, **options).bind(qids, docs)
    vectors = [rng.choice([0.0, 0.5, 1.0, 2.0], size=len(qids)), rng.normal(size=len(qids))]
    means, values = bound.evaluate(np.stack(vectors), per_query=True)
    for r, vector in enumerate(vectors):
        want = fastir.evaluate(qrels, _as_run(qids, docs, vector), names, **options)
        assert np.array_equal(values[r], want.values), (r, names)
        assert means[r].tolist() == [want.mean[k] for k in names]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 60), st.integers(1, 4), st.integers(1, 5),
       st.sampled_from([None, "9.0.8"]), st.randoms())
def test_evaluate_weighted_matches_the_vectors_built(n_queries, width, n_parts, n_vectors,
                                                     compat, rnd):
    """A weighted sum scored inside the kernel equals evaluate on the vector numpy builds
    (zero and negative weights, ties; under 9.0.8 scores round to float32, overflowing)."""
    rng = np.random.default_rng(rnd.randrange(2**32))
    qrels, qids, docs = _many_judged(rng, n_queries, width)
    names = ["AP", "nDCG@10", "P@5", "RR", "NumRelRet"]
    bound = fastir.Evaluator(qrels, names, compat=compat).bind(qids, docs)
    scale = 1e38 if compat else 1.0
    parts = rng.choice([0.0, 0.5, 1.0, 3.0], size=(n_parts, len(qids))) * scale
    weights = rng.choice([0.0, 0.1, 0.3, 1.0, -0.7], size=(n_vectors, n_parts))
    means, values = bound.evaluate_weighted(parts, weights, per_query=True)
    for r in range(n_vectors):
        built = np.zeros(len(qids))
        for j in range(n_parts):
            built = built + weights[r, j] * parts[j]
        want_means, want = bound.evaluate(built.reshape(1, -1), per_query=True)
        assert np.array_equal(values[r], want[0]) and means[r].tolist() == want_means[0].tolist()


def test_evaluate_weighted_refuses_bad_shapes_and_sums_beyond_a_double():
    bound = fastir.Evaluator({"q": {"a": 1}}, ["AP"]).bind(["q", "q"], ["a", "b"])
    with pytest.raises(ValueError, match=r"parts must have shape \(n_parts, 2\)"):
        bound.evaluate_weighted(np.zeros((1, 3)), np.ones((1, 1)))
    with pytest.raises(ValueError, match=r"weights must have shape \(n_vectors, 1\)"):
        bound.evaluate_weighted(np.zeros((1, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="finite"):
        bound.evaluate_weighted(np.zeros((1, 2)), np.array([[np.inf]]))
    with pytest.raises(ValueError, match="weights: row 1 takes the scores beyond a double"):
        bound.evaluate_weighted(np.array([[1e308, 1.0], [1e308, 0.0]]),
                                np.array([[1.0, 0.0], [1.0, 1.0]]))


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.booleans(), st.booleans(), st.integers(0, 3),
       st.randoms(), st.sampled_from([MATRIX_NAMES, CUTOFF_NAMES]))
def test_evaluate_matrix_matches_evaluate(batch, width, masked, outside, level, rnd, names):
    rng = np.random.default_rng(rnd.randrange(2**32))
    scores = rng.choice([0.0, 0.25, 0.5, 1.0], size=(batch, width))  # ties
    labels = rng.integers(0, 4, size=(batch, width))
    mask = rng.random((batch, width)) < 0.7 if masked else None
    n_relevant = rng.integers(0, width + 2, size=batch) if outside else None
    level = max(level, 1)
    got, per_row = fastir.evaluate_matrix(scores, labels, names, valid=mask,
                                          n_relevant=n_relevant, relevance_level=level,
                                          per_row=True)
    qrels, run = matrix_to_dicts(scores, labels, mask, n_relevant, level)
    want = fastir.evaluate(qrels, run, names, relevance_level=level)
    assert np.array_equal(per_row, want.values)
    assert got == want.mean
    # and the naive reference, directly
    names = ["AP", "P@5", "RR", "nDCG@3"]
    ref = naive_values(qrels, run, names, relevance_level=level)
    _, rows = fastir.evaluate_matrix(scores, labels, names, valid=mask, n_relevant=n_relevant,
                                     relevance_level=level, per_row=True)
    for b, q in enumerate(sorted(ref)):
        assert rows[b].tolist() == ref[q]
    names = ["P@5", "nDCG@3"]  # selection path
    ref = naive_values(qrels, run, names, relevance_level=level)
    _, rows = fastir.evaluate_matrix(scores, labels, names, valid=mask, n_relevant=n_relevant,
                                     relevance_level=level, per_row=True)
    for b, q in enumerate(sorted(ref)):
        assert rows[b].tolist() == ref[q]


def test_evaluate_matrix_accepts_array_likes_and_dlpack():
    scores = np.array([[0.1, 0.9, 0.3], [0.5, 0.4, 0.7]])
    labels = np.array([[0, 1, 2], [1, 0, 0]])
    want = fastir.evaluate_matrix(scores, labels, ["nDCG@2", "RR"])

    class ArrayLike:
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return self.a

    assert fastir.evaluate_matrix(ArrayLike(scores), labels, ["nDCG@2", "RR"]) == want
    assert fastir.evaluate_matrix(scores.tolist(), labels.tolist(), ["nDCG@2", "RR"]) == want
    assert fastir.evaluate_matrix(np.from_dlpack(scores), labels, ["nDCG@2", "RR"]) == want


def test_evaluate_matrix_average_ties_match_sklearn():
    sklearn = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    scores = rng.choice([0.0, 0.5, 1.0], size=(64, 20))
    labels = rng.integers(0, 4, size=(64, 20))
    labels[0] = 0  # a row with no relevant document
    for k in (3, 10, None):
        name = "nDCG" if k is None else f"nDCG@{k}"
        got = fastir.evaluate_matrix(scores, labels, name, ties="average")[name]
        assert got == pytest.approx(sklearn.ndcg_score(labels, scores, k=k), abs=1e-12)


@pytest.mark.parametrize("bad, message", [
    ({"labels": np.array([[1.5, 0.0]])}, r"labels: 1.5 at index \(0, 0\) is not an integer"),
    ({"labels": np.array([[-1, 0]])}, "labels must be integers from 0"),
    ({"scores": np.array([[np.inf, 0.0]])}, "finite"),
    ({"measures": "Bpref"}, "needs unjudged documents"),
    ({"ties": "random"}, "ties must be"),
    ({"valid": np.ones((1, 3), bool)}, "valid"),
])
def test_evaluate_matrix_errors(bad, message):
    args = {"scores": np.array([[0.5, 0.1]]), "labels": np.array([[1, 0]]), "measures": "AP"}
    args.update(bad)
    with pytest.raises((ValueError, TypeError), match=message):
        fastir.evaluate_matrix(args.pop("scores"), args.pop("labels"), args.pop("measures"),
                               **args)


def test_concurrent_calls_from_python_threads():
    rng = np.random.default_rng(5)
    small = (rng.random((32, 100)), rng.integers(0, 3, size=(32, 100)))
    large = (rng.random((512, 100)), rng.integers(0, 3, size=(512, 100)))
    qids = np.repeat(np.arange(200), 50)
    docs = np.tile(np.arange(50), 200)
    ev = fastir.Evaluator(fastir.Qrels.from_arrays(qids[::7], docs[::7], np.ones(len(qids[::7]),
                                                   dtype=np.int64)), ["AP", "nDCG@10"])
    bound = ev.bind(qids, docs)
    vectors = rng.random((4, len(qids)))
    expected = (fastir.evaluate_matrix(*small, ["nDCG@10", "AP"]),
                fastir.evaluate_matrix(*large, ["nDCG@10", "AP"]), bound.evaluate(vectors))
    failures = []

    def work():
        try:
            for _ in range(20):
                got = (fastir.evaluate_matrix(*small, ["nDCG@10", "AP"]),
                       fastir.evaluate_matrix(*large, ["nDCG@10", "AP"]),
                       bound.evaluate(vectors))
                if got[:2] != expected[:2] or not np.array_equal(got[2], expected[2]):
                    failures.append("mismatch")
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_evaluate_matrix_tiers_on_the_ideals_length(monkeypatch):
    """A small batch whose n_relevant lays out a long ideal (nDCG without a cutoff) is large
    work: the tier counts the ideal's documents too (it counted the candidates alone, and
    a 1 x 3 batch with n_relevant 2**24 ran as Python for 16 s instead of compiled)."""
    from fastir import _jit

    asked = []

    def choose_python(n_rows):
        asked.append(n_rows)
        return True

    monkeypatch.setattr(_jit, "_choose_python", choose_python)
    monkeypatch.setattr(_jit, "_loop_python_seconds", 0.0)
    scores, labels = np.array([[0.9, 0.1, 0.5]]), np.array([[0, 1, 2]])
    got = fastir.evaluate_matrix(scores, labels, ["nDCG", "nDCG@2"], n_relevant=[5000])
    assert asked == [1 * (3 + 5000)]
    qrels, run = matrix_to_dicts(scores, labels, None, np.array([5000]), 1)
    want = fastir.evaluate(qrels, run, ["nDCG", "nDCG@2"]).mean
    assert got == want
    asked.clear()
    fastir.evaluate_matrix(scores, labels, ["AP", "nDCG@2"], n_relevant=[5000])
    assert asked == [1 * (3 + 2)]  # (a cutoff bounds the ideal)


# -- arguments as a careless or hostile caller gives them ----------------------------------
MATRIX_VALUES = st.sampled_from([0.5, 1.0, -1.0, float("nan"), float("inf"), -float("inf"),
                                 0.0, 2.0, 3.0, 2.0**33, -5.0, 1.5])


@cases(300)
@given(st.integers(1, 3), st.integers(1, 5), st.data())
def test_matrix_arguments_give_a_clear_error_or_the_naive_value(batch, width, data):
    scores = np.array(data.draw(st.lists(MATRIX_VALUES, min_size=batch * width,
                                         max_size=batch * width))).reshape(batch, width)
    labels = np.array(data.draw(st.lists(MATRIX_VALUES, min_size=batch * width,
                                         max_size=batch * width))).reshape(batch, width)
    if data.draw(st.booleans()):
        labels = labels.astype(np.int64) if np.isfinite(labels).all() else labels
    kwargs = data.draw(st.fixed_dictionaries({}, optional={
        "n_relevant": st.sampled_from([np.array([1.5] * batch), np.array([np.nan] * batch),
                                       np.array([-1] * batch), np.array([10**12] * batch),
                                       np.array([3] * batch), np.array([1] * (batch + 1)),
                                       np.array([np.iinfo(np.int64).min] * batch)]),
        "relevance_level": st.sampled_from([1, 2, 0, -1, 1.5, 2**40, "1"]),
        "valid": st.sampled_from([np.ones((batch, width), bool), np.zeros((batch, width), bool),
                                 np.ones((batch + 1, width), bool)]),
    }))
    measures = data.draw(st.sampled_from([["nDCG@3", "AP"], ["P@5", "R@3"], ["nDCG"],
                                          ["RR", "P@1"]]))
    try:
        got = fastir.evaluate_matrix(scores, labels, measures, per_row=True, **kwargs)
    except (ValueError, TypeError) as exc:
        useful(exc, "scores", "labels", "n_relevant", "relevance_level", "valid", "finite",
               ">= 0")
        return
    # The naive reference on the same rows: a doc per valid column, named so that docno
    # order (descending, trec_eval's tie break) is column order (the matrix's tie break).
    valid = kwargs.get("valid", scores != -np.inf)  # (without valid=, -inf pads)
    name = [f"d{width - j:03d}" for j in range(width)]
    qrels = {f"q{b}": {name[j]: int(labels[b, j]) for j in range(width) if valid[b, j]}
             for b in range(batch)}
    run = {f"q{b}": {name[j]: float(scores[b, j]) for j in range(width) if valid[b, j]}
           for b in range(batch)}
    n_relevant = kwargs.get("n_relevant")
    want = naive_values({q: j for q, j in qrels.items() if j}, run, measures,
                        relevance_level=kwargs.get("relevance_level", 1))
    for b in range(batch):
        if n_relevant is not None or f"q{b}" not in want:
            continue  # (documents outside the candidates, or none: no naive counterpart)
        assert got[1][b].tolist() == want[f"q{b}"], (measures, b)


