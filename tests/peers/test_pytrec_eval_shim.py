"""``import fastir.pytrec_eval as pytrec_eval``: the module's functions and the evaluator's
output as pytrec_eval's, byte for byte, on the cases its own suite and examples exercise (and
where running them through fastir found a difference: the query order, ``yaap``)."""

import collections
import json
import random

import pytest
from test_compat import PYTREC_MEASURES, graded_pair

import fastir
import fastir.pytrec_eval as shim

pytestmark = pytest.mark.one_engine
pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture
def files(data_dir):
    return data_dir / "inputs" / "qrels.test", data_dir / "inputs" / "results.test"


def test_the_module_has_pytrec_evals_names():
    assert set(shim.__all__) <= set(dir(pytrec_eval))
    assert shim.supported_measures == set(pytrec_eval.supported_measures)
    assert {k: v for k, v in pytrec_eval.supported_nicknames.items()
            if k in shim.supported_nicknames} == shim.supported_nicknames
    # (pytrec_eval also lists prefs, all_prefs and qrels_jg, whose measures it refuses)
    assert set(pytrec_eval.supported_nicknames) - set(shim.supported_nicknames) == {
        "prefs", "all_prefs", "qrels_jg"}


def test_parse_qrel_and_parse_run_read_as_pytrec_eval(files):
    qrels_path, run_path = files
    for parse, path in ((shim.parse_qrel, qrels_path), (shim.parse_run, run_path)):
        with open(path) as f:
            ours = parse(f)
        with open(path) as f:
            theirs = getattr(pytrec_eval, parse.__name__)(f)
        assert isinstance(ours, collections.defaultdict)
        assert json.dumps(ours) == json.dumps(theirs)  # (file order, values and their types)
    lines = ["q1 Q0 d1 1 2.5 tag\n", "\n", "# a comment\n", b"q1 Q0 d2 2 1 tag\n"]
    assert shim.parse_run(lines) == {"q1": {"d1": 2.5, "d2": 1.0}}


@pytest.mark.parametrize("lines, message", [
    (["q1 Q0 d1 1 2.5\n"], "line 1: 5 fields, expected 6"),
    (["q1 Q0 d1 1 2.5 t\n", "q1 Q0 d1 2 1.5 t\n"], "line 2: query 'q1' has doc 'd1' twice"),
    (["q1 Q0 d1 1 1_0 t\n"], "score '1_0' is not a finite number"),
    (["q1 Q0 d1 1 nan t\n"], "score 'nan'"),
])
def test_bad_run_lines_name_the_line(lines, message):
    with pytest.raises(fastir.InputError, match=message):
        shim.parse_run(lines)


def test_bad_labels_name_the_line():
    with pytest.raises(fastir.InputError, match="line 1: label '1.0' is not an integer"):
        shim.parse_qrel(["q1 0 d1 1.0\n"])
    with pytest.raises(fastir.InputError, match="label '1_0'"):
        shim.parse_qrel(["q1 0 d1 1_0\n"])


@pytest.mark.parametrize("measure", ["map", "num_ret", "gm_map", "P_5"])
def test_compute_aggregated_measure_is_pytrec_evals(measure):
    values = [random.Random(i).random() for i in range(37)]
    assert shim.compute_aggregated_measure(measure, values) == \
        pytrec_eval.compute_aggregated_measure(measure, values)


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_is_byte_identical_queries_in_the_runs_order(seed):
    qrels, run = graded_pair(seed)
    order = list(run)
    random.Random(seed).shuffle(order)
    run = {q: run[q] for q in order}  # (pytrec_eval reports the run's order)
    for measures in (PYTREC_MEASURES, pytrec_eval.supported_measures, {"official"}):
        theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        ours = shim.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert json.dumps(ours, indent=1) == json.dumps(theirs, indent=1)


@pytest.mark.parametrize("qrels_name, expected, options", [
    ("qrels.test", "out.test", {}),
    ("qrels.rel_level", "out.test.aql", {"relevance_level": 2})])
def test_the_summaries_of_trec_eval_9s_suite(data_dir, qrels_name, expected, options):
    """pytrec_eval's integration test: compute_aggregated_measure over evaluate's values
    gives trec_eval 9.0.8's summary lines (to its printed 4 decimals)."""
    with open(data_dir / "inputs" / qrels_name) as f:
        qrels = shim.parse_qrel(f)
    with open(data_dir / "inputs" / "results.test") as f:
        run = shim.parse_run(f)
    summary = {}
    for line in (data_dir / "expected-9.0.8" / expected).read_text().splitlines():
        measure, query, value = line.split()
        if query == "all" and measure not in ("runid", "relstring"):
            summary[measure] = float(value)
    bases = {m if m in shim.supported_measures else m.rsplit("_", 1)[0] for m in summary}
    results = shim.RelevanceEvaluator(qrels, bases, **options).evaluate(run)
    checked = 0
    for measure, value in summary.items():
        if measure in next(iter(results.values())):
            got = shim.compute_aggregated_measure(measure, [r[measure] for r in
                                                            results.values()])
            assert got == pytest.approx(value, abs=5e-5), measure
            checked += 1
    assert checked > 25
