"""Evaluation on trec_eval's other judgment formats: preference judgments (``-R prefs``,
``-R qrels_prefs``: :class:`~fastir.model.prefs.Prefs`) and judgment groups (``-R
qrels_jg``: :class:`~fastir.model.prefs.JudgmentGroups`), from the judgments and a run to
per-query values, for :func:`fastir.evaluate` and ``fastir trec_eval``.

Preference measures go through :func:`~fastir.model.prefs_join.join_prefs` and the
preference kernel (:mod:`fastir.measures.prefs`). A judgment-group measure is its registry
``per_group`` family evaluated by the fused kernel on every (query, group) as a query of its
own (one join, the run's rows shared, not copied), then averaged over the query's groups in
group order, as m_*_avgjg.c average them.
"""

from collections import namedtuple

import numpy as np

from fastir import _jit
from fastir.engine import Plan
from fastir.measures import prefs as PK
from fastir.measures.registry import NUM_Q, make
from fastir.model.errors import InputError, ranked_twice
from fastir.model.ids import common_kind, merge_sorted_ids
from fastir.model.join import join
from fastir.model.prefs import JudgmentGroups, Prefs, position_ids
from fastir.model.prefs_join import join_prefs
from fastir.model.values import float32_scores
from fastir.options import DEFAULT

#: Per-query values of one evaluation (rows: the evaluated queries, in trec_eval order):
#: ``duplicate`` a run row ranking a document twice (or -1), ``errors`` why the query
#: cannot be evaluated (a ``fastir.measures.prefs.ERROR_*`` code, 0: it can) and
#: ``reasons`` that in words (``{row: text}``, naming the judgments' source, the query,
#: group, subgroup and document; at the first row with a duplicate, what to say of it:
#: :func:`~fastir.model.errors.ranked_twice`), ``undefined`` whether prefs_avgjg_Rnonrel read past
#: trec_eval's arrays there (README.md, trec_eval mode).
Evaluated = namedtuple("Evaluated", "query_ids in_run values ignored_run_queries "
                                    "missing_queries duplicate errors reasons undefined")


def evaluate(judgments, run, measures, options=DEFAULT):
    """:func:`fastir.evaluate` on :class:`Prefs` or :class:`JudgmentGroups` (``run`` a
    :class:`~fastir.model.data.Run`, ``options`` an :class:`~fastir.options.Options`); a
    query trec_eval stops at is an error here."""
    kind = kind_of(judgments)
    plan = Plan.of(measures, options, judgments=kind)
    if kind == "prefs" and (options.judged_only or options.relevance_level != 1):
        raise ValueError("judged_only and relevance_level do not apply to preference "
                         "judgments (levels only order documents; trec_eval ignores -J and "
                         "-l for them)")
    done = evaluated(plan, judgments, run, options)
    refuse_stops(done)
    return plan.results(done, done.values, options.missing)


def kind_of(judgments):
    """The kind of judgments (:data:`fastir.engine.NEEDS`): "prefs" or "groups"."""
    return "prefs" if isinstance(judgments, Prefs) else "groups"


def evaluated(plan, judgments, run, options):
    """The :data:`Evaluated` of ``plan``'s measures on :class:`Prefs` or
    :class:`JudgmentGroups` (the one path of :func:`evaluate` and ``fastir trec_eval -R``)."""
    if kind_of(judgments) == "prefs":
        return evaluate_prefs(plan, judgments, run, options)
    return evaluate_groups(plan, judgments, run, options)


def refuse_stops(done):
    """An InputError for the first query trec_eval would stop at."""
    bad = np.flatnonzero((done.duplicate >= 0) | (done.errors > 0))
    if len(bad):
        raise InputError(done.reasons[int(bad[0])])


def evaluate_prefs(plan, prefs, run, options=DEFAULT):
    """Values of ``plan``'s measures (preference measures and NumQ) on preference
    judgments, as :data:`Evaluated` (9.0.8 keeps levels in a C float, as scores: rounded to
    float32, beyond its range +-inf)."""
    compat = options.compat
    judged = prefs.judged()
    columns = [j for j, m in enumerate(plan.parsed) if m.spec.path == "prefs"]
    kinds = np.array([plan.parsed[j].spec.kind for j in columns], dtype=np.int64)
    want_pairs = bool(np.isin(kinds, PK.PAIR_KINDS).any())
    with _jit.tier(len(run) + _work(prefs, want_pairs)):
        joined = join_prefs(judged.qrels, run, options)
        n = len(joined.in_run)
        stats = np.zeros((n, PK.N_STATS))
        errors = np.zeros(n, dtype=np.int64)
        stop_rows = np.zeros(n, dtype=np.int64)
        if columns and n:
            rows = np.diff(prefs.indptr)[joined.judged_query]
            levels = float32_scores(prefs.levels) if compat == "9.0.8" else prefs.levels
            judgments = PK.PrefsRows(prefs.indptr, levels, prefs.groups, prefs.subgroups,
                                     judged.row_doc, judged.qrels.indptr)
            _jit.launch(PK.prefs_queries, _jit.chunk_bounds(rows, _jit.n_threads()),
                        joined.judged_query, joined.n_retrieved, judgments, joined.position,
                        want_pairs, stats, errors, stop_rows)
        found = np.zeros((n, len(columns)))
        _jit.select(PK.prefs_values, n)(stats, kinds, found)
    if compat == "9.0.8":  # (9.0.8 does not evaluate a query absent from the run)
        found[~joined.in_run] = 0.0
    values = _with_counts(plan, columns, found, n)
    reasons = {int(e): stop_reason(prefs, int(errors[e]), int(stop_rows[e]))
               for e in np.flatnonzero(errors)}
    if joined.twice is not None:
        reasons[int(np.argmax(joined.duplicate >= 0))] = joined.twice
    return Evaluated(joined.query_ids, joined.in_run, values, joined.ignored_run_queries,
                     joined.missing_queries, joined.duplicate, errors, reasons,
                     stats[:, PK.UNDEFINED] > 0)


def stop_reason(prefs, code, start):
    """Why trec_eval stops at a query (error ``code`` in the judgment group whose rows
    start at row ``start``), naming the file and lines, the group, subgroup and document,
    and what to do."""
    q = int(np.searchsorted(prefs.indptr, start, side="right")) - 1
    end = start
    while end < prefs.indptr[q + 1] and prefs.groups[end] == prefs.groups[start]:
        end += 1
    qid, group = prefs.query_ids[q], prefs.group_names[prefs.groups[start]]
    docs = prefs.doc_ids.take(np.arange(start, end)).tolist()
    subgroups = [prefs.subgroup_names[prefs.subgroups[r]] for r in range(start, end)]
    last = {}  # (the kernels' tests, in row order: the level a doc had last)
    for doc, sub, level in zip(docs, subgroups, prefs.levels[start:end].tolist()):
        key = doc if code == PK.ERROR_ZERO else (doc, sub)  # (zero: across subgroups)
        sub_before, before = last.get(key, (sub, None))
        last[key] = (sub, level)
        if before is None:
            continue
        lines = _lines(prefs, qid, group, sub, doc)
        if code == PK.ERROR_LEVELS and before != level:
            on = f" (its lines: {' and '.join(map(str, lines[:2]))})" if len(lines) > 1 else ""
            return (f"{_where(prefs, lines[1:])}query {qid!r} judgment group {group!r} "
                    f"subgroup {sub!r}: doc {doc!r} has two levels, {before:g} and {level:g}"
                    f"{on}; give a document one level per subgroup")
        if code == PK.ERROR_ZERO and (before > 0 and level == 0 or before == 0 and level > 0):
            first = _lines(prefs, qid, group, sub_before, doc)
            on = f" (line {first[0]})" if first else ""
            return (f"{_where(prefs, lines)}query {qid!r} judgment group {group!r}: doc {doc!r} "
                    f"has level {before:g} in subgroup {sub_before!r}{on} and level {level:g} "
                    f"in subgroup {sub!r}; a document has level 0 (non-relevant) in all the "
                    "subgroups of a judgment group or in none")
    if code == PK.ERROR_CYCLE:
        return (f"{_where(prefs, [])}query {qid!r} judgment group {group!r}: its subgroups' "
                "preferences contradict each other (a document is preferred to another, and "
                "that one to it, directly or through others); change the levels so that they "
                "agree")
    return (f"{_where(prefs, [])}query {qid!r} judgment group {group!r}: a document has two "
            "levels in one subgroup, or level 0 and another")


def _lines(prefs, qid, group, subgroup, doc):
    """The lines of the judgments' file judging ``doc`` there ([] without a file)."""
    from fastir.io.prefs import judgment_lines

    return judgment_lines(prefs.source, qid, group, subgroup, doc)


def _where(prefs, lines):
    """``source:line: `` (the first of ``lines``), or ``source: ``."""
    return f"{prefs.source}:{lines[0]}: " if lines else f"{prefs.source}: "


def _work(prefs, want_pairs):
    """What the preference kernel does on ``prefs``, in rows, for the choice between
    Python and compiled kernels: the rows, and the pairs a group may give (the square of
    its size) where a group has subgroups (a preference graph) or, when the pair measures
    are asked for, where a query has several groups (its pairs may be counted one by
    one)."""
    n = len(prefs)
    if n == 0:
        return 0
    query = np.repeat(np.arange(prefs.n_queries), np.diff(prefs.indptr))
    new = np.r_[True, (np.diff(query) != 0) | (np.diff(prefs.groups) != 0)]
    first = np.flatnonzero(new)
    sizes = np.diff(np.append(first, n)).astype(np.float64)
    graph = np.add.reduceat(np.r_[False, np.diff(prefs.subgroups) != 0] & ~new, first) > 0
    shared = np.bincount(query[first], minlength=prefs.n_queries)[query[first]] > 1
    return n + int((sizes[graph | (want_pairs & shared)] ** 2).sum())


def _with_counts(plan, columns, found, n):
    """The values of every measure of ``plan``: ``found`` for its ``columns``, 1 for NumQ."""
    values = np.zeros((n, len(plan.parsed)))
    values[:, columns] = found
    for j, m in enumerate(plan.parsed):
        if m.spec.kind == NUM_Q and m.spec.path == "counts":
            values[:, j] = 1.0
    return values


def evaluate_groups(plan, groups, run, options=DEFAULT):
    """Values of ``plan``'s measures (judgment-group measures and NumQ) on judgment groups,
    as :data:`Evaluated`."""
    qrels, owner, n_groups = groups.expanded()
    run_of = _run_queries(groups, run)
    in_run = run_of >= 0
    present = np.flatnonzero(in_run[owner])
    spread = run.of_queries(run_of[owner[present]], position_ids(len(owner)).take(present))
    columns = [j for j, m in enumerate(plan.parsed) if m.spec.path == "groups"]
    inner = [make(plan.parsed[j].spec.per_group, plan.parsed[j].cutoff,
                  **dict(plan.parsed[j].values)) for j in columns]
    with _jit.tier(len(qrels.labels) + len(spread.scores)):
        joined = join(qrels, spread, options.replace(missing="zero"), duplicates="mark")
        per_group = Plan(inner, options).values(joined, qrels) if inner else \
            np.zeros((len(owner), 0))
    values = _with_counts(plan, columns, _average(per_group, n_groups), groups.n_queries)
    duplicate = np.full(groups.n_queries, -1, dtype=np.int64)
    for k in np.flatnonzero(joined.duplicate >= 0)[::-1]:  # (the first group's, if several)
        duplicate[owner[k]] = joined.duplicate[k]
    keep = np.ones(groups.n_queries, dtype=bool) if options.missing == "zero" else in_run
    first = np.flatnonzero(duplicate[keep] >= 0)[:1]
    reasons = {int(e): ranked_twice(spread, groups.query_ids[np.flatnonzero(keep)[e]],
                                    int(duplicate[keep][e])) for e in first}
    q_qids, r_qids = common_kind(groups.query_ids, run.query_ids)
    judged_ids = set(q_qids.keys())
    ignored = [qid for qid, key in zip(r_qids.tolist(), r_qids.keys()) if key not in
               judged_ids]
    return Evaluated(groups.query_ids.take(np.flatnonzero(keep)), in_run[keep], values[keep],
                     ignored, groups.query_ids.take(np.flatnonzero(~in_run)).tolist(),
                     duplicate[keep], np.zeros(int(keep.sum()), dtype=np.int64), reasons,
                     np.zeros(int(keep.sum()), dtype=bool))


def _run_queries(groups, run):
    """The run query of each judged query (-1: absent from the run)."""
    q_qids, r_qids = common_kind(groups.query_ids, run.query_ids)
    merge = _jit.select(merge_sorted_ids, len(q_qids) + len(r_qids))
    in_groups, in_run = merge(q_qids.args(), r_qids.args())
    run_of = np.full(groups.n_queries, -1, dtype=np.int64)
    both = (in_groups >= 0) & (in_run >= 0)
    run_of[in_groups[both]] = in_run[both]
    return run_of


def _average(per_group, n_groups):
    """Each query's values: the sum over its groups, in group order, divided by their
    number when there are several (m_*_avgjg.c's order of operations)."""
    first = np.cumsum(n_groups) - n_groups
    total = np.zeros((len(n_groups), per_group.shape[1]))
    for g in range(int(n_groups.max(initial=0))):
        has = n_groups > g
        total[has] += per_group[first[has] + g]
    several = n_groups > 1
    total[several] /= n_groups[several, None]
    return total


__all__ = ["Evaluated", "JudgmentGroups", "Prefs", "evaluate", "evaluate_groups",
           "evaluate_prefs", "evaluated"]
