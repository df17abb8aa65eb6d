"""fastir eval's --ties, --unjudged and --residuals, and its warning when tied scores move
a printed value."""

import json
import warnings

from cli_calls import cli
from cli_calls import in_process as _in_process

import fastir


def in_process(*args):
    """The call with warnings shown as the command line shows them (pytest makes them
    errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        return _in_process(*args)


def test_fastir_eval_takes_ties_unjudged_and_residuals(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\nq 0 c 2\nr 0 a 1\n")
    (tmp_path / "run").write_text("q Q0 a 1 1.0 x\nq Q0 b 2 1.0 x\nq Q0 c 3 1.0 x\n"
                                  "r Q0 a 1 1.0 x\nr Q0 z 2 0.5 x\n")
    args = [str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP", "-m", "P@1",
            "--format", "json"]
    for ties in ("trec_eval", "input", "expected"):
        code, out, err = in_process("eval", *args, "--ties", ties)
        want = fastir.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["AP", "P@1"],
                               ties=ties).mean
        assert code == 0 and json.loads(out)[0] | want == json.loads(out)[0], err
        assert ("decides its printed values: AP" in err) == (ties != "expected"), err
    code, out, err = in_process("eval", *args, "--residuals", "--unjudged", "relevant:2")
    row = json.loads(out)[0]
    optimistic = fastir.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), "AP",
                                 unjudged=("relevant", 2)).mean["AP"]
    default = fastir.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), "AP").mean["AP"]
    assert (row["AP"], row["AP resid"]) == (optimistic, optimistic - default)
    done = cli("eval", *args, "--unjudged", "relevant:x", text=True)
    assert done.returncode == 2 and "relevant:LABEL" in done.stderr
