"""Reading trec_eval's preference and judgment-group files (``-R prefs``, ``-R qrels_prefs``,
``-R qrels_jg``) with the byte scanner the qrels and runs are read with: plain, gzip, bz2 or
xz, paths, ``-`` (standard input) or file objects, and the same errors on malformed lines."""

import os
import re

import numpy as np

from fastir import _jit
from fastir.io import _scan
from fastir.io.trec import (
    _content_fields,
    _reading,
    _scan_file,
    read_bytes,
    source_name,
)
from fastir.model.ids import Ids, canonical_text, gather_spans
from fastir.model.prefs import build_groups, build_prefs

#: The layout and the name fields (group, subgroup) of each preference format.
PREFS_FORMATS = {"prefs": (_scan.PREFS, (1, 2)), "qrels_prefs": (_scan.QRELS_PREFS, (1,))}


def read_prefs(path, format="prefs", progress=False):
    """Read preference judgments.

    ``format="prefs"`` (trec_eval ``-R prefs``): ``qid jg jsg docno level`` per line: within
    a query, the judgment group ``jg`` (a user's information need) holds subgroups ``jsg``
    in which every document is preferred to those of a lower level (levels are numbers;
    only their order counts, and 0 marks a non-relevant document). ``format="qrels_prefs"``
    (``-R qrels_prefs``): an ordinary qrels file ``qid iter docno label`` read as
    preferences, the second column naming the judgment group, one subgroup each.

    ``path`` is a file path (plain, gzip, bz2 or xz, known by the first bytes), ``-`` for
    standard input or an open file object. Fields are separated by whitespace; blank lines
    and ``#`` comment lines are skipped; a line with another number of fields, or a level
    that is not a finite number, is an error naming the file and line.

    Returns
    -------
    Prefs
    """
    if format not in PREFS_FORMATS:
        raise ValueError(f"format must be 'prefs' or 'qrels_prefs', got {format!r}")
    layout, fields = PREFS_FORMATS[format]
    name = source_name(path)
    qids, docs, levels, names = _read(path, layout, fields, progress)
    subgroups = names[1] if len(names) > 1 else Ids.from_strings([b"0"]).take(
        np.zeros(len(levels), dtype=np.int64))
    return build_prefs(qids, docs, levels, names[0], subgroups, name)


def read_judgment_groups(path, progress=False):
    """Read judgment groups (trec_eval ``-R qrels_jg``): ``qid jg docno label`` per line, a
    qrels file whose second column names the judgment group (a user) the judgment is of.
    Labels are 32-bit integers; a doc judged twice in one group is an error.

    Returns
    -------
    JudgmentGroups
    """
    name = source_name(path)
    qids, docs, labels, names = _read(path, _scan.QRELS_JG, (1,), progress)
    return build_groups(qids, docs, labels.astype(np.int32), names[0], name)


def judgment_lines(source, qid, group, subgroup, doc):
    """The numbers of the lines of the preference file ``source`` that judge ``doc`` in
    ``subgroup`` of judgment group ``group`` of query ``qid`` (``-R prefs``: 5 fields;
    ``qrels_prefs``: 4, one subgroup), in file order; [] when ``source`` is no file to read
    again (standard input, a stream, arrays). For a message only: it reads the file again."""
    if not isinstance(source, str) or source == "-" or not os.path.isfile(source):
        return []
    try:
        buf = read_bytes(source).tobytes()
    except (OSError, ValueError):
        return []
    qid, group, subgroup, doc = (str(x).encode("utf-8", "surrogateescape")
                                 for x in (qid, group, subgroup, doc))
    found, line, counted = [], 1, 0
    for match in re.finditer(rb"(?<=[ \t])" + re.escape(doc) + rb"(?=[ \t\r\n]|$)", buf):
        start = buf.rfind(b"\n", 0, match.start()) + 1
        end = buf.find(b"\n", match.end())
        fields = buf[start:len(buf) if end < 0 else end].split()
        if fields[:4] == [qid, group, subgroup, doc] and len(fields) == 5 or \
                fields[:3] == [qid, group, doc] and len(fields) == 4:
            line += buf.count(b"\n", counted, start)
            counted = start
            if line not in found:
                found.append(line)
    return found


def _read(path, layout, fields, progress):
    """(query id, doc id, value and the ``fields``' ids) of every line, in file order."""
    name = source_name(path)
    with _reading(path, progress) as (bar, parsing), parsing():
        buf = read_bytes(path, bar)
        with _jit.tier(len(buf) // 32):
            first = _content_fields(buf)
            f_doc = _scan._line_fields(layout)[3]
            int_guess = first is not None and len(first) > f_doc and \
                canonical_text(first[f_doc])
            query_ids, block_code, block_first, docs, values = _scan_file(buf, layout, name,
                                                                          int_guess)
            spans = _jit.select(_scan.field_spans, len(values))(
                buf, len(values), np.array(fields, dtype=np.int64))
        names = [Ids(*gather_spans(buf, spans[:, k, 0], spans[:, k, 1] - spans[:, k, 0]))
                 for k in range(len(fields))]
    lengths = np.diff(np.append(block_first, len(values)))
    row_qids = query_ids.take(np.repeat(block_code, lengths))
    return row_qids, docs, values, names
