"""Every input form (fastir.io.inputs.FORMS) fed the same qrels and run: the same values, and
the same error for a bad score, a NaN, a None and a doc ranked twice, whichever the form."""

import re
import subprocess
import sys
from collections import namedtuple

import pytest

import fastir
from fastir.io import records as R
from fastir.io.inputs import FORMS

pytestmark = pytest.mark.one_engine

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1, "d9": 1}, "q3": {"d4": 1}}
RUN = {"q1": {"d1": 0.5, "d2": 0.9, "d5": 0.1}, "q2": {"d9": 1.0, "d1": 0.5, "d3": 0.5},
       "q4": {"d1": 2.0}}
MEASURES = ["AP", "nDCG@3", "P@2", "RR", "NumRet", "R@2"]
Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])


def rows(table):
    return [(q, d, v) for q, docs in table.items() for d, v in docs.items()]


def file_of(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def run_forms(run, tmp_path):
    """``run`` (a dict, or its rows with repeats) in every form: name -> value."""
    table = rows(run) if isinstance(run, dict) else run
    forms = {
        "records": [ScoredDoc(*r) for r in table],
        "tuples": iter([tuple(r) for r in table]),
        "file": file_of(tmp_path, "run", [f"{q} Q0 {d} 1 {s} t\n" for q, d, s in table]),
    }
    if isinstance(run, dict):
        forms.update({"dict": run, "Run": fastir.Run.from_dict(run)})
    pd = pytest.importorskip("pandas")
    forms["DataFrame"] = pd.DataFrame(table, columns=["query_id", "doc_id", "score"])
    pa = pytest.importorskip("pyarrow")
    try:  # (an Arrow column has one type: a score that is text or a bool has no column)
        scores = pa.array([r[2] for r in table], pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return forms
    forms["Arrow"] = pa.table({"query_id": [r[0] for r in table],
                               "doc_id": [r[1] for r in table], "score": scores})
    return forms


def qrels_forms(qrels, tmp_path):
    table = rows(qrels)
    forms = {"dict": qrels, "Qrels": fastir.Qrels.from_dict(qrels),
             "records": [Qrel(q, d, v, "0") for q, d, v in table],
             "tuples": iter(table),
             "file": file_of(tmp_path, "qrels", [f"{q} 0 {d} {v}\n" for q, d, v in table])}
    from fastir import ranx as fastir_ranx

    forms["fastir.ranx"] = fastir_ranx.Qrels(qrels)
    pd = pytest.importorskip("pandas")
    forms["DataFrame"] = pd.DataFrame(table, columns=["query_id", "doc_id", "relevance"])
    pa = pytest.importorskip("pyarrow")
    forms["Arrow"] = pa.table({"query_id": [r[0] for r in table],
                               "doc_id": [r[1] for r in table],
                               "relevance": [r[2] for r in table]})
    return forms


def test_the_table_lists_every_form():
    names = [form.name for form in FORMS]
    assert len(set(names)) == len(names) >= 8


def test_every_form_gives_the_same_values(tmp_path):
    expected = fastir.evaluate(QRELS, RUN, MEASURES).to_dict()
    from fastir import ranx as fastir_ranx

    runs = run_forms(RUN, tmp_path)
    runs["fastir.ranx"] = fastir_ranx.Run(RUN)
    ranx = pytest.importorskip("ranx")
    runs["ranx"] = ranx.Run(RUN)
    for q_name in qrels_forms(QRELS, tmp_path):
        for r_name in run_forms(RUN, tmp_path):  # (fresh forms: iterators are read once)
            qrels, run = qrels_forms(QRELS, tmp_path)[q_name], run_forms(RUN, tmp_path)[r_name]
            got = fastir.evaluate(qrels, run, MEASURES).to_dict()
            assert got == expected, (q_name, r_name)
    for r_name, run in runs.items():
        assert fastir.evaluate(QRELS, run, MEASURES).to_dict() == expected, r_name
    assert fastir.evaluate(ranx.Qrels(QRELS), RUN, MEASURES).to_dict() == expected


def _message(exc):
    """An error without its source (``run dict: ``, ``run records: ``...)."""
    return str(exc).split(": ", 1)[1]


BAD = {  # case -> (the run's rows, what the error says)
    "text": ([("q1", "d1", 0.5), ("q1", "d2", "high"), ("q2", "d1", 1.0)],
             "query 'q1' doc 'd2': score 'high' is not a number"),
    "NaN": ([("q1", "d1", 0.5), ("q2", "d2", float("nan")), ("q2", "d1", 1.0)],
            "query 'q2' doc 'd2': score nan is not finite"),
    "None": ([("q1", "d1", 0.5), ("q1", "d3", 0.25), ("q2", "d7", None)],
             "query 'q2' doc 'd7': score None is not a number"),
    "bool": ([("q1", "d1", 0.5), ("q2", "d4", True)],
             "query 'q2' doc 'd4': score True is not a number"),
    "twice": ([("q1", "d1", 0.5), ("q1", "d2", 0.25), ("q1", "d1", 0.75)],
              "query 'q1' ranks doc 'd1' twice"),
}
#: Forms that cannot hold a case as given: a DataFrame's float column holds None as NaN, an
#: Arrow float column True as 1.0, and a dict holds a doc once per query (the same id twice
#: only as bytes and text: b"d1" and "d1"); an Arrow column has one type (run_forms leaves
#: Arrow out of a case it cannot hold: text among the scores).
CANNOT = {("None", "DataFrame"), ("bool", "Arrow")}


@pytest.mark.parametrize("case", list(BAD))
def test_every_form_gives_the_same_error(tmp_path, case):
    table, message = BAD[case]
    runs = run_forms(table, tmp_path)
    if case == "twice":
        runs["dict"] = {"q1": {"d1": 0.5, "d2": 0.25, b"d1": 0.75}}
    else:
        runs["dict"] = {}
        for q, d, s in table:
            runs["dict"].setdefault(q, {})[d] = s
    file = runs.pop("file")
    for name, run in runs.items():
        if (case, name) in CANNOT:
            continue
        with pytest.raises(fastir.InputError) as info:
            fastir.evaluate(QRELS, run, ["P@5"])
        assert _message(info.value).startswith(message), name
    if case in ("NaN", "twice", "text"):  # (a file names the line)
        with pytest.raises(fastir.InputError, match=r"run:[23]: "):
            fastir.evaluate(QRELS, file, ["P@5"])
    if case == "None":  # (a DataFrame's float column holds None as NaN)
        with pytest.raises(fastir.InputError, match="query 'q2' doc 'd7': score nan is not "):
            fastir.evaluate(QRELS, runs["DataFrame"], ["P@5"])


@pytest.mark.parametrize("qrels, message", [
    ({"q": {"d": 1.5}}, "query 'q' doc 'd': label 1.5 is not a 32-bit integer"),
    ({"q": {"a": 1, "d": "1"}}, "query 'q' doc 'd': label '1' is not a 32-bit integer"),
    ({"q": {"d": None}}, "query 'q' doc 'd': label None is not a 32-bit integer"),
    ({"q": {"a": 0, "d": 2**40}}, "query 'q' doc 'd': label 1099511627776 is not a 32-bit"),
])
def test_bad_labels_are_named_alike_in_dicts_and_records(qrels, message):
    for given in (qrels, rows(qrels)):
        with pytest.raises(fastir.InputError) as info:
            fastir.evaluate(given, RUN, ["P@5"])
        assert _message(info.value).startswith(message)


def test_dicts_of_every_id_kind_are_read_alike():
    """Ids a bulk join cannot take (bytes, integers, a NUL inside, other text) give the
    values of the same ids as plain text."""
    want = fastir.Run.from_dict({"q": {"a\0b": 1.0, "é": 0.5, "c": 0.25}}).to_dict()
    assert want == {"q": {"a\0b": 1.0, "é": 0.5, "c": 0.25}}
    assert fastir.Run.from_dict({"q": {b"a": 1.0, b"c": 0.5}}).to_dict() == \
        {"q": {"a": 1.0, "c": 0.5}}
    assert fastir.Run.from_dict({7: {3: 1.0, 12: 0.5}, 2: {}}).to_dict() == \
        {2: {}, 7: {3: 1.0, 12: 0.5}}
    with pytest.raises(fastir.InputError, match="all str/bytes or all integers"):
        fastir.Run.from_dict({"q": {"a": 1.0, 3: 0.5}})
    qrels = {"q": {"\udcff": 1, "x": 0}}  # (an undecodable byte, as surrogateescape reads it)
    assert fastir.Qrels.from_dict(qrels).to_dict() == qrels
    empty = fastir.Run.from_dict({"q": {}, "r": {}})
    assert empty.n_queries == 2 and len(empty) == 0


# -- records of several layouts (issue 28, item 11) -------------------------------------------
Reordered = namedtuple("Reordered", ["score", "doc_id", "query_id"])


def test_records_are_each_read_by_their_own_layout(monkeypatch):
    mixed = [ScoredDoc("q1", "d1", 0.1), Reordered(0.9, "d3", "q1"), ("q1", "d2", 0.5)]
    qrels = {"q1": {"d3": 1}}
    for chunk in (3, 1):  # (one chunk of three layouts; one layout a chunk)
        monkeypatch.setattr(R, "CHUNK", chunk)
        assert fastir.evaluate(qrels, mixed, ["AP"]).mean == {"AP": 1.0}
        assert R.read_records(iter(mixed), "run").to_dict() == \
            {"q1": {"d1": 0.1, "d3": 0.9, "d2": 0.5}}


@pytest.mark.parametrize("later, shown", [
    (("q1", "d9", 0.5, "extra"), "('q1', 'd9', 0.5, 'extra')"),
    (("q1", "d9"), "('q1', 'd9')"),
    (None, "None"),
    ({"query_id": "q1", "doc_id": "d9", "score": 0.5}, "{'query_id': 'q1'"),
])
def test_a_later_record_of_no_layout_is_named(later, shown):
    records = [ScoredDoc("q1", "d1", 0.1), ("q1", "d2", 0.2), later]
    with pytest.raises(fastir.InputError, match=rf"run records: record 2 is {re.escape(shown)}"):
        fastir.evaluate({"q1": {"d1": 1}}, records, ["AP"])
    with pytest.raises(fastir.InputError, match="record 2 is"):
        fastir.evaluate({"q1": {"d1": 1}}, iter(records), ["AP"])


# -- a pytrec_eval run keyed by bytes (issue 28, item 12) -------------------------------------
def test_pytrec_eval_switch_keys_a_bytes_run_as_given():
    from fastir import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator({"q": {"a": 1, "b": 0}}, {"map", "P_1"})
    assert ev.evaluate({b"q": {b"a": 0.2, b"b": 0.9}}) == {b"q": {"map": 0.5, "P_1": 0.0}}
    assert ev.evaluate({"q": {b"a": 0.2, "b": 0.9}}) == {"q": {"map": 0.5, "P_1": 0.0}}


# -- DataFrames without pyarrow (issue 28, item 15) --------------------------------------------
HIDE_PYARROW = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "pyarrow" or name.startswith("pyarrow."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Hide())
import pandas as pd
import fastir
qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"],
                      "relevance": [1, 0, 1]})
run = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["b", "a", "a"],
                    "score": [0.9, 0.5, 0.1]})
print(getattr(run["doc_id"].dtype, "storage", None), "pyarrow" in sys.modules)
print(fastir.evaluate(qrels, run, ["AP", "P@1"]).to_dict())
"""


def test_dataframes_without_pyarrow():
    pytest.importorskip("pandas")
    done = subprocess.run([sys.executable, "-c", HIDE_PYARROW], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    storage, values = done.stdout.splitlines()
    assert storage in ("python False", "None False")  # (pandas 3's str, or pandas 2's object)
    assert values == str({"q1": {"AP": 0.5, "P@1": 0.0}, "q2": {"AP": 1.0, "P@1": 1.0}})
