"""Python and compiled kernels agree bit for bit; the tiering between them works."""

import json
import math
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest
from conftest import qrels_and_runs
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import _jit
from fastir.analysis import stats_kernels
from fastir.measures import kernels, user
from fastir.model import dicts, ids, join, ranking

NAMES = ["AP", "nDCG@10", "nDCG", "P@5", "R@10", "RR", "Bpref", "IPrec@0.5", "GMAP", "infAP",
         "nDCGRel", "RnDCG", "G", "RBP", "Unj@5", "SetF", "IPrecAvg", "NumRelRet"]


def both(function, *args, **kwargs):
    """``function`` run with every kernel as Python, then compiled: (result or the error
    message) of each."""
    out = []
    for mode in ("python", "numba"):
        with _jit.forced(mode):
            try:
                out.append(function(*args, **kwargs))
            except fastir.InputError as exc:
                out.append(f"InputError: {exc}")
    return out


def test_the_engine_fixture_is_in_effect(engine):
    assert _jit.python_mode() == (engine == "python")


@settings(max_examples=150, deadline=None)
@given(qrels_and_runs(), st.sampled_from(["zero", "skip"]), st.integers(0, 2),
       st.one_of(st.none(), st.integers(0, 5)), st.booleans())
def test_python_and_compiled_values_are_identical(data, missing, level, max_docs, judged):
    qrels, run = data
    py, nb = both(lambda: fastir.evaluate(qrels, run, NAMES, missing=missing,
                                          relevance_level=level, max_docs=max_docs,
                                          judged_only=judged))
    assert py.query_ids == nb.query_ids
    assert np.array_equal(py.values, nb.values)  # bit for bit (no NaN among these)
    assert py.mean == nb.mean


# -- files: the Python reader against the scanner -------------------------------------------
FIELD = st.sampled_from([b"q1", b"q2", b"10", b"7", b"d1", b"D#2", b"0", b"007", b"123",
                         b"Q0", b"x_y", b"\xc3\xa9"])
NUMBER = st.sampled_from([b"1", b"-2", b"+3", b"0.5", b".5", b"5.", b"1e3", b"-1.5E-2", b"0",
                          b"1_000", b"nan", b"inf", b"1.5abc", b"abc", b"99999999999",
                          b"123456789012345678901234", b"1e400", b"2147483648", b"-2147483648"])
BLANK = st.sampled_from([b" ", b"\t", b"  ", b" \r", b"\x0b"])


@st.composite
def run_files(draw, n_fields=6):
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            lines.append(draw(st.sampled_from([b"", b"# comment", b"  #x y", b"   "])))
            continue
        count = n_fields if kind > 2 else draw(st.integers(1, n_fields + 2))
        fields = [draw(FIELD) for _ in range(count)]
        value_at = {6: 4, 3: 2, 4: 3}[n_fields]
        if value_at < count:
            fields[value_at] = draw(NUMBER)
        sep = draw(BLANK)
        lines.append(sep.join(fields) + (draw(BLANK) if draw(st.booleans()) else b""))
    return b"\n".join(lines) + (b"\n" if draw(st.booleans()) else b"")


def _run_arrays(path):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        run = fastir.read_run(path)  # three fields: ranks or scores, as the third column says
    return (run.query_ids.tolist(), run.starts.tolist(), run.stops.tolist(),
            run.doc_ids.tolist(), run.doc_ids.is_int, run.scores.tolist(), run.name,
            [str(w.message) for w in said])


def _qrels_arrays(path):
    qrels = fastir.read_qrels(path)
    return (qrels.query_ids.tolist(), qrels.indptr.tolist(), qrels.doc_ids.tolist(),
            qrels.doc_ids.is_int, qrels.labels.tolist())


def _same_reading(py, nb):
    if isinstance(py, str) or isinstance(nb, str):  # an error: the same kind, the same file
        assert isinstance(py, str) and isinstance(nb, str), (py, nb)
        assert py.split(":")[0] == nb.split(":")[0]
    else:
        assert py == nb


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([6, 3]), st.data())
def test_python_reader_reads_runs_as_the_scanner(tmp_path_factory, n_fields, data):
    text = data.draw(run_files(n_fields))
    path = tmp_path_factory.mktemp("run") / "run.txt"
    path.write_bytes(text)
    _same_reading(*both(_run_arrays, path))


@settings(max_examples=200, deadline=None)
@given(run_files(4))
def test_python_reader_reads_qrels_as_the_scanner(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    path.write_bytes(text)
    _same_reading(*both(_qrels_arrays, path))


@pytest.mark.parametrize("text, message", [
    (b"q Q0 d 1 2.0 t\nq Q0 e 1\n", ":2: malformed line: expected 6 fields, found 4"),
    (b"q Q0 d 1 2.0 t\nq Q0 e 1 1_000 t\n", ":2: score '1_000' is not a number"),
    (b"q Q0 d 1 inf t\n", ":1: score 'inf' is not a finite number"),
])
def test_one_bad_line_gives_the_same_message(tmp_path, text, message):
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    py, nb = both(_run_arrays, path)
    assert py == nb and py.startswith("InputError:") and message in py


# -- each Python variant against its kernel -------------------------------------------------
TEXT = st.lists(st.sampled_from([b"", b"0", b"12", b"012", b"a", b"ab", b"b", b"\xff", b"10",
                                 b"9", b"-1", b"123456789012345678901"]), max_size=20)
INTS = st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-20, 20), max_size=20)


def _column(items):
    return ids.Ids.from_strings(items) if not items or isinstance(items[0], bytes) else \
        ids.Ids(values=np.array(items, dtype=np.int64))


def _kernel_pair(kernel):
    entry = kernel._fastir_entry
    assert entry.python is not entry.source
    return entry.python, _jit.compiled(kernel)


@settings(max_examples=100, deadline=None)
@given(TEXT | INTS)
def test_id_variants_match_their_kernels(items):
    col = _column(items)
    for kernel, args in [(ranking.sort_ids, (col.args(),)),
                         (ids._intern_int_blocks if col.is_int else ids._intern_text_blocks,
                          (col.values, ids.HASH_KEY) if col.is_int
                         else (col.data, col.offsets, ids.HASH_KEY))]:
        py, nb = _kernel_pair(kernel)
        a, b = py(*args), nb(*args)
        a, b = (a, b) if isinstance(a, tuple) else ((a,), (b,))
        assert all(np.array_equal(x, y) for x, y in zip(a, b)), kernel.__name__
    if not col.is_int:
        py, nb = _kernel_pair(ids._canonical_ints)
        (v1, ok1), (v2, ok2) = py(col.data, col.offsets), nb(col.data, col.offsets)
        assert ok1 == ok2 and (not ok1 or np.array_equal(v1, v2))
        index = np.arange(len(items))[::-1].copy()
        py, nb = _kernel_pair(ids._gather_bytes)
        for a, b in zip(py(col.data, col.offsets, index), nb(col.data, col.offsets, index)):
            assert np.array_equal(a, b)
        py, nb = _kernel_pair(dicts._cut_at_nuls)  # (a dict's doc ids, joined at NULs)
        joined = np.frombuffer(b"\0".join(items), dtype=np.uint8)
        for n_rows in (len(items), len(items) + 1, max(len(items) - 1, 0)):
            (d1, o1), (d2, o2) = py(joined, n_rows), nb(joined, n_rows)
            assert np.array_equal(o1, o2) and np.array_equal(d1[:o1[-1] if len(o1) else 0],
                                                             d2[:o2[-1] if len(o2) else 0])
            if n_rows == len(items) and items:
                assert ids.Ids(d1, o1).tolist() == col.tolist()
    for i in range(len(items)):
        for j in range(len(items)):
            if col.is_int:
                py, nb = _kernel_pair(ids.int_str_cmp)
                args = (col.values[i], col.values[j])
            else:
                py, nb = _kernel_pair(ids.bytes_cmp)
                o = col.offsets
                args = (col.data, o[i], o[i + 1], col.data, o[j], o[j + 1])
            assert py(*args) == nb(*args)


@settings(max_examples=100, deadline=None)
@given(qrels_and_runs(), st.booleans())
def test_join_variant_matches_its_kernel(data, candidates):
    qrels, run = data
    q, r = fastir.Qrels.from_dict(qrels), fastir.Run.from_dict(run)

    def joined():
        j = join.join(q, r, as_candidates=candidates)
        extra = (j.rows.tolist(), j.tie.tolist()) if candidates else ()
        return j.indptr.tolist(), j.labels.tolist(), j.qrels_query.tolist(), extra

    py, nb = both(joined)
    assert py == nb


@settings(max_examples=100, deadline=None)
@given(qrels_and_runs())
def test_run_ranking_variant_matches_its_kernel(data):
    run = fastir.Run.from_dict(data[1])
    args = (run.starts, run.stops, run.scores, run.doc_ids.args())
    py, nb = _kernel_pair(ranking._rank_run)
    assert np.array_equal(py(*args), nb(*args))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.integers(1, 6), st.sampled_from(["shuffled", "by score",
                                                                  "ranked"]),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_long_rankings_rank_as_the_python_variants(n, n_scores, given_order, ints, seed):
    """Rankings long enough for the sort's merges (it insertion-sorts runs of 16), with many
    ties, given shuffled, by score only, or ranked: the compiled sort orders as the Python
    variants' sort keys do, by doc ids and by tie positions."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, n_scores, n).astype(np.float64)
    docs = rng.permutation(20 * n + 1)[:n]
    names = np.array([f"d{d}" for d in docs.tolist()], dtype=object)
    if given_order != "shuffled":
        by = [(-s, f"{d}" if ints else name) for s, d, name in zip(scores, docs, names)]
        order = sorted(range(n), key=by.__getitem__)  # ties: docno ascending (not ranked)
        if given_order == "ranked":
            order = sorted(range(n), key=lambda i: (scores[i], by[i][1]), reverse=True)
        scores, docs, names = scores[order], docs[order], names[order]
    run = fastir.Run.from_arrays(np.zeros(n, dtype=np.int64), docs if ints else names, scores)
    args = (run.starts, run.stops, run.scores, run.doc_ids.args())
    py, nb = _kernel_pair(ranking._rank_run)
    assert np.array_equal(py(*args), nb(*args))
    bounds = np.array([0, n // 3, n], dtype=np.int64)
    args = (np.array([0, 1, 2], dtype=np.int64), bounds, run.scores, run.doc_ids.args())
    py, nb = _kernel_pair(ranking.rank_segments)
    assert np.array_equal(py(*args), nb(*args))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), max_size=5), st.data())
def test_segment_ranking_variant_matches_its_kernel(lengths, data):
    n = sum(lengths)
    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, -0.0, 0.5, 1.0, -2.0]),
                                         min_size=n, max_size=n)))
    docs = data.draw(st.permutations([b"d1", b"d10", b"d2", b"e", b"D3", b"9", b"10", b"",
                                      b"\xff", b"a", b"ab", b"b", b"0", b"012", b"12",
                                      b"-1", b"d3", b"d4", b"d5", b"d6", b"d7", b"d8", b"d9",
                                      b"z", b"y", b"x", b"w", b"v", b"u", b"t"]))[:n]
    bounds = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    chunks = np.array([0, len(lengths) // 2, len(lengths)], dtype=np.int64)
    args = (chunks, bounds, scores, ids.Ids.from_strings(docs).args())
    py, nb = _kernel_pair(ranking.rank_segments)
    assert np.array_equal(py(*args), nb(*args))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=4), st.data())
def test_long_segment_ranking_variant_matches_its_kernel(lengths, data):
    """Segments long enough for the kernel's radix sort: scores of every sign and size,
    -0.0 and 0.0, many ties (broken by doc id), integer and text doc ids."""
    n = sum(lengths)
    pool = data.draw(st.lists(st.floats(allow_nan=False), min_size=1, max_size=8))
    pool += [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, -1e308, 0.1, 0.30000000000000004]
    scores = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)))
    ints = data.draw(st.booleans())
    docs = np.array(data.draw(st.permutations(range(n))))
    column = ids.Ids(values=docs) if ints else ids.Ids.from_strings([f"d{d}" for d in docs])
    bounds = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    chunks = np.array([0, len(lengths) // 2, len(lengths)], dtype=np.int64)
    args = (chunks, bounds, scores, column.args())
    py, nb = _kernel_pair(ranking.rank_segments)
    assert np.array_equal(py(*args), nb(*args))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=6), st.booleans(), st.data())
def test_score_order_variant_matches_its_kernel_and_the_definition(lengths, sort, data):
    """What a query's scores say of its rows' order (Run.score_order: fusion reads rows
    in place by it): strictly descending, level somewhere, rising somewhere, or a NaN or
    infinity among them; the kernel, its Python variant and a naive reading agree."""
    pool = [0.0, -0.0, 1.0, -1.0, 2.5, 1e308, -1e308, 5e-324, np.inf, -np.inf, np.nan]
    n = sum(lengths)
    scores = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n)),
                      dtype=np.float64)
    bounds = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    if sort:  # (so that descending and level queries come often)
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            scores[lo:hi] = -np.sort(-scores[lo:hi])
    naive = []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        row = scores[lo:hi].tolist()
        pairs = list(zip(row, row[1:]))
        naive.append(ranking.NOT_FINITE if not all(map(math.isfinite, row)) else
                     ranking.RISING if any(b > a for a, b in pairs) else
                     ranking.LEVEL if any(b == a for a, b in pairs) else ranking.DESCENDING)
    chunks = np.array([0, len(lengths) // 2, len(lengths)], dtype=np.int64)
    for kernel in _kernel_pair(ranking.score_order):
        out = np.full(len(lengths), 99, dtype=np.uint8)
        kernel(chunks, bounds[:-1], bounds[1:], scores, out)
        assert out.tolist() == naive


@settings(max_examples=50, deadline=None)
@given(st.lists(qrels_and_runs(), min_size=2, max_size=3), st.sampled_from([None, 1, 3]))
def test_pairing_variant_matches_its_kernel(drawn, depth):
    """The fusion's pairing of the runs' docs per query (fastir.analysis.fusion.pairs)."""
    from fastir.analysis.fusion.pairs import Pairs

    runs = [fastir.Run.from_dict(run) for _, run in drawn]

    def paired():
        p = Pairs(runs, depth)
        return [a.tolist() for a in (p.source_rows(), p.sources.in_place, p.local_pair,
                                     p.pair_bounds, p.pair_src)]

    py, nb = both(paired)
    assert py == nb


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(0, 6), st.data())
def test_summaries_variant_matches_its_kernel(n_runs, n_queries, data):
    values = np.array(data.draw(st.lists(
        st.sampled_from([0.0, -0.0, 1e-7, 0.1, 0.3, 1 / 3, 2.0, -1.5, 1e300]),
        min_size=n_runs * n_queries * 4, max_size=n_runs * n_queries * 4))).reshape(
        n_runs, n_queries, 4)
    how = np.array([0, 1, 2, 3], dtype=np.int64)
    py, nb = _kernel_pair(kernels.summaries)
    a, b = py(values, how), nb(values, how)
    assert np.array_equal(a, b, equal_nan=True)
    assert np.array_equal(np.signbit(a), np.signbit(b))  # -0.0 sums as the loop sums it


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12), st.integers(0, 7), st.integers(1, 3), st.integers(2, 4),
       st.integers(0, 2**32 - 1))
def test_resampling_variants_match_their_kernels(n_resamples, n_queries, width, n_systems,
                                                 seed):
    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, 1e-7, 0.1, 1 / 3, -0.5, 1.0, 1e300])
    diffs = rng.choice(pool, size=(n_queries, width))
    values = rng.choice(pool, size=(n_queries, n_systems, width))
    cases = [(stats_kernels.sign_flip_sums,
              (diffs, rng.integers(0, 2, (n_resamples, n_queries)).astype(np.int8))),
             (stats_kernels.resample_sums,
              (diffs, rng.integers(0, max(n_queries, 1), (n_resamples, n_queries)))),
             (stats_kernels.permuted_ranges,
              (values, rng.random((n_resamples, n_queries, n_systems - 1))))]
    for kernel, args in cases:
        py, nb = _kernel_pair(kernel)
        a, b = np.full((n_resamples, width), np.nan), np.full((n_resamples, width), np.nan)
        py(*args, a)
        nb(*args, b)
        assert np.array_equal(a, b, equal_nan=True), kernel.__name__
        assert np.array_equal(np.signbit(a), np.signbit(b)), kernel.__name__


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 9))
def test_world_labels_variant_matches_its_kernel(seed, n_queries, n_worlds):
    """Each world's ranking its query's codes, a judged row's code made the world's label
    (``fastir.worlds.world_labels``), on drawn rankings, judgments and worlds."""
    from fastir import worlds

    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 6, n_queries)
    judged = rng.integers(0, 4, n_queries)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    qrels_start = np.cumsum(judged) - judged
    codes = np.concatenate([np.where(rng.random(n) < 0.5, qrels_start[q] +
                                     rng.integers(0, max(judged[q], 1), n), -1 - rng.integers(
                                         0, 3, n)) if judged[q] else -1 - rng.integers(0, 3, n)
                            for q, n in enumerate(lengths)] or [np.zeros(0)]).astype(np.int32)
    query = np.sort(rng.integers(0, n_queries, n_worlds))
    world_indptr = np.concatenate(([0], np.cumsum(lengths[query])))
    label_start = np.cumsum(judged[query]) - judged[query]
    shift = label_start - qrels_start[query]
    label = rng.integers(0, 4, int(judged[query].sum())).astype(np.int32)
    cut = int(rng.integers(0, n_worlds + 1))
    chunks = np.array([0, cut, n_worlds])
    py, nb = _kernel_pair(worlds.world_labels)
    a = np.full(world_indptr[-1], 99, dtype=np.int32)
    b = a.copy()
    py(chunks, indptr, codes, world_indptr, query, shift, label, a)
    nb(chunks, indptr, codes, world_indptr, query, shift, label, b)
    assert np.array_equal(a, b)


@pytest.mark.one_engine
def test_every_python_variant_is_tested_here():
    import fastir.analysis.fusion.pairs  # noqa: F401  (every module of kernels imported,
    import fastir.io._scan  # noqa: F401               whatever ran before in this process)
    import fastir.model.prefs  # noqa: F401
    import fastir.model.prefs_join  # noqa: F401
    import fastir.worlds  # noqa: F401

    tested = {"sort_ids", "_intern_int_blocks", "_intern_text_blocks", "_canonical_ints",
              "_gather_bytes", "_cut_at_nuls", "int_str_cmp", "bytes_cmp", "_join_kernel",
              "summaries", "sign_flip_sums", "resample_sums", "permuted_ranges", "_rank_run",
              "rank_segments", "score_order", "_pair_rows", "_judged_docs",
              "_position_kernel", "field_spans", "world_labels"}  # (_pair_rows,
    # _judged_docs, _position_kernel, field_spans: test_prefs_engines.py)
    variants = {e.source.__name__ for e in _jit._registry if e.python is not e.source
                and not e.source.__module__.startswith(user.MODULE_PREFIX)}
    assert variants == tested  # (users' measure loops: tests/measures/test_user_measures.py)


# -- tiering -----------------------------------------------------------------------------
PROBE = """
import json, sys
import numpy as np
import fastir
from fastir import _jit
_jit.PYTHON_ROWS = 1000
out = {"import": "numba" in sys.modules}
fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, ["AP"])
out["small"] = "numba" in sys.modules
n = 600
run = fastir.Run.from_arrays(np.zeros(n, int), np.arange(n), np.arange(n) / n)
fastir.evaluate(fastir.Qrels.from_arrays([0], [1], [1]), run, ["AP"])
out["budget spent"] = "numba" in sys.modules
print(json.dumps(out))
"""


@pytest.mark.one_engine
def test_python_until_the_budget_is_spent_then_compiled():
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_JIT"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, check=True)
    assert json.loads(done.stdout) == {"import": False, "small": False, "budget spent": True}


LOOP_PROBE = """
import json, sys
import numpy as np
import fastir
from fastir import _jit
_jit.LOOP_PYTHON_SECONDS = 1e-9  # (any call's Python time is more)
door = sys.argv[1]
scores, labels = np.array([[0.9, 0.1, 0.5]]), np.array([[0, 1, 2]])
ev = fastir.Evaluator({"q": {"a": 1, "b": 2}}, ["AP", "nDCG@2"])
bound = ev.bind(["q", "q", "q"], ["a", "b", "c"])
calls = {"matrix": lambda: fastir.evaluate_matrix(scores, labels, ["AP", "nDCG@2"]),
         "evaluator": lambda: ev.evaluate({"q": {"a": 1.0, "c": 2.0}}),
         "bound": lambda: bound.evaluate(np.array([0.3, 0.2, 0.1]))}
seen = []
for _ in range(3):
    calls[door]()
    seen.append("numba" in sys.modules)
print(json.dumps(seen))
"""


@pytest.mark.one_engine
@pytest.mark.parametrize("door", ["matrix", "evaluator", "bound"])
def test_a_loop_runs_compiled_from_the_call_after_its_python_took_its_budget(door):
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_JIT"}
    done = subprocess.run([sys.executable, "-c", LOOP_PROBE, door], env=env,
                          capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [False, True, True]


@_jit.jit
def _twice(x):
    """A kernel of this test's own (loaded by no other test)."""
    return 2 * x


@pytest.mark.one_engine
def test_a_kernel_not_loaded_runs_as_python_until_that_costs_more_than_loading_it(
        monkeypatch):
    monkeypatch.setattr(_jit, "_FORCED_BY_ENV", None)
    entry = _twice._fastir_entry
    with _jit.forced(None), _jit.tier(10 * _jit.PYTHON_ROWS):  # (compiled work)
        monkeypatch.setattr(_jit, "KERNEL_LOAD_SECONDS", 60.0)
        for _ in range(3):  # cheaper than a minute's load: Python, counted
            assert _jit.select(_twice, 1000)(21) == 42
        assert entry.python_items == 3000 and not _jit.loaded(_jit.name_of(_twice))
        assert _jit.select(_twice, 10**12) is entry.dispatcher  # (predicted: too long)
        monkeypatch.setattr(_jit, "KERNEL_LOAD_SECONDS", 0.0)  # (the Python runs cost more)
        assert _jit.select(_twice, 1)(21) == 42 and entry.dispatcher.overloads
        monkeypatch.setattr(_jit, "KERNEL_LOAD_SECONDS", 60.0)
        assert _jit.select(_twice, 1) is entry.dispatcher  # loaded: compiled at every size
        assert entry.python_items == 3000


@pytest.mark.one_engine
def test_reading_a_large_file_loads_numba(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i // 100} Q0 d{i} 1 {i} t\n" for i in range(1000)))
    probe = ("import sys, fastir\nfrom fastir import _jit\n_jit.PYTHON_ROWS = 100\n"
             f"fastir.read_run({str(path)!r})\nprint('numba' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "FASTIR_JIT"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "True"


@_jit.helper
def _plus(x, k):
    """A helper of this test's own."""
    return x + k


@_jit.jit
def _counted(n):
    """Calls its helper with constants, then with a counter starting at 0 (which numba's
    type inference first types as the constant's literal)."""
    total = _plus(0, 1)
    i = 0
    while i < n:
        total = _plus(total, i)
        i += 1
    return total


@pytest.mark.one_engine
def test_a_helper_called_with_constants_compiles_once():
    from numba.core import types

    with _jit.forced("numba"):
        assert _jit.compiled(_counted)(4) == 1 + 0 + 1 + 2 + 3  # (compiled, or from the cache)
        helper = _plus._numba_type_.dispatcher  # (the kernels')
        typed = helper.get_call_template((types.literal(0), types.literal(1)), {})[2]
    assert typed == (types.int64, types.int64)
    assert [str(s) for s in helper.signatures] == ["(int64, int64)"]


def _run_file(path, *args, cache):
    """Run the Python file ``path`` (a file, which numba caches, not ``-c``) with ``args``
    in a fresh process whose numba cache is the folder ``cache``."""
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)))


_ENTRIES = """import sys
from fastir import _jit

@_jit.helper
def plus(x, k):
    return x + k

@_jit.jit
def twice(x):
    return plus(plus(x, 1), 1)

with _jit.forced("numba"):
    assert _jit.compiled(twice)(1) == 3 and _jit.compiled(plus)(2, 3) == 5
for function in (plus, twice):
    for result in function._numba_type_.dispatcher.overloads.values():
        code = result.library.get_llvm_str()
        print(function.__name__, result.fndesc.llvm_cpython_wrapper_name in code,
              result.fndesc.llvm_cfunc_wrapper_name in code)
"""


@pytest.mark.one_engine
def test_helpers_compile_without_a_python_entry_and_kernels_without_a_c_entry(tmp_path):
    """Kernels call helpers, Python calls kernels, nothing calls numba's C entry: a first
    run compiled both entries for every helper and kernel (a seventh of its compiling). A
    Python caller of a helper (a test) still gets one (it would jump to nowhere)."""
    (tmp_path / "entries.py").write_text(_ENTRIES)
    done = _run_file(tmp_path / "entries.py", cache=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["plus False False", "twice True False"]


_LAZY = """import sys
import numba
import numpy as np
from fastir import _jit, _lazy_emit

prange = range


@_jit.helper
def plus(x, k):
    return x + k


@_jit.pjit
def sums(values, out):
    for i in prange(len(out)):
        out[i] = plus(values[i], 1.0)


@numba.njit
def users_own(x):
    return x * 2


with _jit.forced("numba"):
    out = np.zeros(4)
    _jit.compiled(sums)(np.arange(4.0), out)
print(out.tolist(), users_own(3))
helpers = plus._numba_type_.dispatcher.overloads.values()
if sys.argv[1] == "compiled":
    [kernel] = [result.library for result in sums._numba_type_.dispatcher.overloads.values()]
    [helper] = [result.library for result in helpers]
    [user] = [result.library for result in users_own.overloads.values()]
    print(_lazy_emit.has_machine_code(kernel), _lazy_emit.has_machine_code(helper),
          [lib.name for lib in kernel._linking_libraries if _lazy_emit.has_machine_code(lib)],
          _lazy_emit.has_machine_code(user), "_fastir_lazy" in vars(user))
else:
    print(len(helpers))
"""


@pytest.mark.one_engine
def test_machine_code_only_for_the_kernels_and_a_users_own_numba_as_numba_does(tmp_path):
    """numba optimised and emitted a helper's code, and a parallel loop's, once alone and
    again in each library linking it: LLVM was about 45% of a first run. Now only the
    kernel's library gets machine code (its helper's and its loop's libraries none; numba's
    runtime, made before, has its own),
    computes the same, is cached and loads from the cache; a user's own numba function in
    the same process is finished as numba does."""
    (tmp_path / "lazy.py").write_text(_LAZY)
    runs = [_run_file(tmp_path / "lazy.py", run, cache=tmp_path / "cache")
            for run in ("compiled", "cached")]
    for done in runs:
        assert done.returncode == 0, done.stderr[-2000:]
    assert runs[0].stdout.splitlines() == ["[1.0, 2.0, 3.0, 4.0] 6",
                                           "True False ['nrt'] True False"]
    assert runs[1].stdout.splitlines() == ["[1.0, 2.0, 3.0, 4.0] 6", "0"]


_SHOWN = """import numpy as np
from fastir import _jit

prange = range


@_jit.pjit
def shown(values):
    for i in prange(len(values)):
        if values[i] < 0:
            print("negative", values[i])


with _jit.forced("numba"):
    _jit.compiled(shown)(np.array([1, -2, 3]))
"""


@pytest.mark.one_engine
def test_a_parallel_loop_compiled_lazily_finds_its_environment(tmp_path):
    """A parallel loop's body whose library got no machine code has its environment (what
    numba's print of a value reads) set when the kernel's library is emitted: it printed
    no value before."""
    (tmp_path / "shown.py").write_text(_SHOWN)
    done = _run_file(tmp_path / "shown.py", cache=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["negative", "-2"]


_RECURSIVE = """from fastir import _jit


@_jit.helper
def is_even(n):
    return True if n == 0 else is_odd(n - 1)


@_jit.helper
def is_odd(n):
    return False if n == 0 else is_even(n - 1)


@_jit.jit
def parity(n):
    return is_even(n)


with _jit.forced("numba"):
    print(_jit.compiled(parity)(10), _jit.compiled(parity)(7))
"""


@pytest.mark.one_engine
def test_helpers_calling_each_other_are_resolved(tmp_path):
    """Helpers that call each other (numba links the call when the callee's library is
    added to the JIT): a library with such a call is emitted at once, as numba would; left
    lazy, the kernel aborted on an unresolved symbol."""
    (tmp_path / "recursive.py").write_text(_RECURSIVE)
    done = _run_file(tmp_path / "recursive.py", cache=tmp_path)
    assert (done.returncode, done.stdout) == (0, "True False\n"), done.stderr[-2000:]


def test_numba_laid_out_otherwise_is_left_as_it_is():
    from fastir import _lazy_emit

    assert not _lazy_emit.install(types.SimpleNamespace(), object, None)


@pytest.mark.one_engine
def test_python_is_refused_a_helper_as_a_kernel():
    """The doors Python runs kernels through (select, launch) refuse a helper: compiled
    for Python it compiled anew in each process (a loop's small batches did)."""
    with pytest.raises(TypeError, match=r"_plus is a helper"):
        _jit.select(_plus)
    with pytest.raises(TypeError, match="is a helper"):
        _jit.launch(_plus, 1, 2)


@pytest.mark.one_engine
def test_a_kernel_whose_cache_cannot_be_written_runs(tmp_path):
    """ulimit -f: a compiled kernel whose cache entry cannot be written (File too large)
    runs all the same, uncached."""
    code = """from fastir import _jit
from fastir.model.join import table_size
with _jit.forced("numba"):
    print(_jit.compiled(table_size)(20))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    done = subprocess.run(["prlimit", "--fsize=1", sys.executable, "-c", code], env=env,
                          text=True, capture_output=True)
    assert (done.returncode, done.stdout) == (0, "64\n"), done.stderr[-2000:]
    assert not list(tmp_path.rglob("*.nbc"))
