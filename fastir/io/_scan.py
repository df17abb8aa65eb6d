"""Byte-level scanner for TREC qrels and run files, and trec_eval's preference and
judgment-group files (numba, parallel over line-aligned chunks).

Two passes over the raw bytes. The first counts content lines, document-id bytes and
query groups (maximal blocks of consecutive lines with the same query id) per chunk; the
second writes, at each chunk's offsets, the packed document ids, the numeric field and
the query group of every line. Query ids are interned later from the (few) groups.

Within a chunk, a run of lines of the common shape (the needed fields, one space between
two, a newline) is read by one loop, :func:`_plain_lines`, its per-line helpers inlined
(``helper(inline=True)``): a call a line would pass the buffer, the outputs and a tuple of
results through memory, which costs more than the line's bytes. Any other line is read
token by token.

Numbers are parsed in place when the decimal-to-double conversion is exact (at most 19
significant digits, mantissa below 2**53, power of ten up to 22: one correctly rounded
multiplication or division). Any other token is marked and converted afterwards by Python's
correctly rounded ``float``; the result is always the double ``strtod`` gives.
"""

from collections import namedtuple

import numpy as np

from fastir._jit import helper, jit, pjit, prange, python_variant
from fastir.model.ids import canonical_int

#: What a writing scan fills: the doc ids (bytes ``doc_data`` with ``doc_offsets``, or
#: integers ``doc_values``), the number of every line (``values``) and the (query id start,
#: query id end, first row) of each query block (``groups``).
ScanOutput = namedtuple("ScanOutput", "doc_data doc_offsets doc_values values groups")

# Line layouts.
RUN6 = 0  # qid iter docno rank score tag [ignored...]
RUN3 = 1  # qid docno rank (MS MARCO); score = -rank
QRELS = 2  # qid iter docno rel
PREFS = 3  # qid jg jsg docno level (trec_eval -R prefs; more fields: field_spans)
QRELS_PREFS = 4  # qid jg docno level (-R qrels_prefs: a qrels line whose label is a number)
QRELS_JG = 5  # qid jg docno rel (-R qrels_jg: the iter column names the judgment group)
QRELS_REAL = 6  # qid iter docno rel, rel a real number (read_qrels(..., labels="float"))

# Per-line error codes (0 = fine).
TOO_FEW_FIELDS = 1
TOO_MANY_FIELDS = 2
BAD_LABEL = 3
NOT_INT = 4  # a doc id is not canonical decimal (single pass: start again as text)
GROUPS_FULL = 5  # more query blocks than the chunk's room (single pass: start again)
LONE_CR = 6  # a carriage return not followed by a newline (old Mac line ends)

_SLOW = np.float64(np.nan)  # marks a number token that Python must convert
_POW10 = np.array([10.0**k for k in range(23)])
#: Lines of another shape a chunk tries :func:`_plain_line` on before it reads the rest
#: token by token alone (a file of tabs, say, would otherwise read each line's start twice).
PLAIN_MISSES = 64


@helper
def parse_float(buf, start, end):
    """The double of token ``buf[start:end]``, or NaN when Python must convert it."""
    p = start
    negative = False
    c = buf[p]
    if c == 43 or c == 45:  # '+' or '-'
        negative = c == 45
        p += 1
    p, mantissa, n_digits, exp10, ok = _parse_digits(buf, p, end)
    if not ok or n_digits == 0:
        return _SLOW
    if p < end:  # an exponent, or garbage: Python decides
        e, ok = _parse_exponent(buf, p, end)
        if not ok:
            return _SLOW
        exp10 += e
    if mantissa == 0:
        value = 0.0
    elif mantissa > 9007199254740992 or exp10 > 22 or exp10 < -22:
        return _SLOW
    elif exp10 >= 0:
        value = np.float64(mantissa) * _POW10[exp10]
    else:
        value = np.float64(mantissa) / _POW10[-exp10]
    return -value if negative else value


@helper
def _parse_digits(buf, p, end):
    """The digits and decimal point of a number from ``p``: (position after them, mantissa,
    digits read, power of ten, ok). Not ok: more than 18 significant digits (the mantissa
    would overflow an int64), which Python must convert."""
    mantissa = 0
    n_sig = 0  # significant digits kept in the mantissa
    n_digits = 0
    exp10 = 0
    dot = False
    while p < end:
        c = buf[p]
        if 48 <= c <= 57:
            n_digits += 1
            if n_sig > 0 or c != 48:
                n_sig += 1
                if n_sig > 18:
                    return p, mantissa, n_digits, exp10, False
                mantissa = mantissa * 10 + np.int64(c - 48)
                if dot:
                    exp10 -= 1
            elif dot:
                exp10 -= 1
        elif c == 46 and not dot:  # '.'
            dot = True
        else:
            break
        p += 1
    return p, mantissa, n_digits, exp10, True


@helper
def _parse_exponent(buf, p, end):
    """The exponent ``buf[p:end]`` of a number (``e`` or ``E``, a sign, digits): (value, ok);
    not ok for anything else, or an exponent too large to matter here."""
    if buf[p] != 101 and buf[p] != 69:
        return 0, False
    p += 1
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        negative = buf[p] == 45
        p += 1
    if p == end:
        return 0, False
    e = 0
    while p < end:
        c = buf[p]
        if c < 48 or c > 57 or e > 100000:
            return 0, False
        e = e * 10 + np.int64(c - 48)
        p += 1
    return (-e if negative else e), True


@helper
def _parse_label(buf, start, end):
    """Integer label: optional sign and digits. Returns (value, ok)."""
    p = start
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        negative = buf[p] == 45
        p += 1
    if p == end:
        return 0.0, False
    value = 0
    while p < end:
        c = buf[p]
        if c < 48 or c > 57 or value > 2**31:
            return 0.0, False
        value = value * 10 + (c - 48)
        p += 1
    if negative:
        value = -value
    if value < -(2**31) or value >= 2**31:
        return 0.0, False
    return np.float64(value), True


@jit
def _line_fields(layout):
    """(needed, exact, qid field, doc field, value field) of a layout."""
    if layout == RUN6:
        return 6, False, 0, 2, 4
    if layout == RUN3:
        return 3, True, 0, 1, 2
    if layout == PREFS:
        return 5, True, 0, 3, 4
    return 4, True, 0, 2, 3


@jit
def integer_values(layout):
    """Whether a layout's value field is an integer label (else a number, as strtod reads
    it)."""
    return layout == QRELS or layout == QRELS_JG


@helper
def _same_bytes(buf, a0, a1, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for k in range(a1 - a0):
        if buf[a0 + k] != buf[b0 + k]:
            return False
    return True


@jit
def _blank(c):
    """Whitespace inside a line (isspace without the newline)."""
    return c == 32 or (9 <= c <= 13 and c != 10)


@helper
def _lone_cr(buf, p, stop):
    """Whether the carriage return at ``p`` is not the end of a CR LF line end."""
    return p + np.uint64(1) < stop and buf[p + np.uint64(1)] != 10


@jit
def _token(c):
    return c != 32 and (c < 9 or c > 13)


@helper
def _skip_blanks(buf, p, stop):
    """The first position from ``p`` that is not a blank: (position, a lone carriage return
    stopped it)."""
    one = np.uint64(1)
    while p < stop and _blank(buf[p]):
        if buf[p] == 13 and _lone_cr(buf, p, stop):
            return p, True
        p += one
    return p, False


@helper
def _skip_to_newline(buf, p, stop):
    """The position of the newline ending the line of ``p`` (or ``stop``): (position, a
    lone carriage return stopped it)."""
    one = np.uint64(1)
    while p < stop and buf[p] != 10:
        if buf[p] == 13 and _lone_cr(buf, p, stop):
            return p, True
        p += one
    return p, False


@helper
def _next_line(buf, p, stop):
    """Skip blank and comment lines from the line start ``p``: (position of the next content
    line's first token, or ``stop`` or beyond when there is none; the start of its line; a
    lone carriage return found, in the line of that start)."""
    one = np.uint64(1)
    while p < stop:
        line_start = p
        p, lone = _skip_blanks(buf, p, stop)
        if lone or p == stop:
            return p, line_start, lone
        if buf[p] == 10:
            p += one
        elif buf[p] == 35:  # '#': a comment line (which may hold any byte)
            while p < stop and buf[p] != 10:
                p += one
            p += one
        else:
            return p, line_start, False
    return p, p, False


@helper
def _read_line(buf, p, stop, needed, exact, f_doc, f_value):
    """Read the content line whose first token is at ``p``, token by token up to the
    ``needed`` fields (the layout's :func:`_line_fields`): (position after its newline,
    error code or 0, query id start and end, doc id start and end, value start and end)."""
    one = np.uint64(1)
    q0 = q1 = d0 = d1 = v0 = v1 = np.uint64(0)
    n_fields = 0
    while True:
        a = p
        while p < stop and _token(buf[p]):
            p += one
        if n_fields == 0:
            q0, q1 = a, p
        elif n_fields == f_doc:
            d0, d1 = a, p
        elif n_fields == f_value:
            v0, v1 = a, p
        n_fields += 1
        p, lone = _skip_blanks(buf, p, stop)
        if lone:
            return p, LONE_CR, q0, q1, d0, d1, v0, v1
        if p == stop or buf[p] == 10 or n_fields == needed:
            break
    if n_fields < needed:
        return p, TOO_FEW_FIELDS, q0, q1, d0, d1, v0, v1
    if exact and p < stop and buf[p] != 10:
        return p, TOO_MANY_FIELDS, q0, q1, d0, d1, v0, v1
    p, lone = _skip_to_newline(buf, p, stop)  # ignored fields (the run tag and beyond)
    return p + one, LONE_CR if lone else 0, q0, q1, d0, d1, v0, v1


@helper(inline=True)
def _plain_line(buf, p, needed, f_doc, f_value, prev_q0, prev_q1):
    """Read the line from ``p`` when it has the common shape, in one branch a byte: it
    starts with a token that is not a comment, holds ``needed`` tokens of bytes above the
    space with one space between two, and ends with a newline after the last. Returns
    (position after its newline, or 0 when it has another shape: :func:`_read_line` reads
    it; query id start and end, doc id start and end, value start and end, the doc id's
    :func:`~fastir.model.ids.canonical_int`, the value's :func:`parse_float`, whether the
    query id has the bytes of ``buf[prev_q0:prev_q1]``, an earlier span): on such a line,
    what :func:`_next_line` and :func:`_read_line` find, the rest read while tokenising.
    The caller guarantees a newline at or after ``p`` (the chunk ends with one): a token's
    scan stops there. Each field has its own code (no loop over the fields): a token's end
    is then a branch the processor predicts from the lines before."""
    no = np.uint64(0)
    q0 = q1 = d0 = d1 = v0 = v1 = no
    doc = np.int64(-1)
    value = _SLOW
    same = False
    if buf[p] == 35:  # '#': a comment line
        return no, q0, q1, d0, d1, v0, v1, doc, value, same
    q0 = p
    q1, same = _same_token(buf, p, prev_q0, prev_q1)
    d0 = _skip_tokens(buf, _after_token(buf, q0, q1, 0, needed), 1, f_doc, needed)
    if d0 == no:
        return no, q0, q1, d0, d1, v0, v1, doc, value, same
    d1, doc = _int_token(buf, d0)
    v0 = _skip_tokens(buf, _after_token(buf, d0, d1, f_doc, needed), f_doc + 1, f_value,
                      needed)
    if v0 == no:
        return no, q0, q1, d0, d1, v0, v1, doc, value, same
    v1, value = _float_token(buf, v0)
    after = _skip_tokens(buf, _after_token(buf, v0, v1, f_value, needed), f_value + 1,
                         needed, needed)
    return after, q0, q1, d0, d1, v0, v1, doc, value, same


@helper
def _after_token(buf, a, p, k, needed):
    """The position after the byte ending token number ``k`` of a line, ``buf[a:p]``: a
    space, or the newline after the last of ``needed`` tokens; 0 when the token is empty or
    another byte ends it."""
    if p == a or buf[p] != (10 if k == needed - 1 else 32):
        return np.uint64(0)
    return p + np.uint64(1)


@helper
def _skip_tokens(buf, p, k0, k1, needed):
    """The position after tokens number ``k0`` to ``k1 - 1`` of a line, from ``p``: bytes
    above the space, each ended as :func:`_after_token` says; 0 when ``p`` is 0 or a token
    is not."""
    for k in range(k0, k1):
        if p == 0:
            break
        a = p
        while buf[p] > 32:
            p += np.uint64(1)
        p = _after_token(buf, a, p, k, needed)
    return p


@helper
def _same_token(buf, p, prev_q0, prev_q1):
    """The end of the token of bytes above the space at ``p``, and whether it has the bytes
    of ``buf[prev_q0:prev_q1]`` (a span before ``p``, or empty), compared in the same pass."""
    one = np.uint64(1)
    a = p
    same = True
    while buf[p] > 32:
        same &= buf[p] == buf[prev_q0 + (p - a)]  # (at most p: within the buffer)
        p += one
    return p, same and p - a == prev_q1 - prev_q0


@helper
def _int_token(buf, p):
    """The end of the token of bytes above the space at ``p``, and its
    :func:`~fastir.model.ids.canonical_int`, in one pass."""
    one = np.uint64(1)
    a = p
    value = 0  # (a Python int as Python: a long token does not overflow)
    digits = True
    while buf[p] > 32:
        c = buf[p]
        digits &= 48 <= c <= 57
        value = value * 10 + (int(c) - 48)
        p += one
    n = p - a
    if not digits or n == 0 or n > 18 or (n > 1 and buf[a] == 48):
        return p, np.int64(-1)
    return p, value


@helper(inline=True)
def _float_token(buf, p):
    """The end of the token of bytes above the space at ``p``, and its :func:`parse_float`:
    read in the same pass when it is a sign, digits and a decimal point (at most 18 digits
    in all), else by :func:`parse_float`."""
    one = np.uint64(1)
    a = p
    c = buf[p]
    if c == 43 or c == 45:  # '+' or '-'
        p += one
    mantissa = 0
    d = p
    while 48 <= buf[p] <= 57:
        mantissa = mantissa * 10 + (int(buf[p]) - 48)
        p += one
    n_digits = p - d
    n_fraction = np.uint64(0)
    if buf[p] == 46:  # '.'
        p += one
        f = p
        while 48 <= buf[p] <= 57:
            mantissa = mantissa * 10 + (int(buf[p]) - 48)
            p += one
        n_fraction = p - f
        n_digits += n_fraction
    if buf[p] > 32 or n_digits == 0 or n_digits > 18 or mantissa > 9007199254740992:
        while buf[p] > 32:
            p += one
        return p, parse_float(buf, np.int64(a), np.int64(p))
    value = np.float64(mantissa) / _POW10[n_fraction]
    return p, -value if c == 45 else value


@helper
def _line_value(buf, layout, v0, v1):
    """(number of a line's value field ``buf[v0:v1]``, ok): an integer label, or a number
    as strtod reads it (NaN: Python converts it), negated for MS MARCO's ranks."""
    if integer_values(layout):
        return _parse_label(buf, np.int64(v0), np.int64(v1))
    value = parse_float(buf, np.int64(v0), np.int64(v1))
    if layout == RUN3:
        value = -value
    return value, True


@helper(inline=True)
def _row_numbers(buf, layout, int_docs, plain, d0, d1, v0, v1, doc, score):
    """(doc id's integer, value, error code or 0) of a row: a ``plain`` line
    (:func:`_plain_line`) brings its doc id's integer ``doc`` and its value's number
    ``score``; another line's are read here, its doc id's only when ``int_docs``."""
    if plain and not integer_values(layout):
        value = -score if layout == RUN3 else score
    else:
        value, ok = _line_value(buf, layout, v0, v1)
        if not ok:
            return doc, value, BAD_LABEL
    if int_docs:
        if not plain:
            doc = canonical_int(buf, np.int64(d0), np.int64(d1))
        if doc < 0:
            return doc, value, NOT_INT
    return doc, value, 0


@helper(inline=True)
def _write_row(buf, int_docs, r, b, d0, d1, doc, value, output):
    """Store row ``r`` in ``output``: its ``value``, and its doc id (the integer ``doc`` when
    ``int_docs``, else the bytes ``buf[d0:d1]`` at ``b``)."""
    doc_data, doc_offsets, doc_values, values, _ = output
    if int_docs:
        doc_values[r] = doc
    else:
        length = np.int64(d1 - d0)
        first = np.int64(d0)
        for k in range(length):
            doc_data[b + k] = buf[first + k]
        doc_offsets[r + 1] = b + length
    values[r] = value


@helper
def _scan_chunk(buf, start, end, layout, write, int_docs, row, byte, group, group_cap, output):
    """Scan one chunk line by line: runs of lines of the common shape by
    :func:`_plain_lines` (when the chunk ends with a newline, until :data:`PLAIN_MISSES`
    lines were not), any other line token by token up to the needed fields.

    Returns (rows, doc bytes, groups, error code, error offset, all docs canonical
    integers); with ``write`` it also stores every row at ``row``/``byte``/``group``, the
    doc ids as integers when ``int_docs`` (see :meth:`fastir.model.ids.Ids.as_canonical_ints`).
    Positions are unsigned so that numba indexes without negative-index checks (the loops
    are byte-at-a-time). ``output`` is a :data:`ScanOutput`.
    """
    needed, exact, _, f_doc, f_value = _line_fields(layout)
    stop = np.uint64(end)
    p = np.uint64(start)
    at = (row, byte, group, group_cap)
    state = (0, 0, 0, True, np.uint64(0), np.uint64(0))
    misses = 0 if stop > p and buf[stop - np.uint64(1)] == 10 else PLAIN_MISSES
    while p < stop:
        if misses < PLAIN_MISSES:
            p, state, error, line_start = _plain_lines(buf, p, stop, layout, write, int_docs,
                                                       at, output, state)
            if error:
                return _chunk_result(state, error, line_start)
            if p >= stop:
                break
            misses += 1
        p, line_start, lone = _next_line(buf, p, stop)
        if lone:
            return _chunk_result(state, LONE_CR, line_start)
        if p >= stop:
            break
        p, error, q0, q1, d0, d1, v0, v1 = _read_line(buf, p, stop, needed, exact, f_doc,
                                                           f_value)
        if not error:
            state, error = _add_line(buf, layout, write, int_docs, at, output, state, (
                False, False, q0, q1, d0, d1, v0, v1, np.int64(-1), _SLOW))
        if error:
            return _chunk_result(state, error, line_start)
    return _chunk_result(state, 0, np.uint64(0))


@helper
def _chunk_result(state, error, line_start):
    """What :func:`_scan_chunk` returns, from its ``state`` (see :func:`_add_line`) and an
    error code (0: none) at the line starting at ``line_start``."""
    n_rows, n_bytes, n_groups, all_int, _, _ = state
    return n_rows, n_bytes, n_groups, error, np.int64(line_start) if error else -1, all_int


@helper
def _plain_lines(buf, p, stop, layout, write, int_docs, at, output, state):
    """Read the lines of the common shape (:func:`_plain_line`) from ``p`` on, adding each
    to ``state`` (:func:`_add_line`): (position of the first line of another shape, or
    ``stop``; the state; error code or 0; the start of the line in error). The chunk
    ``buf[:stop]`` ends with a newline."""
    needed, _, _, f_doc, f_value = _line_fields(layout)
    while p < stop:
        line_start = p
        after, q0, q1, d0, d1, v0, v1, doc, score, same = _plain_line(
            buf, p, needed, f_doc, f_value, state[4], state[5])
        if not after:
            break
        p = after
        state, error = _add_line(buf, layout, write, int_docs, at, output, state, (
            True, same, q0, q1, d0, d1, v0, v1, doc, score))
        if error:
            return p, state, error, line_start
    return p, state, 0, p


@helper(inline=True)
def _add_line(buf, layout, write, int_docs, at, output, state, line):
    """Add a content ``line`` (plain, same, query id start and end, doc id start and end,
    value start and end, doc, score: a ``plain`` line, :func:`_plain_line`, also brings
    ``same``, its doc id's integer ``doc`` and its value's number ``score``) to a chunk's
    ``state`` (rows, doc bytes, groups, all docs canonical integers, the last group's query
    id span). With ``write`` it stores the line's row, and its group when its query id
    starts one, where ``at`` says (the chunk's first row, doc byte and group, its room for
    groups). Returns (the new state, error code or 0; on an error the state counts what was
    stored)."""
    plain, same, q0, q1, d0, d1, v0, v1, doc, score = line
    row, byte, group, group_cap = at
    n_rows, n_bytes, n_groups, all_int, prev_q0, prev_q1 = state
    if n_groups == 0 or not (same or not plain and _same_bytes(
            buf, np.int64(q0), np.int64(q1), np.int64(prev_q0), np.int64(prev_q1))):
        if write:  # the query id's bytes and the group's first row
            if n_groups == group_cap:
                return state, GROUPS_FULL
            output.groups[group + n_groups, 0] = np.int64(q0)
            output.groups[group + n_groups, 1] = np.int64(q1)
            output.groups[group + n_groups, 2] = row + n_rows
        n_groups += 1
        prev_q0 = q0
        prev_q1 = q1
    if write:
        doc, value, error = _row_numbers(buf, layout, int_docs, plain, d0, d1, v0, v1, doc,
                                         score)
        if error:
            return (n_rows, n_bytes, n_groups, all_int and error != NOT_INT, prev_q0,
                    prev_q1), error
        _write_row(buf, int_docs, row + n_rows, byte + n_bytes, d0, d1, doc, value, output)
    elif all_int:
        all_int = (doc if plain else canonical_int(buf, np.int64(d0), np.int64(d1))) >= 0
    return (n_rows + 1, n_bytes + np.int64(d1 - d0), n_groups, all_int, prev_q0, prev_q1), 0


@pjit
def count_lines(buf, starts, ends):
    """Lines of each chunk: its newlines, and one more if it does not end with one."""
    out = np.zeros(len(starts), dtype=np.int64)
    for c in prange(len(starts)):
        n = 0
        for byte in buf[starts[c]:ends[c]]:  # (a slice's loop has no index checks: SIMD)
            n += byte == 10
        out[c] = n + (ends[c] > starts[c] and buf[ends[c] - 1] != 10)
    return out


@pjit
def scan_chunks(buf, starts, ends, layout, write, int_docs, row0, byte0, group0, output):
    """Scan every chunk (in parallel); with ``write``, store its rows at its offsets in
    ``output`` (a :data:`ScanOutput`; chunk ``c`` may hold up to ``group0[c + 1] - group0[c]``
    query blocks). Per chunk: (rows, doc bytes, groups, error code, error offset, all doc
    ids canonical integers)."""
    out = np.zeros((len(starts), 6), dtype=np.int64)
    for c in prange(len(starts)):
        rows, n_bytes, n_groups, error, offset, all_int = _scan_chunk(
            buf, starts[c], ends[c], layout, write, int_docs, row0[c], byte0[c], group0[c],
            group0[c + 1] - group0[c], output)
        out[c, 0] = rows
        out[c, 1] = n_bytes
        out[c, 2] = n_groups
        out[c, 3] = error
        out[c, 4] = offset
        out[c, 5] = all_int
    return out


@helper
def _field_span(buf, p, end, field):
    """(start, end) of field number ``field`` of the line ``buf[p:end]``."""
    k = 0
    while p < end:
        while p < end and _blank(buf[p]):
            p += 1
        start = p
        while p < end and _token(buf[p]):
            p += 1
        if k == field:
            return start, p
        k += 1
    return end, end


@jit
def slow_tokens(buf, starts, ends, layout, rows_wanted, row0):
    """(start, end) of the number token of each row in ``rows_wanted`` (sorted), rescanning
    only the chunks that hold them."""
    field = _line_fields(layout)[4]
    out = np.empty((len(rows_wanted), 2), dtype=np.int64)
    k = 0
    for c in range(len(starts)):
        if k == len(rows_wanted):
            break
        if c + 1 < len(row0) and rows_wanted[k] >= row0[c + 1]:
            continue
        row = row0[c]
        p = starts[c]
        end = ends[c]
        while p < end and k < len(rows_wanted):
            line_end = p
            while line_end < end and buf[line_end] != 10:
                line_end += 1
            first = p
            while first < line_end and _blank(buf[first]):
                first += 1
            if first < line_end and buf[first] != 35:  # a content line
                if row == rows_wanted[k]:
                    out[k, 0], out[k, 1] = _field_span(buf, first, line_end, field)
                    k += 1
                row += 1
            p = line_end + 1
    return out


@jit
def field_spans(buf, n_rows, fields):
    """(start, end) of the fields numbered ``fields`` of each of the ``n_rows`` content lines
    (blank and ``#`` lines skipped, as the scanner skips them): an (n_rows, len(fields), 2)
    array. Read after a scan has checked every line."""
    out = np.zeros((n_rows, len(fields), 2), dtype=np.int64)
    end = len(buf)
    p = 0
    row = 0
    while p < end and row < n_rows:
        line_end = p
        while line_end < end and buf[line_end] != 10:
            line_end += 1
        first = p
        while first < line_end and _blank(buf[first]):
            first += 1
        if first < line_end and buf[first] != 35:  # a content line
            for k in range(len(fields)):
                out[row, k, 0], out[row, k, 1] = _field_span(buf, first, line_end, fields[k])
            row += 1
        p = line_end + 1
    return out


@python_variant(field_spans)
def field_spans(buf, n_rows, fields):
    data = buf.tobytes()
    out = np.zeros((n_rows, len(fields), 2), dtype=np.int64)
    wanted = fields.tolist()
    row = 0
    offset = 0
    for line in data.split(b"\n"):
        tokens = line.split(None, max(wanted) + 1)
        if tokens and tokens[0][0] != 35 and row < n_rows:
            at = 0
            for k in range(max(wanted) + 1):
                at = line.index(tokens[k], at)
                if k in wanted:
                    out[row, wanted.index(k)] = (offset + at, offset + at + len(tokens[k]))
                at += len(tokens[k])
            row += 1
        offset += len(line) + 1
    return out
