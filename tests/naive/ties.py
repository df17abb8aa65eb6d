"""Tie orders and holes by their definitions: every order of a query's tied documents
(brute force), the run's own order among equal scores, and the qrels augmented with every
unjudged retrieved document."""

from __future__ import annotations

import itertools

from .base import rank


def tie_groups(run_q: dict[str, float]) -> list[list[str]]:
    """A query's documents in groups of equal score, best score first (each group in the
    run's order)."""
    by_score: dict[float, list[str]] = {}
    for doc, score in run_q.items():
        by_score.setdefault(score, []).append(doc)
    return [by_score[s] for s in sorted(by_score, reverse=True)]


def as_scores(docs: list[str]) -> dict[str, float]:
    """A ranking (best first) as a run query without ties: the first gets the highest
    score."""
    return {doc: float(len(docs) - i) for i, doc in enumerate(docs)}


def every_order(run_q: dict[str, float]):
    """Every order of the documents that respects the scores: each group of equal scores
    in each of its orders (a ranking, best first, per order)."""
    groups = tie_groups(run_q)
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [doc for order in orders for doc in order]


def n_orders(run_q: dict[str, float]) -> int:
    count = 1
    for group in tie_groups(run_q):
        for k in range(2, len(group) + 1):
            count *= k
    return count


def input_order(run_q: dict[str, float]) -> list[str]:
    """The ranking with equal scores in the run's own order (a stable sort)."""
    return sorted(run_q, key=lambda doc: -run_q[doc])


def augmented(qrels: dict, run: dict, label: int, max_docs: int | None = None) -> dict:
    """The qrels with every retrieved document of each of their queries (in its top
    ``max_docs``, trec_eval's order) that they lack, at ``label``."""
    out = {}
    for qid, judged in qrels.items():
        out[qid] = dict(judged)
        ranked = rank(run.get(qid, {}))
        for doc in ranked[:max_docs]:
            out[qid].setdefault(doc, label)
    return out
