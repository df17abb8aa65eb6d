"""One engine under every door: each entry point of fastir gives ``fastir.evaluate``'s
values, or refuses by name.

Inputs are drawn (tests/doors.py: tied scores, documents the qrels do not judge, judged
queries the run lacks, run queries without judgments, labels from -1 to 3), and so are
requests (measures of every family of the registry that reads qrels, with drawn
parameters and cutoffs, a few at a time in a drawn order, each written in one of the
dialects that name it) and options (relevance level, missing, ties, max_docs,
judged_only, unjudged, num_docs, compat). Issue 41's cases, and those this test found,
are explicit examples. Each door is called on the same
inputs, request and options as ``fastir.evaluate`` (in the form the door takes them), and
its per-query values and summaries must equal evaluate's to 1e-12; or, where the door
cannot do what is asked, its error must name the measure or the option (a ValueError or
TypeError raised by fastir itself). Where evaluate refuses, the door must refuse too.

Doors: ``evaluate_file`` (small chunks), ``Evaluator``, bound candidates (one score
vector, a matrix of them, weighted sums of them), ``fastir.iter_calc`` /
``calc_aggregate``, ``compare`` (its per-query values and means), ``evaluate_matrix``,
``MetricAccumulator`` and
``evaluate_flat`` (dense rows holding every judged document, each tie mode: "average" is
evaluate's "expected" for nDCG and DCG, the column order for the others), ``fastir.dask``,
``fastir.spark`` (local mode, a few examples: a Spark job each),
``fastir.tie_report`` (its values), ``fastir eval --format json`` (its options as flags,
the run read whole or in chunks), and the switches: ``fastir.pytrec_eval`` (trec_eval
9.0.8, judged queries of the run), ``fastir.ir_measures``' provider (9.0.8 for the
measures ir_measures gives pytrec_eval, 0 for a judged query the run lacks),
``fastir.ranx`` (ranx's names) and ``fastir.torchmetrics`` (the metrics that are a fastir
measure, on positive scores). Both engines run every test (tests/conftest.py).
"""

import importlib
import json
import math
import os
import random
import warnings

import numpy as np
import pytest
from cli_calls import in_process
from conftest import SCORES, matrix_to_dicts, run_rows
from doors import (
    RANX_FAMILIES,
    Table,
    asks,
    assert_refused,
    assert_same,
    assert_same_results,
    check,
    close,
    dense_asks,
    expect,
    measure_objects,
    names_of,
    qrels_and_runs,
    requests,
    spellings,
    tidy,
)
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import fastir
from fastir.measures import registry


def cases(n):
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Where the files of the doors that read files are written (again each example)."""
    return tmp_path_factory.mktemp("doors")


def write_run(folder, run):
    """The run as a TREC file, query by query in the dict's order (its input order)."""
    path = str(folder / "run.txt")
    with open(path, "w", encoding="utf-8") as f:
        for q, docs in run.items():
            for rank, (d, s) in enumerate(docs.items(), 1):
                f.write(f"{q} Q0 {d} {rank} {s!r} tag\n")
    return path


def write_qrels(folder, qrels):
    """The qrels as a TREC file."""
    path = str(folder / "qrels.txt")
    with open(path, "w", encoding="utf-8") as f:
        for q, docs in qrels.items():
            for d, label in docs.items():
                f.write(f"{q} 0 {d} {label}\n")
    return path


# -- doors that take a run --------------------------------------------------------------
#: Issue 41's cases: a judged query (q2) absent from the run under ties="expected";
#: counts summed over queries (NumRel, NumRelRet).
ABSENT = ({"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d1": 1}},
          {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.25}})
COUNTS = ({"q1": {"d1": 1, "d2": 3, "d3": 0}, "q2": {"d1": 2, "d4": 1}},
          {"q1": {"d1": 0.5, "d2": 0.5, "d3": 0.25}, "q2": {"d1": 1.0, "d9": 2.0}})
#: A text measure (RelString) first, numbers after it.
TEXT = ["RelString@3", "AP", "P@1"]
#: Two tied documents, one judged.
TIED = ({"q1": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 1.0}})


@cases(100)
@example(ABSENT, (["AP", "nDCG@3"], {"ties": "expected"}), 40)
@given(qrels_and_runs(), asks(), st.integers(1, 200))
def test_evaluate_file(folder, data, ask, chunk_bytes):
    """The run as a file, read in chunks of a few lines."""
    request, opts = ask
    qrels, run = tidy(*data)
    assume(run)
    want = expect(qrels, run, request, **opts)
    path = write_run(folder, run)
    check("evaluate_file", want,
          lambda: fastir.evaluate_file(qrels, path, request, chunk_bytes=chunk_bytes, **opts),
          request, opts, lambda got: assert_same_results("evaluate_file", want, got))


@cases(100)
@given(qrels_and_runs(), asks())
def test_evaluator(data, ask):
    """Qrels and measures prepared once, then the run."""
    request, opts = ask
    qrels, run = tidy(*data)
    want = expect(qrels, run, request, **opts)
    check("Evaluator", want, lambda: fastir.Evaluator(qrels, request, **opts).evaluate(run),
          request, opts, lambda got: assert_same_results("Evaluator", want, got))


@cases(60)
@given(qrels_and_runs(), asks())
def test_bound_candidates(data, ask):
    """One score vector (a Results); score vectors at once (means, and per-query values):
    the run's scores and their negation; and weighted sums of those two (a fusion
    search's): the scores, and half of each (every candidate tied at 0)."""
    request, opts = ask
    qrels, run = tidy(*data)
    qids, docs, scores = run_rows(run)
    assume(qids)
    flipped = {q: {d: -s for d, s in ranked.items()} for q, ranked in run.items()}
    tied = {q: dict.fromkeys(ranked, 0.0) for q, ranked in run.items()}
    wants = [expect(qrels, r, request, **opts) for r in (run, flipped, tied)]
    either = next((w for w in wants if isinstance(w, Exception)), wants[0])
    try:
        bound = fastir.Evaluator(qrels, request, **opts).bind(qids, docs)
    except (ValueError, TypeError) as exc:
        assert_refused(exc, "Evaluator.bind", request, opts)
        return
    check("BoundCandidates.evaluate", wants[0], lambda: bound.evaluate(scores), request, opts,
          lambda got: assert_same_results("BoundCandidates.evaluate", wants[0], got))

    def each(door, references):
        def same(got):
            means, values = got
            for r, reference in enumerate(references):
                assert_same(f"{door} (score vector {r})", reference, bound.query_ids,
                            values[r], dict(zip(reference.measures, means[r])))
        return same

    parts = np.stack([scores, -scores])
    check("BoundCandidates.evaluate (2-d)", either,
          lambda: bound.evaluate(parts, per_query=True), request, opts,
          each("BoundCandidates.evaluate (2-d)", wants[:2]))
    check("BoundCandidates.evaluate_weighted", either,
          lambda: bound.evaluate_weighted(parts, [[1.0, 0.0], [0.5, 0.5]], per_query=True),
          request, opts, each("BoundCandidates.evaluate_weighted", [wants[0], wants[2]]))


@cases(100)
@example(COUNTS, (TEXT, {}))
@given(qrels_and_runs(), asks())
def test_iter_calc(data, ask):
    """A Metric per query and measure (the measure as given)."""
    request, opts = ask
    qrels, run = tidy(*data)
    want = expect(qrels, run, request, **opts)

    def per_query(got):
        values, ids = {}, []
        for metric in got:
            if metric.query_id not in values:
                ids.append(metric.query_id)
                values[metric.query_id] = {}
            values[metric.query_id][metric.measure] = metric.value
        assert_same("fastir.iter_calc", want, ids,
                    [[values[q][name] for name in request] for q in ids])

    check("fastir.iter_calc", want, lambda: list(fastir.iter_calc(request, qrels, run, **opts)),
          request, opts, per_query)


@cases(100)
@example(COUNTS, (TEXT, {}))
@given(qrels_and_runs(), asks())
def test_calc_aggregate(data, ask):
    """``{measure as given: summary}``, each measure's under its own name."""
    request, opts = ask
    qrels, run = tidy(*data)
    want = expect(qrels, run, request, **opts)

    def same(got):
        assert list(got) == request, f"fastir.calc_aggregate: keys {list(got)} != {request}"
        assert_same("fastir.calc_aggregate", want, want.query_ids, None,
                    {key: got[name] for key, name in zip(want.measures, request)})

    check("fastir.calc_aggregate", want,
          lambda: fastir.calc_aggregate(request, qrels, run, **opts), request, opts, same)


@cases(80)
@example(COUNTS, COUNTS, (["NumRel", "NumRelRet", "AP"], {}))
@given(qrels_and_runs(), qrels_and_runs(), asks())
def test_compare(data, other, ask):
    """Two systems: each one's per-query values over the queries compared, and its mean
    there (evaluate's summary of those queries: the run cut to them)."""
    request, opts = ask
    qrels, run = tidy(*data)
    second = tidy({}, other[1])[1]
    runs = {"a": run, "b": second}
    wants = [expect(qrels, r, request, **opts) for r in runs.values()]
    refused = next((w for w in wants if isinstance(w, Exception)), None)
    if refused is None:
        common = set(wants[0].query_ids) & set(wants[1].query_ids)
        if len(common) < 2:  # (too few to compare: refused as such, or by name)
            with pytest.raises(ValueError) as refusal:
                fastir.compare(qrels, runs, request, test="t", n_resamples=10, **opts)
            if "in common" not in str(refusal.value):
                assert_refused(refusal.value, "compare", request, opts)
            return

    def same(got):
        for s, (r, want) in enumerate(zip(runs.values(), wants)):
            kept = {q: docs for q, docs in r.items() if q in set(got.queries)}
            summary = expect(qrels, kept, request, **opts) if opts.get("missing") == "skip" \
                else want
            rows = want.to_dict()
            table = Table(got.queries, want.measures,
                          {q: rows[q] for q in got.queries}, summary.mean)
            assert_same(f"compare (system {'ab'[s]})", table, got.queries, got.values[s],
                        dict(zip(got.measures, got.means[s])))

    check("compare", refused or wants[0],
          lambda: fastir.compare(qrels, runs, request, test="t", n_resamples=10, **opts),
          request, opts, same)


@cases(40)
@example(ABSENT, (["AP", "nDCG@3"], {"ties": "expected"}), 1)
@given(qrels_and_runs(), asks(), st.integers(1, 3))
def test_dask(data, ask, partitions):
    """The run as a dask DataFrame of 1 to 3 partitions (a query may be cut by one)."""
    request, opts = ask
    dd = pytest.importorskip("dask.dataframe")
    import dask
    import pandas as pd

    qrels, run = tidy(*data)
    qids, docs, scores = run_rows(run)
    assume(qids)
    frame = dd.from_pandas(pd.DataFrame({"query_id": qids, "doc_id": docs, "score": scores}),
                           npartitions=partitions, sort=False)
    want = expect(qrels, run, request, **opts)
    with dask.config.set(scheduler="synchronous"):
        check("fastir.dask.evaluate", want,
              lambda: importlib.import_module("fastir.dask").evaluate(
                  frame, qrels, request, per_query=True, **opts),
              request, opts, lambda got: assert_same_results("fastir.dask", want, got))


@pytest.mark.one_engine  # (the executors' kernels do not follow the engine)
@cases(6)
@example(ABSENT, (["AP", "nDCG@3"], {"ties": "input"}), 3)
@given(qrels_and_runs(), asks(), st.integers(1, 3))
def test_spark(spark, data, ask, partitions):
    """The run as a Spark DataFrame over 1 to 3 partitions in a shuffled order (a query's
    rows spread over several), evaluate given it in that order; local mode (the session
    fixture of tests/conftest.py), skipped without java or pyspark."""
    request, opts = ask
    import pandas as pd

    qrels, run = tidy(*data)
    qids, docs, scores = run_rows(run)
    assume(qids)
    frame = spark.createDataFrame(pd.DataFrame({"query_id": qids, "doc_id": docs,
                                                "score": scores})).repartition(partitions)
    want = expect(qrels, frame.toArrow().to_pandas(), request, **opts)
    check("fastir.spark.evaluate", want,
          lambda: importlib.import_module("fastir.spark").evaluate(
              qrels, frame, request, per_query=True, **opts),
          request, opts, lambda got: assert_same_results("fastir.spark", want, got))


@cases(60)
@example(TIED, (["Hole@5", "AP"], {}))
@given(qrels_and_runs(), asks())
def test_tie_report(data, ask):
    """The report's values under the options' ties (its range aside)."""
    request, opts = ask
    qrels, run = tidy(*data)
    want = expect(qrels, run, request, **opts)
    check("fastir.tie_report", want, lambda: fastir.tie_report(qrels, run, request, **opts),
          request, opts, lambda got: assert_same_results("fastir.tie_report", want, got.value))


# -- the command line -------------------------------------------------------------------
def flags(opts):
    """``fastir eval``'s flags of the options."""
    out = []
    for key, value in opts.items():
        if key == "relevance_level":
            out += ["--rel-level", str(value)]
        elif key == "judged_only":
            out += ["--judged-only"] if value else []
        elif key == "unjudged":
            out += ["--unjudged", value if isinstance(value, str) else f"relevant:{value[1]}"]
        else:
            out += [f"--{key.replace('_', '-')}", str(value)]
    return out


@cases(50)
@example(COUNTS, (TEXT, {}), False)
@example(TIED, (["Hole@5", "AP"], {}), False)
@example(ABSENT, (["AP", "nDCG@3"], {"ties": "expected"}), True)
@given(qrels_and_runs(), asks(compat=False), st.booleans())
def test_fastir_eval_json(folder, data, ask, streamed):
    """Per query (-q) and the mean; ``streamed``: the run read in chunks, as a run above
    FASTIR_STREAM_BYTES is (fastir.evaluate_file)."""
    request, opts = ask
    qrels, run = tidy(*data)
    assume(run and qrels)
    qrels_path, run_path = write_qrels(folder, qrels), write_run(folder, run)
    want = expect(qrels_path, run_path, request, **opts)
    args = ["eval", qrels_path, run_path, "--format", "json", "-q", *flags(opts)]
    for name in request:
        args += ["-m", name]
    saved = os.environ.get("FASTIR_STREAM_BYTES")
    os.environ["FASTIR_STREAM_BYTES"] = "0" if streamed else str(1 << 40)
    try:
        with warnings.catch_warnings():  # (shown as the command shows them)
            warnings.simplefilter("always")
            status, out, err = in_process(*args)
    finally:
        if saved is None:
            del os.environ["FASTIR_STREAM_BYTES"]
        else:
            os.environ["FASTIR_STREAM_BYTES"] = saved
    names = names_of(request, opts) + flags(opts)
    if status != 0:
        assert any(name in err for name in names), \
            f"fastir eval {request} {opts}: refused without naming the measure or option: {err}"
        return
    assert not isinstance(want, Exception), \
        f"fastir eval {request} {opts}: answered where evaluate refuses ({want})"
    records = json.loads(out)
    rows = [r for r in records if r["query"] != "all"]
    (mean,) = [r for r in records if r["query"] == "all"]
    assert_same("fastir eval --format json", want, [r["query"] for r in rows],
                [[_number(r[k]) for k in want.measures] for r in rows],
                {k: _number(mean[k]) for k in want.mean})


def _number(value):
    return math.nan if value is None else value


# -- the switches -----------------------------------------------------------------------
def pytrec_eval_key(name):
    """The key pytrec_eval gives a measure: a trec_eval cutoff as printed (``P.5`` ->
    ``P_5``), a single measure by its base name (``ndcg.1=3`` -> ``ndcg``), any other name
    as written."""
    try:
        if registry.parse_trec(name) is None:
            return name
    except ValueError:  # (ndcg_burges@3: ranx's, read as trec_eval's ndcg with gains)
        return name
    base = name.partition(".")[0]
    if base not in registry.TREC_NAMES:
        base = name.rpartition("_")[0]
    if registry.TREC_NAMES[base][1].style == "cut":
        return registry.parse(name)[0][0]
    return base


@cases(100)
@example(COUNTS, ["gm_map", "GMAP"], 1, False)
@given(qrels_and_runs(), requests(), st.integers(0, 3), st.booleans())
def test_pytrec_eval(data, request, level, judged_only):
    """trec_eval 9.0.8 (pytrec_eval's), the judged queries of the run; per-query
    ``gm_*`` are logarithms and text measures 0.0, as pytrec_eval gives them."""
    from fastir import pytrec_eval

    qrels, run = tidy(*data)
    opts = {"relevance_level": level, "judged_only": judged_only}
    want = expect(qrels, run, request, compat="9.0.8", missing="skip", **opts)

    def same(got):
        assert set(map(str, got)) == set(map(str, want.query_ids)), \
            f"pytrec_eval: queries {list(got)} != evaluate's {want.query_ids}"
        rows = want.to_dict()
        for q in want.query_ids:
            for name, key, m in zip(request, want.measures, want.parsed):
                value = rows[q][key]
                if m.spec.aggregate == "gmean":
                    value = math.log(max(value, 1e-5))
                elif m.spec.aggregate == "none":
                    value = 0.0
                key = pytrec_eval_key(name)
                assert close(got[q][key], value), \
                    f"pytrec_eval: {name} on {q!r}: {got[q][key]!r} != evaluate's {value!r}"

    check("pytrec_eval", want, lambda: pytrec_eval.RelevanceEvaluator(
        qrels, request, relevance_level=level, judged_docs_only_flag=judged_only).evaluate(run),
        request, {**opts, "compat": "9.0.8"}, same)


def ir_measures_text(m):
    """``m`` as ir_measures writes it (a gain table as a dict: ``gains={1:3,2:9}``)."""
    gains = dict(m.values).get("gains")
    if gains is None:
        return str(m)
    table = "{" + ",".join(f"{k}:{g:g}" for k, g in gains) + "}"
    return str(m).replace(m.spec.params["gains"].text(gains), table)


@cases(80)
@given(qrels_and_runs(), st.lists(measure_objects(), min_size=1, max_size=4))
def test_ir_measures_provider(data, drawn):
    """ir_measures' measures fastir's provider takes: the values of the provider
    ir_measures would choose (trec_eval 9.0.8 for pytrec_eval's), the measure's default 0
    for a judged query the run lacks, aggregated over the judged queries."""
    ir_measures = pytest.importorskip("ir_measures")
    from fastir.peers import provider as P

    qrels, run = tidy(*data)
    assume(qrels)
    chosen = {}
    for m in drawn:
        try:
            theirs = ir_measures.parse_measure(ir_measures_text(m))
            taken = P.provider.supports(theirs)
        except Exception:  # (what ir_measures does not take, or gives another provider)
            continue
        if taken:
            chosen[str(theirs)] = (theirs, m)
    assume(chosen)
    wants = {key: expect(qrels, run, [m], missing="skip",
                         compat="9.0.8" if P._provider(theirs) == "pytrec_eval" else None)
             for key, (theirs, m) in chosen.items()}
    asked = [theirs for theirs, _ in chosen.values()]
    if any(isinstance(w, Exception) for w in wants.values()):
        with pytest.raises((ValueError, TypeError)):
            list(P.provider.iter_calc(asked, qrels, run))
        return
    per_query = {(metric.query_id, str(metric.measure)): metric.value
                 for metric in P.provider.iter_calc(asked, qrels, run)}
    aggregates = {str(k): v for k, v in P.provider.calc_aggregate(asked, qrels, run).items()}
    for key, (theirs, _) in chosen.items():
        want = wants[key]
        values = dict(zip(want.query_ids, want.values[:, 0].tolist()))
        every = [values.get(q, theirs.DEFAULT) for q in qrels]
        for q, value in zip(qrels, every):
            assert close(per_query[(q, key)], value), \
                f"ir_measures provider: {key} on {q!r}: {per_query[(q, key)]} != {value}"
        total = math.fsum(every)
        summary = total if type(theirs.aggregator()).__name__ == "SumAgg" else \
            total / len(every)
        assert close(aggregates[key], summary), \
            f"ir_measures provider: {key}: {aggregates[key]} != {summary}"


@cases(80)
@given(qrels_and_runs(), st.lists(measure_objects(RANX_FAMILIES), min_size=1, max_size=5))
def test_ranx(data, drawn):
    """ranx's metric names, ``make_comparable``: a judged query the run lacks scores 0."""
    from fastir import ranx

    qrels, run = tidy(*data)
    request = []
    for m in drawn:
        names = spellings(m, ranx=True)
        if names and names[0] not in request:
            request.append(names[0])
    assume(request and qrels)
    want = expect(qrels, run, request)
    for return_mean in (False, True):
        def same(got, return_mean=return_mean):
            got = got if len(request) > 1 else {request[0]: got}
            if return_mean:
                assert_same("fastir.ranx.evaluate", want, want.query_ids, None,
                            {k: got[name] for k, name in zip(want.measures, request)})
            else:
                assert_same("fastir.ranx.evaluate", want, want.query_ids,
                            np.stack([got[name] for name in request], axis=1))

        check("fastir.ranx.evaluate", want, lambda return_mean=return_mean: ranx.evaluate(
            qrels, run, request, return_mean=return_mean, make_comparable=True), request, (),
            same)


# -- dense batches ----------------------------------------------------------------------
@st.composite
def dense_batches(draw, scores=SCORES, max_label=3):
    """(scores, labels, valid): a few rows, each with at least one candidate."""
    batch, width = draw(st.integers(1, 3)), draw(st.integers(1, 6))
    cells = st.lists(st.lists(st.tuples(scores, st.integers(0, max_label), st.booleans()),
                              min_size=width, max_size=width), min_size=batch, max_size=batch)
    grid = draw(cells)
    s = np.array([[c[0] for c in row] for row in grid], dtype=np.float64)
    y = np.array([[c[1] for c in row] for row in grid], dtype=np.int64)
    valid = np.array([[c[2] for c in row] for row in grid], dtype=bool)
    valid[:, draw(st.integers(0, width - 1))] = True
    return s, y, valid


def dense_reference(qrels, run, request, level, ties):
    """evaluate's answer to a dense batch under ``ties`` of evaluate_matrix: "average" is
    evaluate's "expected" for nDCG and DCG and the column order (trec_eval's, the columns
    standing for docs in docno-descending order) for the others."""
    tie = {"column": "trec_eval", "average": "trec_eval"}.get(ties, ties)
    if ties != "average":
        return expect(qrels, run, request, relevance_level=level, ties=tie)
    averaged = [n for n in request if registry.parse(n)[0][1].family in ("nDCG", "DCG")]
    parts = {}
    for names, how in ((averaged, "expected"), ([n for n in request if n not in averaged],
                                                 "trec_eval")):
        if names:
            parts[how] = expect(qrels, run, names, relevance_level=level, ties=how)
    refused = next((p for p in parts.values() if isinstance(p, Exception)), None)
    if refused is not None:
        return refused
    first = next(iter(parts.values()))
    rows = {q: {} for q in first.query_ids}
    mean = {}
    for part in parts.values():
        for q, values in part.to_dict().items():
            rows[q].update(values)
        mean.update(part.mean)
    keys = [registry.parse(n)[0][0] for n in request]
    return Table(first.query_ids, keys, rows, mean)


#: Issue 41's case: no tie, nDCG's and DCG's parameters under ties="average".
GAINS = ["nDCG(gains='1=1,2=10,3=2')@3", "nDCG(rel=2)@3", "DCG(gains='1=1,2=10,3=2')@10"]
ISSUE_BATCH = (np.array([[0.9, 0.8, 0.7, 0.6]]), np.array([[1, 3, 0, 2]]), np.ones((1, 4), bool))


@cases(120)
@example(ISSUE_BATCH, (GAINS, 1, "average"))
@given(dense_batches(), dense_asks())
def test_evaluate_matrix_and_accumulator(batch, ask):
    request, level, ties = ask
    scores, labels, valid = batch
    qrels, run = matrix_to_dicts(scores, labels, mask=valid)
    want = dense_reference(qrels, run, request, level, ties)
    options = {"relevance_level": level, "ties": ties}
    ids = sorted(qrels)

    def same(got):
        means, values = got
        assert_same("evaluate_matrix", want, ids, values, means)

    check("evaluate_matrix", want, lambda: fastir.evaluate_matrix(
        scores, labels, request, valid=valid, relevance_level=level, ties=ties, per_row=True),
        request, options, same)

    def accumulated():
        acc = fastir.MetricAccumulator(request, relevance_level=level, ties=ties)
        acc.update(scores, labels, valid=valid)
        return acc.compute(), acc.per_query()[1]

    check("MetricAccumulator", want, accumulated, request, options, same)


@cases(120)
@example(ISSUE_BATCH, (GAINS, 1, "average"), random.Random(0))
@given(dense_batches(), dense_asks(), st.randoms(use_true_random=False))
def test_evaluate_flat(batch, ask, rnd):
    """The dense batch's candidates as torchmetrics' flat rows, the queries interleaved
    (each query's rows in column order) and indexed by integers not from 0."""
    request, level, ties = ask
    scores, labels, valid = batch
    qrels, run = matrix_to_dicts(scores, labels, mask=valid)
    want = dense_reference(qrels, run, request, level, ties)
    cells = [(b, j) for b in range(len(scores)) for j in np.flatnonzero(valid[b])]
    turns = [b for b, _ in cells]
    rnd.shuffle(turns)
    columns = {b: iter([j for c, j in cells if c == b]) for b in range(len(scores))}
    rows = [(b, next(columns[b])) for b in turns]
    preds = np.array([scores[b, j] for b, j in rows])
    target = np.array([labels[b, j] for b, j in rows])
    indexes = np.array([3 * b + 2 for b, _ in rows])

    def same(got):
        means, ids, values = got
        assert ids.tolist() == [3 * b + 2 for b in range(len(scores))]
        assert_same("evaluate_flat", want, sorted(qrels), values, means)

    check("evaluate_flat", want, lambda: fastir.evaluate_flat(
        preds, target, indexes, request, relevance_level=level, ties=ties, per_query=True),
        request, {"relevance_level": level, "ties": ties}, same)


#: torchmetrics' metrics that are a fastir measure (top_k: None or k), and the measure.
TORCHMETRICS = {
    "RetrievalMAP": lambda k: "AP",
    "RetrievalMRR": lambda k: "RR" if k is None else f"RR@{k}",
    "RetrievalPrecision": lambda k: "SetP" if k is None else f"P@{k}",
    "RetrievalRecall": lambda k: "SetR" if k is None else f"R@{k}",
    "RetrievalHitRate": lambda k: f"Success@{k}",
    "RetrievalRPrecision": lambda k: "Rprec",
    "RetrievalNormalizedDCG": lambda k: "nDCG" if k is None else f"nDCG@{k}",
    "RetrievalFallOut": lambda k: "FallOut" if k is None else f"FallOut@{k}",
}
POSITIVE = st.sampled_from([s for s in (0.5, 1.0, 1.5, 2.0, 3.25) if s > 0])


@cases(60)
@given(st.sampled_from(sorted(TORCHMETRICS)), st.one_of(st.none(), st.integers(1, 5)),
       st.data())
def test_torchmetrics(metric, top_k, data):
    """On positive scores (torchmetrics counts a row scored <= 0 as not relevant), binary
    targets (graded for nDCG); ties in row order, nDCG's averaged (evaluate's expected);
    a query without a relevant row (fall-out: without a non-relevant one) scores 0."""
    torch = pytest.importorskip("torch")
    from fastir import torchmetrics

    graded = metric == "RetrievalNormalizedDCG"
    scores, labels, valid = data.draw(dense_batches(POSITIVE, 3 if graded else 1))
    if metric == "RetrievalHitRate" and top_k is None:
        top_k = 1
    name = TORCHMETRICS[metric](top_k)
    qrels, run = matrix_to_dicts(scores, labels, mask=valid)
    want = fastir.evaluate(qrels, run, [name], ties="expected" if graded else "input")
    kwargs = {} if metric in ("RetrievalMAP", "RetrievalRPrecision") else {"top_k": top_k}
    scorer = getattr(torchmetrics, metric)(empty_target_action="neg", **kwargs)
    rows = [(b, j) for b in range(len(scores)) for j in np.flatnonzero(valid[b])]
    scorer.update(torch.tensor([scores[b, j] for b, j in rows], dtype=torch.float32),
                  torch.tensor([labels[b, j] for b, j in rows]),
                  torch.tensor([b for b, _ in rows], dtype=torch.long))
    got = scorer.compute()
    # (torchmetrics' answer is float32: evaluate's values as float32, averaged in float32)
    mean = torch.from_numpy(want.values[:, 0]).float().mean()
    assert got.dtype == torch.float32 and math.isclose(float(got), float(mean),
                                                        rel_tol=2**-23, abs_tol=2**-24), \
        f"fastir.torchmetrics.{metric}(top_k={top_k}): {float(got)} != evaluate's {name} " \
        f"{want.mean[name]} (per query {want.values[:, 0].tolist()})"
