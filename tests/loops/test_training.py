"""Training loops: evaluate_matrix's inputs from models (tensors, float and bool labels, -inf
padding, valid=), the flat form and the accumulator, side by side with torchmetrics."""

import contextlib
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from checks import odd_call, odd_options, useful
from conftest import matrix_to_dicts
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir

MEASURES = ["nDCG@10", "AP", "RR", "P@5", "R@20", "Rprec"]


def _dense(seed, batch=16, width=30):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(batch, width)), rng.integers(0, 4, size=(batch, width))


def _flat(rng, n_queries, graded, first=0):
    """Rows of ``n_queries`` queries (1 to 40 candidates each, some without a relevant one),
    shuffled, with sparse query numbers from ``first``; scores are distinct positive
    integers (float32 holds them exactly, and torchmetrics zeroes targets of scores <= 0)."""
    sizes = rng.integers(1, 41, size=n_queries)
    indexes = np.repeat(first + 3 * np.arange(n_queries), sizes)
    target = rng.choice(4 if graded else 2, size=len(indexes), p=[0.6, 0.2, 0.1, 0.1]
                        if graded else [0.7, 0.3])
    preds = (rng.permutation(len(indexes)) + 1).astype(np.float32)
    shuffle = rng.permutation(len(indexes))
    return preds[shuffle], target[shuffle], indexes[shuffle]


# -- evaluate_matrix: what a model hands over ----------------------------------------------

def test_float_and_bool_labels_equal_integer_labels():
    scores, labels = _dense(0)
    want = fastir.evaluate_matrix(scores, labels, MEASURES)
    assert fastir.evaluate_matrix(scores, labels.astype(np.float32), MEASURES) == want
    assert fastir.evaluate_matrix(scores, labels.astype(np.float16), MEASURES) == want
    binary = labels >= 2
    assert fastir.evaluate_matrix(scores, binary, MEASURES) == \
        fastir.evaluate_matrix(scores, binary.astype(np.int64), MEASURES)
    bad = labels.astype(np.float64)
    bad[3, 4] = 0.5
    with pytest.raises(ValueError, match=r"labels: 0.5 at index \(3, 4\) is not an integer"):
        fastir.evaluate_matrix(scores, bad, MEASURES)


def test_float16_scores_are_widened_exactly():
    scores, labels = _dense(1)
    half = scores.astype(np.float16)
    assert fastir.evaluate_matrix(half, labels, MEASURES) == \
        fastir.evaluate_matrix(half.astype(np.float64), labels, MEASURES)


def test_neg_inf_padding_equals_valid():
    scores, labels = _dense(2)
    rng = np.random.default_rng(2)
    valid = rng.random(scores.shape) < 0.6
    valid[0] = False  # a row without candidates
    padded = np.where(valid, scores, -np.inf)
    want = fastir.evaluate_matrix(scores, labels, MEASURES, valid=valid, per_row=True)
    got = fastir.evaluate_matrix(padded, labels, MEASURES, per_row=True)
    assert got[0] == want[0]
    assert np.array_equal(got[1], want[1])
    assert fastir.evaluate_matrix(padded, labels, MEASURES, valid=valid) == want[0]
    ignored = np.where(valid, labels, -100)  # labels of padding are not read
    assert fastir.evaluate_matrix(padded, ignored, MEASURES) == want[0]
    # 0/1 masks (attention masks) mean the same
    assert fastir.evaluate_matrix(scores, labels, MEASURES, valid=valid.astype(np.int64)) == \
        want[0]


@pytest.mark.parametrize("kwargs, message", [
    ({"valid": np.ones((2, 3), bool)}, r"valid \(2, 3\) and scores \(2, 2\) differ"),
    ({"valid": np.array([[0, 2], [1, 1]])}, "valid must be booleans or 0/1"),
    ({"valid": np.ones((2, 2), bool), "mask": np.ones((2, 2), bool)}, "give valid= only"),
])
def test_valid_errors(kwargs, message):
    deprecated = "mask" in kwargs
    with pytest.raises(ValueError, match=message), \
            pytest.warns(DeprecationWarning) if deprecated else contextlib.nullcontext():
        fastir.evaluate_matrix(np.ones((2, 2)), np.ones((2, 2), int), "AP", **kwargs)


def test_neg_inf_is_an_error_where_valid_says_a_candidate_exists():
    scores = np.array([[-np.inf, 0.5]])
    with pytest.raises(ValueError, match="scores must be finite where valid is True"):
        fastir.evaluate_matrix(scores, [[1, 0]], "AP", valid=np.ones((1, 2), bool))
    for bad in (np.inf, np.nan):
        with pytest.raises(ValueError, match="scores must be finite"):
            fastir.evaluate_matrix(np.array([[bad, 0.5]]), [[1, 0]], "AP")


def test_mask_is_deprecated_for_valid():
    scores, labels = _dense(3)
    valid = scores > -0.5
    with pytest.warns(DeprecationWarning, match="use valid="):
        got = fastir.evaluate_matrix(scores, labels, MEASURES, mask=valid)
    assert got == fastir.evaluate_matrix(scores, labels, MEASURES, valid=valid)


def test_tensors_on_another_device_are_copied_to_the_cpu():
    scores, labels = _dense(4)

    class Device:  # a tensor on an accelerator: DLPack says where, .cpu() copies it
        def __dlpack__(self, **kwargs):
            raise AssertionError("not on the CPU")

        def __dlpack_device__(self):
            return 2, 0

        def cpu(self):
            return scores

    assert fastir.evaluate_matrix(Device(), labels, MEASURES) == \
        fastir.evaluate_matrix(scores, labels, MEASURES)


# -- torch tensors ---------------------------------------------------------------------------

def test_torch_tensors_that_require_grad_and_half_precision():
    torch = pytest.importorskip("torch")
    scores, labels = _dense(5)
    t = torch.tensor(scores, requires_grad=True)
    want = fastir.evaluate_matrix(scores, labels, MEASURES)
    assert fastir.evaluate_matrix(t * 1.0, torch.tensor(labels), MEASURES) == want
    assert fastir.evaluate_matrix(t, torch.tensor(labels, dtype=torch.float32), MEASURES) == want
    for dtype in (torch.bfloat16, torch.float16):
        low = t.to(dtype)
        exact = low.detach().float().numpy().astype(np.float64)
        assert fastir.evaluate_matrix(low, torch.tensor(labels).to(dtype), MEASURES) == \
            fastir.evaluate_matrix(exact, labels, MEASURES)
    padded = torch.where(torch.tensor(scores > 0), t, torch.tensor(-torch.inf))
    assert fastir.evaluate_matrix(padded, labels, MEASURES) == \
        fastir.evaluate_matrix(scores, labels, MEASURES, valid=torch.tensor(scores > 0))


# -- the flat form and the accumulator against torchmetrics -----------------------------------

def _torchmetrics_pairs(k):
    """(torchmetrics metric, fastir measure, graded targets) where the definitions coincide."""
    tm = pytest.importorskip("torchmetrics.retrieval")
    return [
        (tm.RetrievalMAP(), "AP", False),
        (tm.RetrievalMRR(), "RR", False),
        (tm.RetrievalMRR(top_k=k), f"RR@{k}", False),
        (tm.RetrievalPrecision(top_k=k), f"P@{k}", False),
        (tm.RetrievalRecall(top_k=k), f"R@{k}", False),
        (tm.RetrievalHitRate(top_k=k), f"Success@{k}", False),
        (tm.RetrievalRPrecision(), "Rprec", False),
        (tm.RetrievalNormalizedDCG(), "nDCG", True),
        (tm.RetrievalNormalizedDCG(top_k=k), f"nDCG@{k}", True),
        # (a query without a non-relevant candidate: 0, torchmetrics' default says 1)
        (tm.RetrievalFallOut(top_k=k, empty_target_action="neg"), f"FallOut@{k}", False),
    ]


@pytest.mark.parametrize("k", [1, 5, 50])  # 50: more than any query's candidates
def test_flat_form_matches_torchmetrics(k):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(k)
    for metric, name, graded in _torchmetrics_pairs(k):
        preds, target, indexes = _flat(rng, 60, graded)
        metric.update(torch.from_numpy(preds), torch.from_numpy(target),
                      torch.from_numpy(indexes))
        want = metric.compute().item()
        got = fastir.evaluate_flat(preds, target, indexes, name, ties="average")[name]
        assert got == pytest.approx(want, rel=1e-6, abs=1e-7), name


def test_accumulator_matches_torchmetrics_over_batches_and_merges():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    pairs = _torchmetrics_pairs(10)
    names = [name for _, name, _ in pairs]
    whole, first, second = (fastir.MetricAccumulator(names, ties="average") for _ in range(3))
    for step in range(6):  # each batch holds whole queries, as the accumulator needs
        preds, target, indexes = _flat(rng, 20, graded=False, first=1000 * step)
        grad = torch.tensor(preds, requires_grad=True)  # straight from a model
        for metric, _, _ in pairs:
            metric.update(grad.detach(), torch.from_numpy(target), torch.from_numpy(indexes))
        whole.update_flat(grad, target, indexes)
        (first if step % 2 else second).update_flat(preds.astype(np.float64), target, indexes)
    got = whole.compute()
    for metric, name, _ in pairs:
        assert got[name] == pytest.approx(metric.compute().item(), rel=1e-6, abs=1e-7), name
    assert len(whole) == 120
    # merged in either order, through pickled numpy states as a gather across processes
    # would bring them: the same digits
    states = [pickle.loads(pickle.dumps(acc.state_dict())) for acc in (second, first)]
    assert fastir.MetricAccumulator.from_state(states[0]).merge(states[1]).compute() == got
    assert first.merge(second).compute() == got
    merged_indexes, merged_values = first.per_query()
    indexes, values = whole.per_query()
    assert np.array_equal(indexes, merged_indexes) and np.array_equal(values, merged_values)
    assert np.array_equal(indexes, np.sort(indexes))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 12), st.booleans()), min_size=1,
                max_size=6), st.integers(0, 2**32 - 1), st.integers(0, 6))
def test_accumulator_equals_evaluate_matrix_on_all_batches(shapes, seed, split):
    rng = np.random.default_rng(seed)
    width = max(w for _, w, _ in shapes)
    whole = fastir.MetricAccumulator(MEASURES)
    parts = [fastir.MetricAccumulator(MEASURES), fastir.MetricAccumulator(MEASURES)]
    rows = []
    for i, (batch, w, padded) in enumerate(shapes):
        scores = rng.choice([0.0, 0.5, 1.0, 2.5], size=(batch, width))  # ties, by column
        labels = rng.integers(0, 3, size=(batch, width))
        scores[:, w:] = -np.inf  # narrower batches: padded to the widest
        valid = (rng.random((batch, width)) < 0.8) & np.isfinite(scores) if padded else None
        n_relevant = rng.integers(0, 5, size=batch)
        whole.update(scores, labels, valid=valid, n_relevant=n_relevant)
        parts[i >= split].update(scores, labels, valid=valid, n_relevant=n_relevant)
        rows.append((scores if valid is None else np.where(valid, scores, -np.inf), labels,
                     n_relevant))
    scores, labels, n_relevant = (np.concatenate(x) for x in zip(*rows))
    want, values = fastir.evaluate_matrix(scores, labels, MEASURES, n_relevant=n_relevant,
                                          per_row=True)
    assert whole.compute() == want
    assert np.array_equal(whole.per_query()[1], values)
    assert parts[0].merge(parts[1]).compute() == want  # rows without indexes: update order


def test_accumulator_state_is_numpy_and_can_be_concatenated():
    rng = np.random.default_rng(8)
    accs = [fastir.MetricAccumulator(["AP", "nDCG@5"]) for _ in range(3)]
    for i, acc in enumerate(accs):
        acc.update_flat(*_flat(rng, 10, graded=True, first=100 * i))
    states = [acc.state_dict() for acc in accs]
    assert all(isinstance(v, np.ndarray) for s in states for v in s.values())
    joined = dict(states[0], values=np.concatenate([s["values"] for s in states]),
                  indexes=np.concatenate([s["indexes"] for s in states]))
    want = accs[2].merge(accs[0]).merge(accs[1]).compute()
    assert fastir.MetricAccumulator.from_state(joined).compute() == want
    accs[0].reset()
    assert len(accs[0]) == 0 and accs[0].compute() == {"AP": 0.0, "nDCG@5": 0.0}


def test_accumulator_errors():
    acc = fastir.MetricAccumulator("AP")
    acc.update_flat([0.5, 0.2], [1, 0], [4, 4])
    acc.update_flat([0.5, 0.2], [1, 0], [4, 5])
    with pytest.raises(ValueError, match="query index 4 came in more than one update"):
        acc.compute()
    with pytest.raises(ValueError, match="different settings"):
        acc.merge(fastir.MetricAccumulator("AP", relevance_level=2))
    with pytest.raises(TypeError, match="indexes must be integers"):
        acc.update_flat([0.5], [1], [0.0])
    with pytest.raises(ValueError, match="indexes must be integers from 0, got -1"):
        acc.update(np.ones((1, 2)), np.ones((1, 2), int), indexes=[-1])
    with pytest.raises(ValueError, match="needs unjudged documents"):
        fastir.MetricAccumulator("Bpref")


@pytest.mark.parametrize("args, message", [
    (([0.5, np.nan], [1, 0], [0, 0]), "preds must be finite"),
    (([0.5, 0.1], [1, -1], [0, 0]), "target must be integers from 0, got -1"),
    (([0.5, 0.1], [1.5, 0], [0, 0]), "evaluate_flat: target: 1.5 at row 0 is not an integer"),
    (([0.5, 0.1], [1, 0], [0]), r"indexes must have shape \(2,\)"),
    (([[0.5, 0.1]], [[1, 0]], [[0, 0]]), "preds must be 1-d"),
])
def test_flat_errors(args, message):
    with pytest.raises((ValueError, TypeError), match=message):
        fastir.evaluate_flat(*args, "AP")


def test_flat_form_equals_the_dense_batch():
    rng = np.random.default_rng(9)
    preds, target, indexes = _flat(rng, 30, graded=True)
    got, ids, values = fastir.evaluate_flat(preds, target, indexes, MEASURES, per_query=True)
    assert np.array_equal(ids, np.unique(indexes))
    for q, row in zip(ids, values):
        rows = indexes == q
        one = fastir.evaluate_matrix(preds[rows][None], target[rows][None], MEASURES,
                                     per_row=True)[1]
        assert np.array_equal(one[0], row)
    assert got == {m: sum(col) / len(col) for m, col in zip(MEASURES, values.T.tolist())}


def test_fastir_never_imports_torch():
    code = ("import sys, numpy as np, fastir\n"
            "fastir.evaluate_matrix(np.ones((2, 3)), np.ones((2, 3)), 'AP')\n"
            "acc = fastir.MetricAccumulator('AP')\n"
            "acc.update_flat([0.5, 0.2], [1, 0], [0, 0])\n"
            "fastir.MetricAccumulator.from_state(acc.state_dict()).compute()\n"
            "assert 'torch' not in sys.modules, 'fastir imported torch'\n")
    env = dict(os.environ, FASTIR_JIT="python")
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# -- refusals and odd options -------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("state", [{}, None, {"values": []}, [1, 2]])
def test_an_accumulator_state_that_is_not_one(state):
    with pytest.raises(ValueError) as info:
        fastir.MetricAccumulator.from_state(state)
    useful(info.value, "state")


@pytest.mark.one_engine
def test_flat_indexes_beyond_int64_are_refused():
    preds, target = np.array([0.5, 0.2, 0.9]), np.array([1, 0, 1])
    indexes = np.array([2**63 + 5, 2**63 + 5, 7], dtype=np.uint64)
    with pytest.raises(ValueError) as info:
        fastir.evaluate_flat(preds, target, indexes, "AP")
    useful(info.value, "indexes", "2**63")


#: Plain values of the dense batches' options, drawn beside the odd ones.
PLAIN_TRAINING = {"relevance_level": [0, 1, 2], "ties": ["column", "average"],
                  "valid": [np.array([[True, True, False], [True, True, True]])],
                  "n_relevant": [np.array([2, 3]), np.array([1, 1])], "per_row": [False, True]}


@pytest.mark.one_engine
@settings(max_examples=100, deadline=None)
@given(odd_options(["relevance_level", "ties"], PLAIN_TRAINING),
       odd_options(["valid", "n_relevant", "per_row"], PLAIN_TRAINING))
def test_training_shapes_take_any_options(built, called):
    """Odd options give an error naming one, or fastir.evaluate's values on the same rows
    as qrels and runs (the scores have no ties: ``ties`` changes nothing), the accumulator
    the dense batch's."""
    scores = np.array([[0.5, 0.2, 0.9], [0.1, 0.3, 0.2]])
    labels = np.array([[1, 0, 2], [0, 1, 0]])
    names = ["AP", "nDCG@2"]
    got = odd_call(lambda **kw: fastir.evaluate_matrix(scores, labels, names, **kw),
                   {**built, **called})
    if got is not None:
        means = got[0] if isinstance(got, tuple) else got
        level = _plain(built.get("relevance_level", 1))
        qrels, run = matrix_to_dicts(scores, labels, called.get("valid"),
                                     called.get("n_relevant"), level)
        want = fastir.evaluate(qrels, run, names, relevance_level=level)
        assert means == want.mean
        if isinstance(got, tuple):
            assert got[1].tolist() == want.values.tolist()
    acc = odd_call(lambda **kw: fastir.MetricAccumulator(names, **kw), built)
    update = {k: v for k, v in called.items() if k != "per_row"}
    if acc is not None and odd_call(lambda **kw: acc.update(scores, labels, **kw) or True,
                                    update):
        assert acc.compute() == fastir.evaluate_matrix(scores, labels, names, **built, **update)


def _plain(value):
    """An option's value as a plain caller spells it (a numpy scalar as a Python number)."""
    return value.item() if isinstance(value, np.generic) else value
