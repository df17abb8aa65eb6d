"""What the tests of bad input assert, shared by every area's tests: an error raised by
fastir's own code naming the input (:func:`useful`), or a value equal to the naive
reference's (:func:`same_as_naive`); the drawn inputs of those tests (garbage files, odd
option values) and their bounded hypothesis settings (:func:`cases`)."""

import math
import os
import traceback

import numpy as np
from conftest import naive_values
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import fastir

FASTIR_DIR = os.path.dirname(fastir.__file__)

#: The measures the bad-input tests evaluate.
NAMES = ["AP", "nDCG@3", "P@5", "RR", "Bpref", "R@50", "NumRet", "NumRelRet"]


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
    """``res`` equals the naive reference of :data:`NAMES` on the same judgments and
    rankings (ids as text: fastir orders integer ids as their decimal strings)."""
    qrels, run = ({_text(q): {_text(d): v for d, v in docs.items()} for q, docs in x.items()}
                  for x in (qrels, run))
    want = naive_values(qrels, run, NAMES, **options)
    got = {_text(q): values for q, values in res.to_dict().items()}
    assert set(got) == set(want)
    for qid, values in want.items():
        for name, value in zip(NAMES, values):
            assert got[qid][name] == value or (math.isnan(value) and math.isnan(got[qid][name]))


# -- garbage files -------------------------------------------------------------------------
TOKEN = st.sampled_from([b"q1", b"q2", b"10", b"d1", b"d2", b"d#3", b"0", b"1", b"2", b"-1",
                         b"1.5", b"1e3", b"1_0", b"nan", b"inf", b"-inf", b"0x10", b"", b"\xff",
                         b"\xef\xbb\xbf", b"\x00", b"Q0", b"tag", b"99999999999999999999",
                         b"#", b"a" * 300, b"\xc3\xa9"])
SEP = st.sampled_from([b" ", b"\t", b"  ", b"\r", b"\x0b", b"\r\n"])


@st.composite
def garbage_files(draw, fields):
    """The bytes of a file of lines of about ``fields`` fields of odd tokens."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        count = draw(st.sampled_from([fields, fields, fields, 1, 3, 4, 5, 7]))
        tokens = [draw(TOKEN) for _ in range(count)]
        lines.append(draw(SEP).join(tokens))
    text = draw(st.sampled_from([b"\n", b"\r\n", b"\r"])).join(lines)
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + text


# -- odd options ---------------------------------------------------------------------------
#: Values a careless caller gives any option.
ODD = st.sampled_from([None, -1, 0, 1, 0.5, 2.5, float("nan"), float("inf"), 2**70, "x", "",
                       True, [], {}, (1,), np.int64(3), "zero", "skip", "9.0.8", "AP"])

#: Judgments and two systems small enough to evaluate under every drawn option.
SMALL_QRELS = {f"q{i}": {"a": i % 3, "b": 1, "c": 0} for i in range(4)}
SMALL_RUNS = {"x": {q: {"a": 1.0, "b": 0.5, "c": 2.0} for q in SMALL_QRELS},
              "y": {q: {"a": 0.2, "b": 0.9, "c": 0.1} for q in SMALL_QRELS}}


def odd_options(names, plain=None, odd=ODD):
    """Up to three of the options ``names``, each an ``odd`` value or one of its ``plain``
    values (``{name: [values]}``: so that many calls succeed, and their values are
    checked)."""
    plain = plain or {}
    return st.fixed_dictionaries({}, optional={
        name: st.one_of(odd, st.sampled_from(plain[name])) if name in plain else odd
        for name in names}).filter(lambda options: len(options) <= 3)


def odd_call(call, options):
    """The call with the drawn options: a result, or an error of fastir's own naming one of
    them (then None)."""
    try:
        return call(**options)
    except (ValueError, TypeError) as exc:
        useful(exc, *options, *[str(v) for v in options.values()], "measure")
        return None
