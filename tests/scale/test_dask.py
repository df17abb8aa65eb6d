"""fastir.dask.evaluate: a dask DataFrame run gives fastir.evaluate's results, bit for bit."""

import subprocess
import sys

import numpy as np
import pytest
from checks import useful
from scale_inputs import assert_same, frames

import fastir
from fastir.io import trec

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
fdask = pytest.importorskip("fastir.dask")

MEASURES = ["map", "P@5", "nDCG@10", "num_ret", "num_rel", "gm_map", "num_q", "relstring"]


def trec_lines(run_frame):
    run_frame = run_frame.assign(score=run_frame.score + 1 / 3)  # (digits to parse exactly)
    return [f"{q} Q0 {d} 1 {s!r} tag\n" for q, d, s in run_frame.itertuples(index=False)]


@pytest.mark.parametrize("missing", ["zero", "skip"])
@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("text", [False, True])
def test_equals_evaluate(missing, shuffled, text):
    qrels, run = frames(text=text)
    if shuffled:  # queries split across partitions: shuffled on the query id first
        run = run.sample(frac=1, random_state=1)
    want = fastir.evaluate(qrels, run, MEASURES, missing=missing)
    ddf = dd.from_pandas(run, npartitions=5, sort=False)
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(ddf, qrels, MEASURES, missing=missing, per_query=True)
        means = fdask.evaluate(ddf, qrels, MEASURES, missing=missing)
    assert_same(got, want)
    assert means == want.mean


def test_options_and_column_names():
    qrels, run = frames(seed=4)
    options = {"max_docs": 4, "judged_only": True, "compat": "9.0.8", "relevance_level": 2}
    measures = MEASURES[:-1]
    want = fastir.evaluate(qrels, run, measures, **options)
    ddf = dd.from_pandas(run.rename(columns={"score": "sim"}), npartitions=3, sort=False)
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(ddf, qrels, measures, score_col="sim", per_query=True,
                                   **options)
        with pytest.raises(fastir.InputError, match="no column 'score'"):
            fdask.evaluate(ddf, qrels, measures)
    assert_same(got, want)


def test_import_does_not_load_dask():
    code = "import sys, fastir; fastir.evaluate; assert 'dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_local_cluster_of_two_processes():
    distributed = pytest.importorskip("distributed")
    qrels, run = frames(seed=2, n_queries=200)
    want = fastir.evaluate(qrels, run, MEASURES)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        got = fdask.evaluate(dd.from_pandas(run, npartitions=4, sort=False), qrels,
                                   MEASURES, per_query=True)
    assert_same(got, want)


def test_sharded_trec_runs(tmp_path):
    qrels_frame, run_frame = frames(seed=3)
    lines = trec_lines(run_frame)
    for i, part in enumerate(np.array_split(np.array(lines, dtype=object), 3)):
        (tmp_path / f"shard{i}.run").write_text("".join(part))  # a query may straddle shards
    whole = tmp_path / "whole.run"
    whole.write_text("".join(lines))
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(fdask.read_trec_run(str(tmp_path / "shard*.run"), blocksize=300),
                             qrels_frame, MEASURES, per_query=True)
    assert_same(got, fastir.evaluate(qrels_frame, str(whole), MEASURES))


def test_scores_beyond_float32_under_9_0_8():
    """9.0.8 stores scores in a C float: 2e39 and 1e39 both become +inf and tie (docno
    breaks it), as in fastir.evaluate(..., compat="9.0.8")."""
    qrels = {"q": {"d1": 1, "d2": 0}}
    run = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["d1", "d2", "d3"],
                        "score": [2e39, 1e39, -1e39]})
    ddf = dd.from_pandas(run, npartitions=1, sort=False)
    with dask.config.set(scheduler="synchronous"):
        for compat, expected in (("9.0.8", 0.0), ("10.0", 1.0)):
            assert fdask.evaluate(ddf, qrels, ["P@1"], compat=compat) == {"P@1": expected}
            assert fastir.evaluate(qrels, run, ["P@1"], compat=compat).mean == \
                {"P@1": expected}


@pytest.fixture
def no_shuffle(monkeypatch):
    """Any shuffle of a dask DataFrame fails the test."""
    def shuffle(*args, **kwargs):
        raise AssertionError("shuffled")

    monkeypatch.setattr(dd.DataFrame, "shuffle", shuffle)


@pytest.mark.parametrize("blocksize", [23, 300, 4096, None])
def test_blocks_cut_queries_without_a_shuffle(tmp_path, no_shuffle, blocksize):
    """Blocks of a file cut queries (a query over three blocks and more, blocks where no
    line starts): each line is read once, and the queries cut are joined, not shuffled."""
    qrels_frame, run_frame = frames(seed=5)
    path = tmp_path / "run.txt"
    path.write_text("# a comment\n" + "".join(trec_lines(run_frame)))
    ddf = fdask.read_trec_run(path, blocksize=blocksize)
    with dask.config.set(scheduler="synchronous"):
        rows = ddf.compute()
        got = fdask.evaluate(ddf, qrels_frame, MEASURES, per_query=True)
    size = path.stat().st_size
    assert ddf.npartitions == (-(-size // blocksize) if blocksize else 1)
    assert str(rows.doc_id.dtype) == "string"
    want = run_frame.assign(score=run_frame.score + 1 / 3)
    for col in ("query_id", "doc_id", "score"):
        assert rows[col].tolist() == want[col].tolist()
    assert_same(got, fastir.evaluate(qrels_frame, str(path), MEASURES))


def test_partition_edges_joined(no_shuffle):
    """Partitions of a frame grouped by query: queries cut at partition edges, a partition
    of one query's rows only, one whose first and last rows have one query."""
    qrels, run = frames(seed=6)
    q, r = run.query_id.unique()[5:7]
    first, second = run[run.query_id == q], run[run.query_id == r]
    assert len(first) > 1
    rest = run[~run.query_id.isin([q, r])]
    pieces = [rest.iloc[:7], rest.iloc[7:9], rest.iloc[9:40],
              pd.concat([first.iloc[:1], second, first.iloc[1:]]), rest.iloc[40:]]
    whole = pd.concat(pieces)
    ddf = dd.concat([dd.from_pandas(p, npartitions=1, sort=False) for p in pieces])
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(ddf, qrels, MEASURES, per_query=True)
    assert_same(got, fastir.evaluate(qrels, whole, MEASURES))


def test_split_inside_a_partition_shuffles(monkeypatch):
    """A query among a partition's middle rows and in another partition: shuffled."""
    qrels, run = frames(seed=7)
    shuffled = []
    real = dd.DataFrame.shuffle
    monkeypatch.setattr(dd.DataFrame, "shuffle",
                        lambda *a, **k: shuffled.append(1) or real(*a, **k))
    ddf = dd.from_pandas(run.sample(frac=1, random_state=2), npartitions=4, sort=False)
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(ddf, qrels, MEASURES, per_query=True)
    assert shuffled
    assert_same(got, fastir.evaluate(qrels, run.sample(frac=1, random_state=2), MEASURES))


def test_read_trec_run_names_the_line(tmp_path):
    lines = trec_lines(frames(seed=8)[1])
    lines[-3] = "q9 Q0 d1 1 nan tag\n"
    path = tmp_path / "bad.run"
    path.write_bytes(trec.BOM + "".join(lines).encode())
    with dask.config.set(scheduler="synchronous"):
        for blocksize in (200, None):
            with pytest.raises(fastir.InputError,
                               match=rf"bad.run:{len(lines) - 2}: score 'nan' is not"):
                fdask.read_trec_run(path, blocksize=blocksize).compute()
    with pytest.raises(fastir.InputError, match="no run file matches"):
        fdask.read_trec_run(str(tmp_path / "none*.run"))


def test_read_trec_run_compressed_and_empty_files(tmp_path):
    """A gzip file is one partition whatever the blocksize; an empty shard adds no rows."""
    import gzip

    qrels_frame, run_frame = frames(seed=9)
    text = "".join(trec_lines(run_frame))
    (tmp_path / "a.run").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "b.run").write_text("")
    (tmp_path / "whole.txt").write_text(text)
    ddf = fdask.read_trec_run([tmp_path / "a.run", tmp_path / "b.run"], blocksize=100)
    assert ddf.npartitions == 2
    with dask.config.set(scheduler="synchronous"):
        got = fdask.evaluate(ddf, qrels_frame, MEASURES, per_query=True)
    assert_same(got, fastir.evaluate(qrels_frame, str(tmp_path / "whole.txt"), MEASURES))


# -- bad rows and empty globs --------------------------------------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("lines, where", [
    ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 abc t\n", ":2:"),
    ("q1 Q0 d1 1 1.5 t\nq1 Q0 d2 2 inf t\n", ":2:"),
    ("q1 Q0 d1 1 1.5 t\n# a comment\nq1 Q0 d2\n", ":3:"),
])
def test_dask_run_files_name_the_file_and_line_of_a_bad_row(tmp_path, lines, where):
    path = tmp_path / "bad.run"
    path.write_text(lines)
    with pytest.raises(fastir.InputError) as info:
        fdask.read_trec_run(str(path)).compute()
    useful(info.value, f"{path}{where}")


@pytest.mark.one_engine
def test_dask_globs_matching_nothing_say_so(tmp_path):
    for paths in (str(tmp_path / "*.run"), [str(tmp_path / "absent.run")]):
        with pytest.raises(fastir.InputError) as info:
            fdask.read_trec_run(paths)
        useful(info.value, str(tmp_path))


