"""The command line as trec_eval users expect it: versions, library measure names and close
names for unknown ones, the swapped-files hint, compressed standard input, file objects,
and trec_eval's remaining flags (-v, -o, -D, -R, -T) against the binaries when on PATH (-R's
other formats: tests/cli/test_trec_eval_prefs.py)."""

import bz2
import gzip
import io
import lzma
import shutil
import subprocess
import sys

import pytest
from cli_calls import cli
from conftest import DATA
from test_trec_eval_binary import compare, run_fastir

import fastir
from fastir.model.data import InputError

pytestmark = pytest.mark.one_engine

QRELS, RUN = str(DATA / "inputs" / "qrels.test"), str(DATA / "inputs" / "results.test")
BINARIES = {"10.0": shutil.which("trec_eval"), "9.0.8": shutil.which("trec_eval-9.0.8")}
needs_binaries = pytest.mark.skipif(not all(BINARIES.values()),
                                    reason="trec_eval binaries not on PATH")


def error_lines(done):
    """stderr's lines but the one-time notice of a numba compilation."""
    return [line for line in done.stderr.splitlines()
            if not line.startswith(b"fastir: compiling numba kernels")]


def test_versions_and_help_exit_0():
    done = cli("--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, f"fastir {fastir.__version__}\n"
                                                           .encode(), b"")
    assert cli("--help").returncode == 0
    for flag, line in [("--version", b"trec_eval version 10.0-rc3\n"),
                       ("-v", b"trec_eval version 10.0-rc3\n")]:
        done = cli("trec_eval", flag)
        assert done.returncode == 0 and done.stdout == b""
        assert done.stderr == line + f"fastir {fastir.__version__}\n".encode()
    done = cli("trec_eval", "--compat", "9.0.8", "-v", QRELS, RUN)
    assert done.returncode == 0 and done.stderr.startswith(b"trec_eval version 9.0.7\n")


@needs_binaries
@pytest.mark.parametrize("args", [
    ["-v"], ["--version"], ["--vers"], ["-qv"], ["-v", "-m", "nosuch"], ["-m", "nosuch", "-v"],
    ["-x", "-v"], ["-v", "-x"], ["-h", "-v"], ["-m", "P.x", "-v"], ["-v", "-l"],
    ["-v", QRELS, RUN], ["-v", "a", "b", "c"],
])
@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_version_flag_as_the_binaries(args, version):
    """-v stops the reading of options where it stands: stdout, status and trec_eval's line."""
    done = subprocess.run([BINARIES[version], *args], capture_output=True)
    status, out, err = run_fastir(["--compat", version, *args])
    assert (status, out) == (done.returncode, done.stdout), err
    if status == 0:
        assert err.encode().splitlines()[0] == done.stderr.splitlines()[0]


@needs_binaries
@pytest.mark.parametrize("flags", [
    ["-o"], ["--Output_old_results_format", "x"], ["--Output_old_results_format"],
    ["-T", "trec_results"], ["--Results_format=trec_results"], ["-T", "foo"],
    ["-R", "qrels"], ["--Rel_info_format", "qrels"], ["-R", "foo"], ["-D", "0"],
    ["--Debug_level", "0"], ["-Dx"], ["-o", "-D0", "-R", "qrels", "-T", "trec_results", "-c"],
    ["--c"], ["--comp"], ["--n"], ["--", "-c"],  # (--c: trec_eval's name before --compat)
    ["-R", "qrels_prefs"], ["-R", "qrels_prefs", "-m", "prefs"], ["-Rqrels_jg"],
    ["--Rel_info_format=qrels_jg", "-m", "qrels_jg"], ["-R", "prefs"],  # (prefs: 5 fields)
])
@pytest.mark.parametrize("measures", [[], ["-q", "-m", "all_trec"]])
@pytest.mark.parametrize("version", ["10.0", "9.0.8"])
def test_remaining_flags_as_the_binaries(flags, measures, version):
    compare(version, [*flags, *measures, QRELS, RUN])


@pytest.mark.parametrize("flags, message", [
    (["-D", "1"], "-D 1 is not supported"), (["-D", "0.301"], "-D 0.301 is not supported"),
])
def test_flags_not_supported_say_so(flags, message):
    status, out, err = run_fastir([*flags, QRELS, RUN])
    assert status == 1 and out == b"" and message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("names, trec", [
    (["nDCG@10"], ["ndcg_cut.10"]), (["AP"], ["map"]), (["P_5"], ["P.5"]),
    (["P@10", "P@5"], ["P.5,10"]), (["P.5", "P@10"], ["P.5,10"]), (["P@10", "P.5"], ["P.5,10"]),
    (["RR", "map"], ["map", "recip_rank"]), (["R@1000"], ["recall.1000"]),
    (["official", "P@7"], ["official", "P.5,7,10,15,20,30,100,200,500,1000"]),
])
def test_library_names_print_under_trec_eval_names(names, trec):
    """As the trec_eval names say the same measures: the same bytes."""
    status, out, err = run_fastir(["-q", *[a for n in names for a in ("-m", n)], QRELS, RUN])
    assert status == 0 and err == ""
    assert out == run_fastir(["-q", *[a for n in trec for a in ("-m", n)], QRELS, RUN])[1]


@pytest.mark.parametrize("name, status, message", [
    ("ndgc", 1, "illegal measure 'ndgc'; did you mean 'ndcg'"),
    ("mapp", 1, "did you mean 'map'"),
    ("P(rel=2)@5", 1, "trec_eval has no name for it"),
    ("nosuch", 1, "illegal measure 'nosuch'"),
])
def test_unknown_measures_suggest_and_keep_trec_eval_status(name, status, message):
    done = cli("trec_eval", "-m", name, QRELS, RUN)
    assert done.returncode == status and done.stdout == b""
    assert [message in line.decode() for line in error_lines(done)] == [True]


def test_swapped_files_say_so():
    done = cli("trec_eval", RUN, QRELS)
    assert done.returncode == 2 and done.stdout == b""  # trec_eval's status: 2
    [line] = error_lines(done)
    assert b"results.test:1:" in line and b"swapped" in line
    with pytest.raises(InputError, match=r"results.test:1: .*run file.*swapped"):
        fastir.read_qrels(RUN)
    with pytest.raises(InputError, match=r"qrels.test:1: .*qrels file.*swapped"):
        fastir.read_run(QRELS)


def test_a_malformed_line_later_gives_no_swapped_hint(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 1 x y\n")
    with pytest.raises(InputError, match=":2: malformed") as raised:
        fastir.read_qrels(tmp_path / "qrels")
    assert "swapped" not in str(raised.value)


COMPRESS = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_compressed_standard_input_and_files(kind, tmp_path):
    expected = cli("trec_eval", QRELS, RUN)
    with open(RUN, "rb") as f:
        data = COMPRESS[kind](f.read())
    done = cli("trec_eval", QRELS, "-", stdin=data)
    assert (done.returncode, done.stdout) == (0, expected.stdout)
    with open(QRELS, "rb") as f:
        (tmp_path / "qrels").write_bytes(COMPRESS[kind](f.read()))  # no suffix needed
    done = cli("trec_eval", str(tmp_path / "qrels"), RUN)
    assert (done.returncode, done.stdout) == (0, expected.stdout)
    (tmp_path / "cut").write_bytes(data[:len(data) // 2])
    done = cli("trec_eval", QRELS, str(tmp_path / "cut"))
    assert done.returncode == 2 and f"corrupt {kind} data".encode() in done.stderr


def test_file_objects():
    expected = fastir.read_run(RUN)
    with open(RUN, "rb") as f:
        data = f.read()
    for stream in (open(RUN), open(RUN, "rb"), io.BytesIO(data), io.StringIO(data.decode()),
                   io.BytesIO(gzip.compress(data)), io.BytesIO(lzma.compress(data))):
        with stream:
            run = fastir.read_run(stream)
        assert run.name == expected.name and len(run) == len(expected)
    with open(QRELS, "rb") as f:
        qrels = fastir.read_qrels(io.BytesIO(bz2.compress(f.read())))
    assert len(qrels) == len(fastir.read_qrels(QRELS))
    with pytest.raises(InputError, match=r"^<stream>:2: malformed line"):
        fastir.read_qrels(io.StringIO("q1 0 d1 1\nq1 0 d2\n"))
    with open(RUN) as f, pytest.raises(InputError, match=r"results.test:1: .*swapped"):
        fastir.read_qrels(f)


def test_standard_input_as_a_file_object(tmp_path):
    """sys.stdin, text, is read as a file object named <stdin>."""
    code = ("import sys, fastir; r = fastir.read_run(sys.stdin); print(r.name, len(r)); "
            "fastir.read_qrels(sys.stdin)")
    with open(RUN, "rb") as f:
        done = subprocess.run([sys.executable, "-c", code], input=f.read(), capture_output=True)
    assert done.stdout.split() == [b"STANDARD", str(len(fastir.read_run(RUN))).encode()]
    assert b"<stdin>: empty qrels file" in done.stderr
