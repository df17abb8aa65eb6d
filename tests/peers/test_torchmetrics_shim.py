"""``fastir.torchmetrics``: torchmetrics' retrieval classes, their arguments and outputs,
equal to torchmetrics' on batches that span updates, with empty queries, ignored rows and
every aggregation."""

import numpy as np
import pytest

pytestmark = pytest.mark.one_engine
torch = pytest.importorskip("torch")
TM = pytest.importorskip("torchmetrics.retrieval")
import fastir.torchmetrics as FM  # noqa: E402

CLASSES = ["RetrievalMAP", "RetrievalMRR", "RetrievalNormalizedDCG", "RetrievalPrecision",
           "RetrievalRecall", "RetrievalHitRate", "RetrievalRPrecision", "RetrievalFallOut"]
TOP_K = {"RetrievalRPrecision": []}


def batches(seed, n=600, n_queries=60):
    """Tie-free scores (some <= 0), binary and graded targets, indexes over several
    updates; query 3 has no relevant row, query 5 no non-relevant one."""
    g = torch.Generator().manual_seed(seed)
    preds = torch.randperm(n, generator=g).float() / n - 0.2
    target = torch.randint(0, 2, (n,), generator=g)
    graded = torch.randint(0, 4, (n,), generator=g)
    indexes = torch.randint(0, n_queries, (n,), generator=g)
    target[indexes == 3], graded[indexes == 3], target[indexes == 5] = 0, 0, 1
    return preds, target, graded, indexes


def arguments(name):
    ks = TOP_K.get(name, [{"top_k": 3}, {"top_k": 1000}])
    extra = [{"adaptive_k": True, "top_k": 12}] if name == "RetrievalPrecision" else []
    return [{}] + ks + extra + [
        {"empty_target_action": "skip", "aggregation": "median"},
        {"empty_target_action": "pos", "aggregation": "min"},
        {"empty_target_action": "neg", "aggregation": "max"},
        {"aggregation": lambda values, dim=None: values.sum()}]


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("seed", [0, 1])
def test_equal_to_torchmetrics(name, seed):
    preds, target, graded, indexes = batches(seed)
    labels = graded if name == "RetrievalNormalizedDCG" else target
    for kwargs in arguments(name):
        theirs, ours = getattr(TM, name)(**kwargs), getattr(FM, name)(**kwargs)
        for lo in range(0, len(preds), 150):  # (a query's rows span updates)
            part = slice(lo, lo + 150)
            batch = [theirs(preds[part], labels[part], indexes=indexes[part]),
                     ours(preds[part], labels[part], indexes=indexes[part])]
            assert batch[1].dtype == batch[0].dtype and batch[1].shape == ()
            assert batch[1].item() == pytest.approx(batch[0].item(), rel=1e-6, abs=1e-6), kwargs
        got, want = ours.compute(), theirs.compute()
        assert got.dtype == want.dtype == torch.float32
        assert got.item() == pytest.approx(want.item(), rel=1e-6, abs=1e-6), (name, kwargs)
        ours.reset()
        assert ours.compute().item() == 0.0


def test_ignore_index_and_float64_predictions():
    preds, target, _, indexes = batches(2)
    target = target.clone()
    target[indexes == 7] = -100
    for name in CLASSES + ["RetrievalAUROC"]:
        theirs = getattr(TM, name)(ignore_index=-100)
        ours = getattr(FM, name)(ignore_index=-100)
        want = theirs(preds.double(), target, indexes=indexes)  # (torchmetrics: float32)
        assert ours(preds.double(), target, indexes=indexes).item() == \
            pytest.approx(want.item(), abs=1e-6), name
    for name in ("RetrievalPrecisionRecallCurve", "RetrievalRecallAtFixedPrecision"):
        theirs = getattr(TM, name)(ignore_index=-100, max_k=12)
        ours = getattr(FM, name)(ignore_index=-100, max_k=12)
        want = theirs(preds.double(), target, indexes=indexes)
        got = ours(preds.double(), target, indexes=indexes)
        for mine, peer in zip(got, want):
            assert torch.allclose(mine.double(), peer.double(), atol=1e-6), name


@pytest.mark.parametrize("make, message", [
    (lambda: FM.RetrievalMAP(empty_target_action="maybe"), "empty_target_action"),
    (lambda: FM.RetrievalMAP(ignore_index=1.5), "ignore_index"),
    (lambda: FM.RetrievalMAP(aggregation="mode"), "aggregation"),
    (lambda: FM.RetrievalMAP(top_k=0), "top_k"),
    (lambda: FM.RetrievalPrecision(adaptive_k=1), "adaptive_k"),
])
def test_bad_arguments_as_torchmetrics_refuses_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_inputs_and_empty_queries_as_torchmetrics():
    metric = FM.RetrievalMRR(empty_target_action="error")
    with pytest.raises(ValueError, match="must be of the same shape"):
        metric.update(torch.rand(3), torch.tensor([0, 1]), torch.tensor([0, 0, 0]))
    with pytest.raises(ValueError, match="long integers"):
        metric.update(torch.rand(2), torch.tensor([0, 1]), torch.tensor([0.0, 0.0]))
    with pytest.raises(ValueError, match="binary"):
        metric.update(torch.rand(2), torch.tensor([0, 2]), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="indexes"):
        metric.update(torch.rand(2), torch.tensor([0, 1]), None)
    metric.update(torch.rand(2), torch.tensor([0, 0]), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="no positive target"):
        metric.compute()
    fall_out = FM.RetrievalFallOut(empty_target_action="error")
    fall_out.update(torch.rand(2), torch.tensor([1, 1]), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="no negative target"):
        fall_out.compute()
    assert FM.RetrievalNormalizedDCG().to("cpu")(
        torch.tensor([0.2, 0.9]), torch.tensor([3, 1]), indexes=torch.tensor([0, 0])).item() \
        == pytest.approx(TM.RetrievalNormalizedDCG()(
            torch.tensor([0.2, 0.9]), torch.tensor([3, 1]),
            indexes=torch.tensor([0, 0])).item())


def test_numpy_inputs_too():
    preds, target, _, indexes = batches(3)
    got = FM.RetrievalMAP(top_k=5)(preds.numpy(), target.numpy(), indexes=indexes.numpy())
    want = TM.RetrievalMAP(top_k=5)(preds, target, indexes=indexes)
    assert isinstance(got, torch.Tensor) and got.item() == pytest.approx(want.item(), 1e-6)
    assert np.isfinite(got.item())


def test_auroc_equal_to_torchmetrics():
    """Scores in [0, 1], logits (a sigmoid first) and ties (without ``top_k``: torch's topk
    leaves open which tied rows it keeps), each on its own draw (torchmetrics' AUROC is slow),
    with ``top_k``, ``max_fpr``, every empty-target action and aggregation."""
    for seed, kind in enumerate(("scores", "logits", "tied")):
        preds, target, _, indexes = batches(seed)
        scores = {"scores": preds, "logits": preds * 6 - 2,  # (outside [0, 1]: logits)
                  "tied": torch.round(preds * 8) / 8}[kind]
        for kwargs in ([{}, {"top_k": 5}, {"max_fpr": 0.3}, {"max_fpr": 0.05, "top_k": 12},
                        {"max_fpr": 1.0}] + arguments("RetrievalAUROC")[3:]):
            if kind == "tied" and "top_k" in kwargs:
                continue
            theirs, ours = TM.RetrievalAUROC(**kwargs), FM.RetrievalAUROC(**kwargs)
            for lo in range(0, len(scores), 200):
                part = slice(lo, lo + 200)
                want = theirs(scores[part], target[part], indexes=indexes[part])
                got = ours(scores[part], target[part], indexes=indexes[part])
                assert got.dtype == want.dtype
                assert got.item() == pytest.approx(want.item(), rel=1e-6, abs=1e-6), kwargs
            assert ours.compute().item() == pytest.approx(theirs.compute().item(),
                                                          rel=1e-6, abs=1e-6), kwargs


def curve_arguments():
    return [{}, {"max_k": 5}, {"max_k": 40, "adaptive_k": True}, {"adaptive_k": True},
            {"empty_target_action": "skip", "aggregation": "median"},
            {"empty_target_action": "pos", "aggregation": "min", "max_k": 7},
            {"empty_target_action": "neg", "aggregation": "max"},
            {"aggregation": lambda values, dim=None: values.sum(dim=dim), "max_k": 9}]


@pytest.mark.parametrize("seed", [0, 1])
def test_precision_recall_curve_equal_to_torchmetrics(seed):
    preds, target, _, indexes = batches(seed)
    for kwargs in curve_arguments():
        theirs = TM.RetrievalPrecisionRecallCurve(**kwargs)
        ours = FM.RetrievalPrecisionRecallCurve(**kwargs)
        for lo in range(0, len(preds), 300):
            part = slice(lo, lo + 300)
            batch = [theirs(preds[part], target[part], indexes=indexes[part]),
                     ours(preds[part], target[part], indexes=indexes[part])]
            for want, got in zip(*batch):
                assert got.dtype == want.dtype and got.shape == want.shape, kwargs
                assert torch.allclose(got, want, rtol=1e-6, atol=1e-6), kwargs
        for want, got in zip(theirs.compute(), ours.compute()):
            assert got.dtype == want.dtype, kwargs
            assert torch.allclose(got, want, rtol=1e-6, atol=1e-6), kwargs


@pytest.mark.parametrize("min_precision", [0.0, 0.3, 0.5, 0.9, 1.0])
def test_recall_at_fixed_precision_equal_to_torchmetrics(min_precision):
    preds, target, _, indexes = batches(4)
    for kwargs in curve_arguments()[:3] + [{"empty_target_action": "skip"}]:
        theirs = TM.RetrievalRecallAtFixedPrecision(min_precision=min_precision, **kwargs)
        ours = FM.RetrievalRecallAtFixedPrecision(min_precision=min_precision, **kwargs)
        want = theirs(preds, target, indexes=indexes)
        got = ours(preds, target, indexes=indexes)
        assert got[0].item() == pytest.approx(want[0].item(), abs=1e-6), kwargs
        assert got[1].item() == want[1].item() and got[1].dtype == want[1].dtype, kwargs
        assert got[0].dtype == want[0].dtype


@pytest.mark.parametrize("make, message", [
    (lambda: FM.RetrievalAUROC(max_fpr=1), "max_fpr"),
    (lambda: FM.RetrievalAUROC(max_fpr=1.5), "max_fpr"),
    (lambda: FM.RetrievalAUROC(top_k=-1), "top_k"),
    (lambda: FM.RetrievalPrecisionRecallCurve(max_k=0), "max_k"),
    (lambda: FM.RetrievalPrecisionRecallCurve(adaptive_k="yes"), "adaptive_k"),
    (lambda: FM.RetrievalRecallAtFixedPrecision(min_precision=1), "min_precision"),
    (lambda: FM.RetrievalRecallAtFixedPrecision(min_precision=1.5), "min_precision"),
])
def test_bad_curve_arguments_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_curve_of_a_query_without_positives_can_be_an_error():
    curve = FM.RetrievalPrecisionRecallCurve(empty_target_action="error")
    curve.update(torch.rand(3), torch.tensor([0, 0, 0]), torch.tensor([0, 0, 0]))
    with pytest.raises(ValueError, match="no positive target"):
        curve.compute()


def test_auroc_kernel_as_python_equals_compiled():
    from fastir import _jit
    from fastir.loops import roc

    preds, target, _, indexes = batches(5)
    scores = torch.round(preds * 6) / 3  # (ties, and logits)
    order, bounds = roc.ranked_groups(scores.double().numpy(), indexes.numpy())
    args = (scores.double().numpy()[order], target.double().numpy()[order], bounds)
    for kwargs in ({}, {"top_k": 7, "max_fpr": 0.4}, {"max_fpr": 0.2}):
        with _jit.forced("python"):
            python = roc.auroc(*args, **kwargs)
        with _jit.forced("numba"):
            compiled = roc.auroc(*args, **kwargs)
        assert np.array_equal(python, compiled) and (python > 0).any()
