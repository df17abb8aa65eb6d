"""Qrels and runs as iterables of records (ir_measures' Qrel / ScoredDoc, ir_datasets'
TrecQrel, plain tuples), streamed into arrays: the same values as the dicts they hold, at
every entry point."""

from collections import namedtuple

import pytest
from conftest import qrels_and_runs
from hypothesis import given, settings

import fastir
from fastir.io import records as R

pytestmark = pytest.mark.one_engine

Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
MEASURES = ["AP", "nDCG@5", "P@2", "NumRet", "Judged@3"]


def qrel_rows(qrels):
    return [Qrel(q, d, label, "0") for q, docs in qrels.items() for d, label in docs.items()]


def run_rows(run):
    return [ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]


@given(qrels_and_runs())
@settings(max_examples=40, deadline=None)
def test_records_give_the_values_of_the_dicts_they_hold(data):
    qrels, run = data
    qrels = {q: docs for q, docs in qrels.items() if docs}  # (records cannot hold an empty query)
    expected = fastir.evaluate(qrels, run, MEASURES).to_dict()
    assert fastir.evaluate(qrel_rows(qrels), iter(run_rows(run)), MEASURES).to_dict() == expected
    plain = ([tuple(r)[:3] for r in qrel_rows(qrels)], [tuple(r) for r in run_rows(run)])
    assert fastir.evaluate(*plain, MEASURES).to_dict() == expected
    ev = fastir.Evaluator(iter(qrel_rows(qrels)), MEASURES)
    assert ev.evaluate(x for x in run_rows(run)).to_dict() == expected


def test_chunks_and_id_kinds(monkeypatch):
    monkeypatch.setattr(R, "CHUNK", 3)  # records packed three at a time
    rows = [("q1", f"d{i}", i % 3) for i in range(10)] + [("é", "d1", 1), ("q2", b"d2", 1)]
    qrels = R.read_records(iter(rows), "qrels")
    assert qrels.to_dict() == {"q1": {f"d{i}": i % 3 for i in range(10)}, "é": {"d1": 1},
                               "q2": {"d2": 1}}
    run = R.read_records([(7, 12, 1.5), (7, 10, 2.0), (3, 1, 0.5), (7, 11, 1.0)], "run")
    assert run.query_ids.is_int and run.to_dict() == {3: {1: 0.5}, 7: {12: 1.5, 10: 2.0,
                                                                       11: 1.0}}
    with pytest.raises(fastir.InputError, match="all str/bytes or all integers"):
        R.read_records([(1, 1, 1.0)] * 3 + [("q", "d", 1.0)], "run")
    assert len(R.read_records([], "qrels")) == 0 and len(R.read_records(iter(()), "run")) == 0


def test_bad_records_say_what_is_wrong():
    with pytest.raises(fastir.InputError, match=r"fields \['query_id', 'doc_id', 'score'\]"):
        R.read_records([Qrel("q", "d", 1, "0")], "run")
    with pytest.raises(fastir.InputError, match="a record is a namedtuple"):
        R.read_records([("q", "d")], "qrels")
    with pytest.raises(fastir.InputError, match="query 'q' doc 'd': label 1.5 is not a 32-bit"):
        R.read_records([("q", "d", 1.5)], "qrels")
    with pytest.raises(fastir.InputError, match="not finite"):
        R.read_records([("q", "d", float("nan"))], "run")
    with pytest.raises(fastir.InputError, match="ranks doc 'd' twice"):
        fastir.evaluate([("q", "d", 1)], [("q", "d", 1.0), ("q", "d", 2.0)], ["AP"])


def test_the_peers_records_everywhere():
    ir_measures = pytest.importorskip("ir_measures")
    formats = pytest.importorskip("ir_datasets.formats")
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "d": 0.1}, "q2": {"b": 1.0, "a": 0.5}}
    expected = fastir.evaluate(qrels, run, MEASURES).mean
    theirs = [ir_measures.Qrel(q, d, label) for q, docs in qrels.items()
              for d, label in docs.items()]
    datasets = (formats.TrecQrel(q.query_id, q.doc_id, q.relevance, "0") for q in theirs)
    ranked = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    assert fastir.evaluate(theirs, ranked, MEASURES).mean == expected
    assert fastir.evaluate(datasets, iter(ranked), MEASURES).mean == expected
    several = fastir.evaluate(theirs, {"a": ranked, "b": iter(ranked)}, MEASURES)
    assert several.mean == {"a": expected, "b": expected}
    assert fastir.compare(theirs, {"a": ranked, "b": run}, ["AP"]).to_dict()
    assert fastir.fuse([iter(ranked), ranked], "rrf").to_dict() == fastir.fuse([run, run],
                                                                               "rrf").to_dict()
