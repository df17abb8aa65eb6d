"""Arrays, dicts and frames as a careless or hostile user hands them over: one clear error
naming the argument, or the naive reference's values on what they hold."""

import struct
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from checks import NAMES, cases, same_as_naive, useful
from hypothesis import given
from hypothesis import strategies as st

import fastir
from fastir.model import values

ODD_ARRAYS = st.sampled_from([
    np.array([1, 2, 3]), np.array(["a", "b", "c"]), np.array([b"a", b"b", b"c"]),
    np.array([1.0, 2.0, np.nan]), np.array([1.0, np.inf, 3.0]), np.array([True, False, True]),
    np.array([[1, 2, 3]]), np.array(5), np.array([1, 2]), np.array([None, "a", "b"], dtype=object),
    np.array([2**40, 1, 2]), np.array([2**64 - 1, 1, 2], dtype=np.uint64), np.zeros(0),
    np.array([1.5, 2.0, 3.0]), np.array(["", "x", "é"]), np.array([1, "a", 2], dtype=object),
    np.array([-(2**63), 0, 1]), np.array([1 + 2j, 0, 1]),
])


@cases(300)
@given(ODD_ARRAYS, ODD_ARRAYS, ODD_ARRAYS, st.booleans())
def test_arrays_give_a_clear_error_or_the_naive_value(qids, docs, values, as_qrels):
    build = fastir.Qrels.from_arrays if as_qrels else fastir.Run.from_arrays
    try:
        made = build(qids, docs, values)
    except fastir.InputError as exc:
        useful(exc, "query_ids", "doc_ids", "label", "score")  # (a value: its row)
        return
    other = ({q: {"x": 1} for q in made.to_dict()} if not as_qrels else
             {q: {d: 1.0 for d in judged} for q, judged in made.to_dict().items()})
    qrels, run = (made.to_dict(), other) if as_qrels else (other, made.to_dict())
    try:
        res = fastir.evaluate(made if as_qrels else qrels, made if not as_qrels else run, NAMES)
    except fastir.InputError as exc:  # a doc twice in a query
        useful(exc, "twice")
        return
    same_as_naive(qrels, run, res)


ODD_VALUES = st.sampled_from([1, 0, -1, 2.0, 2.5, float("nan"), float("inf"), None, "1", True,
                              [1], {"a": 1}, 2**40, np.int64(3), np.float32(0.5)])


ODD_KEYS = st.sampled_from(["q1", "q2", 1, 2, b"q1", None, 1.5, ("a",), ""])


@cases(300)
@given(st.dictionaries(ODD_KEYS, st.dictionaries(ODD_KEYS, ODD_VALUES, max_size=4)
                       | ODD_VALUES, max_size=3),
       st.dictionaries(ODD_KEYS, st.dictionaries(ODD_KEYS, ODD_VALUES, max_size=4)
                       | ODD_VALUES, max_size=3))
def test_dicts_give_a_clear_error_or_the_naive_value(qrels, run):
    try:
        res = fastir.evaluate(qrels, run, NAMES)
    except fastir.InputError as exc:
        useful(exc, "qrels dict", "run dict")
        return
    if isinstance(res, fastir.ResultsByRun):  # {name: {query: {doc: score}}}: several runs
        for name, results in res.items():
            same_as_naive(qrels, run[name], results)
        return
    same_as_naive(qrels, run, res)


SCORES = st.sampled_from([0.0, 1.0, 0, 1, 2, 0.5, -1.5, True, False, np.bool_(True),
                          np.float32(1.0), np.int64(0), float("nan"), float("inf"), 10**400,
                          "1", None, 1 + 2j, np.complex128(1), Fraction(1, 3), Decimal("0.25")])


@cases(300)
@given(st.lists(SCORES, max_size=8))
def test_scores_are_packed_as_the_array_module_reads_them(scores):
    """A list of scores packed by ``struct`` (:func:`values._packed_doubles`) gives the doubles
    ``array("d")`` gives, and refuses what it refuses (then the check names the row)."""
    try:
        expected = np.frombuffer(values._c_doubles(scores), dtype=np.float64)
    except (TypeError, OverflowError):
        expected = None
    try:
        packed = values._packed_doubles(scores)
    except (TypeError, OverflowError, struct.error):
        packed = None
    assert (packed is None) == (expected is None)
    assert packed is None or np.array_equal(packed, expected, equal_nan=True)


@pytest.mark.one_engine
def test_scores_beyond_a_packing_chunk():
    n = values._PACK_CHUNK + 3
    scores = [i / 7 for i in range(n)]
    assert np.array_equal(values._packed_doubles(scores), np.array(scores))
    with pytest.raises(fastir.InputError, match=f"row {n - 1}.*'x' is not a number"):
        values.run_scores(scores[:-1] + ["x"], "run", lambda i: f"row {i}")


@cases(100)
@given(st.sampled_from(["query_id", "qid", "doc_id"]), ODD_ARRAYS, ODD_ARRAYS)
def test_frames_give_a_clear_error(column, docs, values):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({column: ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"]})
    if docs.shape == (3,):
        frame["doc_id"] = docs
    if values.shape == (3,):
        frame["score"] = values
    try:
        run = fastir.Run.from_pandas(frame)
    except fastir.InputError as exc:
        useful(exc, "run frame")
        return
    assert len(run) == 3


# -- numbers beyond the columns ------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("qrels, run, names", [
    ({10**30: {"a": 1}}, {10**30: {"a": 1.0}}, ["64 bits"]),
    ({"q": {"a": 1, "b": 0}}, {"q": {"a": 10**400}}, ["not finite", "'a'"]),
])
def test_numbers_beyond_the_columns_are_refused(qrels, run, names):
    with pytest.raises(ValueError) as info:
        fastir.evaluate(qrels, run, ["AP"])
    useful(info.value, *names)
