"""fastir.spark against Spark MLlib's ranking metrics and fastir.dask on one run, read by each
from the same Parquet files: a table printed for BENCHMARKS.md's "Spark" section.

    python scripts/bench_spark.py data/msmarco-dev.qrels data/msmarco-dev.run \
        --lines 1000000,0 --rounds 3

For each ``--lines`` (the first N lines of the run file; 0: all of it) the run and the
qrels of its queries are written once as Parquet (``query_id``, ``doc_id``, ``score`` /
``relevance``), then each way is called in turn (one untimed round first, ``--rounds``
timed, ways alternated) in this process, against one warm Spark session (``local[2]``)
and one warm dask cluster (2 one-thread worker processes), so no way pays a start-up in
the time:

- ``fastir.spark``: :func:`fastir.spark.evaluate` of the Parquet run and qrels (Spark
  DataFrames), measures nDCG@10, AP and P@10;
- ``mllib``: Spark ML's ``RankingEvaluator`` (MLlib's ``RankingMetrics`` underneath) on the
  same DataFrames, as its users prepare them: each query's documents collected in score
  order, its relevant documents (label >= 1) collected, joined on the query, cached, then
  ``ndcgAtK`` (k=10), ``meanAveragePrecision`` and ``precisionAtK`` (k=10). Its item ids
  are numbers (doc ids cast to double), its nDCG has binary gains (a graded label counts
  1), it breaks ties by its sort (here: doc id descending as a number, trec_eval: as text)
  and it averages over the queries of the join (trec_eval -c: every judged query);
- ``fastir.dask``: :func:`fastir.dask.evaluate` of ``dask.dataframe.read_parquet`` of the
  run, the qrels read by fastir on the driver;
- ``fastir``: :func:`fastir.evaluate` of :func:`fastir.read_parquet`'s run, one process.

Every fastir way's means are checked equal, bit for bit; MLlib's values are printed beside
fastir's. The 1-minute load average is sampled between calls.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import bench_page
from bench_page import ROOT, Loads, alternated, spread, table

MEASURES = ["nDCG@10", "AP", "P@10"]
GENERATE = "msmarco --queries 6980 --depth 1000 --out data/msmarco-dev"
TEXT = (f"`fastir.spark.evaluate` against Spark ML's `RankingEvaluator` (MLlib's "
        "`RankingMetrics` underneath: `ndcgAtK`, `meanAveragePrecision`, `precisionAtK`, "
        "k=10) and `fastir.dask.evaluate`, with `fastir.evaluate` in one process for scale, "
        "on the MS MARCO dev shape (`data/msmarco-dev.*`, made by `python scripts/generate.py "
        f"{GENERATE}`), run and qrels read by each from the same Parquet files; measures M = "
        f"{MEASURES}. One warm Spark session (`local[2]`) and one warm dask cluster (2 "
        "one-thread workers) in the script's process, ways alternated after an untimed "
        "round: `python scripts/bench_spark.py data/msmarco-dev.qrels data/msmarco-dev.run "
        "--lines 1000000,0 --rounds 3`. The Parquet run keeps the run file's order (grouped by "
        "query), so fastir.spark evaluates each partition where it lies; a run not grouped "
        "by query is shuffled on the query id first. MLlib's values differ: binary gains in "
        "its nDCG, its own tie order, numeric item ids, means over the queries of its join "
        "(the script's docstring).")
MLLIB = {"nDCG@10": ("ndcgAtK", 10), "AP": ("meanAveragePrecision", 10),
         "P@10": ("precisionAtK", 10)}
HEADER = [("way", "l"), ("call", "l"), ("in the call (s), median (min-max)", "r"),
          ("k rows per s", "r"), ("runs", "r"), ("when, load", "l")]
CALLS = {
    "fastir.spark": "fastir.spark.evaluate(spark.read.parquet(qrels), "
                    "spark.read.parquet(run), M)",
    "mllib": "RankingEvaluator(metricName=..., k=10).evaluate(ranked_and_relevant) x 3",
    "fastir.dask": "fastir.dask.evaluate(dask.dataframe.read_parquet(run), qrels, M)",
    "fastir": "fastir.evaluate(qrels, fastir.read_parquet(run, kind='run'), M)",
}


def write_parquet(qrels_path, run_path, lines, folder):
    """The run's first ``lines`` lines (0: all) and the qrels of its queries as Parquet
    files in ``folder``, ids as text and scores read round-trip exact: (qrels path, run
    path, rows)."""
    import pandas as pd

    ids = {"query_id": str, "doc_id": str}
    run = pd.read_csv(run_path, sep=" ", header=None, usecols=[0, 2, 4], dtype=ids,
                      names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                      float_precision="round_trip", nrows=lines or None)
    qrels = pd.read_csv(qrels_path, sep=" ", header=None, usecols=[0, 2, 3], dtype=ids,
                        names=["query_id", "iter", "doc_id", "relevance"])
    qrels = qrels[qrels.query_id.isin(run.query_id.unique())]  # (the run's queries)
    paths = (os.path.join(folder, f"qrels-{lines}.parquet"),
             os.path.join(folder, f"run-{lines}.parquet"))
    qrels.to_parquet(paths[0], index=False)
    run.to_parquet(paths[1], index=False, row_group_size=1 << 20)
    return paths[0], paths[1], len(run)


def timed(function):
    """A call returning its wall seconds, its value kept in ``values``."""
    values = []

    def call():
        start = time.perf_counter()
        values.append(function())
        return time.perf_counter() - start
    call.values = values
    return call


def spark_session():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("fastir-bench")
             .config("spark.ui.enabled", "false").config("spark.driver.memory", "6g")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def mllib_means(spark, qrels, run):
    """MLlib's three metrics on the Parquet files, prepared as its users do."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    ranked = (spark.read.parquet(run)
              .groupBy("query_id")
              .agg(F.sort_array(F.collect_list(F.struct(F.col("score"),
                                                        F.col("doc_id").cast("double").alias("doc_id"))),
                                asc=False).alias("pairs"))
              .select("query_id", F.col("pairs.doc_id").alias("prediction")))
    relevant = (spark.read.parquet(qrels).where(F.col("relevance") >= 1)
                .groupBy("query_id")
                .agg(F.collect_list(F.col("doc_id").cast("double")).alias("label")))
    data = ranked.join(relevant, "query_id").cache()
    try:
        return {name: RankingEvaluator(metricName=metric, k=k).evaluate(data)
                for name, (metric, k) in MLLIB.items()}
    finally:
        data.unpersist()


def ways(spark, qrels, run):
    """{way: timed call} on the Parquet files."""
    import dask.dataframe as dd

    import fastir.dask
    import fastir.spark

    qrels_frame = fastir.read_parquet(qrels, kind="qrels")
    return {
        "fastir.spark": timed(lambda: fastir.spark.evaluate(
            spark.read.parquet(qrels), spark.read.parquet(run), MEASURES)),
        "mllib": timed(lambda: mllib_means(spark, qrels, run)),
        "fastir.dask": timed(lambda: fastir.dask.evaluate(
            dd.read_parquet(run), qrels_frame, MEASURES)),
        "fastir": timed(lambda: fastir.evaluate(
            qrels_frame, fastir.read_parquet(run, kind="run"), MEASURES).mean),
    }


def rows_of(calls, times, rows, loads):
    out = []
    for way in calls:
        rate = rows / statistics.median(times[way]) / 1e3
        out.append([way, f"`{CALLS[way]}`", spread(times[way], digits=2), f"{rate:,.0f}",
                    len(times[way]), loads.text()])
    return out


def values(calls):
    """The means of the fastir ways (checked equal, bit for bit) and MLlib's: a line each."""
    means = {way: call.values[-1] for way, call in calls.items()}
    for way in means:
        assert way == "mllib" or means[way] == means["fastir"], (way, means[way])
    return "\n".join(f"{who}: " + ", ".join(f"{k} {v:.4f}" for k, v in means[way].items())
                     for who, way in (("Means, every fastir way", "fastir"),
                                      ("MLlib's, on the same rows", "mllib")))


def tables(qrels_path, run_path, lines, rounds, names=tuple(CALLS)):
    """For each of ``lines`` (0: the whole run), a heading, the table of the ways
    ``names`` and (with mllib and fastir among them) the values of each; markdown."""
    import dask
    import distributed

    out = []
    spark = spark_session()
    with tempfile.TemporaryDirectory() as folder, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, dask.config.set(scheduler=client):
        for n in lines:
            qrels, run, rows = write_parquet(qrels_path, run_path, n, folder)
            calls = {w: c for w, c in ways(spark, qrels, run).items() if w in names}
            loads = Loads()
            times = alternated(calls, rounds, loads)
            out.append(f"{rows:,} rows ({'the whole run' if not n else f'its first {n:,} lines'}"
                       f"), {rounds} timed runs of each way:\n\n"
                       + table(HEADER, rows_of(calls, times, rows, loads))
                       + ("\n\n" + values(calls) if {"mllib", "fastir"} <= set(calls) else ""))
            print(out[-1], flush=True)
    spark.stop()
    return out


def section(smoke=False, repeat=None):
    """BENCHMARKS.md's "spark" section (``./dev bench --case spark``): the MS MARCO dev
    shape, its first million lines and all of it (smoke: 100,000 lines, one run)."""
    qrels, run = ROOT / "data/msmarco-dev.qrels", ROOT / "data/msmarco-dev.run"
    if not run.exists():
        subprocess.run([sys.executable, "scripts/generate.py", *GENERATE.split()], check=True,
                       cwd=ROOT)
    body = tables(str(qrels), str(run), [100_000] if smoke else [1_000_000, 0],
                  repeat or (1 if smoke else 3))
    return bench_page.section("spark", "Spark", TEXT, "\n\n".join(body))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--lines", default="1000000,0",
                        help="the run's first N lines, each a table (0: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ways", default=",".join(CALLS))
    args = parser.parse_args()
    tables(args.qrels, args.run, [int(n) for n in args.lines.split(",")], args.rounds,
           args.ways.split(","))


if __name__ == "__main__":
    main()
