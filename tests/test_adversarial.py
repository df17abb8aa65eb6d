"""Bad input, as a hostile or careless user gives it, at every entry point.

Every case ends in one of two ways: a fastir error whose message names the input (the file,
the argument), raised by fastir's own code; or a result equal to the naive reference's. Never
a signal, a traceback from numba or numpy, a Python error that names no input, or a value
that differs. The command line is run in a subprocess on some of the same files: an exit
status of trec_eval's (0, 1, 2, 4, 7, 255), no signal, no traceback.
"""

import math
import os
import subprocess
import sys
import traceback

import numpy as np
import pytest
from conftest import MEASURES, naive_values
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastir
from fastir.measures.registry import UnknownMeasureError, parse

NAMES = ["AP", "nDCG@3", "P@5", "RR", "Bpref", "R@50", "NumRet", "NumRelRet"]
FASTIR_DIR = os.path.dirname(fastir.__file__)


def cases(n):
    """Hypothesis settings for ``n`` generated cases (bounded: CI runs them all)."""
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def useful(exc, *names):
    """The error was raised by fastir itself (not deep in numpy or numba) and its message
    names the input (one of ``names``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    assert frames and frames[-1].filename.startswith(FASTIR_DIR), (
        f"{type(exc).__name__} from {frames[-1].filename if frames else '?'}: {exc}")
    assert isinstance(exc, (ValueError, TypeError)), repr(exc)
    message = str(exc)
    assert message and any(name in message for name in names), message


def _text(key):
    return key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else str(key)


def same_as_naive(qrels, run, res, **options):
    """``res`` equals the naive reference on the same judgments and rankings (ids as text:
    fastir orders integer ids as their decimal strings)."""
    qrels, run = ({_text(q): {_text(d): v for d, v in docs.items()} for q, docs in x.items()}
                  for x in (qrels, run))
    want = naive_values(qrels, run, NAMES, **options)
    got = {_text(q): values for q, values in res.to_dict().items()}
    assert set(got) == set(want)
    for qid, values in want.items():
        for name, value in zip(NAMES, values):
            assert got[qid][name] == value or (math.isnan(value) and math.isnan(got[qid][name]))


# -- files -------------------------------------------------------------------------------
TOKEN = st.sampled_from([b"q1", b"q2", b"10", b"d1", b"d2", b"d#3", b"0", b"1", b"2", b"-1",
                         b"1.5", b"1e3", b"1_0", b"nan", b"inf", b"-inf", b"0x10", b"", b"\xff",
                         b"\xef\xbb\xbf", b"\x00", b"Q0", b"tag", b"99999999999999999999",
                         b"#", b"a" * 300, b"\xc3\xa9"])
SEP = st.sampled_from([b" ", b"\t", b"  ", b"\r", b"\x0b", b"\r\n"])


@st.composite
def garbage_files(draw, fields):
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        count = draw(st.sampled_from([fields, fields, fields, 1, 3, 4, 5, 7]))
        tokens = [draw(TOKEN) for _ in range(count)]
        lines.append(draw(SEP).join(tokens))
    text = draw(st.sampled_from([b"\n", b"\r\n", b"\r"])).join(lines)
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + text


def reference_read(data, fields, value_field, integer):
    """What a file means, read straight from its definition: lines split at newlines and
    whitespace, ``#`` lines and blank lines skipped, or None when the file is invalid."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    out = {}
    for line in data.split(b"\n"):
        parts = line.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if b"\r" in line.rstrip(b"\r") or len(parts) < fields or (
                fields != 6 and len(parts) != fields):
            return None
        token = parts[value_field]
        try:
            if integer:
                digits = token.lstrip(b"+-")
                if not digits.isdigit() or token[:1] in (b"+", b"-") and token[1:2] in (b"+",
                                                                                         b"-"):
                    return None
                value = int(token)
                if not -(2**31) <= value < 2**31:
                    return None
            else:
                value = float(token)
                if b"_" in token or not math.isfinite(value):
                    return None
        except ValueError:
            return None
        qid = parts[0].decode("utf-8", "surrogateescape")
        doc = parts[2].decode("utf-8", "surrogateescape")
        if doc in out.setdefault(qid, {}) and fields == 4:
            return None  # judged twice
        out[qid][doc] = value
    return out or None


@cases(300)
@given(garbage_files(4), garbage_files(6))
def test_files_give_a_clear_error_or_the_naive_value(tmp_path, qrels_bytes, run_bytes):
    q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
    q.write_bytes(qrels_bytes)
    r.write_bytes(run_bytes)
    qrels = reference_read(qrels_bytes, 4, 3, True)
    run = reference_read(run_bytes, 6, 4, False)
    try:
        res = fastir.evaluate(str(q), str(r), NAMES)
    except fastir.InputError as exc:
        useful(exc, str(q), str(r))
        return
    assert qrels is not None and run is not None, "fastir read a file the definition refuses"
    if any(len(set(docs)) != len(docs) for docs in run.values()):
        return  # (a doc ranked twice: an error only when it is judged and within max_docs)
    same_as_naive(qrels, run, res)


@cases(25)
@given(garbage_files(4), garbage_files(6), st.sampled_from([[], ["-q"], ["-c"], ["-m", "all_trec"],
                                                            ["-Z", "Z"]]))
def test_the_command_line_never_crashes(tmp_path, qrels_bytes, run_bytes, flags):
    q, r, z = tmp_path / "qrels", tmp_path / "run", tmp_path / "z"
    q.write_bytes(qrels_bytes)
    r.write_bytes(run_bytes)
    z.write_bytes(run_bytes[:200])
    args = [str(z) if f == "Z" else f for f in flags]
    done = subprocess.run([sys.executable, "-m", "fastir", "trec_eval", *args, str(q), str(r)],
                          capture_output=True)
    assert done.returncode in (0, 1, 2, 4, 7, 255), done.stderr[-2000:]
    assert b"Traceback" not in done.stderr, done.stderr[-3000:]
    if done.returncode:
        errors = b"".join(line for line in done.stderr.splitlines(keepends=True)
                          if not line.startswith(b"fastir: compiling"))  # (a fresh cache)
        assert errors.startswith(b"fastir trec_eval: "), done.stderr[-2000:]


# -- arrays, dicts, frames ---------------------------------------------------------------
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


# -- measure names -----------------------------------------------------------------------
MEASURE_TEXT = st.text(alphabet="PRnDCGAPapcut_.,@=()'\"0123456789-+eE infNa:{}", max_size=24)


@cases(500)
@given(MEASURE_TEXT | st.sampled_from(list(MEASURES)) | st.sampled_from(
    ["P.inf", "P@1e400", "relstring.inf", "ndcg.1=nan", "utility.1,2,3,nan", "P(rel=)@5",
     "nDCG(gains='1=')", "IPrec@-0", "RprecMult@1e308", "P@", "@5", "()", "P(rel=1,rel=2)@5"]))
def test_measure_names_give_a_clear_error(text):
    try:
        parsed = parse(text)
    except UnknownMeasureError as exc:
        useful(exc, text.strip()[:3], "cutoff", "rel", "must", "measure", "parameter", "gain")
        return
    except ValueError as exc:
        useful(exc, text)
        return
    assert parsed and all(isinstance(key, str) for key, _ in parsed)


# -- dense batches -----------------------------------------------------------------------
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
