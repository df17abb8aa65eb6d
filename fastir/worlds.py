"""Probabilistic labels (``labels="probability"``): each judged document's label is drawn,
independently of the others, from its distribution (:attr:`fastir.Qrels.label_probs`: a
probability of relevance p is ``{0: 1 - p, 1: p}``), and a measure's value on a query is
its expectation over these draws.

One engine computes it, the integer labels' own. An assignment of labels to a query's
judged documents (a *world*) is a query of integer labels: each evaluated query becomes
its worlds, each with the query's ranking (the join's, made once: :meth:`Joined.of_queries`)
and its judgments at that world's labels (a :class:`~fastir.Qrels` of integer labels), and
the plan evaluates them as it evaluates any query; a query's value is then the weighted sum
of its worlds' values (the mean over queries, and every other summary, is as
:func:`fastir.evaluate`'s, over these values).

A query with at most :data:`~fastir.options.EXACT_WORLDS` worlds (1,024: 10 uncertain
relevance judgments, or fewer of more labels) is enumerated, every world weighted by its
probability: the value is exact. A query with more is estimated from ``samples`` worlds
drawn at random (each weighted ``1 / samples``), from a generator seeded by ``(label_seed,
the query's row in the qrels)``: the same values whatever else is evaluated with it. Its
standard error (the sample standard deviation over the root of ``samples``) is given in
``Results.standard_errors``, and a :class:`~fastir.FastirWarning` says which queries were
sampled and the largest.
"""

import math
import warnings
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from fastir import _jit
from fastir._jit import pjit, prange, python_variant
from fastir.model.data import Qrels
from fastir.model.errors import FastirWarning
from fastir.options import EXACT_WORLDS


class Worlds(NamedTuple):
    """The worlds of the evaluated queries: per world its evaluated ``query`` and its
    ``weight``; per evaluated query its first world (``first``) and whether they were
    ``sampled``; per (world, judged row) pair, in world order then the query's row order,
    its qrels ``row`` and its integer ``label`` (world ``w``'s pairs are
    ``indptr[w]:indptr[w + 1]``)."""

    query: np.ndarray
    weight: np.ndarray
    first: np.ndarray
    sampled: np.ndarray
    indptr: np.ndarray
    row: np.ndarray
    label: np.ndarray


def expected_values(plan, joined, qrels):
    """(values, standard errors) of ``plan``'s measures on the evaluated queries of
    ``joined`` (a join with ``qrels``, of probabilistic labels): per query, each value
    expected over its label assignments, and its standard error (0 where enumerated)."""
    worlds = assignments(joined.qrels_query, qrels, plan.options)
    work = int(np.diff(joined.indptr)[worlds.query].sum()) + len(worlds.row)
    with _jit.outgrown(work):
        world_joined, world_qrels = world_join(joined, qrels, worlds)
        values = plan.values(world_joined, world_qrels)
    return fold(values, worlds, plan, joined.query_ids)


def assignments(qrels_query, qrels, options):
    """The :class:`Worlds` of the qrels queries ``qrels_query`` (the evaluated ones):
    enumerated when a query has at most :data:`EXACT_WORLDS`, else ``options.samples``
    drawn (seed ``options.label_seed``)."""
    dists = qrels.label_probs
    n_rows = np.diff(qrels.indptr)[qrels_query]
    offset = np.cumsum(n_rows) - n_rows
    rows = np.repeat(qrels.indptr[qrels_query] - offset, n_rows) + np.arange(n_rows.sum())
    support = dists.probs[rows] > 0
    sizes = support.sum(axis=1)
    bits = np.log2(sizes)
    log_worlds = np.bincount(np.repeat(np.arange(len(n_rows)), n_rows), weights=bits,
                             minlength=len(n_rows))
    sampled = log_worlds > math.log2(EXACT_WORLDS) + 1e-9
    counts = np.where(sampled, options.samples, np.rint(2.0 ** log_worlds)).astype(np.int64)
    query = np.repeat(np.arange(len(counts)), counts)
    first = np.cumsum(counts) - counts
    local = np.arange(len(query)) - first[query]  # (each world's number in its query)
    indptr = np.zeros(len(query) + 1, dtype=np.int64)
    np.cumsum(n_rows[query], out=indptr[1:])
    pair_world = np.repeat(np.arange(len(query)), n_rows[query])
    at = offset[query][pair_world] + np.arange(indptr[-1]) - indptr[pair_world]
    level = _enumerated(support[at], sizes[at], _strides(bits, offset, n_rows)[at],
                        local[pair_world])
    weight = np.ones(len(query))
    judging = np.diff(indptr) > 0  # (a world of no judgment weighs 1)
    if judging.any():
        weight[judging] = np.multiply.reduceat(dists.probs[rows[at], level],
                                               indptr[:-1][judging])
    for e in np.flatnonzero(sampled):
        drawn = slice(indptr[first[e]], indptr[first[e] + counts[e]])
        level[drawn] = _drawn(dists.probs[rows[at[drawn]]], options.label_seed,
                              int(qrels_query[e]))
        weight[first[e]:first[e] + counts[e]] = 1.0 / counts[e]
    return Worlds(query, weight, first, sampled, indptr, rows[at],
                  dists.levels[level].astype(np.int32))


def _strides(bits, offset, n_rows):
    """Per judged row (of the evaluated queries, in order) the number of worlds its
    query's earlier rows make (``bits``: each row's log2 of its possible labels): its
    digit's place in a world's number (exact where a query has at most
    :data:`EXACT_WORLDS` worlds, the only ones it is read for: a difference of two sums of
    one sequence, whose terms between them are 0 or a few logs)."""
    before = np.cumsum(bits) - bits
    start = before[np.minimum(offset, len(before) - 1)] if len(before) else before
    return np.rint(2.0 ** np.clip(before - np.repeat(start, n_rows), 0, 62)).astype(np.int64)


def _enumerated(support, sizes, strides, local):
    """The label (its column in the distributions) of each (world, row) pair of world
    number ``local``: the digit of the row, ``local // stride % size``, picks the label
    among those of nonzero probability, in order."""
    digit = local // strides % sizes
    order = np.argsort(~support, axis=1, kind="stable")  # (the possible labels first)
    return order[np.arange(len(digit)), digit]


def _drawn(probs, seed, row):
    """Labels (columns of ``probs``) drawn for the (world, row) pairs of one sampled query,
    its worlds' rows in order, from the generator seeded by ``(seed, row)``."""
    u = 1.0 - np.random.default_rng([seed, row]).random(len(probs))  # (in (0, 1])
    below = np.cumsum(probs, axis=1) < u[:, None]
    return np.minimum(below.sum(axis=1), probs.shape[1] - 1)


def world_join(joined, qrels, worlds):
    """The join of the worlds (each its query's ranking, its documents at the world's
    labels: :func:`world_labels`) and their qrels of integer labels (:class:`Worlds`)."""
    world_qrels = Qrels(joined.query_ids.take(worlds.query), worlds.indptr,
                        qrels.doc_ids.take(worlds.row), worlds.label, qrels.source)
    ranked = replace(joined, labels=None).of_queries(worlds.query)  # (the other fields)
    labels = np.empty(ranked.indptr[-1], dtype=np.int32)
    _jit.launch(world_labels, _jit.chunk_bounds(np.diff(ranked.indptr), _jit.n_threads()),
                joined.indptr, joined.labels, ranked.indptr, worlds.query,
                worlds.indptr[:-1] - qrels.indptr[joined.qrels_query[worlds.query]], worlds.label,
                labels, n_items=len(labels))
    return replace(ranked, labels=labels, qrels_query=np.arange(len(worlds.query))), \
        world_qrels


@pjit
def world_labels(chunks, indptr, codes, world_indptr, query, shift, label, out):
    """Per world ``w`` (chunks ``chunks[c]:chunks[c + 1]`` of worlds in parallel), its
    query's ranked codes ``codes[indptr[query[w]]:...]`` into ``out[world_indptr[w]:...]``,
    a judged document's code (its row ``r`` in the qrels) made its label in the world
    (``label[shift[w] + r]``), the others' kept."""
    for c in prange(len(chunks) - 1):
        for w in range(chunks[c], chunks[c + 1]):
            lo, at = indptr[query[w]], world_indptr[w]
            for p in range(lo, indptr[query[w] + 1]):
                code = codes[p]
                out[at + p - lo] = label[shift[w] + code] if code >= 0 else code


@python_variant(world_labels)
def world_labels(chunks, indptr, codes, world_indptr, query, shift, label, out):
    """The same with numpy, over all the worlds at once."""
    worlds = np.arange(chunks[0], chunks[-1])
    lengths = np.diff(world_indptr)[worlds]
    first, last = world_indptr[chunks[0]], world_indptr[chunks[-1]]
    ranked = codes[np.repeat(indptr[query[worlds]] - world_indptr[worlds], lengths)
                   + np.arange(first, last)]
    judged = ranked >= 0
    shifted = np.repeat(shift[worlds], lengths) + ranked
    out[first:last] = np.where(judged, label[np.where(judged, shifted, 0)], ranked)


def fold(values, worlds, plan, query_ids):
    """(values, standard errors) per evaluated query of its worlds' ``values``: their
    weighted sum, and for a sampled query the standard error of its mean (0 otherwise);
    a :class:`FastirWarning` names the sampled queries."""
    n_queries = len(worlds.first)
    out = np.zeros((n_queries, values.shape[1]))
    errors = np.zeros_like(out)
    if len(values):
        out[:] = np.add.reduceat(values * worlds.weight[:, None], worlds.first, axis=0)
    sampled = np.flatnonzero(worlds.sampled)
    if len(sampled):
        samples = plan.options.samples
        drawn = values[worlds.first[sampled][:, None] + np.arange(samples)]
        errors[sampled] = drawn.std(axis=1, ddof=1) / math.sqrt(samples)
        _warn_sampled(errors, sampled, plan, query_ids)
    return out, errors


def _warn_sampled(errors, sampled, plan, query_ids):
    """The warning of the sampled queries: how many, and the largest standard error."""
    q, j = np.unravel_index(int(np.argmax(errors)), errors.shape)
    names = ", ".join(repr(query_ids[int(e)]) for e in sampled[:3])
    more = f" and {len(sampled) - 3} more" if len(sampled) > 3 else ""
    warnings.warn(FastirWarning(
        f"labels='probability': {len(sampled)} queries ({names}{more}) have more than "
        f"{EXACT_WORLDS} label assignments: their values are estimated from "
        f"{plan.options.samples} drawn ones (label_seed {plan.options.label_seed}); the "
        f"largest standard error is {errors[q, j]:.3g} ({plan.keys[j]} on query "
        f"{query_ids[int(q)]!r}): Results.standard_errors has each"), stacklevel=2)
