"""Evaluation in loops: qrels prepared once (:class:`Evaluator`), fixed candidates with
changing scores (:meth:`Evaluator.bind`), and dense score matrices (:func:`evaluate_matrix`).
"""

import functools
import threading
import warnings

import numpy as np

from fastir import _jit, engine
from fastir._jit import chunk_bounds
from fastir.io.inputs import as_qrels, as_run, form_of, records_read, size_hint
from fastir.measures import dense as BK
from fastir.measures import kernels, user
from fastir.measures.registry import MAX_CUTOFF
from fastir.model.data import InputError, Qrels, Run
from fastir.model.join import NOT_POOLED, depth, join
from fastir.model.values import integer_labels
from fastir.options import Options, checked_level

_SERIAL_BELOW = 20_000  # batch cells under which evaluate_matrix stays in the calling thread


class Evaluator:
    """Qrels and measures prepared once, for evaluating many runs.

    Parameters
    ----------
    qrels : Qrels, dict or path
    measures : str or list of str
        As for :func:`fastir.evaluate`.
    **options
        ``relevance_level``, ``missing``, ``max_docs``, ``judged_only``, ``num_docs``,
        ``compat``, ``ties``, ``unjudged``, ``labels``, ``samples``, ``label_seed``, as for
        :func:`fastir.evaluate`.

    Attributes
    ----------
    check : callable
        What :meth:`evaluate` says of a run's queries (``check(joined, qrels, run)``, see
        :meth:`fastir.engine.Plan.evaluate`): none in common, or judged queries it lacks
        scored 0 (:func:`fastir.engine.query_warnings`). The peers' switches set
        :func:`fastir.engine.disjoint_warning`.

    Examples
    --------
    >>> import fastir
    >>> ev = fastir.Evaluator({"q": {"a": 1, "b": 0}}, ["AP", "P@1"])
    >>> ev.evaluate({"q": {"a": 0.2, "b": 0.9}}).mean
    {'AP': 0.5, 'P@1': 0.0}
    """

    def __init__(self, qrels, measures, *, relevance_level=1, missing="zero", max_docs=None,
                 judged_only=False, num_docs=0, compat=None, ties="trec_eval",
                 unjudged="nonrelevant", labels="int", samples=1000, label_seed=0):
        self.options = Options(relevance_level=relevance_level, missing=missing,
                               max_docs=max_docs, judged_only=judged_only, num_docs=num_docs,
                               compat=compat, ties=ties, unjudged=unjudged, labels=labels,
                               samples=samples, label_seed=label_seed)
        self.check = engine.query_warnings
        qrels = records_read(qrels, "qrels", labels)
        if not isinstance(qrels, Qrels):
            form_of(qrels, "qrels")  # (refused first: preference judgments, say, as such)
        self.plan = engine.Plan.of(measures, self.options)
        with _jit.tier(size_hint(qrels)):
            self.qrels = as_qrels(qrels, labels=labels)
            self.qrels.docs_matching(self.qrels.doc_ids)
            self.qrels.ideal_labels()

    @property
    def compat(self):
        return self.options.compat

    def evaluate(self, run):
        """Evaluate one run (any form :func:`fastir.evaluate` takes): a :class:`Results`."""
        run = records_read(run, "run")
        with _jit.loop_tier(lambda: size_hint(run) + len(self.qrels)):
            run = as_run(run, self.compat)
            return self.plan.evaluate(self.qrels, run, self.options, check=self.check)[0]

    def bind(self, query_ids, doc_ids):
        """Fix the candidate rows (one per (query, doc), any order) and join them once.

        Returns a :class:`BoundCandidates` whose ``evaluate(scores)`` ranks the candidates
        by new scores only.
        """
        return BoundCandidates(self, query_ids, doc_ids)


class BoundCandidates:
    """Candidate rows joined with the qrels once; evaluate score vectors over them.

    Rows are ranked as by :func:`fastir.evaluate` (score descending, ties by doc id
    descending, or in the order given to ``bind`` with ``ties="input"``), so results equal
    ``evaluate`` on a run with the same rows and scores.
    """

    def __init__(self, evaluator, query_ids, doc_ids):
        query_ids = np.asarray(query_ids)
        doc_ids = np.asarray(doc_ids)
        if query_ids.shape != doc_ids.shape or query_ids.ndim != 1:
            raise ValueError(f"query_ids {query_ids.shape} and doc_ids {doc_ids.shape} must be "
                             "1-d and of equal length")
        if len(evaluator.plan.diverse):
            evaluator.plan.refuse_diversity("bound candidates have none: evaluate a run")
        text = [str(m) for m in evaluator.plan.parsed if m.spec.aggregate == "none"]
        if text:
            raise ValueError(f"{', '.join(text)}: text measures are not available for bound "
                             "candidates (evaluate a run instead)")
        anywhere = [str(m) for m in evaluator.plan.parsed if m.spec.anywhere]
        if anywhere:
            raise ValueError(f"{', '.join(anywhere)}: counts the documents no query judges, "
                             "which bound candidates do not look up (evaluate a run instead)")
        judged = [str(evaluator.plan.parsed[j]) for j in evaluator.plan.judged]
        options = evaluator.options
        if judged and not options.judged_only:
            raise ValueError(f"{', '.join(judged)}: judged_only for some measures only is not "
                             "available for bound candidates (give Evaluator(...,"
                             " judged_only=True), or evaluate a run)")
        if options.ties == "expected":
            raise ValueError("ties='expected' is not available for bound candidates: "
                             "evaluate a run (Evaluator.evaluate, fastir.evaluate)")
        if options.labels == "probability":
            raise ValueError("labels='probability' is not available for bound candidates: "
                             "evaluate a run (Evaluator.evaluate, fastir.evaluate)")
        if options.unjudged_label is not None and options.max_docs is not None:
            raise ValueError(f"unjudged={options.unjudged!r} with max_docs is not available "
                             "for bound candidates (which documents are retrieved changes "
                             "with the scores): evaluate a run")
        self.evaluator = evaluator
        self.n_rows = len(query_ids)
        with _jit.tier(self.n_rows + len(evaluator.qrels)):
            run = Run.from_arrays(query_ids, doc_ids, np.arange(self.n_rows, dtype=np.float64),
                                  source="candidates")
            joined = join(evaluator.qrels, run,
                          options.replace(max_docs=None, judged_only=False),
                          as_candidates=True)
        self.joined = joined
        # Per candidate its score column (the run's scores are the bind order); per score
        # column its label code and its tie position in its query (from the join).
        columns = run.scores[joined.rows].astype(np.int64)
        codes = np.full(self.n_rows, NOT_POOLED, dtype=joined.labels.dtype)
        codes[columns] = joined.labels
        tie = np.zeros(self.n_rows, dtype=np.int64)
        tie[columns] = joined.tie
        lengths = np.diff(joined.indptr)
        # (with unjudged documents judged: the qrels with every candidate)
        self.ideals = engine.ideals(evaluator.qrels) if joined.ideals is None else \
            joined.ideals
        ideal_lengths = np.diff(self.ideals.indptr)
        self.longest = max(int(lengths.max(initial=0)), int(ideal_lengths.max(initial=0)))
        self.spec = evaluator.plan.sized(self.longest, evaluator.qrels)
        judged = np.flatnonzero(joined.labels != NOT_POOLED)  # (positions in join order)
        self.candidates = BK.Candidates(
            joined.indptr, columns, codes, tie, joined.qrels_query,
            np.searchsorted(judged, joined.indptr).astype(np.int64), columns[judged],
            depth(options), bool(options.judged_only), engine.rank_depth(self.spec))

    @property
    def query_ids(self):
        return self.joined.query_ids.tolist()

    def evaluate(self, scores, *, per_query=False):
        """Evaluate score vectors over the bound candidates.

        Parameters
        ----------
        scores : array-like, shape (n_rows,) or (n_runs, n_rows)
            One score per candidate row, in the order given to ``bind``.
        per_query : bool
            For a 2-d ``scores``, also return the (n_runs, n_queries, n_measures) values.

        Returns
        -------
        Results (1-d scores), or an (n_runs, n_measures) float64 array of summaries (means
        as ``Results.mean``), with the per-query values too when ``per_query``.
        """
        scores = _as_float_array(scores, "scores")
        one = scores.ndim == 1
        matrix = scores.reshape(1, -1) if one else scores
        if matrix.ndim != 2 or matrix.shape[1] != self.n_rows:
            raise ValueError(f"scores must have shape ({self.n_rows},) or (n_runs, "
                             f"{self.n_rows}), got {scores.shape}")
        if not np.isfinite(matrix).all():
            raise ValueError("scores must be finite")
        n_runs = matrix.shape[0]
        each = BK.Weights(np.arange(n_runs + 1), np.arange(n_runs), np.ones(n_runs))
        with _jit.loop_tier(n_runs * self.n_rows):
            values = self._values(np.ascontiguousarray(matrix), each)
            if one:
                plan = self.evaluator.plan
                return plan.results(self.joined, values[0], self.evaluator.options.missing)
            return self._means(values, per_query)

    def evaluate_weighted(self, parts, weights, *, per_query=False):
        """Evaluate weighted sums of score vectors, without building them: what a fusion
        weight search asks (:func:`fastir.optimize_fusion` calls it).

        Vector ``r``'s scores are ``sum(weights[r, j] * parts[j])``, summed in ``j`` order
        from 0.0 as numpy sums ``w[0] * parts[0] + w[1] * parts[1] + ...`` (terms of weight
        0 left out: they change no score), so the values equal :meth:`evaluate` on the
        vectors built with numpy, at the memory of one vector.

        Parameters
        ----------
        parts : array-like, shape (n_parts, n_rows)
            Finite score vectors, one score per candidate row (as for :meth:`evaluate`).
        weights : array-like, shape (n_vectors, n_parts)
            Finite weights, one row per score vector to evaluate.
        per_query : bool
            Also return the (n_vectors, n_queries, n_measures) values.

        Returns
        -------
        An (n_vectors, n_measures) float64 array of summaries, with the per-query values
        too when ``per_query``.
        """
        parts = _as_float_array(parts, "parts")
        if parts.ndim != 2 or parts.shape[1] != self.n_rows:
            raise ValueError(f"parts must have shape (n_parts, {self.n_rows}), got "
                             f"{parts.shape}")
        weights = _as_float_array(weights, "weights")
        if weights.ndim != 2 or weights.shape[1] != parts.shape[0]:
            raise ValueError(f"weights must have shape (n_vectors, {parts.shape[0]}), got "
                             f"{weights.shape}")
        if not (np.isfinite(parts).all() and np.isfinite(weights).all()):
            raise ValueError("parts and weights must be finite")
        vector, part = np.nonzero(weights)  # (row-major: each vector's terms in part order)
        indptr = np.concatenate(([0], np.cumsum(np.count_nonzero(weights, axis=1))))
        with _jit.loop_tier(len(weights) * self.n_rows):
            values = self._values(np.ascontiguousarray(parts),
                                  BK.Weights(indptr, part, weights[vector, part]))
            return self._means(values, per_query)

    def _means(self, values, per_query):
        with _jit.tier(values.size):
            means = _jit.select(kernels.summaries, values.size)(values,
                                                                self.evaluator.plan.how)
        return (means, values) if per_query else means

    def _values(self, parts, weights):
        """Per score vector (:data:`~fastir.measures.dense.Weights` over ``parts``), query
        and measure, the values; a vector beyond a double is refused by its row."""
        plan = self.evaluator.plan
        n_vectors = len(weights.indptr) - 1
        n_queries = len(self.joined.indptr) - 1
        out = np.zeros((n_vectors, n_queries, len(plan.parsed)))
        if n_queries:
            tasks = chunk_bounds(np.diff(self.joined.indptr) + 1, _jit.n_threads())
            bad = np.full(len(tasks) - 1, -1, dtype=np.int64)
            with _jit.tier(n_vectors * self.n_rows):
                _jit.launch(BK.bound_values, tasks, self.candidates, parts, weights,
                            self.evaluator.compat == "9.0.8", self.ideals, self.spec,
                            engine.work(len(tasks) - 1, self.longest, codes=2),
                            np.empty(self.n_rows), bad, out)
                if plan.user and (bad < 0).all():
                    user.fill_bound(plan, self.candidates, parts, weights,
                                    self.evaluator.compat == "9.0.8",
                                    engine.ideals(self.evaluator.qrels), self.spec, out,
                                    self.joined.query_ids)
            if (bad >= 0).any():
                r = int(bad[bad >= 0].min())
                raise ValueError(f"weights: row {r} takes the scores beyond a double "
                                 f"(sums of parts times weights); give smaller weights")
        plan.finish(out, self.joined.in_run, self.joined.query_ids)
        return out


_DLPACK_CPU = 1  # DLPack's device type of host memory


def as_array(x):
    """``x`` as a numpy array: numpy, lists, ``__array__`` objects, or tensors through DLPack
    without importing their library (torch's: detached when they require grad, copied to
    the CPU, bfloat16 widened to float32, which holds it exactly)."""
    if isinstance(x, np.ndarray):
        return x
    if getattr(x, "requires_grad", False) and hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "__dlpack__"):
        if hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] != _DLPACK_CPU and \
                hasattr(x, "cpu"):
            x = x.cpu()
        if str(getattr(x, "dtype", "")).endswith("bfloat16") and hasattr(x, "float"):
            x = x.float()  # numpy has no bfloat16
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError):
            pass
    return np.asarray(x)


def _as_float_array(x, name):
    """:func:`as_array` as float64 (float16 and float32 widen exactly)."""
    x = as_array(x)
    if x.dtype.kind not in "iufb":
        raise TypeError(f"{name} must be numeric, got dtype {x.dtype}")
    return x.astype(np.float64, copy=False)


#: Relevant documents per row that a dense batch lays out in its ideal ranking when a
#: measure reads the whole of it (nDCG without a cutoff): it is kept in memory.
MAX_IDEAL = 1 << 24


#: evaluate_matrix's ties, and the dense kernels' code of each ("trec_eval" and "input" are
#: the column order: columns stand for documents in docno-descending order, as given).
_MATRIX_TIES = {"column": BK.TIES_COLUMN, "trec_eval": BK.TIES_COLUMN, "input": BK.TIES_COLUMN,
                "average": BK.TIES_AVERAGE, "expected": BK.TIES_EXPECTED}


@functools.lru_cache(maxsize=256)
def _matrix_plan(measures, relevance_level, expected=False):
    """The plan of a dense batch's measures, with the ranks it orders and how much of the
    ideal it lays out (see :func:`fastir.engine.rank_depth`, :func:`~fastir.engine.ideal_depth`);
    ``expected``: values expected over the tie orders (measures without one refused)."""
    plan = engine.Plan.of(measures, Options(relevance_level,
                                            ties="expected" if expected else "trec_eval"))
    for m in plan.parsed:
        if m.spec.unjudged:
            raise ValueError(f"{m} needs unjudged documents; a dense batch has none")
    if len(plan.diverse):
        plan.refuse_diversity("a dense batch has none")
    return plan, engine.rank_depth(plan.spec), engine.ideal_depth(plan.parsed)


user.PLAN_CACHES.append(_matrix_plan.cache_clear)


def evaluate_matrix(scores, labels, measures, *, valid=None, n_relevant=None,
                    relevance_level=1, ties="column", per_row=False, mask=None):
    """Evaluate a dense batch: one row per query, one column per candidate document.

    Parameters
    ----------
    scores : array-like, shape (batch, n_candidates)
        Scores: numpy (float16 too), ``__array__`` objects, or tensors through DLPack,
        such as torch tensors (detached if they require grad; bfloat16 and float16 widen
        exactly; fastir never imports torch). Without ``valid``, a score of ``-inf``
        marks padding: that candidate does not exist.
    labels : array-like, shape (batch, n_candidates)
        Graded relevance of each candidate: integers from 0, booleans, or floats holding
        integers (any other float is an error).
    measures : str or list of str
        Measure names, as for :func:`fastir.evaluate` (not those that need unjudged
        documents: Bpref, infAP, RBPResid, Unj).
    valid : array-like of bool, optional
        True where a candidate exists, False on padding (ragged lists); its scores and
        labels are then ignored, and a valid score of ``-inf`` is an error.
    n_relevant : array-like of int, shape (batch,), optional
        Number of relevant documents of each row, candidates or not. Recall, AP, R-prec
        and the nDCG ideal then count the relevant documents outside the candidates (the
        ideal gives them the gain of label ``relevance_level``). Default: the candidates'.
    relevance_level : int
        Relevant means label >= this (binary measures).
    ties : {"column", "average", "expected", "input", "trec_eval"}
        ``"column"``: equal scores rank by column, first column first (deterministic;
        ``"input"`` and ``"trec_eval"`` are the same order: columns stand for documents in
        their given, docno-descending order). ``"average"``: nDCG/DCG average the gains of
        equal scores over their positions, as sklearn's ``ndcg_score`` does, which is
        their value expected over the orders of equal scores (``"expected"``'s, with the
        measure's own gains and level); other measures use the column order.
        ``"expected"``: every measure's value is the mean over every order of each group
        of equal scores, as :func:`fastir.evaluate`'s ``ties="expected"``. So the modes
        are :func:`fastir.evaluate`'s (``"trec_eval"``, ``"input"``, ``"expected"``) and
        two names of its kinds: ``"column"`` (the column order) and ``"average"``.
    per_row : bool
        Also return the (batch, n_measures) per-row values.
    mask : array-like of bool, optional
        Deprecated name of ``valid`` (same meaning).

    Returns
    -------
    dict
        ``{measure: mean over rows}``, and the per-row values array when ``per_row``.

    Examples
    --------
    >>> import numpy as np, fastir
    >>> fastir.evaluate_matrix(np.array([[0.9, 0.1, 0.5]]), np.array([[0, 1, 2]]), "nDCG@2")
    {'nDCG@2': 0.4796249331362629}
    """
    return dense_values(scores, labels, measures, valid=valid, n_relevant=n_relevant,
                        relevance_level=relevance_level, ties=ties, per_row=per_row,
                        mask=mask)


def dense_values(scores, labels, measures, *, valid=None, n_relevant=None, relevance_level=1,
                 ties="column", per_row=False, mask=None, query_ids=None):
    """:func:`evaluate_matrix`, its errors naming a row's query by ``query_ids[row]`` (the
    query indexes of :func:`fastir.evaluate_flat`), else by its row."""
    if not isinstance(ties, str) or ties not in _MATRIX_TIES:
        raise ValueError(f"ties must be one of {', '.join(_MATRIX_TIES)}, got {ties!r}")
    names = (measures,) if isinstance(measures, str) else tuple(measures)
    level = checked_level(relevance_level)
    tie_code = _MATRIX_TIES[ties]
    plan, rank_depth, (ideal_cap, whole) = _matrix_plan(names, level,
                                                        tie_code == BK.TIES_EXPECTED)
    if tie_code != BK.TIES_COLUMN:
        rank_depth = 0  # tie groups are averaged whole: rank everything
    if tie_code == BK.TIES_EXPECTED:
        ideal_cap = -1  # (every relevant document laid out in the ideal)
        whole = whole or "ties='expected'"
    s, y, m = _matrix_inputs(scores, labels, valid, mask)
    batch, width = s.shape
    nr, extra = _relevant_counts(n_relevant, batch, ideal_cap, whole)
    s, y = np.ascontiguousarray(s), np.ascontiguousarray(y)
    spec = plan.sized(width + extra)
    out = np.empty((batch, len(plan.parsed)))
    means = np.empty(len(plan.parsed))
    with _jit.loop_tier(batch * (width + extra)):  # (the ideals' length too)
        python = _jit.python_mode()

        def run(valid):
            fields = (s, y, np.ascontiguousarray(valid), nr)  # a Batch's
            if batch * width < _SERIAL_BELOW or python:
                return _jit.select(BK.matrix_values_serial, python=python)(
                    fields, level, rank_depth, ideal_cap, tie_code, tuple(spec),
                    tuple(_matrix_work(1, width + extra)), plan.how, means, out)
            bounds = chunk_bounds(np.full(batch, width), _jit.n_threads())
            return _jit.launch(BK.matrix_values_parallel, bounds, BK.Batch(*fields), level,
                               rank_depth, ideal_cap, tie_code, spec,
                               _matrix_work(len(bounds) - 1, width + extra), plan.how, means,
                               np.zeros(len(bounds) - 1, dtype=np.int64), out, python=False)

        code = run(m)
        if code != 0 and valid is None and mask is None and np.isneginf(s).any():
            m = ~np.isneginf(s)
            code = run(m)  # -inf pads (checked only on failure: no cost otherwise)
        _raise_for(code)
        if plan.user:
            with _jit.forced("python" if python else "numba"):  # (as the batch was decided)
                user.fill_matrix(plan, s, y, m, nr, level, spec, out, query_ids)
                means[:] = _jit.select(kernels.summaries, out.size)(out[None], plan.how)[0]
        plan.check(out, query_ids, means=means)
    result = dict(zip(plan.keys, means.tolist()))
    return (result, out) if per_row else result


def _matrix_inputs(scores, labels, valid, mask):
    """:func:`evaluate_matrix`'s scores (float64), labels (int64) and valid flags, checked."""
    s = _as_float_array(scores, "scores")
    if s.ndim != 2:
        raise ValueError(f"scores must be 2-d (batch, n_candidates), got shape {s.shape}")
    y = as_array(labels)
    if y.shape != s.shape:
        raise ValueError(f"labels {y.shape} and scores {s.shape} differ in shape")
    y = matrix_labels(y, "evaluate_matrix: labels")
    if mask is not None:
        warnings.warn("evaluate_matrix: mask= is deprecated; use valid= (the same meaning: "
                      "True where a candidate exists)", DeprecationWarning, stacklevel=3)
        if valid is not None:
            raise ValueError("give valid= only (mask= is its deprecated name)")
        valid = mask
    if valid is None:
        return s, y, _all_true(s.shape)
    m = _flags(as_array(valid), "valid")
    if m.shape != s.shape:
        raise ValueError(f"valid {m.shape} and scores {s.shape} differ in shape")
    return s, y, m


def _relevant_counts(n_relevant, batch, ideal_cap, whole):
    """(each row's relevant documents, how many of them beyond its candidates the longest
    ideal ranking lays out) for :func:`evaluate_matrix` (``ideal_cap``, ``whole``: see
    :func:`fastir.engine.ideal_depth`)."""
    if n_relevant is None:
        return _zeros(batch), 0
    nr = _counts(n_relevant, batch)
    extra = int(nr.max(initial=0))
    if ideal_cap >= 0:
        return nr, min(extra, ideal_cap)
    if extra > MAX_IDEAL:
        raise ValueError(f"n_relevant up to {extra} needs an ideal ranking of that many "
                         f"documents for {whole} (no cutoff); give it a cutoff, or keep "
                         f"n_relevant at most {MAX_IDEAL}")
    return nr, extra


def _raise_for(code):
    """Raise the error of a dense batch's kernel code (0: none)."""
    if code == BK.BAD_SCORE:
        raise ValueError("scores must be finite where valid is True (without valid=, -inf "
                         "marks padding; +inf and NaN are errors)")
    if code == BK.BAD_LABEL:
        raise ValueError(f"labels must be integers from 0 to {MAX_CUTOFF} (where a candidate "
                         "exists)")


def matrix_labels(labels, where):
    """Labels as int64 (no copy when they are): integers, booleans, or floats that hold
    integers (``where`` names them in errors); the kernel checks their range in its pass
    over the batch."""
    if labels.dtype.kind in "iub":
        if labels.dtype == np.uint64 and labels.size and labels.max() > MAX_CUTOFF:
            raise ValueError(f"{where} must be integers from 0 to {MAX_CUTOFF}")
        return labels.astype(np.int64, copy=False)
    if labels.dtype.kind == "f":
        labels = labels.astype(np.float64, copy=False)  # exact; float16 overflows 2**31
    return integer_labels(labels, where).astype(np.int64)


def _flags(x, name):
    """Booleans, or numbers that are all 0 or 1 (an attention mask), as bool."""
    if x.dtype == np.bool_:
        return x
    if x.dtype.kind not in "iuf" or not np.isin(x, (0, 1)).all():
        raise ValueError(f"{name} must be booleans or 0/1 (True where a candidate exists)")
    return x != 0


def _counts(n_relevant, batch):
    """``n_relevant`` as int64 counts (whole, finite, from 0 to 2**31 - 1), one per row."""
    nr = np.asarray(n_relevant)
    if nr.shape != (batch,):
        raise ValueError(f"n_relevant must have shape ({batch},), got {nr.shape}")
    if nr.dtype.kind not in "iuf":
        raise TypeError(f"n_relevant must be numbers, got dtype {nr.dtype}")
    bad = ~np.isfinite(nr) | (nr != np.round(nr)) | (nr < 0) | (nr > MAX_CUTOFF) \
        if nr.dtype.kind == "f" else (nr < 0) | (nr > MAX_CUTOFF)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"n_relevant[{i}] = {nr[i].item()!r}: counts are whole numbers from 0 "
                         f"to {MAX_CUTOFF}")
    return nr.astype(np.int64)


@functools.lru_cache(maxsize=64)
def _all_true(shape):  # (kept writable: a read-only array would compile another kernel)
    return np.ones(shape, dtype=np.bool_)


@functools.lru_cache(maxsize=64)
def _zeros(n):
    return np.zeros(n, dtype=np.int64)


_scratch = threading.local()


def _matrix_work(n_chunks, longest):
    """A dense batch's scratch (:func:`fastir.engine.work`), kept per thread and reused."""
    key = (n_chunks, longest)
    cached = getattr(_scratch, "work", None)
    if cached is None or cached[0] != key:
        _scratch.work = cached = (key, engine.work(n_chunks, longest, codes=2))
    cached[1].state[:] = -1  # nothing cached in the rows yet
    return cached[1]


__all__ = ["BoundCandidates", "Evaluator", "InputError", "evaluate_matrix"]
