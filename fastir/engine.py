"""The engine: measures prepared once (:class:`Plan`), then from a join to values and
:class:`~fastir.results.Results` (:meth:`Plan.evaluate`: inputs, join, values, Results, the
one path of ``evaluate``, ``Evaluator``, the curves, streaming, dask and the trec_eval
formatter). Bound candidates and dense batches share the plan and its kernels.

What the kernel computes for a measure is read from the registry (:mod:`fastir.measures.registry`):
its kernel case, the cumulative rows it reads, its parameters, how much of the ideal it
reads. Nothing here names a measure.
"""

import functools

import numpy as np

from fastir import _jit
from fastir._jit import chunk_bounds
from fastir.io.inputs import warn_of_queries
from fastir.measures import diversity as DK
from fastir.measures import kernels, user
from fastir.measures import ties as TK
from fastir.measures.registry import (
    GAINS,
    HOW,
    JUDGED_ONLY,
    MULT,
    RANK,
    REALS,
    RECALL,
    STRING,
    how,
    parse_all,
)
from fastir.model.data import Ideals
from fastir.model.join import join, judged_anywhere, only_judged
from fastir.options import DEFAULT, Options
from fastir.results import Results
from fastir.worlds import expected_values


def query_warnings(joined, qrels, run):
    """The warnings of a join's queries (:meth:`Plan.evaluate`'s default check): none in
    common, or judged queries the run lacks scored 0
    (:func:`~fastir.io.inputs.warn_of_queries`)."""
    warn_of_queries(joined.in_run, qrels, run.n_queries, run.source)


def disjoint_warning(joined, qrels, run):
    """The warning when a run and the qrels share no query, alone: the check of the peers'
    switches (ranx, repro_eval, ir_measures' functions), whose peers score a judged query
    the run lacks 0 without a word."""
    warn_of_queries(joined.in_run, qrels, run.n_queries, run.source, zeros=False)


class Plan:
    """Measures parsed, checked and laid out for the kernels, once for many evaluations.

    Parameters
    ----------
    measures : str, Measure or list of them
        As for :func:`fastir.evaluate`.
    options : Options
        The plan reads ``relevance_level``, ``num_docs``, ``compat``, ``ties`` and
        ``unjudged`` (:class:`fastir.options.Options`): a measure that cannot take them is
        refused here, naming itself.
    judgments : {"qrels", "prefs", "groups"}
        What the measures will read: qrels (by every entry point), or preference judgments
        or judgment groups (:mod:`fastir.preferences`); a measure that needs others is
        refused here, saying what it needs.
    """

    def __init__(self, measures, options=DEFAULT, *, judgments="qrels"):
        self.keys, self.parsed = parse_all(measures)
        check_compat(self.parsed, options)
        check_judgments(self.parsed, judgments)
        check_reals(self.parsed, options)
        TK.check_options(self.parsed, options, judgments)
        needs_n = [str(m) for m in self.parsed if m.spec.num_docs == "required"]
        if needs_n and not options.num_docs > 0:
            raise ValueError(f"{', '.join(needs_n)} needs num_docs, the collection size N "
                             "(trec_eval -N); got none")
        #: the options the plan reads, whole (those of the join are the evaluation's)
        self.options = planned(options)
        self.spec = measure_spec(self.parsed, self.options)
        self.how = how(self.parsed)
        #: the columns of the diversity kernel's measures
        self.diverse = np.array([j for j, m in enumerate(self.parsed)
                                 if m.spec.path == "subtopics"], dtype=np.int64)
        #: the columns of the measures not defined on some inputs (NaN there: see check)
        self.checked = [j for j, m in enumerate(self.parsed) if m.spec.invalid is not None]
        #: the columns of the measures that read the judged documents only (judged_only)
        self.judged = np.array([j for j, m in enumerate(self.parsed) if m.judged_only],
                               dtype=np.int64)
        #: per measure, the ranking it reads: (judged documents only, judged by any query)
        self.views = [(m.judged_only, m.spec.anywhere) for m in self.parsed]
        #: whether a measure counts a document any query judges as judged (Joined.anywhere)
        self.anywhere = any(m.spec.anywhere for m in self.parsed)
        #: the user measures' families and their columns (fastir.measures.user)
        self.user = user.columns_of(self.parsed)
        #: with labels="float": per measure, the label its level is (None: integer labels)
        self.real_levels = real_levels(self.parsed, self.options)
        self._coded = None  # (label values, spec, the spec in their codes): the last made

    @staticmethod
    def of(measures, options=DEFAULT, judgments="qrels"):
        """The plan of these measures and options: built once per distinct request (a loop
        that evaluates the same measures pays for parsing them once)."""
        names = (measures,) if isinstance(measures, str) else measures
        try:
            return _plan(tuple(names), planned(options), judgments)
        except TypeError:  # (unhashable: a measure given as something else) not cached
            return Plan(measures, options, judgments=judgments)

    def evaluate(self, qrels, run, options, *, check=query_warnings, duplicates="raise",
                 groups=False):
        """The evaluation path of every entry point: ``run`` (a Run) joined with ``qrels``
        (a Qrels) under ``options`` (:class:`~fastir.options.Options`), then these
        measures' values on the join; (:class:`Results`, the join). ``check(joined, qrels,
        run)`` looks at the join before any value is computed (None: nothing);
        ``duplicates`` and ``groups`` are as for :func:`~fastir.model.join.join`."""
        joined = join(qrels, run, options, duplicates=duplicates, groups=groups,
                      anywhere=self.anywhere)
        if check is not None:
            check(joined, qrels, run)
        values, errors = self.values_and_errors(joined, qrels)
        results = self.results(joined, values, options.missing)
        results.standard_errors = errors
        return results, joined

    def values_and_errors(self, joined, qrels):
        """(:meth:`values`, their standard errors): with probabilistic labels, each value's
        (0 where its query's label assignments were enumerated: :mod:`fastir.worlds`);
        None otherwise."""
        if qrels.label_probs is not None:
            return expected_values(self, joined, qrels)
        return self.values(joined, qrels), None

    def values(self, joined, qrels):
        """Per-query values (n_queries, n_measures) on a join; text measures get NaN. The
        measures with ``judged_only`` read the join without its unjudged documents, those
        whose family counts a document any query judges as judged its codes in the whole
        qrels (:func:`~fastir.model.join.judged_anywhere`). With ``ties="expected"`` the
        join must have its tie groups (``Joined.groups``). With probabilistic labels
        (``labels="probability"``), each value is expected over the labels
        (:mod:`fastir.worlds`)."""
        if qrels.label_probs is not None:
            return expected_values(self, joined, qrels)[0]
        views = set(self.views)
        if len(views) > 1:
            return self._split(joined, qrels)
        only, anywhere = views.pop() if views else (False, False)
        joined = only_judged(joined) if only else joined
        joined = judged_anywhere(joined) if anywhere else joined
        if len(self.diverse) and joined.subtopic_codes is None:
            self.refuse_diversity("these qrels have none")
        n_queries = len(joined.indptr) - 1
        out = np.zeros((n_queries, len(self.parsed)))
        if n_queries:
            lengths = np.diff(joined.indptr)
            judged = ideals(qrels) if joined.ideals is None else joined.ideals
            longest = max(int(lengths.max()), int(np.diff(judged.indptr).max(initial=0)))
            bounds = chunk_bounds(lengths, _jit.n_threads())
            spec = self.sized(longest, qrels)
            rankings = kernels.Rankings(joined.indptr, joined.labels, joined.qrels_query)
            scratch = work(len(bounds) - 1, longest)
            if self.options.ties == "expected":  # (user measures have none: refused)
                _jit.launch(TK.expected_queries, bounds, rankings, joined.groups, judged, spec,
                            scratch, out, n_items=int(joined.indptr[-1]) + n_queries)
            elif sum(len(columns) for _, columns in self.user) < len(self.parsed):
                _jit.launch(kernels.evaluate_queries, bounds, rankings, judged, spec, scratch,
                            out, n_items=int(joined.indptr[-1]) + n_queries)
            user.fill(self.parsed, self.user, bounds, rankings, judged, spec, out,
                      joined.query_ids)
            if len(self.diverse):
                sub = qrels.subtopics
                _jit.launch(DK.diversity_queries, bounds,
                            kernels.Rankings(joined.indptr, joined.subtopic_codes,
                                             joined.qrels_query),
                            DK.Judgments(qrels.indptr, sub.pairs, sub.subtopic, sub.label,
                                         sub.n_subtopics), spec, self.diverse,
                            np.empty((len(bounds) - 1, DK.N_ROWS, sub.longest(qrels.indptr) + 2)),
                            out)
        self.finish(out, joined.in_run, joined.query_ids)
        return out

    def _split(self, joined, qrels):
        """The values of a request that mixes measures reading different rankings (with and
        without ``judged_only``, judged by the query or by any): a plan on each."""
        out = np.zeros((len(joined.indptr) - 1, len(self.parsed)))
        for view in dict.fromkeys(self.views):
            columns = [j for j, other in enumerate(self.views) if other == view]
            measures = [self.parsed[j] for j in columns]
            unique = list(dict.fromkeys(measures))  # (two names of one measure: computed once)
            part = Plan.of(tuple(unique), self.options)
            values = part.values(joined, qrels)
            out[:, columns] = values[:, [unique.index(m) for m in measures]]
        return out

    def refuse_diversity(self, why):
        """The error for diversity measures without subtopic judgments."""
        names = ", ".join(str(self.parsed[j]) for j in self.diverse)
        raise ValueError(f"{names} needs subtopic judgments ({why}): read qrels with "
                         "read_qrels(path, subtopics=True) (lines 'qid subtopic docno "
                         "label'), or give {qid: {doc: {subtopic: label}}}")

    def sized(self, longest, qrels=None):
        """The spec with discounts for rankings and ideals up to ``longest`` long, for the
        label codes of ``qrels`` when they have real labels (:func:`coded_spec`: the one
        place levels and gains become codes)."""
        log2 = kernels.log2_table(longest + 2)
        if self.spec.log2 is not log2:  # (the shared table grew: a spec that reaches it)
            self.spec = self.spec._replace(log2=log2)
        values = None if qrels is None else qrels.label_values
        if values is None:
            return self.spec
        if self.real_levels is None:
            raise ValueError(f"{qrels.source}: these qrels have real-valued labels: evaluate "
                             "them with labels='float'")
        coded = self._coded
        if coded is None or coded[0] is not values or coded[1] is not self.spec:
            coded = self._coded = (values, self.spec, coded_spec(
                self.spec, self.parsed, self.real_levels, values))
        return coded[2]

    def finish(self, values, in_run, query_ids=None):
        """Refuse values a measure is not defined on (:meth:`check`); text measures to NaN
        (their values are :func:`relstrings`); judged queries absent from the run to 0 for
        the measures whose ``empty`` is "emptied", and under compat 9.0.8 for all but the
        counts (9.0.8 does not evaluate them). ``values`` is (..., n_queries, n_measures)."""
        self.check(values, query_ids)
        for j, m in enumerate(self.parsed):
            if m.spec.kind == STRING:
                values[..., j] = np.nan
            elif (self.options.compat == "9.0.8" and m.spec.path != "counts") \
                    or m.spec.empty == "emptied":
                values[..., ~in_run, j] = 0.0

    def check(self, values, query_ids=None, means=None):
        """A ValueError naming the measure, the query and what is wrong when a kernel case
        gave NaN: the registry's ``invalid`` says which inputs a measure is not defined on.
        ``means``, the summaries of 2-d ``values``, spare the look at a measure whose mean
        or sum is a number (a NaN value would have made it NaN)."""
        for j in self.checked:
            if means is not None and self.how[j] in _NAN_KEEPING and not np.isnan(means[j]):
                continue
            m = self.parsed[j]
            bad = np.isnan(values[..., j])
            if bad.any():
                row = int(np.argwhere(bad)[0][-1])
                where = f"query {query_ids[row]!r}" if query_ids is not None else f"row {row}"
                raise ValueError(f"{m} on {where}: {m.spec.invalid}")

    def results(self, joined, values, missing):
        """A :class:`Results` of ``values`` on a join (or on anything that has its
        ``query_ids``, ``in_run``, ``ignored_run_queries`` and ``missing_queries``, such as
        :data:`fastir.preferences.Evaluated`; text measures read its labels)."""
        return self.results_of(joined.query_ids, values, joined.in_run, missing,
                               joined.ignored_run_queries, joined.missing_queries,
                               self.texts(joined))

    def results_of(self, query_ids, values, in_run, missing, ignored, missing_queries,
                   texts):
        """A :class:`Results` of these measures (the one place one is made): ``values`` of
        the queries ``query_ids`` (an id column), ``texts`` as :meth:`texts` gives."""
        return Results(query_ids, list(self.keys), list(self.parsed), values, ignored,
                       missing_queries, missing, in_run, texts)

    def texts(self, joined):
        """``{key: [text per query]}`` of the text measures (relstring) on a join."""
        return {key: relstrings(only_judged(joined) if m.judged_only else joined, m.cut())
                for key, m in zip(self.keys, self.parsed) if m.spec.kind == STRING}


_NAN_KEEPING = (HOW["mean"], HOW["sum"])  # summaries NaN when a value is


def planned(options):
    """``options`` reduced to those a plan reads (``relevance_level``, ``num_docs``,
    ``compat``, ``ties``, ``unjudged``, ``labels``, ``samples``, ``label_seed``): the key of the
    plans made once."""
    return Options(options.relevance_level, num_docs=options.num_docs, compat=options.compat,
                   ties=options.ties, unjudged=options.unjudged, labels=options.labels,
                   samples=options.samples, label_seed=options.label_seed)


@functools.lru_cache(maxsize=128)
def _plan(names, options, judgments):
    return Plan(list(names), options, judgments=judgments)


user.PLAN_CACHES.append(_plan.cache_clear)


#: What each kind of judgments is, and how to get it, for the refusals of check_judgments.
NEEDS = {
    "qrels": "qrels (judgments qid iter docno label)",
    "prefs": "preference judgments: fastir.read_prefs(path) (trec_eval -R prefs), "
             "read_prefs(path, format='qrels_prefs') (-R qrels_prefs) or "
             "fastir.Prefs.from_qrels(qrels); then fastir.evaluate(prefs, run, ...)",
    "groups": "judgment groups: fastir.read_judgment_groups(path) (trec_eval -R qrels_jg); "
              "then fastir.evaluate(groups, run, ...)",
}


def check_judgments(parsed, judgments):
    """A ValueError naming the measures that cannot read ``judgments`` ("qrels", "prefs" or
    "groups") and what they need (NumQ reads any)."""
    if judgments not in NEEDS:
        raise ValueError(f"judgments must be one of {', '.join(NEEDS)}, got {judgments!r}")
    for kind in NEEDS:
        wrong = [str(m) for m in parsed if needs(m) == kind and kind != judgments]
        if wrong:
            raise ValueError(f"{', '.join(wrong)} needs {NEEDS[kind]}; these are "
                             f"{judgments if judgments != 'groups' else 'judgment groups'}")


def needs(m):
    """The judgments a measure reads: "qrels", "prefs", "groups", or None (any: NumQ)."""
    if m.spec.kind == kernels.NUM_Q and m.spec.path == "counts":
        return None
    return m.spec.path if m.spec.path in ("prefs", "groups") else "qrels"


def check_reals(parsed, options):
    """Under ``labels="float"``, a ValueError naming the first measure that takes integer
    labels only, and why (the registry's ``Family.reals``; a gain table maps integer
    labels); under ``labels="probability"``, the first that takes none
    (``Family.probabilities``)."""
    if options.labels == "probability":
        for m in parsed:
            if m.spec.probabilities is not None:
                raise ValueError(f"{m}: takes no probabilistic labels (labels='probability'): "
                                 f"{m.spec.probabilities}")
    if options.labels != "float":
        return
    for m in parsed:
        why = m.spec.reals if m.spec.reals not in REALS else None
        if why is None and getattr(m, "gains", None) is not None:
            why = "its gain table (gains=) maps integer labels"
        if why is not None:
            raise ValueError(f"{m}: takes integer labels only (labels='float'): {why}")


def real_levels(parsed, options):
    """Under ``labels="float"``, per measure the label its relevance level is (its
    ``rel=``, else the evaluation's ``relevance_level``; 0.0 for the families whose level
    does not apply, whose labels count when > 0, as labels >= 1 do among integers), as
    float64; None under integer labels."""
    if options.labels != "float":
        return None
    levels = np.zeros(len(parsed))
    for j, m in enumerate(parsed):
        rel = m.rel if "rel" in m.spec.params else None
        levels[j] = (0.0 if m.spec.level_free else options.relevance_level) if rel is None \
            else rel
    return levels


def coded_spec(spec, parsed, levels, values):
    """``spec`` for the label codes of real labels ``values`` (ascending; code ``c`` is
    ``values[c]``): each measure's LEVEL the first code whose label is >= its level (> 0
    for a level of 0.0 of a level-free family: :func:`real_levels`), and the gains of the
    families that take labels as gains (registry ``reals="gains"``) a table by code
    (GAIN_TABLE): the label (0 when below the level or not > 0; exponential: 2^l - 1), as
    :func:`fastir.measures.common.gain` gives an integer label; the table families' labels
    as they are."""
    table = spec.table.copy()
    level_free = np.array([m.spec.level_free and levels[j] == 0.0
                           for j, m in enumerate(parsed)], dtype=bool)
    table[:, kernels.LEVEL] = np.where(level_free, np.searchsorted(values, 0.0, side="right"),
                                       np.searchsorted(values, levels, side="left"))
    gainers = [j for j, m in enumerate(parsed) if m.spec.reals == "gains"]
    params = spec.params
    if gainers:
        params = np.full((len(parsed), max(params.shape[1], len(values))), np.nan)
        params[:, :spec.params.shape[1]] = spec.params
        for j in gainers:
            kind = table[j, kernels.GAIN]
            counted = (values >= levels[j]) & (values > 0.0)
            if kind == kernels.GAIN_EXP and len(values) and values[-1] >= kernels.MAX_EXP_LABEL:
                raise ValueError(f"{parsed[j]}: {parsed[j].spec.invalid}")
            gains = values if kind == kernels.GAIN_TABLE else np.where(
                counted, 2.0 ** values - 1.0 if kind == kernels.GAIN_EXP else values, 0.0)
            params[j] = np.nan
            params[j, :len(values)] = gains
            table[j, kernels.GAIN] = kernels.GAIN_TABLE
    return kernels.spec(table, params, spec.log2, kernels.prefix_depth(table))


def check_compat(parsed, options):
    """A ValueError naming the measures that trec_eval 9.0.8 lacks, under its ``compat``."""
    if options.compat == "9.0.8":
        newer = [str(m) for m in parsed if "9.0.8" not in m.spec.versions]
        if newer:
            raise ValueError(f"{', '.join(newer)}: not in trec_eval 9.0.8 (compat='9.0.8')")


def measure_spec(parsed, options):
    """The kernel's measure table and float parameters (:data:`fastir.measures.kernels.Spec`)
    under ``options`` (it reads ``relevance_level``, ``num_docs`` and ``compat``), and the
    depth of its cumulative rows; ``log2`` is filled by :meth:`Plan.sized`."""
    table = np.zeros((len(parsed), kernels.N_COLUMNS), dtype=np.int64)
    gains = [_gain_kind(m) for m in parsed]
    rows = [_params(m, gain, options.num_docs) for m, gain in zip(parsed, gains)]
    # (NaN beyond a row: a gain table gives the labels it does not list their own gain)
    params = np.full((len(parsed), max([5] + [len(r) for r in rows])), np.nan)
    for j, m in enumerate(parsed):
        spec = m.spec
        table[j, kernels.KIND] = spec.kind if spec.kind != STRING else kernels.NUM_Q
        table[j, kernels.PATH] = kernels.PATHS[spec.path]
        table[j, kernels.CUTOFF] = _cutoff_column(m)
        rel = m.rel if "rel" in spec.params else None
        level = (1 if spec.level_free else options.relevance_level) if rel is None else rel
        table[j, kernels.LEVEL] = level
        table[j, kernels.GAIN] = gains[j]
        table[j, kernels.COMPAT] = options.compat == "9.0.8"
        table[j, kernels.EMPTY] = spec.empty in ("value", "emptied")
        params[j, :len(rows[j])] = rows[j]
    depth = kernels.prefix_depth(table)
    return kernels.spec(table, params, kernels.log2_table(2), depth)


def rank_depth(spec):
    """The ranks a dense batch must order: the prefix depth when every measure reads only
    the cumulative rows down to its cutoff (then a selection, not a sort), else 0 (all)."""
    table = spec.table
    reads_cutoff = ((table[:, kernels.PATH] == kernels.PATH_RANKS)
                    | ((table[:, kernels.PATH] == kernels.PATH_GAINS)
                       & (table[:, kernels.GAIN] != kernels.GAIN_TABLE)))
    if reads_cutoff.all() and (table[:, kernels.CUTOFF] > 0).all():
        return int(spec.depth)
    return 0


def ideal_depth(parsed):
    """How much of the ideal ranking the measures read: (-1, a measure reading all of it)
    or (depth, None)."""
    depth = 0
    for m in parsed:
        reads = m.spec.ideal
        if reads == "whole" or (reads == "cutoff" and m.cutoff is None):
            return -1, str(m)
        if reads == "cutoff":
            depth = max(depth, m.cutoff)
        elif reads == "top":
            depth = max(depth, 1)
    return depth, None


def _cutoff_column(m):
    return m.cutoff if m.spec.cutoff is RANK and m.cutoff is not None else 0


def _gain_kind(m):
    """How a measure turns labels into gains: a table (given, or trec_eval's label table
    for the families that always read it), else its ``dcg`` choice."""
    names = m.spec.params
    if "gains" in names and (m.gains is not None or "dcg" not in names):
        return kernels.GAIN_TABLE
    return GAINS[m.dcg] if "dcg" in names else kernels.GAIN_LINEAR


def _params(m, gain_kind, num_docs):
    """A measure's row of float parameters: its float cutoff, its gain table by label (NaN
    where a label has no entry), its numeric parameters but ``rel`` (the table's level) and
    ``judged_only`` (the ranking's) in declared order (recall levels: their number, then
    each), then the collection size when it reads it."""
    row = []
    if m.spec.cutoff in (RECALL, MULT):
        row.append(m.cutoff)
    if gain_kind == kernels.GAIN_TABLE:
        table = dict(m.gains or ())
        row += [table.get(label, np.nan) for label in range(max(table, default=0) + 1)]
    for name, param in m.spec.params.items():
        if param is JUDGED_ONLY:  # (applied to the ranking, by Plan.values)
            continue
        if param.kind in ("float", "bool", "int", "rank", "depth") or (param.kind == "level"
                                                          and name != "rel"):
            row.append(getattr(m, name))
        elif param.kind == "levels":  # their number, then the levels
            row += [len(getattr(m, name)), *getattr(m, name)]
    if m.spec.num_docs:
        row.append(num_docs)
    return row


def ideals(qrels):
    """The qrels' ideal labels for the kernels."""
    return Ideals(qrels.indptr, qrels.ideal_labels())


def work(n_chunks, longest, codes=0):
    """A :data:`fastir.measures.kernels.Work` for ``n_chunks`` chunks of rankings and ideals up to
    ``longest`` long (``codes``: how many label and index rows a chunk needs)."""
    size = longest + 2
    return kernels.Work(np.empty((n_chunks, kernels.N_ROWS, size)),
                        np.full((n_chunks, kernels.N_STATE), -1, dtype=np.int64),
                        np.empty((n_chunks, codes, size), dtype=np.int32),
                        np.empty((n_chunks, codes, size), dtype=np.int64))


def relstrings(joined, k):
    """trec_eval's relstring of every evaluated query: the top ``k`` label codes as text."""
    chars = np.frombuffer(b"<.-0123456789>", dtype=np.uint8)  # codes -3 .. 10
    out = []
    for e in range(len(joined.indptr) - 1):
        codes = joined.labels[joined.indptr[e]:joined.indptr[e + 1]][:k].astype(np.int64)
        out.append(chars[np.clip(codes, -3, 10) + 3].tobytes().decode("ascii"))
    return out
