"""fastir trec_eval on garbage files never crashes: an exit status of trec_eval's (0, 1, 2,
4, 7, 255), no signal, no traceback, and an error line of its own."""

import subprocess

from checks import cases, garbage_files
from cli_calls import PROGRAM
from hypothesis import given
from hypothesis import strategies as st


@cases(25)
@given(garbage_files(4), garbage_files(6), st.sampled_from([[], ["-q"], ["-c"], ["-m", "all_trec"],
                                                            ["-Z", "Z"]]))
def test_the_command_line_never_crashes(tmp_path, qrels_bytes, run_bytes, flags):
    q, r, z = tmp_path / "qrels", tmp_path / "run", tmp_path / "z"
    q.write_bytes(qrels_bytes)
    r.write_bytes(run_bytes)
    z.write_bytes(run_bytes[:200])
    args = [str(z) if f == "Z" else f for f in flags]
    done = subprocess.run([*PROGRAM, "trec_eval", *args, str(q), str(r)],
                          capture_output=True)
    assert done.returncode in (0, 1, 2, 4, 7, 255), done.stderr[-2000:]
    assert b"Traceback" not in done.stderr, done.stderr[-3000:]
    if done.returncode:
        errors = b"".join(line for line in done.stderr.splitlines(keepends=True)
                          if not line.startswith(b"fastir: compiling"))  # (a fresh cache)
        assert errors.startswith(b"fastir trec_eval: "), done.stderr[-2000:]


