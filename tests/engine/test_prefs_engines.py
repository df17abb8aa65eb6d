"""The Python variants of the preference judgments' kernels agree with the kernels (the
scanner's field spans, each query's distinct judged documents, the positions of the join),
and the preference kernel's values with Python's, bit for bit."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import _jit
from fastir.io import _scan
from fastir.model import prefs as prefs_model
from fastir.model.prefs_join import join_prefs
from fastir.options import Options

DOCS = st.sampled_from(["d1", "d10", "d2", "D3", "é", "e#5", "7", "70", "x"])
LINES = st.lists(st.tuples(st.sampled_from(["q1", "q2", "10"]), st.sampled_from(["u1", "u2"]),
                           st.sampled_from(["s1", "s2"]), DOCS,
                           st.sampled_from([0.0, 1.0, 2.0, 0.5])), min_size=1, max_size=25)
RUN = st.dictionaries(st.sampled_from(["q1", "q2", "10", "q3"]), st.dictionaries(
    DOCS, st.sampled_from([0.0, 1.0, 0.5, -2.0]), max_size=8), max_size=4)


def _pair(kernel):
    entry = kernel._fastir_entry
    assert entry.python is not entry.source
    return entry.python, _jit.compiled(kernel)


def _prefs(lines):
    return fastir.Prefs.from_arrays(*[[line[k] for line in lines] for k in range(5)])


@settings(max_examples=60, deadline=None)
@given(LINES, st.sampled_from([" ", "\t", "  \t"]), st.booleans())
def test_field_spans_variant_matches_its_kernel(lines, blank, comments):
    text = "".join(f"{blank}{q}{blank}{g} {s}\t{d} {v}\n" + ("# note\n\n" if comments else "")
                   for q, g, s, d, v in lines)
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    fields = np.array([1, 2, 3], dtype=np.int64)
    py, nb = _pair(_scan.field_spans)
    assert np.array_equal(py(buf, len(lines), fields), nb(buf, len(lines), fields))


@settings(max_examples=60, deadline=None)
@given(LINES)
def test_judged_docs_variant_matches_its_kernel(lines):
    prefs = _prefs(lines)
    py, nb = _pair(prefs_model._judged_docs)
    args = (_jit.chunk_bounds(np.diff(prefs.indptr), 2), prefs.indptr, prefs.doc_ids.args())
    a, b = py(*args), nb(*args)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


@settings(max_examples=80, deadline=None)
@given(LINES, RUN, st.sampled_from([None, 0, 1, 3]))
def test_positions_and_values_agree_in_both_engines(lines, run, max_docs):
    prefs = _prefs(lines)
    out = []
    for mode in ("python", "numba"):
        with _jit.forced(mode):
            joined = join_prefs(prefs.judged().qrels, fastir.Run.from_dict(run),
                                Options(max_docs=max_docs))
            try:
                values = fastir.evaluate(prefs, run, ["all_prefs"], max_docs=max_docs).values
            except fastir.InputError as exc:
                values = str(exc)
            out.append((joined.position.tolist(), joined.n_retrieved.tolist(),
                        joined.duplicate.tolist(), np.asarray(values).tolist()))
    assert out[0] == out[1]
