"""The edges an adversarial trial found (issue 21), each a case: the right value, or one
clear error naming the argument or the file and line; never a traceback from Python's or a
library's internals, never a silently wrong number or conclusion."""

import numpy as np
import pytest
from conftest import sigint_default
from test_adversarial import useful

import fastir
from fastir.measures.common import MAX_EXP_LABEL

pytestmark = pytest.mark.one_engine

EXP_NDCG = "nDCG(dcg='exp-log2')@3"


# -- no conclusion from NaN -------------------------------------------------------------------
def _results_with(value):
    qrels = {f"q{i}": {"a": 1, "b": i % 2} for i in range(6)}
    runs = {name: {q: {"a": 1.0 + k, "b": 2.0 - k} for q in qrels}
            for k, name in enumerate(["x", "y"])}
    results = {name: fastir.evaluate(qrels, run, ["AP"]) for name, run in runs.items()}
    results["x"].values[2, 0] = value
    return results


@pytest.mark.parametrize("test", ["randomization", "bootstrap", "tukey", "t", "wilcoxon"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_compare_refuses_values_that_are_not_numbers(test, value):
    with pytest.raises(ValueError) as info:
        fastir.compare(None, _results_with(value), ["AP"], test=test, n_resamples=64)
    useful(info.value, "AP", "'x'", "q2")


@pytest.mark.parametrize("names", [[EXP_NDCG], ["DCG(dcg='exp-log2')"], ["IDCG(dcg='exp-log2')@2"]])
def test_exponential_gains_refuse_labels_that_overflow(names):
    qrels = {"q1": {"a": MAX_EXP_LABEL + 76, "b": 1}, "q2": {"a": 2}}
    run = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"a": 1.0}}
    with pytest.raises(ValueError) as info:
        fastir.evaluate(qrels, run, names)
    useful(info.value, "q1")
    assert "1024" in str(info.value) and names[0] in str(info.value)
    # one label below: the gain is finite, and so is the value
    qrels["q1"]["a"] = MAX_EXP_LABEL - 1
    assert np.isfinite(fastir.evaluate(qrels, run, names).values).all()


@pytest.mark.parametrize("ties", ["column", "average"])
def test_exponential_gains_refuse_overflowing_labels_in_dense_batches(ties):
    scores, labels = np.array([[0.5, 0.9, 0.1]]), np.array([[MAX_EXP_LABEL, 0, 2]])
    with pytest.raises(ValueError) as info:
        fastir.evaluate_matrix(scores, labels, EXP_NDCG, ties=ties)
    useful(info.value, "row 0")


def test_a_comparison_on_an_overflowing_label_says_so_instead_of_a_winner():
    qrels = {f"q{i}": {"a": 1100 if i == 0 else 1, "b": 1} for i in range(5)}
    runs = {"x": {q: {"a": 2.0, "b": 1.0} for q in qrels},
            "y": {q: {"a": 1.0, "b": 2.0} for q in qrels}}
    with pytest.raises(ValueError, match="1024 or more"):
        fastir.compare(qrels, runs, [EXP_NDCG])


# -- inputs -----------------------------------------------------------------------------------
def test_an_arrow_dictionary_holding_a_null_is_refused():
    pa = pytest.importorskip("pyarrow")
    query = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()),
                                           pa.array(["q1", None]))
    table = pa.table({"query_id": query, "doc_id": pa.array(["a", "b", "c"]),
                      "score": pa.array([1.0, 2.0, 3.0])})
    with pytest.raises(fastir.InputError) as info:
        fastir.Run.from_arrow(table)
    useful(info.value, "query_id", "row 1")
    # a null the indices never take is no id at all
    query = pa.DictionaryArray.from_arrays(pa.array([0, 2, 0], pa.int32()),
                                           pa.array(["q1", None, "q2"]))
    run = fastir.Run.from_arrow(table.set_column(0, "query_id", query))
    assert run.query_ids.tolist() == ["q1", "q2"]


def _fifo(tmp_path, name, data):
    """A named pipe fed ``data`` by a thread (as a shell's <(...) gives it)."""
    import os
    import threading

    path = tmp_path / name
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return str(path)


@pytest.mark.parametrize("compressed", [False, True])
def test_named_pipes_are_read_whole(tmp_path, data_dir, compressed):
    import gzip

    run_bytes = (data_dir / "inputs" / "results.test").read_bytes()
    qrels = str(data_dir / "inputs" / "qrels.test")
    want = fastir.evaluate(qrels, str(data_dir / "inputs" / "results.test"), ["AP"]).mean
    data = gzip.compress(run_bytes) if compressed else run_bytes
    assert fastir.evaluate(qrels, _fifo(tmp_path, "run", data), ["AP"]).mean == want
    assert fastir.evaluate_file(qrels, _fifo(tmp_path, "run2", data), ["AP"],
                                chunk_bytes=4096).mean == want
    qrels_pipe = _fifo(tmp_path, "qrels", (data_dir / "inputs" / "qrels.test").read_bytes())
    assert fastir.evaluate(qrels_pipe, str(data_dir / "inputs" / "results.test"),
                           ["AP"]).mean == want


# -- no bare OverflowError, no error from Python's internals ---------------------------------
QRELS, RUN = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 2.0}}


def test_max_docs_beyond_int64_is_no_limit():
    want = fastir.evaluate(QRELS, RUN, ["AP"]).mean
    assert fastir.evaluate(QRELS, RUN, ["AP"], max_docs=2**70).mean == want
    with pytest.raises(ValueError) as info:
        fastir.evaluate(QRELS, RUN, ["AP"], max_docs=float("nan"))
    useful(info.value, "max_docs")


@pytest.mark.parametrize("qrels, run, names", [
    ({10**30: {"a": 1}}, {10**30: {"a": 1.0}}, ["64 bits"]),
    (QRELS, {"q": {"a": 10**400}}, ["not finite", "'a'"]),
])
def test_numbers_beyond_the_columns_are_refused(qrels, run, names):
    with pytest.raises(ValueError) as info:
        fastir.evaluate(qrels, run, ["AP"])
    useful(info.value, *names)


@pytest.mark.parametrize("chunk_bytes", [float("nan"), None, 0, -3, 2.5, "64", True])
def test_chunk_bytes_must_be_a_positive_integer(data_dir, chunk_bytes):
    with pytest.raises(ValueError) as info:
        fastir.evaluate_file(QRELS, str(data_dir / "inputs" / "results.test"), ["AP"],
                             chunk_bytes=chunk_bytes)
    useful(info.value, "chunk_bytes")


def test_a_huge_chunk_reads_the_file_whole(data_dir):
    qrels, run = (str(data_dir / "inputs" / name) for name in ("qrels.test", "results.test"))
    want = fastir.evaluate(qrels, run, ["AP"]).mean
    assert fastir.evaluate_file(qrels, run, ["AP"], chunk_bytes=2**70).mean == want


@pytest.mark.parametrize("level", ["x", float("nan"), -1, 2.5, 2**70, True])
def test_relevance_level_is_checked_everywhere(level):
    calls = [lambda: fastir.evaluate(QRELS, RUN, ["AP"], relevance_level=level),
             lambda: fastir.agreement(QRELS, QRELS, relevance_level=level),
             lambda: fastir.evaluate_matrix(np.ones((1, 2)), np.ones((1, 2), int), "AP",
                                            relevance_level=level),
             lambda: fastir.MetricAccumulator(["AP"], relevance_level=level)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        useful(info.value, "relevance_level")


@pytest.mark.parametrize("measure", ["relstring", "P", "official"])
def test_agreement_ranks_systems_by_one_numeric_measure(measure):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"a": 1}}
    runs = {"x": {"q1": {"a": 1.0, "b": 2.0}}, "y": {"q1": {"a": 2.0, "b": 1.0}}}
    with pytest.raises(ValueError) as info:
        fastir.agreement(qrels, qrels, runs=runs, measure=measure)
    useful(info.value, "measure", measure)


@pytest.mark.parametrize("state", [{}, None, {"values": []}, [1, 2]])
def test_an_accumulator_state_that_is_not_one(state):
    with pytest.raises(ValueError) as info:
        fastir.MetricAccumulator.from_state(state)
    useful(info.value, "state")


def test_resamples_are_bounded():
    qrels = {f"q{i}": {"a": 1} for i in range(3)}
    runs = {"x": {q: {"a": 1.0} for q in qrels}, "y": {q: {"a": 2.0} for q in qrels}}
    with pytest.raises(ValueError) as info:
        fastir.compare(qrels, runs, ["AP"], n_resamples=10**23)
    useful(info.value, "n_resamples")


@pytest.mark.parametrize("lines, where", [
    ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 abc t\n", ":2:"),
    ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 inf t\n", ":2:"),
    ("q1 Q0 d1 1 1.5 t\n# a comment\nq1 Q0 d2\n", ":3:"),
])
def test_dask_run_files_name_the_file_and_line_of_a_bad_row(tmp_path, lines, where):
    pytest.importorskip("dask.dataframe")
    import fastir.dask

    path = tmp_path / "bad.run"
    path.write_text(lines)
    with pytest.raises(fastir.InputError) as info:
        fastir.dask.read_trec_run(str(path)).compute()
    useful(info.value, f"{path}{where}")


def test_dask_globs_matching_nothing_say_so(tmp_path):
    pytest.importorskip("dask.dataframe")
    import fastir.dask

    for paths in (str(tmp_path / "*.run"), [str(tmp_path / "absent.run")]):
        with pytest.raises(fastir.InputError) as info:
            fastir.dask.read_trec_run(paths)
        useful(info.value, str(tmp_path))


@pytest.mark.parametrize("given", ["path", "file object"])
def test_a_query_longer_than_a_chunk_is_scanned_once(tmp_path, monkeypatch, given):
    """Each block's lines are looked at once, however many blocks a query spans (it was
    rescanned whole at every block: 16 s for a 9 MB query in 100 kB chunks). A plain file
    (mapped a window at a time) looks at windows doubling in size past a long query: at
    most twice its bytes."""
    from fastir.scale import streaming

    lines = [f"q1 Q0 doc{i} {i + 1} {1 - i / 10**5:.6f} t\n" for i in range(20_000)]
    lines += [f"q2 Q0 doc{i} {i + 1} 0.5 t\n" for i in range(5)]
    path = tmp_path / "long.run"
    path.write_text("".join(lines))
    scanned = []
    scan = streaming._last_query_start

    def counting(data, end, start, qid):
        scanned.append(end - start)
        return scan(data, end, start, qid)

    monkeypatch.setattr(streaming, "_last_query_start", counting)
    qrels = {"q1": {"doc7": 1, "doc19000": 1}, "q2": {"doc3": 1}}
    with open(path, "rb") as f:
        run = str(path) if given == "path" else f
        got = fastir.evaluate_file(qrels, run, ["AP", "NumRet"], chunk_bytes=4096).mean
    assert got == fastir.evaluate(qrels, str(path), ["AP", "NumRet"]).mean
    bound = 1 if given == "file object" else 2
    assert len(scanned) > 5 and sum(scanned) <= bound * path.stat().st_size


def test_flat_indexes_beyond_int64_are_refused():
    preds, target = np.array([0.5, 0.2, 0.9]), np.array([1, 0, 1])
    indexes = np.array([2**63 + 5, 2**63 + 5, 7], dtype=np.uint64)
    with pytest.raises(ValueError) as info:
        fastir.evaluate_flat(preds, target, indexes, "AP")
    useful(info.value, "indexes", "2**63")


def test_agreement_matches_integer_ids_with_the_same_ids_as_text():
    pair = fastir.agreement({"q": {"1": 1, "2": 0}}, {"q": {1: 1, 2: 1}}).pairs[0]
    assert pair["both"] == 2 and pair["table"].tolist() == [[1, 0], [1, 0]]


# -- the command line -------------------------------------------------------------------------
def _cli(*args, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "fastir", *args], capture_output=True,
                          text=True, input=stdin)


COMMANDS = ["eval", "stats", "agree", "plot", "fuse", "pool", "trec_eval", "measures",
            "example", "warmup"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_helps_and_refuses_bad_flags(command):
    helped = _cli(command, "-h")
    assert helped.returncode == 0 and "usage" in helped.stdout.lower(), helped.stderr
    bad = _cli(command, "--no-such-flag")
    assert bad.returncode in (1, 2) and "Traceback" not in bad.stderr, bad.stderr
    assert any(line.startswith(f"fastir {command}: ") for line in bad.stderr.splitlines()), \
        bad.stderr


@pytest.mark.parametrize("command", ["eval", "fuse", "pool", "trec_eval", "measures",
                                     "stats"])
def test_a_closed_pipe_ends_a_command_quietly(command, data_dir, tmp_path):
    import shutil
    import subprocess
    import sys

    qrels, run = (str(data_dir / "inputs" / n) for n in ("qrels.test", "results.test"))
    other = str(tmp_path / "other.test")
    shutil.copy(run, other)
    args = {"eval": [qrels, run, "-q"], "fuse": [run, other], "pool": [run, other],
            "trec_eval": ["-q", qrels, run],
            "measures": [], "stats": [qrels, run]}[command]
    reader = subprocess.Popen(["head", "-c", "1"], stdin=subprocess.PIPE,
                              stdout=subprocess.DEVNULL)
    done = subprocess.run([sys.executable, "-m", "fastir", command, *args], stdout=reader.stdin,
                          stderr=subprocess.PIPE, text=True)
    reader.stdin.close()
    reader.wait()
    said = [line for line in done.stderr.splitlines()
            if not line.startswith("fastir: compiling")]  # (a fresh cache's one-time note)
    assert done.returncode == 0 and said == [], done.stderr


def test_compare_as_a_table_is_text_not_markdown(data_dir, tmp_path):
    import shutil

    qrels, run = (str(data_dir / "inputs" / n) for n in ("qrels.test", "results.test"))
    other = str(tmp_path / "other.test")
    shutil.copy(run, other)
    args = ["eval", qrels, run, other, "--name", "a", "--name", "b", "--compare",
            "--resamples", "99", "-m", "AP"]
    table, markdown = _cli(*args).stdout, _cli(*args, "--format", "markdown").stdout
    assert "|" not in table and "| a) a |" in markdown
    assert table.splitlines()[0].split() == ["system", "AP"]


def test_a_run_with_nothing_judged_in_its_top_10_says_so(data_dir, tmp_path):
    run = tmp_path / "unjudged.run"
    run.write_text("".join(f"{q} Q0 nowhere{d} {d + 1} {1 - d / 100} t\n"
                           for q in ("301", "302") for d in range(20)))
    done = _cli("eval", str(data_dir / "inputs" / "qrels.test"), str(run), "-m", "AP")
    assert done.returncode == 0 and "no document of its top 10 is judged" in done.stderr


@pytest.mark.parametrize("compressed", [False, True])
def test_streaming_progress_advances_with_the_bytes_read(tmp_path, data_dir, compressed):
    import gzip

    from fastir.progress import Progress

    data = (data_dir / "inputs" / "results.test").read_bytes()
    path = tmp_path / ("run.gz" if compressed else "run")
    path.write_bytes(gzip.compress(data) if compressed else data)
    qrels = str(data_dir / "inputs" / "qrels.test")
    with Progress(path.stat().st_size, "test", True, unit="B") as bar:
        got = fastir.evaluate_file(qrels, str(path), ["AP"], chunk_bytes=2048, progress=bar)
        assert bar.bar.n == path.stat().st_size
    assert got.mean == fastir.evaluate(qrels, str(path), ["AP"]).mean
    assert fastir.evaluate_file(qrels, str(path), ["AP"], progress=True).mean == got.mean


# -- the newer surfaces, drawn ----------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ODD = st.sampled_from([None, -1, 0, 1, 0.5, 2.5, float("nan"), float("inf"), 2**70, "x", "",
                       True, [], {}, (1,), np.int64(3), "zero", "skip", "9.0.8", "AP"])
SMALL_QRELS = {f"q{i}": {"a": i % 3, "b": 1, "c": 0} for i in range(4)}
SMALL_RUNS = {"x": {q: {"a": 1.0, "b": 0.5, "c": 2.0} for q in SMALL_QRELS},
              "y": {q: {"a": 0.2, "b": 0.9, "c": 0.1} for q in SMALL_QRELS}}


def _odd_call(call, options):
    """The call with the drawn options: a result, or an error of fastir's own naming one of
    them."""
    try:
        return call(**options)
    except (ValueError, TypeError) as exc:
        useful(exc, *options, *[str(v) for v in options.values()], "measure")
        return None


def _options(names):
    return st.dictionaries(st.sampled_from(names), ODD, max_size=3)


@settings(max_examples=50, deadline=None)
@given(_options(["n_resamples", "alpha", "seed", "test", "correction", "baseline", "missing",
                 "relevance_level", "max_docs"]))
def test_compare_takes_any_options(options):
    _odd_call(lambda **kw: fastir.compare(SMALL_QRELS, SMALL_RUNS, ["AP"], **kw), options)


@settings(max_examples=100, deadline=None)
@given(_options(["relevance_level", "names", "runs", "measure"]))
def test_agreement_takes_any_options(options):
    other = {q: {d: (v + 1) % 3 for d, v in docs.items()} for q, docs in SMALL_QRELS.items()}
    _odd_call(lambda **kw: fastir.agreement(SMALL_QRELS, other, **kw), options)


@settings(max_examples=40, deadline=None)
@given(_options(["chunk_bytes", "relevance_level", "missing", "max_docs", "judged_only",
                 "num_docs", "compat", "third_column"]))
def test_evaluate_file_takes_any_options(data_dir, options):
    run = str(data_dir / "inputs" / "results.test")
    qrels = str(data_dir / "inputs" / "qrels.test")
    got = _odd_call(lambda **kw: fastir.evaluate_file(qrels, run, ["AP", "P@5"], **kw), options)
    if got is not None:  # the same as the whole file in memory
        whole = {k: v for k, v in options.items() if k not in ("chunk_bytes",)}
        assert got.mean == fastir.evaluate(qrels, run, ["AP", "P@5"], **whole).mean


@settings(max_examples=100, deadline=None)
@given(_options(["relevance_level", "ties"]), _options(["valid", "n_relevant", "per_row"]))
def test_training_shapes_take_any_options(built, called):
    scores, labels = np.array([[0.5, 0.2, 0.9], [0.1, 0.3, 0.2]]), np.array([[1, 0, 2], [0, 1, 0]])
    acc = _odd_call(lambda **kw: fastir.MetricAccumulator(["AP", "nDCG@2"], **kw), built)
    if acc is not None:
        _odd_call(lambda **kw: acc.update(scores, labels, **kw),
                  {k: v for k, v in called.items() if k != "per_row"})
    _odd_call(lambda **kw: fastir.evaluate_matrix(scores, labels, ["AP"], **kw),
              {**built, **called})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"q1", b"q2", b"", b"\xff", b"d1", None]), min_size=3,
                max_size=3), st.sampled_from(["string", "binary", "dictionary", "int64"]))
def test_arrow_columns_of_any_content(values, kind):
    pa = pytest.importorskip("pyarrow")
    texts = [None if v is None else v.decode("utf-8", "replace") for v in values]
    column = {"string": lambda: pa.array(texts), "binary": lambda: pa.array(values),
              "dictionary": lambda: pa.array(texts).dictionary_encode(),
              "int64": lambda: pa.array([None if v is None else len(v) for v in values],
                                        pa.int64())}[kind]()
    table = pa.table({"query_id": column, "doc_id": pa.array(["a", "b", "c"]),
                      "score": pa.array([1.0, 2.0, 3.0])})
    try:
        run = fastir.Run.from_arrow(table)
    except fastir.InputError as exc:
        useful(exc, "query_id")
        return
    assert None not in values and len(run.query_ids) == len(set(column.to_pylist()))


# -- fusion, adversarial ----------------------------------------------------------------------
FA, FB = {"q": {"d1": 3.0, "d2": 2.0}}, {"q": {"d2": 0.9, "d3": 0.1}}


@pytest.mark.parametrize("k", [-1, -0.5, float("nan"), float("inf"), -float("inf"), "60", None,
                               True])
def test_rrf_refuses_a_constant_that_is_no_finite_number_of_0_or_more(k):
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, FB], "rrf", k=k)
    useful(info.value, "k: ")
    assert fastir.fuse([FA, FB], "rrf", k=0).to_dict() == {"q": {"d2": 1.5, "d1": 1.0,
                                                                 "d3": 0.5}}


@pytest.mark.parametrize("norm", ["min-max", "zmuv", "sum"])
@pytest.mark.parametrize("method", ["sum", "wsum", "mnz", "max", "med", "anz"])
def test_normalising_huge_scores_does_not_overflow(method, norm):
    """The normalisations are unchanged by a power-of-two scale: 1e308-sized scores give what
    the same scores scaled down give (ranx gives NaN for min-max of -1e308 and 1e308)."""
    huge = {"q": {"d1": 1e308, "d2": -1e308, "d4": 1e307}, "r": {"d1": -1.7e308, "d2": 0.0}}
    small = {q: {d: s * 2.0**-1000 for d, s in docs.items()} for q, docs in huge.items()}
    other = {"q": {"d2": 0.9, "d3": 0.1}, "r": {"d5": 1.0}}
    got = fastir.fuse([huge, other], method, norm=norm).to_dict()
    assert got == fastir.fuse([small, other], method, norm=norm).to_dict()
    assert all(np.isfinite(s) for docs in got.values() for s in docs.values())
    if norm == "min-max":
        assert got["q"]["d1"] >= 1.0 and got["r"]["d1"] == 0.0


@pytest.mark.parametrize("method, weights", [("sum", None), ("mnz", None), ("wsum", None),
                                             ("wsum", [1e308, 1e308])])
def test_a_fused_score_beyond_a_double_is_refused(method, weights):
    huge = {"q": {"d1": 1e308, "d2": 1.0}}
    runs = [huge, huge] if weights is None else [huge, {"q": {"d1": 1e308}}]
    with pytest.raises(ValueError) as info:
        fastir.fuse(runs, method, weights=weights)
    useful(info.value, "beyond a double")
    assert "'d1'" in str(info.value) and "norm='min-max'" in str(info.value)
    got = fastir.fuse(runs, method, weights=weights, norm="min-max").to_dict()
    assert got["q"]["d1"] > got["q"]["d2"]


def test_max_normalising_huge_negative_scores_is_refused():
    with pytest.raises(ValueError) as info:  # ranx's max norm divides these by its 1e-9 floor
        fastir.fuse([{"q": {"d1": -1e300, "d2": -2e300}}, FB], "sum", norm="max")
    useful(info.value, "norm: 'max'")


def test_fusion_refuses_scores_that_are_not_finite():
    run = fastir.Run.from_dict({"q": {"d1": 1.0, "d2": 2.0}})
    bad = fastir.Run(run.query_ids, run.starts, run.stops, run.doc_ids,
                     np.array([np.nan, 1.0]), name="bad")
    for call in (lambda: fastir.fuse([FA, bad], "sum"),
                 lambda: fastir.optimize_fusion({"q": {"d1": 1}}, [FA, bad], "AP")):
        with pytest.raises(ValueError) as info:
            call()
        useful(info.value, "runs: run 1 ('bad')")
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, {"q": {"d1": float("inf")}}])
    useful(info.value, "not finite")


@pytest.mark.parametrize("weights", [[float("nan"), 1], [1], [1, 2, 3], "ab", [[1, 2]],
                                     [True, 1], [1, None]])
def test_weights_must_be_one_finite_number_per_run(weights):
    with pytest.raises(ValueError) as info:
        fastir.fuse([FA, FB], "wsum", weights=weights)
    useful(info.value, "weights: give 2 finite numbers")


def test_negative_weights_subtract_a_run():
    got = fastir.fuse([FA, FB], "wsum", weights=[-1, 1]).to_dict()
    assert got == {"q": {"d3": 0.1, "d2": -1.1, "d1": -3.0}}


@pytest.mark.parametrize("step", [float("nan"), 0, -0.1, 2, 0.3, 5e-324, "0.1", True, None])
def test_optimize_fusion_refuses_a_step_that_is_no_grid(step):
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA, FB], "AP", step=step)
    useful(info.value, "step: 1 / step must be a whole number")


@pytest.mark.parametrize("step, runs", [(1e-9, 2), (1e-300, 2), (0.01, 6)])
def test_optimize_fusion_refuses_a_grid_too_big_up_front(step, runs):
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA] * (runs - 1) + [FB], "AP", step=step)
    useful(info.value, f"step: a step of {step!r} over {runs} runs")
    assert "give grid=" in str(info.value) and time.perf_counter() - start < 10


def test_optimize_fusion_refuses_weights_beyond_a_double():
    with pytest.raises(ValueError) as info:
        fastir.optimize_fusion({"q": {"d2": 1}}, [FA, FB], "AP", norm=None,
                               grid=[[0.5, 0.5], [1e308, 1e308]])
    useful(info.value, "grid: the weights [1e+308, 1e+308] (point 1)")


FUSE_ODD = st.sampled_from([None, -1, 0, 1, 0.5, 2.5, float("nan"), float("inf"), -1e308, 1e308,
                            2**70, "x", "", True, [], {}, (1,), [1.0, 2.0], [1e308, -1e308],
                            [float("nan"), 1.0], np.int64(3), "rrf", "wsum", "mnz", "min-max",
                            "zmuv", "max", "borda", "sum", [[0.5, 0.5]], ["q1"]])
HUGE_RUNS = [{"q1": {"a": 1e308, "b": -1e308, "c": 0.0}, "q2": {"a": -1e300}},
             {"q1": {"a": 0.5, "d": 0.25}, "q2": {"a": 1.0, "b": 1e-300}}]


def _finite_run(run):
    assert all(np.isfinite(s) for docs in run.to_dict().values() for s in docs.values())


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["method", "weights", "norm", "k", "depth", "name"]),
                       FUSE_ODD, max_size=4), st.booleans())
def test_fuse_takes_any_options(options, huge):
    runs = HUGE_RUNS if huge else list(SMALL_RUNS.values())
    got = _odd_call(lambda **kw: fastir.fuse(runs, **kw), options)
    if got is not None:
        _finite_run(got)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(["method", "norm", "step", "grid", "k", "depth",
                                        "test_queries"]), FUSE_ODD, max_size=3), st.booleans())
def test_optimize_fusion_takes_any_options(options, huge):
    runs = HUGE_RUNS if huge else list(SMALL_RUNS.values())
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"b": 1}} if huge else SMALL_QRELS
    got = _odd_call(lambda **kw: fastir.optimize_fusion(qrels, runs, "AP", **kw), options)
    if got is not None:
        assert np.isfinite(got.values).all() and np.isfinite(got.grid).all()


# -- Ctrl-C -----------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["eval", "trec_eval"])
def test_ctrl_c_ends_a_command_with_130_and_one_line(command, data_dir, tmp_path):
    """SIGINT while the command is reading its run (a pipe kept open: it is surely running):
    status 130, one line, no traceback."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    qrels = str(data_dir / "inputs" / "qrels.test")
    fifo = tmp_path / "run"
    os.mkfifo(fifo)
    args = [qrels, str(fifo)] if command == "eval" else ["-q", qrels, str(fifo)]
    env = {**os.environ, "FASTIR_WORKER": "off"}
    proc = subprocess.Popen([sys.executable, "-m", "fastir", command, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_default)
    writer = []
    opener = threading.Thread(target=lambda: writer.append(open(fifo, "w")), daemon=True)
    try:
        opener.start()
        opener.join(120)  # the open returns when the command opens the run to read it
        assert writer, "the command never opened its run"
        writer[0].write("301 Q0 FBIS3-10082 1 0.5 t\n" * 1000)
        writer[0].flush()
        time.sleep(0.5)  # (it waits in read() for more)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.2)
        try:  # (a SIGINT that came just before read() began is raised once read() returns)
            writer.pop().close()
        except BrokenPipeError:
            pass
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        if writer:
            try:
                writer[0].close()
            except BrokenPipeError:
                pass
    said = [line for line in err.splitlines() if not line.startswith("fastir: compiling")]
    assert proc.returncode == 130, err
    assert said == [f"fastir {command}: interrupted (Ctrl-C)"], err


# -- progress ---------------------------------------------------------------------------------
@pytest.mark.parametrize("int_docs", [True, False])
def test_the_parse_of_a_large_file_advances_the_bar(tmp_path, int_docs):
    """The bar moves as the chunks are scanned (it sat at 0, then jumped, for the parse of
    a large file), and the run read is the same."""
    from fastir.progress import Progress

    doc = "{}" if int_docs else "doc{}"
    path = tmp_path / "large.run"
    path.write_text("".join(f"q{q} Q0 {doc.format(d)} {d + 1} {1 - d / 1000:.4f} t\n"
                            for q in range(120) for d in range(1000)))
    size = path.stat().st_size
    assert size > 2 << 20
    steps = []
    with Progress(size, "test", True, unit="B") as bar:
        update = bar.bar.update
        bar.bar.update = lambda n: (steps.append(n), update(n))
        run = fastir.read_run(str(path), progress=bar)
        assert bar.bar.n == size
    assert len([n for n in steps if n > 0]) >= 4, steps
    assert run.to_dict() == fastir.read_run(str(path)).to_dict()


# -- a doc ranked twice -----------------------------------------------------------------------
@pytest.mark.parametrize("lines, where", [
    ("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq2 Q0 a 1 1.0 t\n# note\nq1 Q0 a 3 1.5 t\n", ":5:"),
    ("q1 a 1\nq1 b 2\n\nq1 a 3\n", ":4:"),  # (MS MARCO's three fields)
    ("q1 Q0 x 1 3.0 a\nq1 Q0 a 2 2.0 t\nq1 Q0 a 3 1.0 t\n", ":3:"),  # (the tag is 'a' too)
])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_doc_ranked_twice_names_the_file_and_line_of_the_second(tmp_path, lines, where,
                                                                   compressed):
    import gzip

    path = tmp_path / ("dup.run.gz" if compressed else "dup.run")
    path.write_bytes(gzip.compress(lines.encode()) if compressed else lines.encode())
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    with pytest.raises(fastir.InputError) as info:
        fastir.evaluate(qrels, str(path), ["AP"])
    useful(info.value, f"{path}{where} query 'q1' ranks doc 'a' a second time")
    assert "remove one" in str(info.value)
    qrels_path = tmp_path / "qrels"
    qrels_path.write_text("q1 0 a 1\nq2 0 a 1\n")
    for command in (["eval"], ["trec_eval"]):
        done = _cli(*command, str(qrels_path), str(path))
        assert f"{path}{where} query 'q1' ranks doc 'a' a second time" in done.stderr
        assert done.returncode in (1, 4) and "Traceback" not in done.stderr


def test_a_doc_ranked_twice_without_a_file_names_query_and_doc():
    run = fastir.Run.from_arrays(np.array(["q1", "q1", "q1"]), np.array(["a", "b", "a"]),
                                 np.array([3.0, 2.0, 1.0]))
    with pytest.raises(fastir.InputError) as info:
        fastir.evaluate({"q1": {"a": 1}}, run, ["AP"])
    useful(info.value, "query 'q1' ranks doc 'a' twice")


# -- warmup says what it does -----------------------------------------------------------------
def test_warmup_says_compiling_only_when_it_compiles():
    first = _cli("warmup", "--only", "containers")  # (compiles what is not cached)
    assert first.returncode == 0, first.stderr
    again = _cli("warmup", "--only", "containers")
    assert again.returncode == 0 and "compiling" not in again.stderr, again.stderr
    assert again.stderr.startswith("fastir warmup: dicts and arrays: loaded from the cache in ")
    said = first.stderr.splitlines()
    assert len(said) == 1 or (said[0].endswith("compiling the kernels not in the cache (about "
                                               "1 s on a fresh cache)")
                              and " compiled " in said[1]), first.stderr


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning")
@pytest.mark.parametrize("method, norm, scale, k", [
    ("rrf", None, 1.0, 0), ("rrf", None, 1.0, 0.5), ("rrf", None, 1.0, 1e6),
    ("sum", "min-max", 1e300, 60), ("mnz", "min-max", 1e300, 60), ("wsum", "zmuv", 1e150, 60),
    ("sum", "sum", 1e300, 60), ("max", "max", 1e300, 60)])
def test_fusion_at_the_edges_equals_ranx_where_ranx_is_sane(method, norm, scale, k):
    """Where ranx does not overflow (scores to 1e300: their differences fit a double), the
    scores fastir scales down before normalising give ranx's values."""
    ranx = pytest.importorskip("ranx")
    runs = [{q: {d: s * scale for d, s in docs.items()} for q, docs in run.items()}
            for run in (SMALL_RUNS["x"], SMALL_RUNS["y"],
                        {q: {"a": 3.0, "z": 1.5 + len(q)} for q in SMALL_QRELS})]
    weights = [0.2, 0.5, 0.3] if method == "wsum" else None
    params = {"k": k} if method == "rrf" else {"weights": weights} if weights else {}
    want = ranx.fuse([ranx.Run(r) for r in runs], norm=norm, method=method,
                     params=params).to_dict()
    got = fastir.fuse(runs, method, norm=norm, k=k, weights=weights).to_dict()
    assert sorted(got) == sorted(want)
    for q in got:
        assert got[q] == pytest.approx(dict(want[q]), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("options, names", [
    ({"step": 1e-9}, "step: a step of 1e-09"), ({"step": 0}, "step: a grid step"),
    ({"step": float("nan")}, "step: a grid step"), ({"step": 0.01, "runs": 4}, "step: a step"),
    ({"method": "rrf", "step": 0}, "step"), ({"method": "rrf", "max_k": 10**9}, "max_k"),
])
def test_the_ranx_switch_bounds_its_grids_up_front(options, names):
    from fastir.peers import ranx as shim

    runs = [{"q": {"d1": 3.0, "d2": 2.0}}] * (options.pop("runs", 2) - 1) + [FB]
    with pytest.raises(ValueError) as info:
        shim.optimize_fusion({"q": {"d2": 1}}, runs, **options)
    useful(info.value, names)


def test_the_ranx_switch_refuses_a_keyword_ranx_does_not_take_as_ranx_does():
    """ranx's optimize_rrf takes min_k, max_k and step: another keyword is its TypeError, one
    line naming it."""
    ranx = pytest.importorskip("ranx")
    from fastir.peers import ranx as shim

    qrels, runs = {"q": {"d2": 1}}, [{"q": {"d1": 3.0, "d2": 2.0}}, FB]
    with pytest.raises(TypeError) as theirs:
        ranx.optimize_fusion(ranx.Qrels(qrels), [ranx.Run(r) for r in runs], norm=None,
                             method="rrf", k_step=5, show_progress=False)
    with pytest.raises(TypeError) as ours:
        shim.optimize_fusion(qrels, runs, method="rrf", k_step=5)
    useful(ours.value, "'k_step'")
    assert str(ours.value) == str(theirs.value)


@pytest.mark.slow
def test_ctrl_c_stops_a_warmup_and_its_helpers_with_one_line(tmp_path):
    """A terminal's Ctrl-C reaches the warmup and its helper processes: one line, 130, and
    no helper left compiling."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "FASTIR_WORKER": "off", "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "fastir", "warmup", "--jobs", "2"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=sigint_default)
    try:
        time.sleep(6)  # (both processes compiling)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # (the session's processes, all ours)
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == 130, err
    said = err.splitlines()
    assert said[-1] == "fastir warmup: interrupted (Ctrl-C)" and "Traceback" not in err, err
    assert sum("interrupted" in line for line in said) == 1, err
