"""The reproducers of the hardening issue, one test each: a clear error naming the input, or
the right value. Each of them crashed, read memory it did not own, printed a traceback or
returned a plausible wrong number before."""

import gzip
import os
import subprocess
import sys

import numpy as np
import pytest
from cli_calls import PROGRAM

import fastir
from fastir import _jit
from fastir.model.ids import HASH_KEY, mix64

INPUTS = os.path.join(os.path.dirname(__file__), os.pardir, "data", "trec_eval", "inputs")


def cli(*args, env=None, stdin=None):
    return subprocess.run([*PROGRAM, *args], capture_output=True,
                          env=env, input=stdin)


# -- evaluate_matrix -----------------------------------------------------------------------
S, L = np.array([[0.9, 0.1, 0.5]]), np.array([[0, 1, 2]])


@pytest.mark.parametrize("n_relevant", [np.array([np.nan]), np.array([np.iinfo(np.int64).min]),
                                        np.array([1.5]), np.array([-1]), np.array([10**10])])
def test_matrix_n_relevant_is_checked(n_relevant):
    with pytest.raises(ValueError, match=r"n_relevant\[0\]"):
        fastir.evaluate_matrix(S, L, ["nDCG@10", "AP"], n_relevant=n_relevant)


def test_matrix_tables_do_not_grow_with_n_relevant():
    """P@2 reads two ranks: 10**9 relevant documents outside the candidates cost nothing."""
    got = fastir.evaluate_matrix(S, L, ["P@2", "R@2", "AP"], n_relevant=np.array([10**9]))
    assert got["P@2"] == 0.5 and got["R@2"] == 1 / 10**9
    with pytest.raises(ValueError, match="give it a cutoff"):
        fastir.evaluate_matrix(S, L, ["nDCG"], n_relevant=np.array([10**9]))


def test_matrix_levels_and_labels_are_checked():
    with pytest.raises(ValueError, match="relevance_level must be an integer"):
        fastir.evaluate_matrix(S, L, "AP", relevance_level=1.5)
    with pytest.raises(ValueError, match="labels must be integers from 0 to 2147483647"):
        fastir.evaluate_matrix(S, np.array([[0, 2**32 + 1, 2]]), "AP")


def test_matrix_gain_tables_reach_every_listed_label():
    name = "DCG(gains='100=5')@1"
    matrix = fastir.evaluate_matrix(np.array([[0.9, 0.1]]), np.array([[100, 0]]), name)
    assert matrix[name] == fastir.evaluate({"q": {"a": 100}}, {"q": {"a": 1.0}}, [name]).mean[
        name] == 5.0


# -- containers ----------------------------------------------------------------------------
def test_with_scores_checks_length_and_finiteness():
    run = fastir.Run.from_arrays(np.arange(5), np.arange(5), np.ones(5))
    with pytest.raises(fastir.InputError, match="needs 5 scores"):
        run.with_scores(np.ones(2))
    with pytest.raises(fastir.InputError, match="not finite"):
        run.with_scores(np.full(5, np.nan))


@pytest.mark.parametrize("ids", [np.array([["a", "b"]]), np.array([[1, 2]])])
def test_two_dimensional_columns_are_refused(ids):
    with pytest.raises(fastir.InputError, match="query_ids must be 1-d"):
        fastir.Run.from_arrays(ids, ids, np.array([[1.0, 2.0]]))


def test_empty_inputs():
    assert fastir.Qrels.from_dict({}).n_queries == 0
    assert fastir.Qrels.from_dict({}).to_dict() == {}
    run = fastir.Run.from_arrays(np.array([], dtype=str), np.array([], dtype=str), np.array([]))
    assert len(run) == 0 and run.n_queries == 0


# -- files ---------------------------------------------------------------------------------
def test_underscores_are_not_numbers(tmp_path):
    path = tmp_path / "run"
    path.write_text("q Q0 d 1 1_000 t\n")
    with pytest.raises(fastir.InputError, match="run:1: score '1_000' is not a number"):
        fastir.read_run(path)


def test_carriage_return_line_ends_are_refused(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"".join(b"q Q0 d%d 1 %d t\r" % (i, i) for i in range(5)))
    with pytest.raises(fastir.InputError, match="run:1: a carriage return inside a line"):
        fastir.read_run(path)


def test_a_byte_order_mark_is_not_part_of_the_first_query(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"\xef\xbb\xbfq1 Q0 d 1 1 t\n")
    assert fastir.read_run(path).query_ids.tolist() == ["q1"]


def test_corrupt_gzip_is_an_input_error(tmp_path):
    path = tmp_path / "run.gz"
    data = bytearray(gzip.compress(b"q Q0 d 1 1 t\n" * 100))
    data[12:20] = b"\xff" * 8
    path.write_bytes(bytes(data))
    with pytest.raises(fastir.InputError, match="corrupt gzip"):
        fastir.read_run(path)


def test_three_fields_are_told_apart(tmp_path):
    path = tmp_path / "run"
    path.write_text("q a 0.2\nq b 0.9\nq c 0.5\n")
    with pytest.warns(fastir.FastirWarning, match="read as scores"):
        run = fastir.read_run(path)
    assert fastir.evaluate({"q": {"b": 1}}, run, ["RR"]).mean["RR"] == 1.0
    path.write_text("q a 2\nq b 1\nq c 3\n")  # ranks, in any order
    assert fastir.evaluate({"q": {"b": 1}}, fastir.read_run(path), ["RR"]).mean["RR"] == 1.0


def test_a_long_malformed_line_is_reported_with_its_line(tmp_path):
    path = tmp_path / "run"
    path.write_bytes(b"q Q0 d 1 1 t\nq Q0 " + b"x" * 5_000_000 + b"\n")
    with pytest.raises(fastir.InputError, match="run:2: malformed line"):
        fastir.read_run(path)


# -- measures ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["P.inf", "P.99999999999", "relstring.inf",
                                  "P@99999999999999999999", "P(rel=-1)@3", "ndcg.1=nan",
                                  "P.1_0", "P.5,5"])
def test_measure_parameters_are_bounded(name):
    with pytest.raises(fastir.UnknownMeasureError):
        fastir.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, [name])


# -- silent surprises --------------------------------------------------------------------
def test_no_query_in_common_is_said():
    with pytest.warns(fastir.FastirWarning, match="no query is both in the run"):
        res = fastir.evaluate({"q1": {"a": 1}}, {"q2": {"a": 1.0}}, ["AP"])
    assert res.mean == {"AP": 0.0}


def test_crafted_ids_do_not_share_hash_bits():
    """Ids chosen so that the unkeyed hash lands them all in one slot (a quadratic join)
    spread under the process's key."""
    mask = (1 << 16) - 1
    inverse = [pow(c, -1, 1 << 64) for c in (0x94D049BB133111EB, 0xBF58476D1CE4E5B9)]

    def unmix(x):
        x ^= (x >> 31) ^ (x >> 62)
        x = (x * inverse[0]) % (1 << 64)
        x ^= (x >> 27) ^ (x >> 54)
        x = (x * inverse[1]) % (1 << 64)
        return x ^ (x >> 30) ^ (x >> 60)

    crafted = [unmix(i << 24) for i in range(200)]
    hash_of = _jit.compiled(mix64)  # as the join hashes
    unkeyed = {int(hash_of(np.uint64(x), np.uint64(0))) & mask for x in crafted}
    keyed = {int(hash_of(np.uint64(x), HASH_KEY)) & mask for x in crafted}
    assert unkeyed == {0} and len(keyed) > 150


def test_each_process_has_its_own_hash_key():
    probe = "from fastir.model.ids import HASH_KEY; print(int(HASH_KEY))"
    keys = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)}
    assert len(keys) == 2


# -- the command line ------------------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("args, status, message", [
    (["-Z", "/nonexistent/z"], 255, b"cannot read the -Z file"),
    (["-Z", INPUTS], 255, b"cannot read the -Z file"),
    (["-M", "99999999999999999999"], 0, b""),
    (["-l", "99999999999999999999"], 0, b""),
    (["-m", "P.inf"], 2, b"cutoff must be finite"),
    (["-m", "P@99999999999999999999"], 1, b"illegal measure"),
])
def test_cli_options_never_traceback(args, status, message):
    done = cli("trec_eval", *args, os.path.join(INPUTS, "qrels.test"),
               os.path.join(INPUTS, "results.test"))
    assert done.returncode == status and message in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.one_engine
def test_ids_that_are_not_utf8_under_a_strict_stdout(tmp_path):
    (tmp_path / "run").write_bytes(b"q\xe9 Q0 d\xff 1 2 r\xe9\n")
    (tmp_path / "qrels").write_bytes(b"q\xe9 0 d\xff 1\n")
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict")
    done = cli("trec_eval", "-q", "-m", "map", str(tmp_path / "qrels"), str(tmp_path / "run"),
               env=env)
    assert done.returncode == 0 and b"map                   \tq\xe9\t1.0000\n" in done.stdout


@pytest.mark.one_engine
def test_a_closed_pipe_is_not_an_error():
    done = subprocess.run(f"{sys.executable} -m fastir measures | head -3", shell=True,
                          capture_output=True)
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert len(done.stdout.splitlines()) == 3


@pytest.mark.one_engine
def test_stdin(tmp_path):
    with open(os.path.join(INPUTS, "results.test"), "rb") as f:
        data = f.read()
    expected = cli("trec_eval", os.path.join(INPUTS, "qrels.test"),
                   os.path.join(INPUTS, "results.test")).stdout
    done = cli("trec_eval", os.path.join(INPUTS, "qrels.test"), "-", stdin=data)
    assert done.returncode == 0 and done.stdout == expected



@pytest.mark.one_engine
@pytest.mark.parametrize("command", ["eval", "trec_eval", "stats", "agree"])
def test_standard_input_closed_or_read_twice(command):
    """``-`` with standard input closed (``<&-``: Python has no sys.stdin) said in one
    line, not an AttributeError; ``- -`` (standard input as both inputs) says it can hold
    one, not that the second is empty."""
    qrels = os.path.join(INPUTS, "qrels.test")
    closed = subprocess.run([*PROGRAM, command, qrels, "-"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0))
    said, status = ("fastir trec_eval:", 2) if command == "trec_eval" else \
        (f"fastir {command}: error:", 1)  # (trec_eval's status for bad input)
    assert closed.returncode == status and closed.stderr == \
        f"{said} -: standard input is closed, so nothing can be read from it: give the " \
        "input's path, or pipe it in\n"
    if command in ("eval", "trec_eval"):  # (they check it before reading: test_messages)
        return
    with open(qrels, "rb") as f:
        twice = cli(command, "-", "-", stdin=f.read())
    assert twice.returncode == 1 and twice.stderr.decode() == \
        f"fastir {command}: error: -: standard input was read already, for another input: " \
        "it can hold one input only; give the others as paths\n"


@pytest.mark.one_engine
def test_standard_input_read_twice_in_a_call(monkeypatch):
    import io

    with open(os.path.join(INPUTS, "qrels.test"), "rb") as f:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(f.read())))
    with pytest.raises(fastir.InputError, match="standard input was read already"):
        fastir.evaluate("-", "-", ["map"])


def test_dict_keys_naming_one_query_twice_are_refused():
    for make, inner in ((fastir.Run.from_dict, {"d": 1.0}), (fastir.Qrels.from_dict, {"d": 1})):
        with pytest.raises(fastir.InputError, match="b'q1' and 'q1' are the same query id"):
            make({b"q1": inner, "q1": {}})
