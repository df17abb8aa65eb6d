"""The first-hour cases of issue 40 (items 10, 12, 13 and 14): what a new user meets first
says what it needs, shows what it prints, and leaves nothing unsaid or behind."""

import ast
import functools
import importlib
import sys
import warnings
from pathlib import Path

import pytest

import fastir
from fastir._optional import EXTRAS

pytestmark = pytest.mark.one_engine

FASTIR = Path(fastir.__file__).parent
QRELS = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"a": 1}}
RUN = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7}, "q2": {"a": 0.5, "b": 0.4}}


# -- 10. an optional module missing names the extra that installs it -----------------------
def _optional_imports(tree):
    """(line, top-level module, enclosing function or None) of each import of an optional
    module in a module's syntax tree."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                else function
            names = [a.name for a in child.names] if isinstance(child, ast.Import) else \
                [child.module or ""] if isinstance(child, ast.ImportFrom) and not \
                child.level else []
            found.extend((child.lineno, n.partition(".")[0], function) for n in names
                         if n.partition(".")[0] in EXTRAS)
            visit(child, inner)

    visit(tree, None)
    return found


def _required_before(scope, top, line):
    """Whether ``scope`` (a function, or the module's own statements) calls
    ``require("top...")`` before ``line``."""
    nodes = ast.walk(scope) if not isinstance(scope, ast.Module) else \
        (n for stmt in scope.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef))
         for n in ast.walk(stmt))
    return any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == "require"
               and n.args and isinstance(n.args[0], ast.Constant)
               and n.args[0].value.partition(".")[0] == top and n.lineno < line
               for n in nodes)


def test_every_optional_import_goes_through_require():
    """An optional module is first imported by :func:`fastir._optional.require` (in the
    module's statements, or earlier in the same function), which names the extra."""
    bare = []
    for path in sorted(FASTIR.rglob("*.py")):
        if path.name == "_optional.py":
            continue
        tree = ast.parse(path.read_text())
        for line, top, function in _optional_imports(tree):
            if not (_required_before(tree, top, line) or
                    function is not None and _required_before(function, top, line)):
                bare.append(f"{path.relative_to(FASTIR)}:{line} {top}")
    assert not bare, bare


def _qrels_and_runs():
    return QRELS, {"a": RUN, "b": {"q1": {"c": 0.9, "a": 0.1}, "q2": {"a": 1.0}}}


def _parquet(tmp_path):
    fastir.write_parquet(fastir.Run.from_dict(RUN), tmp_path / "run.parquet")


def _ranx_table(tmp_path):
    from fastir import ranx

    qrels, runs = _qrels_and_runs()
    named = [ranx.Run(r, name=n) for n, r in runs.items()]
    str(ranx.compare(ranx.Qrels(qrels), named, ["ndcg@3"]))


def _reimport(name):
    sys.modules.pop(name, None)
    importlib.import_module(name)


#: (what is called, the module it needs, the extra that installs it)
SITES = {
    "Results.to_pandas": (lambda tmp: fastir.evaluate(QRELS, RUN, "AP").to_pandas(), "pandas"),
    "ResultsByRun.to_pandas": (lambda tmp: fastir.evaluate(
        QRELS, _qrels_and_runs()[1], "AP").to_pandas(), "pandas"),
    "Comparison.to_pandas": (lambda tmp: fastir.compare(
        *_qrels_and_runs(), ["AP"], n_resamples=9).to_pandas(), "pandas"),
    "pictures": (lambda tmp: fastir.cutoff_curve(QRELS, RUN, k=2).plot(), "matplotlib"),
    "write_parquet": (_parquet, "pyarrow"),
    "fastir.dask": (lambda tmp: fastir.dask.read_trec_run(str(tmp / "none*.run")), "dask"),
    "fastir.ranx tables": (_ranx_table, "tabulate"),
    "fastir.ir_measures": (lambda tmp: _reimport("fastir.peers.provider"), "ir_measures"),
    "fastir.torchmetrics": (lambda tmp: _reimport("fastir.peers.torchmetrics"), "torch"),
}


@pytest.mark.parametrize("site", SITES)
def test_a_missing_optional_module_names_its_extra(site, tmp_path, monkeypatch):
    import fastir.dask  # noqa: F401 (before dask is hidden: the module itself imports none)

    call, module = SITES[site]
    for name in list(sys.modules):
        if name.partition(".")[0] == module:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, module, None)  # (import of it: ModuleNotFoundError)
    for name in ("fastir.peers.provider", "fastir.peers.torchmetrics"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ModuleNotFoundError) as raised:
        call(tmp_path)
    message = str(raised.value)
    assert f"pip install 'fastir[{EXTRAS[module]}]'" in message, message
    assert module in message and "\n" not in message, message


def test_every_extra_named_is_one_fastir_has():
    from importlib import metadata

    assert set(EXTRAS.values()) <= set(metadata.metadata("fastir").get_all("Provides-Extra"))


# -- 12. the example's first evaluation warns of nothing; a warning shows printed values --------
def _eval(*args):
    """``fastir eval ARGS`` in this process: (status, stdout, stderr), its warnings shown as
    the command line shows them (pytest makes them errors)."""
    from cli_calls import in_process

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        status, out, err = in_process("eval", *args)
    return status, out.decode(), err


def test_the_examples_runs_have_no_tied_scores_and_rank_as_trec_eval(tmp_path):
    from fastir.cli.example import write

    write(tmp_path)
    for name in ("weak", "strong"):
        lines = [line.split() for line in (tmp_path / f"{name}.run").read_text().splitlines()]
        scores = {(q, float(score)) for q, _, _, _, score, _ in lines}
        assert len(scores) == len(lines), name  # (no two documents of a query tie)
        ranks = [int(rank) for _, _, _, rank, _, _ in lines]
        expected = fastir.read_run(str(tmp_path / f"{name}.run"))
        assert ranks == [r + 1 for q in range(expected.n_queries)
                         for r in range(expected.stops[q] - expected.starts[q])]


def test_the_readmes_first_evaluation_prints_no_warning(tmp_path):
    from fastir.cli.example import write

    write(tmp_path)
    status, out, err = _eval(str(tmp_path / "qrels.txt"), str(tmp_path / "strong.run"),
                             str(tmp_path / "weak.run"))
    assert status == 0 and "warning" not in err, err
    assert out.splitlines()[1].startswith("strong.run")


def test_a_tie_warning_names_each_value_as_the_table_prints_it(tmp_path):
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\nq 0 c 1\nr 0 a 1\n")
    (tmp_path / "run").write_text("q Q0 a 1 1.0 x\nq Q0 b 2 1.0 x\nq Q0 c 3 1.0 x\n"
                                  "r Q0 a 1 1.0 x\n")
    status, out, err = _eval(str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP",
                             "-m", "P@1", "--digits", "3")
    printed = dict(zip(*[line.split()[1:] for line in out.splitlines()]))
    report = fastir.tie_report(str(tmp_path / "qrels"), str(tmp_path / "run"), ["AP", "P@1"])
    assert status == 0 and err.count("fastir eval: warning:") == 1, err
    for k in ("AP", "P@1"):
        low, high = report.low.mean[k], report.high.mean[k]
        assert low < report.value.mean[k] < high or k == "P@1"
        assert f"{k} {printed[k]} could be {low:.3f} to {high:.3f}" in err, (k, printed, err)


# -- 13. judged queries a run lacks, scored 0, are said once -------------------------------
def _said(call):
    """The value of ``call()`` and the messages of the MissingQueriesWarnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = call()
    return value, [str(w.message) for w in caught
                   if issubclass(w.category, fastir.MissingQueriesWarning)]


LACKING = {"q1": RUN["q1"]}  # (q2 is judged, and not in it)


def _entry_points(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 0.9 x\nq1 Q0 b 2 0.8 x\nq1 Q0 c 3 0.7 x\n")
    files = (str(tmp_path / "qrels"), str(tmp_path / "run"))
    return {
        "evaluate": lambda **o: fastir.evaluate(QRELS, LACKING, "AP", **o),
        "evaluate on files": lambda **o: fastir.evaluate(*files, "AP", **o),
        "Evaluator": lambda **o: fastir.Evaluator(QRELS, "AP", **o).evaluate(LACKING),
        "evaluate_file": lambda **o: fastir.evaluate_file(*files, "AP", **o),
    }


def test_judged_queries_scored_0_are_said_once_with_the_choices(tmp_path):
    for name, call in _entry_points(tmp_path).items():
        res, said = _said(call)
        assert res.missing_queries == ["q2"] and res.n_queries == 2, name
        assert len(said) == 1, (name, said)
        assert said[0].startswith("1 of the 2 judged queries are not in the run"), said
        assert "missing='zero'" in said[0] and "missing='skip' (--missing skip" in said[0]
        res, said = _said(functools.partial(call, missing="skip"))
        assert res.n_queries == 1 and said == [], (name, said)


def test_each_run_lacking_judged_queries_is_named_once():
    runs = {"full": RUN, "lacking": LACKING, "other": {"q2": {"a": 1.0}}}
    _, said = _said(lambda: fastir.evaluate(QRELS, runs, ["AP", "P@1"]))
    assert len(said) == 2 and all("1 of the 2 judged" in s for s in said), said


def test_the_warning_is_a_fastir_warning_a_user_can_filter():
    assert issubclass(fastir.MissingQueriesWarning, fastir.FastirWarning)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=fastir.MissingQueriesWarning)
        assert fastir.evaluate(QRELS, LACKING, "AP").mean["AP"] == 0.5 * fastir.evaluate(
            QRELS, LACKING, "AP", missing="skip").mean["AP"]
    assert caught == []


def test_the_peers_switches_score_0_as_their_peers_without_a_word():
    from fastir import pytrec_eval, ranx

    calls = [lambda: pytrec_eval.RelevanceEvaluator(QRELS, {"map"}).evaluate(LACKING),
             lambda: fastir.calc_aggregate(["AP"], QRELS, LACKING),
             lambda: ranx.evaluate(ranx.Qrels(QRELS), ranx.Run(LACKING), "map",
                                   make_comparable=True)]
    for call in calls:
        assert _said(call)[1] == []


def test_fastir_eval_says_it_in_its_note_only(tmp_path):
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 a 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 0.9 x\n")
    status, out, err = _eval(str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "AP")
    assert status == 0 and err.count("fastir eval:") == 1, err
    assert "note: run run: 1 judged queries are not in it and score 0" in err, err


# -- 14. the rest of the first hour -----------------------------------------------------------
def test_results_by_run_give_markdown_and_latex_as_a_comparison_does():
    both = fastir.evaluate(QRELS, _qrels_and_runs()[1], ["AP", "P@1"])
    assert both.to_markdown() == both.format("markdown")
    means = both["a"].mean
    assert both.to_markdown(digits=2).splitlines()[2] == \
        f"| a | {means['AP']:.2f} | {means['P@1']:.2f} |"
    latex = both.to_latex(digits=3)
    assert latex == both.format("latex", digits=3)
    assert latex.startswith(r"\begin{tabular}{lrr}") and r"\textbf{" in latex


def test_the_progress_bar_counts_each_files_bytes_once(tmp_path, monkeypatch):
    """Two runs: the bar's total is the three files' bytes, and it ends there."""
    import contextlib
    import io

    from fastir import progress
    from fastir.cli.example import write
    from fastir.cli.main import main

    bars = []

    class Seen(progress.Progress):
        def close(self):
            bars.append((self.bar.total, self.bar.n))
            super().close()

    monkeypatch.setattr(progress, "Progress", Seen)
    paths = [str(p) for p in write(tmp_path)]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()), \
            warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["eval", *paths, "--progress"]) == 0
    size = sum(Path(p).stat().st_size for p in paths)
    assert bars == [(size, size)]
