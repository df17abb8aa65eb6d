"""The peers' users switch by one import: scripts in the styles of the peers' READMEs and
examples, each run twice in its own process (the peer's import, then fastir's), print the
same text and the same numbers (pytrec_eval's byte for byte; means that sum in another order
to 1e-12; torchmetrics' float32 to 1e-6)."""

import re
import subprocess
import sys
import textwrap

import pytest
from test_compat import graded_pair

pytestmark = pytest.mark.one_engine
NUMBER = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A qrels file and two tie-free runs (scores exact in float32, which pytrec_eval and
    ir_measures rank by), as TREC files."""
    folder = tmp_path_factory.mktemp("scripts")
    qrels, run = graded_pair(11, unique_scores=True)
    with open(folder / "qrels", "w") as f:
        f.writelines(f"{q} 0 {d} {label}\n" for q, docs in qrels.items()
                     for d, label in docs.items())
    for name, sign in (("bm25", 1), ("dense", -1)):
        with open(folder / name, "w") as f:
            for q, docs in run.items():
                ranked = sorted(docs.items(), key=lambda item: -sign * item[1])
                f.writelines(f"{q} Q0 {d} {i + 1} {(len(ranked) - i) / 4} {name}\n"
                             for i, (d, _) in enumerate(ranked))
    return folder


def both(script, peer, ours, *args, tolerance=1e-12):
    """Run ``script`` with the import line ``peer``, then ``ours``; the outputs, checked to
    have the same text and the same numbers."""
    outputs = []
    for line in (peer, ours):
        code = textwrap.dedent(script).replace("IMPORT", line)
        done = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    theirs, mine = outputs
    assert NUMBER.sub("#", mine) == NUMBER.sub("#", theirs)
    numbers = [(float(a), float(b)) for a, b in zip(NUMBER.findall(mine),
                                                    NUMBER.findall(theirs))]
    assert numbers and all(a == pytest.approx(b, rel=tolerance, abs=tolerance)
                           for a, b in numbers), (mine, theirs)
    return theirs, mine


def test_pytrec_evals_readme():
    pytest.importorskip("pytrec_eval")
    theirs, mine = both("""
        import json
        IMPORT

        qrel = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
        run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5}}
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"map", "ndcg", "P.1,3", "recall"})
        print(json.dumps(evaluator.evaluate(run), indent=1))
        """, "import pytrec_eval", "import fastir.pytrec_eval as pytrec_eval")
    assert mine == theirs


def test_pytrec_evals_trec_eval_example(files):
    pytest.importorskip("pytrec_eval")
    theirs, mine = both("""
        import sys
        IMPORT

        with open(sys.argv[1]) as f_qrel:
            qrel = pytrec_eval.parse_qrel(f_qrel)
        with open(sys.argv[2]) as f_run:
            run = pytrec_eval.parse_run(f_run)
        evaluator = pytrec_eval.RelevanceEvaluator(qrel, pytrec_eval.supported_measures)
        results = evaluator.evaluate(run)
        for query_id, measures in sorted(results.items()):
            for measure, value in sorted(measures.items()):
                print(f"{measure:25s}{query_id:8s}{value:.4f}")
        for measure in sorted(measures):
            values = [by_measure[measure] for by_measure in results.values()]
            print(f"{measure:25s}{'all':8s}"
                  f"{pytrec_eval.compute_aggregated_measure(measure, values):.4f}")
        """, "import pytrec_eval", "import fastir.pytrec_eval as pytrec_eval",
        files / "qrels", files / "bm25")
    assert mine == theirs


def test_beir_style_evaluation(files):
    pytest.importorskip("pytrec_eval")
    theirs, mine = both("""
        import sys
        from collections import defaultdict
        IMPORT

        def read(path, kind):
            out = defaultdict(dict)
            for line in open(path):
                fields = line.split()
                if kind == "qrels":
                    out[fields[0]][fields[2]] = int(fields[3])
                else:
                    out[fields[0]][fields[2]] = float(fields[4])
            return out

        qrels, results = read(sys.argv[1], "qrels"), read(sys.argv[2], "run")
        k_values = [1, 3, 5, 10, 100]
        strings = {f"{m}.{','.join(map(str, k_values))}" for m in ("map_cut", "ndcg_cut",
                                                                   "recall", "P")}
        scores = pytrec_eval.RelevanceEvaluator(qrels, strings).evaluate(results)
        report = defaultdict(float)
        for query_id in scores:
            for k in k_values:
                report[f"NDCG@{k}"] += scores[query_id][f"ndcg_cut_{k}"]
                report[f"MAP@{k}"] += scores[query_id][f"map_cut_{k}"]
                report[f"Recall@{k}"] += scores[query_id][f"recall_{k}"]
                report[f"P@{k}"] += scores[query_id][f"P_{k}"]
        for key, total in report.items():
            print(key, round(total / len(scores), 5))
        """, "import pytrec_eval", "import fastir.pytrec_eval as pytrec_eval",
        files / "qrels", files / "bm25")
    assert mine == theirs


IR_MEASURES = """
    import sys
    import ir_measures
    from ir_measures import AP, P, R, RR, nDCG
    IMPORT

    def records():
        return ir_measures.read_trec_qrels(sys.argv[1]), ir_measures.read_trec_run(sys.argv[2])

    measures = [nDCG @ 10, P @ 5, AP, RR @ 10, R @ 100]
    means = calc_aggregate(measures, *records())
    print({str(m): means[m] for m in measures})  # (ir_measures' dict order is its set's)
    for metric in sorted(iter_calc([P @ 5, nDCG @ 10], *records()), key=str):
        print(metric.query_id, metric.measure, metric.value)
    """


def test_ir_measures_with_generators(files):
    pytest.importorskip("ir_measures")
    both(IR_MEASURES, "from ir_measures import calc_aggregate, iter_calc",
         "from fastir import calc_aggregate, iter_calc", files / "qrels", files / "bm25")


def test_ir_measures_with_dataframes(files):
    pytest.importorskip("pandas")
    script = IR_MEASURES.replace(
        "return ir_measures.read_trec_qrels(sys.argv[1]), ir_measures.read_trec_run(sys.argv[2])",
        "import pandas as pd\n"
        "        return (pd.DataFrame(ir_measures.read_trec_qrels(sys.argv[1])),\n"
        "                pd.DataFrame(ir_measures.read_trec_run(sys.argv[2])))")
    both(script, "from ir_measures import calc_aggregate, iter_calc",
         "from fastir import calc_aggregate, iter_calc", files / "qrels", files / "bm25")


def test_ir_datasets_records(files):
    pytest.importorskip("ir_datasets")
    both("""
        import sys
        import ir_measures
        from ir_datasets.formats import TrecQrel
        from ir_measures import AP, P, nDCG
        IMPORT

        class Dataset:  # (as ir_datasets.load("..."), without the network)
            def qrels_iter(self):
                for line in open(sys.argv[1]):
                    q, iteration, d, label = line.split()
                    yield TrecQrel(q, d, int(label), iteration)

        run = {}
        for line in open(sys.argv[2]):
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, {})[d] = float(score)
        measures = [nDCG @ 10, P(rel=2) @ 5, AP]
        means = evaluator(measures, Dataset().qrels_iter()).calc_aggregate(run)
        print([means[m] for m in measures])
        """, "from ir_measures import evaluator", "from fastir import evaluator",
        files / "qrels", files / "bm25")


def test_ranx_evaluate_and_compare(files):
    pytest.importorskip("ranx")
    theirs, mine = both("""
        import sys
        IMPORT

        qrels = Qrels.from_file(sys.argv[1], kind="trec")
        bm25 = Run.from_file(sys.argv[2], kind="trec")
        dense = Run.from_file(sys.argv[3], kind="trec")
        options = {"make_comparable": True}  # (a judged query the runs miss: it scores 0)
        print(evaluate(qrels, bm25, "ndcg@10", **options))
        print(evaluate(qrels, bm25, ["map@100", "mrr", "precision@5", "recall@100"],
                       **options))
        print(bm25.mean_scores)
        print(compare(qrels, runs=[bm25, dense], metrics=["ndcg@10", "map@100"], max_p=0.01,
                      **options))
        """, "from ranx import Qrels, Run, evaluate, compare",
        "from fastir.ranx import Qrels, Run, evaluate, compare", files / "qrels",
        files / "bm25", files / "dense")
    assert "bm25" in mine and "NDCG@10" in mine


def test_torchmetrics_classes_in_a_training_loop():
    pytest.importorskip("torchmetrics")
    both("""
        import torch
        IMPORT

        torch.manual_seed(0)
        features, labels = torch.randn(640, 8), torch.randint(0, 2, (640,))
        indexes = torch.arange(640) // 16  # 40 queries, 16 candidates each
        model = torch.nn.Linear(8, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        metrics = [RetrievalMAP(), RetrievalNormalizedDCG(top_k=10), RetrievalMRR(top_k=5)]
        for epoch in range(3):
            for batch in range(0, 640, 160):
                x, y, q = features[batch:batch + 160], labels[batch:batch + 160], \\
                    indexes[batch:batch + 160]
                scores = model(x).squeeze(-1)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(scores, y.float())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                for metric in metrics:
                    metric.update(scores.detach(), y, indexes=q)
            print(epoch, [round(metric.compute().item(), 6) for metric in metrics])
            for metric in metrics:
                metric.reset()
        """, "from torchmetrics.retrieval import RetrievalMAP, RetrievalMRR, "
             "RetrievalNormalizedDCG",
        "from fastir.torchmetrics import RetrievalMAP, RetrievalMRR, RetrievalNormalizedDCG",
        tolerance=2e-6)


def test_ir_measures_pipeline_on_fastir(files):
    pytest.importorskip("ir_measures")
    both("""
        import sys
        import ir_measures
        from ir_measures import AP, NumQ, P, RR, Judged, nDCG
        IMPORT

        qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
        measures = [nDCG @ 10, AP, RR @ 10, P @ 5, Judged @ 10, NumQ]
        for path in sys.argv[2:]:
            run = list(ir_measures.read_trec_run(path))
            means = ir_measures.calc_aggregate(measures, qrels, run)
            print([means[m] for m in measures])
        """, "", "import fastir.ir_measures", files / "qrels", files / "bm25", files / "dense")


def test_pyterrier_experiment_on_fastir(files):
    pytest.importorskip("pyterrier")
    both("""
        import sys
        import pandas as pd
        import pyterrier as pt
        from ir_measures import AP, P, RR, nDCG
        IMPORT

        names = ["qid", "iteration", "docno", "label"]
        qrels = pd.read_csv(sys.argv[1], sep=" ", names=names, dtype={"qid": str})
        systems = []
        for path in sys.argv[2:]:
            res = pd.read_csv(path, sep=" ", names=["qid", "Q0", "docno", "rank", "score",
                                                    "name"], dtype={"qid": str})
            systems.append(pt.Transformer.from_df(res[["qid", "docno", "score", "rank"]]))
        topics = pd.DataFrame({"qid": sorted(set(qrels.qid)), "query": "q"})
        print(pt.Experiment(systems, topics, qrels, [nDCG @ 10, AP, RR @ 10, P @ 5],
                            names=["bm25", "dense"]).to_string())
        """, "", "import fastir.ir_measures", files / "qrels", files / "bm25", files / "dense")
