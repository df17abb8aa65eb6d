"""The scanner's fast path reads what its general code reads: a line of the common shape
(:func:`fastir.io._scan._plain_line` against ``_next_line`` and ``_read_line``), compiled and
as Python."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import _jit
from fastir.io import _scan

LAYOUTS = [_scan.RUN6, _scan.RUN3, _scan.QRELS, _scan.PREFS]
TOKEN = st.sampled_from([b"q1", b"Q0", b"7", b"1234567", b"d#2", b"#", b"29.6179", b"-0.5",
                         b"x\x01y", b"\x7f", b"\xc3\xa9", b"a\x0bb", b"tag"])
SEPARATOR = st.sampled_from([b" ", b" ", b" ", b"  ", b"\t", b"\r", b" \r"])
END = st.sampled_from([b"\n", b"\n", b"\r\n", b" \n", b"\r", b"\n\n"])


def _forms(name):
    """The helper ``name`` compiled, and as Python."""
    function = getattr(_scan, name)
    return [_jit.compiled(function), function]


@st.composite
def lines(draw):
    """A line of the common shape (one space between two tokens, a newline), or any line."""
    tokens = draw(st.lists(TOKEN, min_size=0, max_size=8))
    if draw(st.booleans()):
        return b" ".join(tokens) + b"\n"
    inner = b"".join(t + draw(SEPARATOR) for t in tokens[:-1]) + b"".join(tokens[-1:])
    return draw(st.sampled_from([b"", b" ", b"#"])) + inner + draw(END)


def _general(read_line, next_line, buf, layout):
    """What the general code reads of the line at 0: (position after it, query id, doc
    id and value spans), or None when it is not one content line without an error."""
    needed, exact, _, f_doc, f_value = _scan._line_fields(layout)
    stop = np.uint64(len(buf))
    p, line_start, lone = next_line(buf, np.uint64(0), stop)
    if lone or p >= stop or line_start != 0:
        return None
    p, error, *spans = read_line(buf, p, stop, needed, exact, f_doc, f_value)
    return None if error else (int(p), *map(int, spans))


@pytest.mark.one_engine
@settings(max_examples=400, deadline=None)
@given(lines(), st.sampled_from(LAYOUTS))
def test_a_plain_line_is_read_as_the_general_code_reads_it(line, layout):
    buf = np.frombuffer(line + b"next line\n", dtype=np.uint8)  # (a newline ends the chunk)
    needed, _, _, f_doc, f_value = _scan._line_fields(layout)
    for plain_line, read_line, next_line in zip(_forms("_plain_line"), _forms("_read_line"),
                                                _forms("_next_line")):
        after, *spans = plain_line(buf, np.uint64(0), needed, f_doc, f_value)
        general = _general(read_line, next_line, buf, layout)
        if after:
            assert (int(after), *map(int, spans)) == general
        tokens = line[:-1].split(b" ")
        if line.endswith(b"\n") and len(tokens) == needed and \
                all(t and min(t) > 32 for t in tokens) and not line.startswith(b"#"):
            assert after, line  # the common shape takes the fast path


@pytest.mark.one_engine
@pytest.mark.parametrize("first", [b"q1\tQ0\td{}\t1\t{}\ttag\n", b"# a comment {} {}\n"])
def test_a_chunk_of_other_lines_first_then_plain_ones_reads_as_python(tmp_path, first):
    """After :data:`~fastir.io._scan.PLAIN_MISSES` lines of another shape a chunk reads the
    rest token by token: the same rows."""
    lines = [first.replace(b"{}", b"%d") % (k, k) for k in range(2 * _scan.PLAIN_MISSES)]
    lines += [b"q2 Q0 d%d 1 %d.5 tag\n" % (k, k) for k in range(2 * _scan.PLAIN_MISSES)]
    path = tmp_path / "run"
    path.write_bytes(b"".join(lines))
    read = []
    for mode in ("python", "numba"):
        with _jit.forced(mode):
            run = fastir.read_run(path)
        read.append((run.query_ids.tolist(), run.starts.tolist(), run.doc_ids.tolist(),
                     run.scores.tolist()))
    assert read[0] == read[1]
    assert len(read[0][3]) == (2 if first.startswith(b"#") else 4) * _scan.PLAIN_MISSES
