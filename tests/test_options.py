"""The evaluation options (fastir.options.Options) are checked in one place: each invalid
option gives its one message, the same from every entry point that takes it."""

import contextlib
import io

import numpy as np
import pytest
from checks import useful

import fastir
from fastir.options import Options

pytestmark = pytest.mark.one_engine

QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d1": 0.5, "d3": 0.4}}
QRELS_LINES = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
RUN_LINES = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\nq2 Q0 d1 1 0.5 r\nq2 Q0 d3 2 0.4 r\n"

#: (option, invalid value, the one message it gives)
INVALID = [
    ("relevance_level", -1, "relevance_level must be an integer from 0 to 2**63 - 1, got -1"),
    ("relevance_level", 1.5, "relevance_level must be an integer from 0 to 2**63 - 1, got 1.5"),
    ("missing", "both", "missing must be 'zero' or 'skip', got 'both'"),
    ("max_docs", -1, "max_docs must be a non-negative integer, got -1"),
    ("max_docs", 2.5, "max_docs must be a non-negative integer, got 2.5"),
    ("judged_only", "yes", "judged_only must be True or False, got 'yes'"),
    ("compat", "8.0", "compat must be None, '10.0' or '9.0.8', got '8.0'"),
    ("labels", "real", "labels must be 'int', 'float' or 'probability', got 'real'"),
    ("samples", 1, "samples must be an integer >= 2, got 1"),
    ("label_seed", -1, "label_seed must be an integer >= 0, got -1"),
]


def _dask(qrels, run_path, **options):
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    import fastir.scale.dask as fdask

    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    frame = dd.from_pandas(pd.DataFrame(rows, columns=["query_id", "doc_id", "score"]),
                           npartitions=1)
    return fdask.evaluate(frame, qrels, ["P@1"], **options)


#: Every public entry point taking the options: (qrels, a run file) -> evaluation.
ENTRY_POINTS = {
    "evaluate": lambda q, r, **o: fastir.evaluate(q, r, ["P@1"], **o),
    "evaluate several runs": lambda q, r, **o: fastir.evaluate(q, {"a": r, "b": r}, ["P@1"],
                                                               **o),
    "evaluate on judgment groups": lambda q, r, **o: fastir.evaluate(
        fastir.JudgmentGroups.from_dict({"q1": {"g": {"d1": 1}}}), r, ["P_avgjg"], **o),
    "Evaluator": lambda q, r, **o: fastir.Evaluator(q, ["P@1"], **o).evaluate(r),
    "evaluate_file": lambda q, r, **o: fastir.evaluate_file(q, r, ["P@1"], **o),
    "dask": _dask,
    "pr_curve": lambda q, r, **o: fastir.pr_curve(q, r, **o),
    "cutoff_curve": lambda q, r, **o: fastir.cutoff_curve(q, r, k=2, **o),
    "compare": lambda q, r, **o: fastir.compare(q, {"a": r, "b": r}, ["P@1"], **o),
}


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS_LINES)
    run.write_text(RUN_LINES)
    return str(qrels), str(run)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize("option, value, message", INVALID)
def test_each_invalid_option_gives_its_one_message_from_every_entry_point(
        files, entry, option, value, message):
    qrels, run = files
    with pytest.raises(ValueError) as info:
        ENTRY_POINTS[entry](qrels, run, **{option: value})
    assert str(info.value) == message


@pytest.mark.parametrize("option, value, message", INVALID)
def test_the_options_value_checks_each_option_as_made(option, value, message):
    with pytest.raises(ValueError) as info:
        Options(**{option: value})
    assert str(info.value) == message


def test_the_relevance_level_alone_where_it_is_the_only_option():
    message = INVALID[0][2]
    for call in (lambda: fastir.evaluate_matrix([[1.0]], [[1]], "P@1", relevance_level=-1),
                 lambda: fastir.agreement(QRELS, QRELS, relevance_level=-1)):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == message


@pytest.mark.parametrize("args, message", [
    (("eval", "{qrels}", "{run}", "--rel-level", "-1"), INVALID[0][2]),
    (("eval", "{qrels}", "{run}", "--max-docs", "-1"), INVALID[3][2]),
    (("trec_eval", "-l", "-1", "{qrels}", "{run}"), INVALID[0][2]),
])
def test_the_command_line_says_the_same_one_line(files, args, message):
    from fastir.cli.main import main

    qrels, run = files
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([a.format(qrels=qrels, run=run) for a in args])
    out, err = out.getvalue(), err.getvalue()
    assert status != 0 and out == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_curve_refuses_an_option_it_does_not_know(files):
    with pytest.raises(TypeError, match="relevance"):
        fastir.pr_curve(*files, relevance=2)


def test_options_are_one_value_made_once():
    """Equal options are equal values (a plan is shared between them), the level kept as
    an int whatever number form it came in."""
    assert Options(relevance_level=2.0) == Options(relevance_level=2)
    assert type(Options(relevance_level=2.0).relevance_level) is int
    with pytest.raises(ValueError, match="missing"):
        Options().replace(missing="never")


def test_trec_eval_takes_any_level_when_it_prints_runid_alone(files, capsys):
    """trec_eval reads no relevance level for runid alone: -l -1 is taken there, as the
    binary takes it (elsewhere fastir refuses a negative level)."""
    from fastir.cli.main import main

    qrels, run = files
    assert main(["trec_eval", "-l", "-1", "-m", "runid", qrels, run]) == 0
    assert capsys.readouterr().out.split() == ["runid", "all", "r"]


# -- the edges of the numbers ------------------------------------------------------------
def test_max_docs_beyond_int64_is_no_limit():
    want = fastir.evaluate(QRELS, RUN, ["AP"]).mean
    assert fastir.evaluate(QRELS, RUN, ["AP"], max_docs=2**70).mean == want
    with pytest.raises(ValueError) as info:
        fastir.evaluate(QRELS, RUN, ["AP"], max_docs=float("nan"))
    useful(info.value, "max_docs")


@pytest.mark.parametrize("level", ["x", float("nan"), -1, 2.5, 2**70, True])
def test_relevance_level_is_checked_everywhere(level):
    calls = [lambda: fastir.evaluate(QRELS, RUN, ["AP"], relevance_level=level),
             lambda: fastir.agreement(QRELS, QRELS, relevance_level=level),
             lambda: fastir.evaluate_matrix(np.ones((1, 2)), np.ones((1, 2), int), "AP",
                                            relevance_level=level),
             lambda: fastir.MetricAccumulator(["AP"], relevance_level=level)]
    for call in calls:
        with pytest.raises(ValueError) as info:
            call()
        useful(info.value, "relevance_level")


