"""The message and preference cases of issue 28 (part C), each a case: the right value, or
one clear line naming the argument, the file and line, or the judgment, and what to do."""

import subprocess

import pytest
from checks import useful
from cli_calls import PROGRAM

import fastir
from fastir.model.errors import InputError
from fastir.output.tables import markdown_cells, markdown_row, plain

pytestmark = pytest.mark.one_engine


def _cli(*args, stdin=None, cwd=None, env=None):
    import os

    return subprocess.run([*PROGRAM, *args], capture_output=True,
                          text=True, input=stdin, cwd=cwd, env={**os.environ, **(env or {})})


def _one_line(done, status, *words):
    """The command exited with ``status`` and said one line holding every one of ``words``
    (no traceback)."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == status, done.stderr
    assert lines and "Traceback" not in done.stderr, done.stderr
    assert any(all(w in line for w in words) for line in lines), done.stderr


# -- 13. markdown tables of ids holding "|" -----------------------------------------------------
@pytest.mark.parametrize("cells", [["a|b.run", "q|1", "1.0000"], ["|", "||", "x\\|y", "\\"],
                                   ["plain", "", "0"]])
def test_a_markdown_row_keeps_its_cells(cells):
    assert markdown_cells(markdown_row(cells)) == cells


@pytest.fixture
def piped(tmp_path):
    """Qrels and two runs whose query ids and names hold "|"."""
    (tmp_path / "qrels").write_text("q|1 0 d1 1\nq|1 0 d2 0\nq|2 0 d1 1\nq|2 0 d2 1\n")
    (tmp_path / "a|b.run").write_text("q|1 Q0 d1 1 2 r\nq|1 Q0 d2 2 1 r\nq|2 Q0 d1 1 2 r\n"
                                      "q|2 Q0 d2 2 1 r\n")
    (tmp_path / "c|d.run").write_text("q|1 Q0 d2 1 2 r\nq|1 Q0 d1 2 1 r\nq|2 Q0 d2 1 2 r\n")
    return tmp_path


def _tables(markdown):
    """The rows of each markdown table (cells), tables apart."""
    tables, rows = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            rows.append(markdown_cells(line))
        elif rows:
            tables.append(rows)
            rows = []
    return tables


@pytest.mark.parametrize("options", [["-q"], ["--compare", "-m", "AP", "-m", "P@1"]])
def test_eval_markdown_keeps_ids_holding_a_bar_in_their_cells(piped, options):
    done = _cli("eval", "qrels", "a|b.run", "c|d.run", "--format", "markdown", *options,
                cwd=piped)
    assert done.returncode == 0, done.stderr
    tables = _tables(done.stdout)
    assert tables
    for rows in tables:
        assert len({len(row) for row in rows}) == 1, rows  # (every row as wide as its head)
    names = {cell for rows in tables for row in rows for cell in row}
    assert {"a|b.run", "c|d.run"} <= {n.split(") ")[-1] for n in names}
    if "-q" in options:
        assert {"q|1", "q|2"} <= names
    text = _cli("eval", "qrels", "a|b.run", "c|d.run", *options, cwd=piped).stdout
    assert text.strip() == plain(done.stdout).strip()  # (the table format reads it back)


# -- 14. messages that name the thing and say what to do ------------------------------------
@pytest.mark.parametrize("level", [10**400, None, "3", True, float("nan"), float("inf")])
def test_a_preference_level_that_is_no_finite_number_names_its_judgment(level):
    with pytest.raises(InputError) as info:
        fastir.Prefs.from_dict({"q1": {"g": {"s": {"d1": level, "d2": 0}}}})
    useful(info.value, "query 'q1' group 'g' subgroup 's' doc 'd1': level")
    assert len(str(info.value)) < 250  # (a 400-digit level is not printed whole)


@pytest.mark.parametrize("level", [1.5, 2**70, -3])
def test_a_preference_level_is_any_finite_number(level):
    prefs = fastir.Prefs.from_dict({"q1": {"g": {"s": {"d1": level, "d2": -5}}}})
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    assert fastir.evaluate(prefs, run, ["prefs_simp"]).mean["prefs_simp"] == 1.0


@pytest.mark.parametrize("label", [10**400, None, "3", True, 1.5])
def test_a_judgment_group_label_that_is_no_integer_names_its_judgment(label):
    with pytest.raises(InputError) as info:
        fastir.JudgmentGroups.from_dict({"q1": {"g": {"d1": label, "d2": 0}}})
    useful(info.value, "query 'q1' group 'g' doc 'd1': label")


def test_the_ranx_switch_says_a_step_gives_no_weights():
    from fastir import ranx

    qrels = ranx.Qrels({"q1": {"d1": 1}})
    runs = [ranx.Run({"q1": {"d1": 1.0, "d2": 0.5}}, name="a"),
            ranx.Run({"q1": {"d2": 1.0, "d1": 0.5}}, name="b")]
    with pytest.raises(ValueError) as info:
        ranx.optimize_fusion(qrels, runs, metric="ndcg@10", step=0.3)
    useful(info.value, "step: no 2 multiples of 0.3 sum to 1")
    assert "grid:" not in str(info.value)


def test_the_torchmetrics_switch_names_its_own_target():
    torch = pytest.importorskip("torch")
    from fastir.torchmetrics import RetrievalMAP, RetrievalNormalizedDCG

    for metric in (RetrievalMAP(), RetrievalNormalizedDCG()):
        with pytest.raises(ValueError) as info:
            metric.update(torch.tensor([0.5, 0.2]), torch.tensor([1.0, 0.5]),
                          indexes=torch.tensor([0, 0]))
        useful(info.value, "`target` holds 0.5 (row 1)")
        assert type(metric).__name__ in str(info.value)
        assert "evaluate_flat" not in str(info.value)


def test_a_stream_size_that_is_no_number_names_the_variable(data_dir):
    inputs = data_dir / "inputs"
    done = _cli("eval", str(inputs / "qrels.test"), str(inputs / "results.test"),
                env={"FASTIR_STREAM_BYTES": "abc"})
    _one_line(done, 1, "FASTIR_STREAM_BYTES", "'abc'", "whole number of bytes")


@pytest.mark.parametrize("command, status", [("trec_eval", 2), ("eval", 1)])
def test_qrels_and_run_both_from_standard_input_say_so(command, status):
    done = _cli(command, "-", "-", stdin="q1 0 d1 1\n")
    _one_line(done, status, "both standard input (-)", "give one of them as a file")
    assert "empty run file" not in done.stderr


def test_plot_names_the_file_it_wrote(data_dir, tmp_path):
    pytest.importorskip("matplotlib")
    inputs = data_dir / "inputs"
    done = _cli("plot", "pr", str(inputs / "qrels.test"), str(inputs / "results.test"),
                "-o", "figure", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == "wrote figure.png"
    assert (tmp_path / "figure.png").exists() and not (tmp_path / "figure").exists()


#: Preference files trec_eval stops at, and what the error names.
STOPS = {
    "level 0 and another": ("q1 g s2 d2 0\nq1 g s1 d1 0\nq1 g s2 d1 1\n",
                            ["judged.prefs:3: query 'q1' judgment group 'g': doc 'd1' has "
                             "level 0 in subgroup 's1' (line 2) and level 1 in subgroup 's2'",
                             "level 0 (non-relevant) in all the subgroups"]),
    "two levels": ("q1 g s d1 2\n# a comment\nq1 g s d1 1\nq1 g s d2 0\n",
                   ["judged.prefs:3: query 'q1' judgment group 'g' subgroup 's': doc 'd1' has "
                    "two levels, 2 and 1 (its lines: 1 and 3)", "one level per subgroup"]),
    "a cycle": ("q1 g s1 d1 1\nq1 g s1 d2 2\nq1 g s2 d2 1\nq1 g s2 d1 2\n",
                ["judged.prefs: query 'q1' judgment group 'g': its subgroups' preferences "
                 "contradict", "change the levels"]),
}


@pytest.mark.parametrize("case", STOPS)
def test_a_preference_conflict_names_its_group_subgroup_and_document(tmp_path, case):
    text, words = STOPS[case]
    (tmp_path / "judged.prefs").write_text(text)
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\n")
    with pytest.raises(InputError) as info:
        fastir.evaluate(fastir.read_prefs(tmp_path / "judged.prefs"), str(tmp_path / "r.run"),
                        ["prefs_simp"])
    useful(info.value, "judged.prefs:")
    assert all(w in str(info.value) for w in words), info.value
    if case == "level 0 and another":  # (the command line says the same, once is enough)
        done = _cli("trec_eval", "-R", "prefs", "-m", "prefs_simp", "judged.prefs", "r.run",
                    cwd=tmp_path)
        _one_line(done, 4, *words, "trec_eval stops here")


def test_eval_notes_the_queries_a_run_lacks_or_has_without_judgments(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2 r\nq9 Q0 d1 1 2 r\nq8 Q0 d1 1 2 r\n")
    done = _cli("eval", "qrels", "r.run", "-m", "P@1", cwd=tmp_path)
    _one_line(done, 0, "run r.run: 2 of its queries have no judgments and are left out: q8, q9")
    _one_line(done, 0, "run r.run: 2 judged queries are not in it and score 0", "q2, q3")
    assert done.stdout.split()[-1] == f"{1 / 3:.4f}"
    done = _cli("eval", "qrels", "r.run", "-m", "P@1", "--missing", "skip", cwd=tmp_path)
    _one_line(done, 0, "2 judged queries are not in it and are left out", "q2, q3")
    assert done.stdout.split()[-1] == "1.0000"


# -- 16. preference judgments take max_docs as qrels do -------------------------------------
PREFS = {"q1": {"g": {"s": {"d1": 1, "d2": 0, "d3": 2}}}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}


@pytest.mark.parametrize("max_docs", [-1, 1.5, "3", True, float("nan")])
@pytest.mark.parametrize("judgments", ["prefs", "qrels", "groups"])
def test_max_docs_is_a_whole_number_of_0_or_more_for_every_judgment(max_docs, judgments):
    judged = {"prefs": fastir.Prefs.from_dict(PREFS),
              "qrels": {"q1": {"d1": 1, "d2": 0}},
              "groups": fastir.JudgmentGroups.from_dict({"q1": {"g": {"d1": 1}}})}[judgments]
    measure = {"prefs": "prefs_simp", "qrels": "P@2", "groups": "P_avgjg"}[judgments]
    with pytest.raises(ValueError) as info:
        fastir.evaluate(judged, RUN, [measure], max_docs=max_docs)
    useful(info.value, "max_docs must be a non-negative integer")


def test_max_docs_cuts_the_ranking_preferences_are_counted_on():
    prefs = fastir.Prefs.from_dict(PREFS)
    values = [fastir.evaluate(prefs, RUN, ["prefs_simp_ret"], max_docs=m).mean["prefs_simp_ret"]
              for m in (None, 3, 2, 1)]
    assert values == [1 / 3, 1 / 3, 1.0, 0.0]


@pytest.mark.parametrize("fmt", ["qrels", "prefs"])
def test_trec_eval_refuses_a_negative_depth_whatever_the_format(tmp_path, fmt):
    """(-M is read with the options, before the judgments: two formats show it.)"""
    judged = {"prefs": "q1 g s d1 2\nq1 g s d2 1\n"}.get(fmt, "q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "judged").write_text(judged)
    (tmp_path / "r.run").write_text("q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n")
    done = _cli("trec_eval", "-R", fmt, "-M", "-1", "judged", "r.run", cwd=tmp_path)
    _one_line(done, 1, "option -M needs a number of documents (0 or more), got -1")
    assert done.stdout == ""


# -- issue 40: preference judgments given where qrels are taken ------------------------------
def test_preference_judgments_where_qrels_are_taken(data_dir):
    """Evaluator and compare take qrels: given preference judgments (with preference
    measures or others), they say so, not that the measures need preference judgments
    "; these are qrels"."""
    inputs = data_dir / "inputs"
    prefs = fastir.read_prefs(str(inputs / "prefs.test"))
    run = str(inputs / "prefs.results.test")
    calls = [lambda m: fastir.Evaluator(prefs, m),
             lambda m: fastir.compare(prefs, {"a": run, "b": run}, m)]
    for call in calls:
        for measures in (["prefs_simp"], ["map"]):
            with pytest.raises(TypeError) as refused:
                call(measures)
            said = str(refused.value)
            assert said.endswith("got Prefs (preference judgments: fastir.evaluate(judgments, "
                                 "run, measures) evaluates them; this takes qrels)"), said
            assert "these are qrels" not in said
    assert fastir.evaluate(prefs, run, ["prefs_simp"]).mean  # (as they say)
