"""fastir.evaluate_file: a run read in query-complete chunks gives fastir.evaluate's results."""

import bz2
import gzip
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
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
