"""Files as a careless or hostile user writes them: one clear error naming the file, or the
values the naive reference gives on what the file means, read straight from the format's
definition."""

import math

from checks import NAMES, cases, garbage_files, same_as_naive, useful
from hypothesis import given

import fastir


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


