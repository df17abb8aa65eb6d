"""fastir.evaluate_file: a run read in query-complete chunks gives fastir.evaluate's results."""

import bz2
import gzip
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from checks import odd_call, odd_options, useful
from hypothesis import given, settings
from hypothesis import strategies as st

import fastir
from fastir import InputError

MEASURES = ["map", "P@5", "nDCG@10", "recip_rank", "num_ret", "num_rel", "num_rel_ret", "gm_map",
            "num_q", "Rprec", "relstring"]


def random_files(seed, n_queries=12, text_ids=True):
    """(qrels text, run text): some queries judged only, some in the run only, ties."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" if text_ids else str(i) for i in range(n_queries)]
    judged = [q for q in qids if rng.random() < 0.75]
    ranked = [q for q in qids if rng.random() < 0.75]
    rng.shuffle(ranked)  # any query order, each query's lines together
    qrels, run = [], []
    for q in judged:
        for d in rng.choice(30, size=rng.integers(1, 12), replace=False):
            qrels.append(f"{q} 0 d{d} {rng.integers(-1, 3)}")
    for q in ranked:
        for rank, d in enumerate(rng.choice(30, size=rng.integers(1, 20), replace=False), 1):
            run.append(f"{q} Q0 d{d} {rank} {rng.integers(0, 5) / 4} tag")
    if rng.random() < 0.3:
        run.insert(int(rng.integers(0, len(run) + 1)), "# a comment")
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def assert_same(got, want):
    assert got.query_ids == want.query_ids
    assert got.measures == want.measures
    np.testing.assert_array_equal(got.values, want.values)
    assert got.mean == want.mean  # exact: summed in the same order
    assert got.ignored_queries == want.ignored_queries
    assert got.missing_queries == want.missing_queries
    assert got.strings == want.strings
    np.testing.assert_array_equal(got.in_run, want.in_run)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), chunk=st.integers(1, 400),
       missing=st.sampled_from(["zero", "skip"]), text_ids=st.booleans())
def test_chunks_give_in_memory_results(tmp_path_factory, seed, chunk, missing, text_ids):
    qrels_text, run_text = random_files(seed, text_ids=text_ids)
    path = tmp_path_factory.mktemp("s") / "run"
    path.write_text(run_text)
    qrels = fastir.Qrels.from_dict(fastir.read_qrels(_bytes_file(qrels_text)).to_dict())
    want = fastir.evaluate(qrels, str(path), MEASURES, missing=missing)
    got = fastir.evaluate_file(qrels, path, MEASURES, missing=missing, chunk_bytes=chunk)
    assert_same(got, want)


def _bytes_file(text):
    import io

    return io.BytesIO(text.encode())


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, None])
def test_compressed_and_options(tmp_path, compress):
    qrels_text, run_text = random_files(7, n_queries=30)
    (tmp_path / "qrels").write_text(qrels_text)
    path = tmp_path / "run"
    data = run_text.encode()
    path.write_bytes(compress(data) if compress else data)
    options = {"max_docs": 5, "judged_only": True, "relevance_level": 2, "compat": "9.0.8"}
    want = fastir.evaluate(tmp_path / "qrels", path, MEASURES[:-2], **options)
    got = fastir.evaluate_file(tmp_path / "qrels", path, MEASURES[:-2], chunk_bytes=50,
                               **options)
    assert_same(got, want)


def test_three_field_run(tmp_path):
    (tmp_path / "qrels").write_text("1 0 7 1\n2 0 8 1\n")
    path = tmp_path / "run"
    path.write_text("".join(f"{q} {d} {r}\n" for q in (1, 2) for r, d in enumerate(range(5, 10),
                                                                                  1)))
    want = fastir.evaluate(tmp_path / "qrels", path, ["map", "P@2"])
    assert_same(fastir.evaluate_file(tmp_path / "qrels", path, ["map", "P@2"], chunk_bytes=3),
                want)


def test_query_coming_back_names_the_line(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq2 Q0 d2 2 0 t\nq1 Q0 d3 2 0 t\n")
    qrels = {"q1": {"d1": 1}, "q2": {"d1": 1}}
    for chunk in (1, 20, 1000):
        with pytest.raises(InputError, match=r"run:4: query 'q1' comes back"):
            fastir.evaluate_file(qrels, path, ["map"], chunk_bytes=chunk)


def test_bad_line_is_numbered_in_the_whole_file(tmp_path):
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1 t\nq2 Q0 d1 1 1 t\nq3 Q0 d2 2 x t\n")
    with pytest.raises(InputError, match=r"run:3: score 'x' is not a number"):
        fastir.evaluate_file({"q1": {"d1": 1}}, path, ["map"], chunk_bytes=5)


def test_empty_run_and_bad_arguments(tmp_path):
    path = tmp_path / "run"
    path.write_text("# nothing\n")
    with pytest.raises(InputError, match="empty run file"):
        fastir.evaluate_file({"q1": {"d1": 1}}, path, ["map"])
    with pytest.raises(ValueError, match="chunk_bytes"):
        fastir.evaluate_file({"q1": {"d1": 1}}, path, ["map"], chunk_bytes=0)


def test_import_stays_light():
    code = "import sys, fastir; assert 'fastir.scale.streaming' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_run_five_times_the_memory_cap(tmp_path):
    """A run 5x larger than the address space left after start-up streams through."""
    script = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        import fastir
        qrels = fastir.Qrels.from_dict({{f"q{{i}}": {{f"d{{j}}": j % 3 for j in range(0, 1000, 7)}}
                                        for i in range(0, 20000, 3)}})
        path = {str(tmp_path / "run")!r}
        with open(path, "w") as f:
            f.write("q0 Q0 d1 1 1.5 tag\\n")
        fastir.evaluate_file(qrels, path, ["map", "num_ret"])  # compiled before the cap
        with open(path, "w") as f:
            lines = "".join(f"{{{{q}}}} Q0 d{{d}} {{r}} {{1000 - r}} tag\\n"
                            for r, d in enumerate(range(1000), 1))
            for q in range(20000):
                f.write(lines.format(q=f"q{{q}}"))
        import os
        size = os.path.getsize(path)
        with open("/proc/self/status") as f:
            vm = [int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize")][0]
        cap = vm + size // 5
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        res = fastir.evaluate_file(qrels, path, ["map", "num_ret"], chunk_bytes=8 << 20)
        print(size, cap - vm, res.n_queries, res.mean["num_ret"])
        try:
            fastir.read_run(path)
        except (MemoryError, fastir.InputError):
            print("in memory: fails")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "FASTIR_JIT": "numba"})
    assert out.returncode == 0, out.stderr
    size, room, n_queries, num_ret = out.stdout.split()[:4]
    assert int(size) >= 5 * int(room)
    assert int(n_queries) == 6667 and float(num_ret) == 6667 * 1000
    assert "in memory: fails" in out.stdout


def test_file_objects(tmp_path):
    import io
    import lzma

    qrels_text, run_text = random_files(11)
    qrels = fastir.read_qrels(_bytes_file(qrels_text))
    want = fastir.evaluate(qrels, _bytes_file(run_text), MEASURES)
    for data in (run_text.encode(), lzma.compress(run_text.encode())):
        assert_same(fastir.evaluate_file(qrels, io.BytesIO(data), MEASURES, chunk_bytes=64),
                    want)
    with pytest.raises(InputError, match="binary mode"):
        fastir.evaluate_file(qrels, io.StringIO(run_text), MEASURES)


def test_third_column_read_differently_by_a_later_chunk(tmp_path):
    path = tmp_path / "run"
    # increasing in q1 (not 1..n), q2 is 1..n not increasing: not ranks in the whole file
    path.write_text("q1 d1 1\nq1 d2 5\nq1 d3 9\nq2 d1 2\nq2 d2 1\n")
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    with pytest.warns(fastir.FastirWarning):
        want = fastir.evaluate(qrels, path, ["map"])
    with pytest.raises(InputError, match="third_column='rank' or 'score'"):
        fastir.evaluate_file(qrels, path, ["map"], chunk_bytes=4)
    assert_same(fastir.evaluate_file(qrels, path, ["map"], chunk_bytes=10,
                                     third_column="score"), want)


# -- chunk sizes, long queries, progress and odd options -----------------------------------
@pytest.mark.one_engine
@pytest.mark.parametrize("chunk_bytes", [float("nan"), None, 0, -3, 2.5, "64", True])
def test_chunk_bytes_must_be_a_positive_integer(data_dir, chunk_bytes):
    with pytest.raises(ValueError) as info:
        fastir.evaluate_file({"q": {"a": 1, "b": 0}}, str(data_dir / "inputs" / "results.test"),
                             ["AP"], chunk_bytes=chunk_bytes)
    useful(info.value, "chunk_bytes")


@pytest.mark.one_engine
def test_a_huge_chunk_reads_the_file_whole(data_dir):
    qrels, run = (str(data_dir / "inputs" / name) for name in ("qrels.test", "results.test"))
    want = fastir.evaluate(qrels, run, ["AP"]).mean
    assert fastir.evaluate_file(qrels, run, ["AP"], chunk_bytes=2**70).mean == want


@pytest.mark.one_engine
@pytest.mark.parametrize("given", ["path", "file object"])
def test_a_query_longer_than_a_chunk_is_scanned_once(tmp_path, monkeypatch, given):
    """Each block's lines are looked at once, however many blocks a query spans (it was
    rescanned whole at every block: 16 s for a 9 MB query in 100 kB chunks). A plain file
    (mapped a window at a time) looks at windows doubling in size past a long query: at
    most twice its bytes."""
    from fastir.scale import streaming

    lines = [f"q1 Q0 doc{i} {i + 1} {1 - i / 10**5:.6f} t\n" for i in range(20_000)]
    lines += [f"q2 Q0 doc{i} {i + 1} 0.5 t\n" for i in range(5)]
    path = tmp_path / "long.run"
    path.write_text("".join(lines))
    scanned = []
    scan = streaming._last_query_start

    def counting(data, end, start, qid):
        scanned.append(end - start)
        return scan(data, end, start, qid)

    monkeypatch.setattr(streaming, "_last_query_start", counting)
    qrels = {"q1": {"doc7": 1, "doc19000": 1}, "q2": {"doc3": 1}}
    with open(path, "rb") as f:
        run = str(path) if given == "path" else f
        got = fastir.evaluate_file(qrels, run, ["AP", "NumRet"], chunk_bytes=4096).mean
    assert got == fastir.evaluate(qrels, str(path), ["AP", "NumRet"]).mean
    bound = 1 if given == "file object" else 2
    assert len(scanned) > 5 and sum(scanned) <= bound * path.stat().st_size


@pytest.mark.one_engine
@pytest.mark.parametrize("compressed", [False, True])
def test_streaming_progress_advances_with_the_bytes_read(tmp_path, data_dir, compressed):
    import gzip

    from fastir.progress import Progress

    data = (data_dir / "inputs" / "results.test").read_bytes()
    path = tmp_path / ("run.gz" if compressed else "run")
    path.write_bytes(gzip.compress(data) if compressed else data)
    qrels = str(data_dir / "inputs" / "qrels.test")
    with Progress(path.stat().st_size, "test", True, unit="B") as bar:
        got = fastir.evaluate_file(qrels, str(path), ["AP"], chunk_bytes=2048, progress=bar)
        assert bar.bar.n == path.stat().st_size
    assert got.mean == fastir.evaluate(qrels, str(path), ["AP"]).mean
    assert fastir.evaluate_file(qrels, str(path), ["AP"], progress=True).mean == got.mean


@pytest.mark.one_engine
@settings(max_examples=40, deadline=None)
@given(odd_options(["chunk_bytes", "relevance_level", "missing", "max_docs", "judged_only",
                 "num_docs", "compat", "third_column"]))
def test_evaluate_file_takes_any_options(data_dir, options):
    run = str(data_dir / "inputs" / "results.test")
    qrels = str(data_dir / "inputs" / "qrels.test")
    got = odd_call(lambda **kw: fastir.evaluate_file(qrels, run, ["AP", "P@5"], **kw), options)
    if got is not None:  # the same as the whole file in memory
        whole = {k: v for k, v in options.items() if k not in ("chunk_bytes",)}
        assert got.mean == fastir.evaluate(qrels, run, ["AP", "P@5"], **whole).mean


