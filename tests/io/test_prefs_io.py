"""Reading preference judgments and judgment groups: the scanner the qrels and runs are read
with (plain, compressed, standard input, file objects), the same errors on malformed lines,
and the containers' CSR arrays."""

import bz2
import gzip
import io
import sys

import numpy as np
import pytest

import fastir
from fastir.model.errors import InputError

PREFS = ("q2 u1 s1 d3 2\nq1 u2 s1 d1 3\nq1 u2 s1 d2 0\n"
         "q1 u1 s2 d1 1.5\nq1 u1 s1 d9 2e0\n# a comment\n\nq1 u1 s1 d1 -1\n")
WANT = {"q1": {"u1": {"s1": {"d9": 2.0, "d1": -1.0}, "s2": {"d1": 1.5}},
               "u2": {"s1": {"d1": 3.0, "d2": 0.0}}},
        "q2": {"u1": {"s1": {"d3": 2.0}}}}


def forms(tmp_path, text):
    """The same bytes as a path, a gzip and a bz2 file, and binary and text file objects."""
    data = text.encode()
    (tmp_path / "plain").write_bytes(data)
    (tmp_path / "gz").write_bytes(gzip.compress(data))
    (tmp_path / "bz").write_bytes(bz2.compress(data))
    return [tmp_path / "plain", str(tmp_path / "gz"), tmp_path / "bz", io.BytesIO(data),
            io.StringIO(text)]


def test_prefs_in_every_form(tmp_path):
    for source in forms(tmp_path, PREFS):
        prefs = fastir.read_prefs(source)
        assert prefs.to_dict() == WANT
        assert prefs.query_ids.tolist() == ["q1", "q2"]
        assert prefs.indptr.tolist() == [0, 5, 6]
        # rows of a query: by group, subgroup, then level descending
        assert prefs.doc_ids.tolist()[:5] == ["d9", "d1", "d1", "d1", "d2"]
        assert prefs.levels.tolist()[:5] == [2.0, -1.0, 1.5, 3.0, 0.0]
        assert prefs.group_names.tolist() == ["u1", "u2"]
        assert prefs.groups.tolist() == [0, 0, 0, 1, 1, 0]


def test_prefs_from_standard_input(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(
        PREFS.encode()))))
    assert fastir.read_prefs("-").to_dict() == WANT


def test_qrels_read_as_preferences(tmp_path):
    path = tmp_path / "qrels"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq1 7 d1 2\nq2 0 d3 -1\n")
    prefs = fastir.read_prefs(path, format="qrels_prefs")
    assert prefs.to_dict() == {"q1": {"0": {"0": {"d1": 1.0, "d2": 0.0}}, "7": {"0": {"d1": 2.0}}},
                               "q2": {"0": {"0": {"d3": -1.0}}}}
    from_qrels = fastir.Prefs.from_qrels(fastir.read_qrels(tmp_path / "qrels",
                                                           allow_duplicates=True))
    assert from_qrels.group_names.tolist() == ["0"] and len(from_qrels) == 4


def test_judgment_groups(tmp_path):
    for source in forms(tmp_path, "q1 b d1 1\nq1 a d1 0\nq1 a d2 -1\n10 a 5 2\n"):
        groups = fastir.read_judgment_groups(source)
        assert groups.query_ids.tolist() == ["10", "q1"]
        assert groups.group_names.tolist() == ["a", "b"]
        assert groups.doc_ids.tolist() == ["5", "d1", "d2", "d1"]
        assert groups.labels.tolist() == [2, 0, -1, 1]
        assert groups.groups.tolist() == [0, 0, 0, 1]
    assert fastir.JudgmentGroups.from_dict({"q": {"g": {"a": 1}}}).labels.tolist() == [1]


@pytest.mark.parametrize("reader, text, message", [
    ("prefs", "q1 u1 s1 d1\n", r"prefs:1: malformed line: expected 5 fields, found 4"),
    ("prefs", "q1 u1 s1 d1 1\nq1 u1 s1 d2 1 x\n", r"prefs:2: malformed line: expected 5 "
                                                  r"fields, found 6"),
    ("prefs", "q1 u1 s1 d1 1\nq1 u1 s1 d2 high\n", r"prefs:2: relevance level 'high' is "
                                                    r"not a number"),
    ("prefs", "q1 u1 s1 d1 1\nq1 u1 s1 d2 inf\n", r"prefs:2: relevance level 'inf' is not a "
                                                   r"finite number"),
    ("prefs", "q1 u1 s1 d1 1_0\n", r"relevance level '1_0' is not a number"),
    ("prefs", "q1 u1 s1 d1 1\rq1 u1 s1 d2 1\n", r"a carriage return inside a line"),
    ("prefs", "", r"prefs: empty preferences file"),
    ("qrels_prefs", "q1 0 d1 1 9\n", r"prefs:1: malformed line: expected 4 fields, found 5"),
    ("qrels_prefs", "q1 0 d1 1.x\n", r"relevance level '1.x' is not a number"),
    ("groups", "q1 0 d1\n", r"prefs:1: malformed line: expected 4 fields, found 3"),
    ("groups", "q1 0 d1 1.5\n", r"prefs:1: relevance label '1.5' is not a 32-bit integer"),
    ("groups", "q1 0 d1 1\nq1 1 d1 0\nq1 0 d1 2\n", r"query 'q1' judgment group '0' judges "
                                                     r"doc 'd1' twice"),
])
def test_malformed_files_name_the_line(tmp_path, reader, text, message):
    path = tmp_path / "prefs"
    path.write_bytes(text.encode())
    with pytest.raises(InputError, match=message):
        if reader == "groups":
            fastir.read_judgment_groups(path)
        else:
            fastir.read_prefs(path, format=reader)


def test_big_files_take_the_compiled_scanner(tmp_path):
    """Enough lines for the numba scanner (and its chunks): the same arrays as Python's."""
    rng = np.random.default_rng(3)
    lines = [f"q{q} u{g} s{s} d{d} {lv}\n" for q, g, s, d, lv in zip(
        rng.integers(0, 50, 20000), rng.integers(0, 3, 20000), rng.integers(0, 2, 20000),
        rng.integers(0, 400, 20000), rng.choice(["0", "1", "2.5", "3"], 20000))]
    path = tmp_path / "big"
    path.write_text("".join(lines))
    from fastir import _jit

    read = []
    for mode in ("python", "numba"):
        with _jit.forced(mode):
            read.append(fastir.read_prefs(path))
    assert read[0].to_dict() == read[1].to_dict()
    assert read[0].levels.tolist() == read[1].levels.tolist()
    assert read[0].subgroups.tolist() == read[1].subgroups.tolist()


def test_format_is_checked():
    with pytest.raises(ValueError, match="format must be 'prefs' or 'qrels_prefs'"):
        fastir.read_prefs("x", format="qrels_jg")
