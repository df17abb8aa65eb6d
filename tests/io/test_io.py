"""Reading files, dicts, arrays and frames; bad input gives clear errors."""

import gzip
import os
import threading

import numpy as np
import pytest
from checks import useful
from cli_calls import cli

import fastir
from fastir import InputError
from fastir.progress import Progress

RUN = "q1 Q0 d1 1 2.5 tag\nq1 Q0 d2 2 1.5 tag\nq2 Q0 d3 1 0.25 tag\n"
QRELS = "q1 0 d1 1\nq1 0 d3 0\nq2 0 d3 2\n"


def write(tmp_path, name, text, gz=False):
    path = tmp_path / name
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_read_plain_and_gzip(tmp_path, gz):
    run = fastir.read_run(write(tmp_path, "run", RUN, gz))
    qrels = fastir.read_qrels(write(tmp_path, "qrels", QRELS, gz))
    assert run.to_dict() == {"q1": {"d1": 2.5, "d2": 1.5}, "q2": {"d3": 0.25}}
    assert qrels.to_dict() == {"q1": {"d1": 1, "d3": 0}, "q2": {"d3": 2}}
    assert run.name == "tag"


def test_whitespace_comments_blank_lines_and_extra_fields(tmp_path):
    text = ("# a comment\n\n  q1\tQ0  d1 1   2.5 tagA extra junk\r\n   # indented comment\n"
            "q1 Q0 d#2 2 1.5e0 tagB")  # no final newline; '#' inside a docno
    run = fastir.read_run(write(tmp_path, "run", text))
    assert run.to_dict() == {"q1": {"d1": 2.5, "d#2": 1.5}}
    assert run.name == "tagB"  # trec_eval keeps the tag of the last line


def test_msmarco_three_field_run_uses_rank_as_order(tmp_path):
    run = fastir.read_run(write(tmp_path, "run", "q1 dA 2\nq1 dB 1\nq1 dC 3\n"))
    qrels = {"q1": {"dB": 1}}
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 1.0


def test_scores_parse_exactly(tmp_path):
    tokens = ["0.1", "-2.5e-3", "123456789.123456789", "0.30000000000000004", "1e22",
              "1e23", "7", "+3.", ".5", "-0", "4.9406564584124654e-324", "1.7976931348623157e308"]
    text = "".join(f"q Q0 d{i} 1 {t} x\n" for i, t in enumerate(tokens))
    run = fastir.read_run(write(tmp_path, "run", text))
    assert run.scores.tolist() == [float(t) for t in tokens]


def test_integer_ids_from_arrays_stay_integers():
    run = fastir.Run.from_arrays(np.array([3, 3, 10]), np.array([7, 8, 9]),
                                 np.array([1.0, 2.0, 3.0]))
    assert run.query_ids.is_int and run.doc_ids.is_int
    assert run.to_dict() == {10: {9: 3.0}, 3: {7: 1.0, 8: 2.0}}
    # queries are in trec_eval (string) order: "10" < "3"
    assert run.query_ids.tolist() == [10, 3]


def test_integer_run_against_text_qrels_matches_decimal_ids():
    qrels = {"1": {"10": 1, "9": 0}}
    run = fastir.Run.from_arrays(np.array([1, 1]), np.array([10, 9]), np.array([1.0, 1.0]))
    # tie: docno descending as strings, "9" > "10", so doc 9 ranks first
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 0.5


def test_integer_ties_break_like_strings():
    qrels = {1: {10: 1, 9: 0}}
    run = {1: {10: 1.0, 9: 1.0}}
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 0.5


def test_from_pandas():
    pd = pytest.importorskip("pandas")
    qrels = fastir.Qrels.from_pandas(pd.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [1, 0]}))
    run = fastir.Run.from_pandas(pd.DataFrame(
        {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [0.5, 0.7]}))
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 0.5
    with pytest.raises(InputError, match="missing column"):
        fastir.Run.from_pandas(pd.DataFrame({"q": [1]}))


@pytest.mark.parametrize("dtype", ["string[pyarrow]", "large_string[pyarrow]", "string",
                                   "object"])
def test_from_pandas_text_columns_of_every_dtype(dtype):
    """Arrow-backed text columns are read from their buffers: the same Run as object
    columns, non-ASCII ids included; a null id is an error either way."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"query_id": ["q2", "q1", "q1", "é"], "doc_id": ["a", "b", "é", "c"],
                          "score": [0.5, 0.7, 0.1, 1.0]})
    typed = frame.astype({"query_id": dtype, "doc_id": dtype})
    want, got = fastir.Run.from_pandas(frame), fastir.Run.from_pandas(typed)
    assert got.to_dict() == want.to_dict()
    assert got.query_ids.tolist() == want.query_ids.tolist()
    qrels = fastir.Qrels.from_pandas(typed.rename(columns={"score": "relevance"}).assign(
        relevance=[1, 0, 1, 1]))
    assert qrels.to_dict() == {"q2": {"a": 1}, "q1": {"b": 0, "é": 1}, "é": {"c": 1}}
    typed.loc[1, "doc_id"] = None
    with pytest.raises(InputError, match="doc_ids"):
        fastir.Run.from_pandas(typed)


def test_unicode_ids_compare_as_utf8_bytes():
    qrels = {"q": {"é": 1, "z": 0}}
    run = {"q": {"é": 1.0, "z": 1.0}}  # UTF-8 of é (0xC3...) > "z" (0x7A): é ranks first
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 1.0


# -- errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("q1 Q0 d1 1 2.5 t\nq1 Q0 d2 2\n", r"run:2: malformed line: expected 6 fields"),
    ("q1 Q0 d1 1 nan t\n", r"run:1: score 'nan' is not a finite number"),
    ("q1 Q0 d1 1 inf t\n", r"run:1: score 'inf' is not a finite number"),
    ("q1 Q0 d1 1 1e999 t\n", r"run:1: score '1e999' is not a finite number"),
    ("# c\nq1 Q0 d1 1 abc t\n", r"run:2: score 'abc' is not a number"),
    ("q1 d1 1\nq1 Q0 d2 2 1.0 t\n", r"run:2: malformed line: expected 3 fields"),
    ("", r"run: empty run file"),
    ("# only a comment\n\n", r"run: empty run file"),
])
def test_run_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        fastir.read_run(write(tmp_path, "run", text))


@pytest.mark.parametrize("text, message", [
    ("q1 0 d1 1\nq1 0 d2\n", r"qrels:2: malformed line: expected 4 fields, found 3"),
    ("q1 0 d1 1 extra\n", r"qrels:1: malformed line: expected 4 fields, found 5"),
    ("q1 0 d1 1.5\n", r"qrels:1: relevance label '1.5' is not a 32-bit integer"),
    ("q1 0 d1 x\n", r"qrels:1: relevance label 'x'"),
    ("q1 0 d1 1\nq1 0 d1 0\n", r"query 'q1' judges doc 'd1' twice"),
    ("", r"qrels: empty qrels file"),
])
def test_qrels_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        fastir.read_qrels(write(tmp_path, "qrels", text))


def test_duplicate_doc_in_run_is_an_error(tmp_path):
    text = "q1 Q0 d1 1 2 t\nq1 Q0 d2 1 1 t\nq1 Q0 d1 1 0 t\n"
    run = fastir.read_run(write(tmp_path, "run", text))
    with pytest.raises(InputError, match=r"run:3: query 'q1' ranks doc 'd1' a second time "
                                         r"\(first on line 1\)"):
        fastir.evaluate({"q1": {"d1": 1}}, run, ["P@5"])
    # trec_eval checks only the ranking kept by -M
    assert fastir.evaluate({"q1": {"d1": 1}}, run, ["P@1"], max_docs=2).mean["P@1"] == 1.0


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        fastir.read_run(tmp_path / "nope")


@pytest.mark.parametrize("run, message", [
    ({"q": {"d": float("nan")}}, "not finite"),
    ({"q": {"d": "high"}}, "is not a number"),
    ({"q": ["d"]}, "expected a dict"),
])
def test_bad_run_dicts(run, message):
    with pytest.raises(InputError, match=message):
        fastir.Run.from_dict(run)


@pytest.mark.parametrize("qrels, message", [
    ({"q": {"d": 1.5}}, "not a 32-bit integer"),
    ({"q": {"d": "1"}}, "not a 32-bit integer"),
    ({"q": {"d": 2**40}}, "not a 32-bit integer"),
])
def test_bad_qrels_dicts(qrels, message):
    with pytest.raises(InputError, match=message):
        fastir.Qrels.from_dict(qrels)


def test_integral_float_labels_are_accepted():
    assert fastir.Qrels.from_dict({"q": {"d": 2.0}}).labels.tolist() == [2]


def test_results_report_ignored_and_missing_queries():
    res = fastir.evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}, "z": {"d": 1.0}},
                          ["P@1"])
    assert res.query_ids == ["a", "b"]
    assert res.ignored_queries == ["z"] and res.missing_queries == ["b"]
    assert "1 run queries without judgments ignored" in repr(res)
    skip = fastir.evaluate({"a": {"d": 1}, "b": {"d": 1}}, {"a": {"d": 1.0}}, ["P@1"],
                           missing="skip")
    assert skip.query_ids == ["a"] and skip.mean["P@1"] == 1.0


def test_relstring_is_text_and_has_no_summary():
    res = fastir.evaluate({"q": {"a": 1, "b": 0, "c": -1, "e": 12}},
                          {"q": {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}},
                          ["RelString@10", "P@1"])
    assert res.to_dict()["q"]["RelString@10"] == "10.->"
    assert list(res.mean) == ["P@1"]


def test_compat_908_rounds_scores_to_float32():
    qrels = {"q": {"z": 1, "a": 0}}
    run = {"q": {"z": 1.0, "a": 1.0 + 1e-12}}  # a first; in float32 a tie, so z ("z" > "a")
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 0.5
    assert fastir.evaluate(qrels, run, ["RR"], compat="9.0.8").mean["RR"] == 1.0
    with pytest.raises(ValueError, match="not in trec_eval 9.0.8"):
        fastir.evaluate(qrels, run, ["RBP"], compat="9.0.8")


def test_canonical_integer_doc_ids_are_stored_as_integers_exactly(tmp_path):
    run_text = "q1 Q0 10 1 1.0 t\nq1 Q0 9 2 1.0 t\nq1 Q0 123 3 0.5 t\nq1 Q0 0 4 0.1 t\n"
    run = fastir.read_run(write(tmp_path, "run", run_text))
    assert run.doc_ids.is_int and run.doc_ids.text
    assert run.to_dict() == {"q1": {"10": 1.0, "9": 1.0, "123": 0.5, "0": 0.1}}
    # "9" > "10" as strings: 9 ranks first among the tie, as trec_eval does
    qrels = {"q1": {"10": 1}}
    assert fastir.evaluate(qrels, run, ["RR"]).mean["RR"] == 0.5
    # a qrels id with a leading zero is another document
    qrels_file = write(tmp_path, "qrels", "q1 0 0123 1\nq1 0 123 0\nq1 0 9 1\n")
    res = fastir.evaluate(fastir.read_qrels(qrels_file), run, ["NumRelRet", "RR"])
    assert res.mean == {"NumRelRet": 1.0, "RR": 1.0}


def test_non_canonical_doc_ids_stay_text(tmp_path):
    run = fastir.read_run(write(tmp_path, "run", "q Q0 007 1 1.0 t\nq Q0 7 2 0.5 t\n"))
    assert not run.doc_ids.is_int
    assert fastir.evaluate({"q": {"7": 1}}, run, ["RR"]).mean["RR"] == 0.5


@pytest.mark.parametrize("room", [1 << 16, 2])
def test_single_pass_gaps_and_fallbacks(tmp_path, monkeypatch, room):
    from fastir.io import trec

    monkeypatch.setattr(trec, "GROUP_ROOM", room)  # 2: too many queries, two passes again
    lines = []
    for q in range(50):
        lines += [f"{q} Q0 {q * 100 + d} {d} {10 - d} t" for d in range(5)]
        lines += ["", "# a comment between queries"]
    text = "\n".join(lines) + "\n"
    run = fastir.read_run(write(tmp_path, "run", text))
    assert run.doc_ids.is_int and len(run) == 250 and run.n_queries == 50
    assert run.to_dict()["7"] == {str(700 + d): float(10 - d) for d in range(5)}
    # a text doc id far down the file: the single pass starts again with text ids
    text += "99 Q0 doc-x 1 1.0 t\n"
    run = fastir.read_run(write(tmp_path, "run2", text))
    assert not run.doc_ids.is_int and run.to_dict()["99"] == {"doc-x": 1.0}
    assert run.to_dict()["7"] == {str(700 + d): float(10 - d) for d in range(5)}


def test_results_to_pandas():
    pytest.importorskip("pandas")
    res = fastir.evaluate({"a": {"d": 1}, "b": {"e": 1}}, {"a": {"d": 1.0}, "b": {"x": 1.0}},
                          ["P@1", "RR"])
    frame = res.to_pandas()
    assert list(frame.columns) == ["P@1", "RR"] and list(frame.index) == ["a", "b"]
    assert frame.loc["a", "RR"] == 1.0 and frame.loc["b", "P@1"] == 0.0


@pytest.mark.parametrize("tag_bytes", [10, 300, 5000, 3 << 20])
def test_chunks_start_at_lines_whatever_their_length(tmp_path, tag_bytes):
    """A large file is cut into chunks at line starts, found in growing windows past each
    cut point (lines far longer than the first window too); the run read is the same."""
    from fastir.io import trec

    lines = [f"q{q} Q0 d{d} {d} {1.0 / (d + 1)} {'t' * tag_bytes}" for q in range(3)
             for d in range(40)]
    text = "\n".join(lines) + "\n"
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    starts, ends = trec._chunks(buf, 16)
    assert starts[0] == 0 and ends[-1] == len(buf) and (starts[1:] == ends[:-1]).all()
    assert all(buf[s - 1] == 10 for s in starts[1:])
    with fastir._jit.forced("numba"):
        run = fastir.read_run(write(tmp_path, "run", text))
    assert run.to_dict() == {f"q{q}": {f"d{d}": 1.0 / (d + 1) for d in range(40)}
                             for q in range(3)}


# -- named pipes, the progress of a parse, a doc ranked twice -------------------------------
def _fifo(tmp_path, name, data):
    """A named pipe fed ``data`` by a thread (as a shell's <(...) gives it)."""
    path = tmp_path / name
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()
    return str(path)


@pytest.mark.one_engine
@pytest.mark.parametrize("compressed", [False, True])
def test_named_pipes_are_read_whole(tmp_path, data_dir, compressed):

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


@pytest.mark.one_engine
@pytest.mark.parametrize("int_docs", [True, False])
def test_the_parse_of_a_large_file_advances_the_bar(tmp_path, int_docs):
    """The bar moves as the chunks are scanned (it sat at 0, then jumped, for the parse of
    a large file), and the run read is the same."""
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


@pytest.mark.one_engine
@pytest.mark.parametrize("lines, where", [
    ("q1 Q0 a 1 3.0 t\nq1 Q0 b 2 2.0 t\nq2 Q0 a 1 1.0 t\n# note\nq1 Q0 a 3 1.5 t\n", ":5:"),
    ("q1 a 1\nq1 b 2\n\nq1 a 3\n", ":4:"),  # (MS MARCO's three fields)
    ("q1 Q0 x 1 3.0 a\nq1 Q0 a 2 2.0 t\nq1 Q0 a 3 1.0 t\n", ":3:"),  # (the tag is 'a' too)
])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_doc_ranked_twice_names_the_file_and_line_of_the_second(tmp_path, lines, where,
                                                                   compressed):

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
        done = cli(*command, str(qrels_path), str(path), text=True)
        assert f"{path}{where} query 'q1' ranks doc 'a' a second time" in done.stderr
        assert done.returncode in (1, 4) and "Traceback" not in done.stderr


