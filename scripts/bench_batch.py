"""Inner loops against the peers: BENCHMARKS.md's "loops" section (``./dev bench --case
loops``), or printed.

    python scripts/bench_batch.py [--queries 6980 --depth 1000 --vectors 100 --peer-calls 2]

- ``evaluate_matrix`` on a 32 x 100 batch (nDCG@10), alone.
- 1024 x 100 and 8000 x 40 batches, nDCG@10, against sklearn's ``ndcg_score`` (same value
  checked; tie-free scores, so both tie policies agree with sklearn).
- ``--vectors`` score vectors over fixed MS MARCO-like candidates (``--queries`` x
  ``--depth``) with ``Evaluator.bind``, in one call, against a reused pytrec_eval
  ``RelevanceEvaluator`` called once per vector (``--peer-calls`` calls a run, scaled to
  the vectors; equal values checked on the first vector).

Each scenario's calls alternate fastir's and the peer's, one untimed call each first; a run
of a call under a millisecond times many calls in a row and gives their mean.
"""

import argparse
import time

import bench_page
import numpy as np
from bench_page import Loads, alternated, spread, table

import fastir

MEASURES = ["map", "recip_rank", "ndcg_cut_10", "P_10", "recall_1000"]


def per_call(function, calls):
    """A run of ``calls`` calls of ``function`` in a row: a function returning the seconds
    of one call (their mean)."""
    def run():
        start = time.perf_counter()
        for _ in range(calls):
            function()
        return (time.perf_counter() - start) / calls
    return run


def candidates(n_queries, depth, seed=11):
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.arange(n_queries, dtype=np.int64) + 1_000_000, depth)
    docs = (np.arange(n_queries * depth, dtype=np.int64) * 2654435761) % 2**33
    first = np.arange(n_queries) * depth + rng.integers(0, depth, n_queries)
    rel_docs = np.where(rng.random(n_queries) < 0.8, docs[first], docs[first] + 2**33)
    qrels = {int(q): {int(d): 1} for q, d in zip(qids[::depth], rel_docs)}
    return qrels, qids, docs, rng


def matrix_scenarios(rng, sklearn):
    """(label, unit, fastir's call, its function, peer's call, its function or None)."""
    call = "`fastir.evaluate_matrix(s, y, \"nDCG@10\")`"
    s, y = rng.random((32, 100)), rng.integers(0, 3, (32, 100))
    out = [("32 x 100 batch, nDCG@10", "us", call,
            per_call(lambda s=s, y=y: fastir.evaluate_matrix(s, y, "nDCG@10"), 2000), "",
            None)]
    for shape in ((1024, 100), (8000, 40)):
        s, y = rng.random(shape), rng.integers(0, 3, shape)
        ours = fastir.evaluate_matrix(s, y, "nDCG@10")["nDCG@10"]
        peer = None
        if sklearn is not None:
            assert abs(sklearn(y, s, k=10) - ours) < 1e-12
            peer = per_call(lambda s=s, y=y: sklearn(y, s, k=10), 3)
        out.append((f"{shape[0]:,} x {shape[1]} batch, nDCG@10", "ms",
                    call, per_call(lambda s=s, y=y: fastir.evaluate_matrix(
                        s, y, "nDCG@10"), 20),
                    "`sklearn.metrics.ndcg_score(y, s, k=10)`", peer))
    return out


def bound_scenario(n_queries, depth, n_vectors, peer_calls):
    """The bound candidates' scenario (as in :func:`matrix_scenarios`); fastir's and the
    peer's means checked equal on the first vector."""
    qrels, qids, docs, crng = candidates(n_queries, depth)
    bound = fastir.Evaluator(qrels, MEASURES, missing="skip").bind(qids, docs)
    vectors = np.round(crng.normal(size=(n_vectors, len(qids))), 3).astype(np.float32)
    vectors = vectors.astype(np.float64)  # float32-exact: pytrec_eval rounds to float32
    means = bound.evaluate(vectors)
    label = f"{n_vectors} score vectors over {n_queries:,} x {depth:,} bound candidates"
    ours = ("`b = fastir.Evaluator(qrels, M).bind(qids, docs)` once; `b.evaluate(vectors)`",
            per_call(lambda: bound.evaluate(vectors), 1))
    try:
        import pytrec_eval
    except ImportError:
        return (label, "s", *ours, "", None)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {str(q): {str(d): v for d, v in j.items()} for q, j in qrels.items()},
        {"map", "recip_rank", "ndcg_cut", "P", "recall"})
    str_q, str_d = qids.astype(str).tolist(), docs.astype(str).tolist()
    runs = []  # (built outside the timing)
    for vector in vectors[:peer_calls]:
        run = {}
        for q, d, v in zip(str_q, str_d, vector.tolist()):
            run.setdefault(q, {})[d] = v
        runs.append(run)
    first = evaluator.evaluate(runs[0])
    for j, name in enumerate(MEASURES):
        want = np.mean([v[name] for v in first.values()])
        assert abs(means[0, j] - want) < 1e-9, (name, means[0, j], want)

    def theirs():  # (each call on a vector of its own, scaled to all the vectors)
        start = time.perf_counter()
        for run in runs:
            evaluator.evaluate(run)
        return (time.perf_counter() - start) / len(runs) * n_vectors
    return (label, "s", *ours, f"`RelevanceEvaluator(qrels, M).evaluate(run)` once per "
            f"vector ({peer_calls} timed a run, scaled)", theirs)


#: Each unit: its scale from seconds, the digits shown.
UNITS = {"us": (1e6, 1), "ms": (1e3, 2), "s": (1.0, 2)}


def section(smoke=False, repeat=None, queries=6980, depth=1000, vectors=100, peer_calls=2):
    """The loops section of BENCHMARKS.md (``smoke``: small candidates, 2 runs)."""
    if smoke:
        queries, depth, vectors = 50, 100, 10
    try:
        from sklearn.metrics import ndcg_score
    except ImportError:
        ndcg_score = None
    scenarios = [*matrix_scenarios(np.random.default_rng(0), ndcg_score),
                 bound_scenario(queries, depth, vectors, peer_calls)]
    rows = []
    for label, unit, ours_text, ours, peer_text, peer in scenarios:
        loads = Loads()
        times = alternated({"fastir": ours, **({"peer": peer} if peer else {})},
                           repeat or (2 if smoke else 7), loads)
        ratio = (f"{np.median(times['peer']) / np.median(times['fastir']):.0f}x"
                 if peer else "")
        rows.append([label, ours_text, spread(times["fastir"], *UNITS[unit]) + f" {unit}",
                     peer_text, spread(times.get("peer", []), *UNITS[unit]) +
                     (f" {unit}" if peer else ""), ratio, len(times["fastir"]), loads.text()])
    text = ("Calls inside a loop, warm, in one process: dense batches of scores and labels "
            "(`evaluate_matrix`) against sklearn's `ndcg_score`, and many score vectors "
            "over the same candidates, bound to the qrels once, against a reused pytrec_eval "
            "evaluator (M: map, recip_rank, ndcg_cut_10, P_10, recall_1000). The two "
            "systems' calls alternate, one untimed call each first; a run of a call under a "
            "millisecond is the mean of many calls in a row.")
    header = [("scenario", "l"), ("fastir", "l"), ("median (min-max)", "r"), ("peer", "l"),
              ("median (min-max)", "r"), ("peer / fastir", "r"), ("runs", "r"),
              ("when, load", "l")]
    return bench_page.section("loops", "Loops: dense batches and bound candidates", text,
                   table(header, rows))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=6980)
    p.add_argument("--depth", type=int, default=1000)
    p.add_argument("--vectors", type=int, default=100)
    p.add_argument("--peer-calls", type=int, default=2)
    p.add_argument("--repeat", type=int, help="runs of each call (default 7)")
    args = p.parse_args(argv)
    print(section(repeat=args.repeat, queries=args.queries, depth=args.depth,
                  vectors=args.vectors, peer_calls=args.peer_calls))


if __name__ == "__main__":
    main()
