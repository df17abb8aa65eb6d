"""Arrow tables and Parquet files: the same runs, qrels and results as the TREC-text path."""

import subprocess
import sys

import numpy as np
import pytest
from checks import useful
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import InputError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

MEASURES = ["map", "P@5", "nDCG@10", "num_ret", "gm_map", "relstring"]


def trec_files(tmp_path, seed=3, n_queries=15):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(n_queries):
        for d in rng.choice(40, size=rng.integers(1, 10), replace=False):
            qrels.append(f"q{q} 0 doc-{d} {rng.integers(0, 3)}")
        if q % 4:
            for r, d in enumerate(rng.choice(40, size=rng.integers(1, 25), replace=False), 1):
                run.append(f"q{q} Q0 doc-{d} {r} {rng.integers(0, 6) / 3} tag")
    run.append("extra Q0 doc-1 1 0.5 tag")
    (tmp_path / "qrels").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run").write_text("\n".join(run) + "\n")
    return fastir.read_qrels(tmp_path / "qrels"), fastir.read_run(tmp_path / "run")


def as_table(data, dictionary=False):
    d = data.to_dict()
    value = "score" if isinstance(data, fastir.Run) else "relevance"
    rows = [(q, doc, v) for q, docs in d.items() for doc, v in docs.items()]
    columns = {"query_id": pa.array([r[0] for r in rows]),
               "doc_id": pa.array([r[1] for r in rows]), value: pa.array([r[2] for r in rows])}
    if dictionary:
        columns = {k: v.dictionary_encode() if k != value else v for k, v in columns.items()}
    return pa.table(columns)


def assert_same(got, want):
    assert got.query_ids == want.query_ids
    np.testing.assert_array_equal(got.values, want.values)
    assert got.mean == want.mean
    assert got.strings == want.strings


@pytest.mark.parametrize("dictionary", [False, True])
def test_from_arrow_equals_trec_text(tmp_path, dictionary):
    qrels, run = trec_files(tmp_path)
    a_qrels = fastir.Qrels.from_arrow(as_table(qrels, dictionary))
    a_run = fastir.Run.from_arrow(as_table(run, dictionary))
    assert a_run.to_dict() == run.to_dict() and a_qrels.to_dict() == qrels.to_dict()
    assert_same(fastir.evaluate(a_qrels, a_run, MEASURES),
                fastir.evaluate(tmp_path / "qrels", tmp_path / "run", MEASURES))


def test_sliced_chunked_binary_and_integer_ids():
    table = pa.table({"q": pa.chunked_array([["x", "a"], ["b", "a", "c"]]),
                      "d": pa.array([b"d1", b"d2", b"d3", b"d4", b"d5"]),
                      "s": pa.array([1, 2, 3, 4, 5], pa.int32())})
    run = fastir.Run.from_arrow(table.slice(1), "q", "d", "s")
    assert run.to_dict() == {"a": {"d2": 2.0, "d4": 4.0}, "b": {"d3": 3.0}, "c": {"d5": 5.0}}
    ints = fastir.Run.from_arrow({"query_id": pa.array([7, 7, 3]), "doc_id": pa.array([1, 2, 3]),
                                  "score": pa.array([0.5, 0.25, 1.0])})
    assert ints.to_dict() == {3: {3: 1.0}, 7: {1: 0.5, 2: 0.25}}
    sliced_dict = pa.array(["q2", "q1", "q2", "q1"]).dictionary_encode().slice(1, 2)
    qrels = fastir.Qrels.from_arrow({"query_id": sliced_dict, "doc_id": pa.array(["a", "b"]),
                                     "relevance": pa.array([1, 2])})
    assert qrels.to_dict() == {"q1": {"a": 1}, "q2": {"b": 2}}


def test_clear_errors():
    good = {"query_id": pa.array(["q"]), "doc_id": pa.array(["d"]), "score": pa.array([1.0])}
    with pytest.raises(InputError, match="no column 's'"):
        fastir.Run.from_arrow(good, score_col="s")
    with pytest.raises(InputError, match="'doc_id' has 1 nulls"):
        fastir.Run.from_arrow({**good, "doc_id": pa.array([None], pa.string())})
    with pytest.raises(InputError, match="ids must be text"):
        fastir.Run.from_arrow({**good, "doc_id": pa.array([1.5])})
    with pytest.raises(InputError, match="not finite"):
        fastir.Run.from_arrow({**good, "score": pa.array([np.inf])})
    with pytest.raises(InputError, match="query 'q' doc 'd': label 0.5 is not a 32-bit integer"):
        fastir.Qrels.from_arrow({**good, "relevance": pa.array([0.5])})


def test_parquet_round_trips(tmp_path):
    qrels, run = trec_files(tmp_path)
    fastir.write_parquet(run, tmp_path / "run.parquet")
    fastir.write_parquet(qrels, tmp_path / "qrels.parquet")
    back = fastir.read_parquet(tmp_path / "run.parquet")
    assert back.to_dict() == run.to_dict()
    assert fastir.read_parquet(tmp_path / "qrels.parquet", "qrels").to_dict() == qrels.to_dict()
    want = fastir.evaluate(qrels, run, MEASURES)
    assert_same(fastir.evaluate(fastir.read_parquet(tmp_path / "qrels.parquet", "qrels"),
                                back, MEASURES), want)
    fastir.write_parquet(want, tmp_path / "res.parquet")
    table = pq.read_table(tmp_path / "res.parquet").to_pydict()
    assert table["query_id"] == want.query_ids
    for j, key in enumerate(want.measures):
        expected = want.strings[key] if key in want.strings else want.values[:, j].tolist()
        assert table[key] == expected


def test_parquet_columns_and_errors(tmp_path):
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["5", "6"], "sim": [2.0, 1.0]}),
                   tmp_path / "r.parquet")
    run = fastir.read_parquet(tmp_path / "r.parquet", query_col="qid", doc_col="docno",
                              value_col="sim", name="bm25")
    assert run.to_dict() == {"1": {"5": 2.0, "6": 1.0}} and run.name == "bm25"
    with pytest.raises(InputError, match="no column 'query_id'"):
        fastir.read_parquet(tmp_path / "r.parquet")
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(InputError, match="cannot read as Parquet"):
        fastir.read_parquet(tmp_path / "bad.parquet")
    with pytest.raises(TypeError, match="writes a Run, Qrels or Results"):
        fastir.write_parquet({}, tmp_path / "x.parquet")


def test_import_does_not_load_pyarrow():
    code = "import sys, fastir; fastir.Run; assert 'pyarrow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- nulls and odd columns ---------------------------------------------------------------------
@pytest.mark.one_engine
def test_an_arrow_dictionary_holding_a_null_is_refused():
    query = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()),
                                           pa.array(["q1", None]))
    table = pa.table({"query_id": query, "doc_id": pa.array(["a", "b", "c"]),
                      "score": pa.array([1.0, 2.0, 3.0])})
    with pytest.raises(fastir.InputError) as info:
        fastir.Run.from_arrow(table)
    useful(info.value, "query_id", "row 1")
    # a null the indices never take is no id at all
    query = pa.DictionaryArray.from_arrays(pa.array([0, 2, 0], pa.int32()),
                                           pa.array(["q1", None, "q2"]))
    run = fastir.Run.from_arrow(table.set_column(0, "query_id", query))
    assert run.query_ids.tolist() == ["q1", "q2"]


@pytest.mark.one_engine
@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"q1", b"q2", b"", b"\xff", b"d1", None]), min_size=3,
                max_size=3), st.sampled_from(["string", "binary", "dictionary", "int64"]))
def test_arrow_columns_of_any_content(values, kind):
    texts = [None if v is None else v.decode("utf-8", "replace") for v in values]
    column = {"string": lambda: pa.array(texts), "binary": lambda: pa.array(values),
              "dictionary": lambda: pa.array(texts).dictionary_encode(),
              "int64": lambda: pa.array([None if v is None else len(v) for v in values],
                                        pa.int64())}[kind]()
    table = pa.table({"query_id": column, "doc_id": pa.array(["a", "b", "c"]),
                      "score": pa.array([1.0, 2.0, 3.0])})
    try:
        run = fastir.Run.from_arrow(table)
    except fastir.InputError as exc:
        useful(exc, "query_id")
        return
    assert None not in values and len(run.query_ids) == len(set(column.to_pylist()))
