"""Inner-loop benchmarks against the peers, as one markdown table.

    python scripts/bench_batch.py [--queries 6980 --depth 1000 --vectors 100 --peer-calls 5]

- ``evaluate_matrix`` on a 32 x 100 batch (nDCG@10): median time of one call.
- 1024 x 100 and 8000 x 40 batches, nDCG@10, against sklearn's ``ndcg_score`` (same value
  checked; tie-free scores, so both tie policies agree with sklearn).
- ``--vectors`` score vectors over fixed MS MARCO-like candidates (``--queries`` x
  ``--depth``) with ``Evaluator.bind``, against a reused pytrec_eval ``RelevanceEvaluator``
  called once per vector (timed over ``--peer-calls`` calls and scaled; equal values
  checked on the first vector).
"""

import argparse
import time

import numpy as np

import fastir

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def median_time(f, repeat):
    f()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def candidates(n_queries, depth, seed=11):
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.arange(n_queries, dtype=np.int64) + 1_000_000, depth)
    docs = (np.arange(n_queries * depth, dtype=np.int64) * 2654435761) % 2**33
    first = np.arange(n_queries) * depth + rng.integers(0, depth, n_queries)
    rel_docs = np.where(rng.random(n_queries) < 0.8, docs[first], docs[first] + 2**33)
    qrels = {int(q): {int(d): 1} for q, d in zip(qids[::depth], rel_docs)}
    return qrels, qids, docs, rng


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=6980)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--vectors", type=int, default=100)
    p.add_argument("--peer-calls", type=int, default=5)
    args = p.parse_args(argv)
    rows = []
    rng = np.random.default_rng(0)

    s, y = rng.random((32, 100)), rng.integers(0, 3, (32, 100))
    t = median_time(lambda: fastir.evaluate_matrix(s, y, "nDCG@10"), 2000)
    rows.append(("evaluate_matrix 32 x 100, nDCG@10, one call", f"{t * 1e6:.0f} us", "", ""))

    try:
        from sklearn.metrics import ndcg_score
    except ImportError:
        ndcg_score = None
    for shape in ((1024, 100), (8000, 40)):
        s, y = rng.random(shape), rng.integers(0, 3, shape)
        ours = fastir.evaluate_matrix(s, y, "nDCG@10")["nDCG@10"]
        t = median_time(lambda s=s, y=y: fastir.evaluate_matrix(s, y, "nDCG@10"), 50)
        if ndcg_score is None:
            rows.append((f"{shape[0]} x {shape[1]}, nDCG@10", f"{t * 1e3:.2f} ms", "", ""))
            continue
        assert abs(ndcg_score(y, s, k=10) - ours) < 1e-12
        ts = median_time(lambda s=s, y=y: ndcg_score(y, s, k=10), 10)
        rows.append((f"{shape[0]} x {shape[1]}, nDCG@10 (vs sklearn ndcg_score)",
                     f"{t * 1e3:.2f} ms", f"{ts * 1e3:.1f} ms", f"{ts / t:.0f}x"))

    qrels, qids, docs, crng = candidates(args.queries, args.depth)
    ev = fastir.Evaluator(qrels, MEASURES, missing="skip")
    t0 = time.perf_counter()
    bound = ev.bind(qids, docs)
    bind_time = time.perf_counter() - t0
    vectors = np.round(crng.normal(size=(args.vectors, len(qids))), 3).astype(np.float32)
    vectors = vectors.astype(np.float64)  # float32-exact: pytrec_eval rounds to float32
    bound.evaluate(vectors[:2])
    t0 = time.perf_counter()
    means = bound.evaluate(vectors)
    ours = time.perf_counter() - t0
    label = f"{args.vectors} score vectors over {args.queries} x {args.depth} candidates"
    try:
        import pytrec_eval
    except ImportError:
        rows.append((label, f"{ours:.2f} s (+{bind_time:.2f} s bind)", "", ""))
    else:
        evaluator = pytrec_eval.RelevanceEvaluator(
            {str(q): {str(d): v for d, v in j.items()} for q, j in qrels.items()},
            {"map", "recip_rank", "ndcg_cut", "P", "recall"})
        str_q, str_d = qids.astype(str), docs.astype(str)

        def as_run(vector):
            run = {}
            for q, d, v in zip(str_q.tolist(), str_d.tolist(), vector.tolist()):
                run.setdefault(q, {})[d] = v
            return run

        runs = [as_run(v) for v in vectors[:args.peer_calls]]  # built outside the timing
        t0 = time.perf_counter()
        results = [evaluator.evaluate(run) for run in runs]
        peer = (time.perf_counter() - t0) / len(runs) * args.vectors
        names = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]
        for j, name in enumerate(names):
            want = np.mean([v[name] for v in results[0].values()])
            assert abs(means[0, j] - want) < 1e-9, (name, means[0, j], want)
        rows.append((f"{label} (vs {args.vectors} calls of a reused pytrec_eval evaluator)",
                     f"{ours:.2f} s (+{bind_time:.2f} s bind)", f"{peer:.0f} s",
                     f"{peer / ours:.0f}x"))

    print("| scenario | fastir | peer | peer / fastir |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
