"""The scanner's fast path reads what its general code reads: a line of the common shape
(:func:`fastir.io._scan._plain_line` against ``_next_line`` and ``_read_line``, its doc id's
integer against ``canonical_int`` and its value's number against ``parse_float``; a chunk's
runs of such lines, ``_plain_lines``, against its reading token by token), compiled and as
Python."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import fastir
from fastir import _jit
from fastir.io import _scan
from fastir.model import ids

LAYOUTS = [_scan.RUN6, _scan.RUN3, _scan.QRELS, _scan.PREFS]
NUMBER = st.sampled_from([
    b"0", b"00", b"07", b"5640287", b"123456789012345678", b"1234567890123456789", b"-0", b"+0",
    b"29.6179", b"-0.5", b"+.5", b"5.", b".", b"-", b"+", b"-.", b"0.000", b"-0.0", b"1e5",
    b"1E-3", b"2.5e+2", b"1e", b"1e-", b"1.2.3", b"12a", b"9007199254740993",
    b"9007199254740992", b"0.1234567890123456789", b"123456789.123456789", b"1" * 30,
    b"0" * 25 + b"1", b"-" + b"9" * 18, b"1" + b"0" * 22, b"1" + b"0" * 23, b"inf", b"nan",
])
TOKEN = st.one_of(NUMBER, st.sampled_from([b"q", b"q1", b"Q0", b"7", b"1234567", b"d#2", b"#",
                                           b"x\x01y", b"\x7f", b"\xc3\xa9", b"a\x0bb", b"tag"]))
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


def _general(read_line, next_line, buf, start, layout):
    """What the general code reads of the line at ``start``: (position after it, query id,
    doc id and value spans), or None when it is not one content line without an error."""
    needed, exact, _, f_doc, f_value = _scan._line_fields(layout)
    stop = np.uint64(len(buf))
    p, line_start, lone = next_line(buf, np.uint64(start), stop)
    if lone or p >= stop or line_start != start:
        return None
    p, error, *spans = read_line(buf, p, stop, needed, exact, f_doc, f_value)
    return None if error else (int(p), *map(int, spans))


@pytest.mark.one_engine
@settings(max_examples=1000, deadline=None)
@given(lines(), st.sampled_from(LAYOUTS), st.sampled_from([b"", b"q", b"q1", b"q12", b"Q0"]))
@example(b"q Q0 7 1 -2.5 tag\n", _scan.RUN6, b"q1")  # (a query id the previous one starts with)
def test_a_plain_line_is_read_as_the_general_code_reads_it(line, layout, previous):
    """The same spans, the numbers of its doc id and value, and whether its query id has the
    bytes of the line before it (``previous``)."""
    start = len(previous) + 1
    buf = np.frombuffer(previous + b"\n" + line + b"next line\n", dtype=np.uint8)
    needed, _, _, f_doc, f_value = _scan._line_fields(layout)  # (a newline ends the chunk)
    for plain_line, read_line, next_line in zip(_forms("_plain_line"), _forms("_read_line"),
                                                _forms("_next_line")):
        after, *spans, doc, value, same = plain_line(buf, np.uint64(start), needed, f_doc,
                                                     f_value, np.uint64(0),
                                                     np.uint64(len(previous)))
        general = _general(read_line, next_line, buf, start, layout)
        if after:
            assert (int(after), *map(int, spans)) == general
            q0, q1, d0, d1, v0, v1 = map(int, spans)
            assert same == (buf[q0:q1].tobytes() == previous)
            assert doc == ids.canonical_int(buf, d0, d1)
            expected = _scan.parse_float(buf, v0, v1)
            assert np.float64(value).tobytes() == np.float64(expected).tobytes() or \
                np.isnan(value) and np.isnan(expected)
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


@st.composite
def run_lines(draw):
    """A line of the common shape from a few tokens, so that a query id, a ``Q0`` or a tag
    often repeats the line before's (or differs from it in a byte or its length)."""
    tokens = [draw(st.sampled_from(choices)) for choices in (
        [b"q1", b"q2", b"1", b"12", b"q1x"], [b"Q0", b"Q1", b"0", b"Q00"],
        [b"7", b"1234567", b"d1", b"07"], [b"1", b"22"], [b"29.6179", b"-0.5", b"1e5", b"3"],
        [b"tag", b"tag2", b"ta"])]
    return b" ".join(tokens[:draw(st.sampled_from([3, 4, 5, 6, 6, 6, 7]))]) + b"\n"


def _scan_one_chunk(scan_chunks, buf, layout, write, int_docs, group_cap):
    """What ``scan_chunks`` returns and writes for ``buf`` as one chunk."""
    n = len(buf)
    output = _scan.ScanOutput(np.zeros(n, dtype=np.uint8), np.zeros(n + 1, dtype=np.int64),
                              np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.float64),
                              np.zeros((group_cap, 3), dtype=np.int64))
    edges = np.array([0, n], dtype=np.int64)
    result = scan_chunks(buf, edges[:1], edges[1:], layout, write, int_docs,
                         np.array([0, n], dtype=np.int64), np.array([0, n], dtype=np.int64),
                         np.array([0, group_cap], dtype=np.int64), output)
    return [result.tolist()] + [a.tobytes() for a in output]


@pytest.mark.one_engine
@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(lines(), run_lines()), max_size=10), st.sampled_from(LAYOUTS),
       st.sampled_from([(True, True), (True, False), (False, False)]), st.integers(0, 6))
@example([b"q1 Q0 7 1 3 tag\n", b"q1 Q0 7 1 3 tag\n"], _scan.RUN6, (True, True), 1)
def test_a_chunk_reads_as_its_lines_read_token_by_token(lines, layout, modes, group_cap):
    """A chunk ending with a newline (its runs of lines of the common shape read by
    ``_plain_lines``) gives the rows, groups, error and error offset that the general code
    gives (the same bytes with a blank after the last newline: every line read token by
    token), compiled and as Python."""
    data = b"".join(lines)
    ends_with_newline = data.endswith(b"\n")
    buf = np.frombuffer(data, dtype=np.uint8)
    general = np.frombuffer(data + b" ", dtype=np.uint8)
    read = []
    for scan_chunks in (_jit.compiled(_scan.scan_chunks), _scan.scan_chunks):
        fast = _scan_one_chunk(scan_chunks, buf, layout, *modes, group_cap)
        slow = _scan_one_chunk(scan_chunks, general, layout, *modes, group_cap)
        if ends_with_newline:
            assert fast[0] == slow[0]
            assert fast[1:] == [a[:len(b)] for a, b in zip(slow[1:], fast[1:])]
        read.append(fast)
    assert read[0] == read[1]
