"""fastir.spark.evaluate: a Spark DataFrame run gives fastir.evaluate's results, bit for bit,
in local mode (the session fixture of tests/conftest.py: 2 cores, 4 shuffle partitions, a
task tried up to 3 times). The drawn inputs of every door are tests/engine/test_every_door.py's
test_spark."""

import os
import subprocess
import sys

import numpy as np
import pytest
from scale_inputs import assert_same, frames

import fastir

pd = pytest.importorskip("pandas")
functions = pytest.importorskip("pyspark.sql.functions")
fspark = pytest.importorskip("fastir.spark")

pytestmark = pytest.mark.one_engine  # (the executors' kernels do not follow the engine)

MEASURES = ["map", "P@5", "nDCG(rel=2)@10", "num_ret", "num_rel", "gm_map", "num_q",
            "relstring"]


def spread(spark, frame, partitions=3, seed=1):
    """A Spark DataFrame of ``frame``'s rows in a random order over ``partitions``, and that
    order as pandas (what fastir.evaluate is given: ties="input" reads it)."""
    shuffled = frame.sample(frac=1, random_state=seed)
    data = spark.createDataFrame(shuffled).repartition(partitions)
    return data, data.toArrow().to_pandas()


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_equals_evaluate_with_queries_split_across_partitions(spark, missing):
    qrels, run = frames()
    data, order = spread(spark, run)
    got = fspark.evaluate(spark.createDataFrame(qrels), data, MEASURES, missing=missing,
                          per_query=True)
    want = fastir.evaluate(qrels, order, MEASURES, missing=missing)
    assert_same(got, want)
    assert fspark.evaluate(qrels, data, MEASURES, missing=missing) == want.mean


@pytest.mark.parametrize("options", [
    {"ties": "input", "relevance_level": 2},
    {"max_docs": 4, "judged_only": True, "compat": "9.0.8", "num_docs": 100},
    {"unjudged": ("relevant", 2), "ties": "expected"},
    {"labels": "float", "relevance_level": 0.5},
    {"labels": "probability", "samples": 50, "label_seed": 3},
])
def test_options(spark, options):
    qrels, run = frames(seed=4, text=False)  # (integer query ids)
    if options.get("labels") == "float":
        qrels["relevance"] = qrels.relevance.clip(lower=0) * 0.75
    if options.get("labels") == "probability":  # (some queries sampled: > 10 uncertain)
        qrels["relevance"] = qrels.relevance.clip(lower=0) / 2
    measures = ["P@5", "nDCG@10", "AP", "Rprec", "Rprec_mult_0.5"]
    data, order = spread(spark, run.rename(columns={"query_id": "q_id"}), partitions=5)
    want = fastir.evaluate(qrels, order, measures, **options)
    assert_same(fspark.evaluate(spark.createDataFrame(qrels), data, measures,
                                per_query=True, **options), want)


def test_table_names_and_one_query_over_every_partition(spark):
    """Tables named by str; a query of 200 rows spread over 4 partitions, 4 of 8 empty."""
    rng = np.random.default_rng(7)
    run = pd.DataFrame({"query_id": "q", "doc_id": [f"d{i}" for i in range(200)],
                        "score": rng.integers(0, 20, 200) / 2})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": [f"d{i}" for i in range(0, 300, 3)],
                          "relevance": rng.integers(0, 3, 100)})
    data, order = spread(spark, run, partitions=4)
    data.createOrReplaceTempView("fastir_run")
    spark.createDataFrame(qrels).createOrReplaceTempView("fastir_qrels")
    got = fspark.evaluate("fastir_qrels", "fastir_run", MEASURES, per_query=True)
    assert_same(got, fastir.evaluate(qrels, order, MEASURES))


def test_an_empty_run(spark):
    qrels, run = frames()
    empty = spark.createDataFrame(run).limit(0)
    with pytest.warns(fastir.FastirWarning):
        want = fastir.evaluate(qrels, run.iloc[:0], MEASURES)
    with pytest.warns(fastir.FastirWarning):
        assert_same(fspark.evaluate(qrels, empty, MEASURES, per_query=True), want)


def test_a_user_measure_travels_to_the_executors(spark):
    @fastir.define_measure(cutoff=True)
    def found(ranked, judged, n_rel, rel):
        return float((ranked >= rel).sum())

    qrels, run = frames(seed=2)
    data, order = spread(spark, run)
    want = fastir.evaluate(qrels, order, ["found@5", "P@5"])
    assert_same(fspark.evaluate(qrels, data, ["found@5", "P@5"], per_query=True), want)


def test_a_python_worker_killed_once_gives_the_same_result(spark, tmp_path):
    """The evaluation task's Python worker exits on its first attempt (a user measure that
    kills its process once, outside the driver); Spark tries the task again."""
    marker, driver = str(tmp_path / "killed"), os.getpid()

    @fastir.define_measure(jit=False)
    def dies_once(ranked, judged, n_rel):
        if os.getpid() != driver and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return float(len(ranked))

    qrels, run = frames(seed=3)
    data, order = spread(spark, run)
    got = fspark.evaluate(qrels, data, ["dies_once", "map"], per_query=True)
    assert os.path.exists(marker)
    assert_same(got, fastir.evaluate(qrels, order, ["dies_once", "map"]))


@pytest.mark.parametrize("change, message", [
    (lambda run: run.drop("doc_id"), r"run needs one column of \['doc_id'\]"),
    (lambda run: run.withColumn("score", run.score.cast("string")),
     "run column 'score' is string"),
    (lambda run: run.withColumnRenamed("query_id", "topic"),
     r"run needs one column of \['query_id', 'q_id'\]"),
])
def test_bad_runs_are_refused_by_argument(spark, change, message):
    qrels, run = frames(n_queries=4)
    with pytest.raises(fastir.InputError, match=message):
        fspark.evaluate(qrels, change(spark.createDataFrame(run)), ["P@5"])


def test_bad_qrels_and_inputs_are_refused_by_argument(spark):
    qrels, run = frames(n_queries=4)
    data = spark.createDataFrame(run)
    judged = spark.createDataFrame(qrels)
    labels = judged.withColumn("relevance", judged.relevance.cast("string"))
    with pytest.raises(fastir.InputError, match="qrels column 'relevance' is string"):
        fspark.evaluate(labels, data, ["P@5"])
    with pytest.raises(fastir.InputError, match="run must be a Spark DataFrame"):
        fspark.evaluate(qrels, run, ["P@5"])
    with pytest.raises(ValueError, match="P@x"):
        fspark.evaluate(qrels, data, ["P@x"])
    holes = data.withColumn("doc_id", functions.when(data.score > 0.5, data.doc_id))
    with pytest.raises(fastir.InputError, match="Spark partition: column 'doc_id' has"):
        fspark.evaluate(qrels, holes, ["P@5"])  # (nulls met in a task, raised by the driver)


def test_import_does_not_load_pyspark():
    code = "import sys, fastir, fastir.spark; assert 'pyspark' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def in_order(spark, frame, partitions):
    """A Spark DataFrame of ``frame``'s rows in their order, cut into ``partitions`` slices
    of consecutive rows (as a file's splits are)."""
    rows = list(frame.itertuples(index=False, name=None))
    return spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions),
                                 list(frame.columns))


@pytest.mark.parametrize("partitions", [1, 3, 7, 60])
@pytest.mark.parametrize("ties", ["trec_eval", "input"])
def test_a_run_grouped_by_query_is_evaluated_where_it_lies(spark, partitions, ties):
    """Queries cut at partitions' edges (one over several partitions, empty partitions at
    60): their rows are joined on the driver, the run is not shuffled."""
    qrels, run = frames(seed=5)
    run = run.sample(frac=1, random_state=2).sort_values("query_id", kind="stable")
    data = in_order(spark, run, partitions)
    got = fspark.evaluate(qrels, data, MEASURES, ties=ties, per_query=True)
    assert_same(got, fastir.evaluate(qrels, run, MEASURES, ties=ties))


def test_a_query_in_the_middle_of_a_partition_makes_the_run_shuffled(spark, monkeypatch):
    """The run's first row only looked at on the driver (it cannot tell): each partition
    grouped by query, but the first query's first row in the middle of the second of 3
    partitions (a shuffle); or at the end of the last (an edge: its rows are joined on the
    driver with those at the start of the first); or every partition not grouped (its task
    says so, a shuffle)."""
    monkeypatch.setattr("fastir.scale.spark._HEAD", 1)
    qrels, run = frames(seed=6)
    starts = np.flatnonzero(run.query_id.ne(run.query_id.shift()).to_numpy())
    cut = starts[len(starts) // 2]  # (a query's start near the middle)
    middle = pd.concat([run.iloc[1:cut], run.iloc[:1], run.iloc[cut:]])
    last = pd.concat([run, run.iloc[:1].assign(doc_id="extra")])
    for frame in (middle, last, run.sample(frac=1, random_state=3)):
        data = in_order(spark, frame, 3)
        got = fspark.evaluate(qrels, data, MEASURES, ties="input", per_query=True)
        assert_same(got, fastir.evaluate(qrels, frame, MEASURES, ties="input"))


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_compare_equals_fastir_compare(spark, missing):
    """Three runs (one grouped by query, two spread), the per-query values gathered."""
    qrels, run = frames(seed=8)
    other = run.assign(score=run.score[::-1].to_numpy())
    third = run.iloc[::2]
    data, orders = {"a": in_order(spark, run, 3)}, {"a": run}
    for name, frame in (("b", other), ("c", third)):
        data[name], orders[name] = spread(spark, frame)
    measures = ["AP", "nDCG@10", "P@5"]
    options = dict(test="t", missing=missing, relevance_level=2, baseline="a")
    got = fspark.compare(spark.createDataFrame(qrels), data, measures, **options)
    want = fastir.compare(qrels, orders, measures, **options)
    assert got.to_json() == want.to_json()
