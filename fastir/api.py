"""The public API: ``evaluate`` (the forms qrels and runs are accepted in are
:mod:`fastir.io.inputs`'). Importing it costs little: a call on files in a process that has
not loaded numba goes to the warm worker first (:mod:`fastir.worker.library`), and only a
call that runs here imports the evaluation (:mod:`fastir.evaluation`)."""

from fastir.worker import library

__all__ = ["Results", "evaluate"]  # noqa: F822  (Results: imported on first use)


def __getattr__(name):
    if name == "Results":
        from fastir.results import Results

        return Results
    raise AttributeError(f"module 'fastir.api' has no attribute {name!r}")


def evaluate(qrels, run, measures, *, relevance_level=1, missing="zero", max_docs=None,
             judged_only=False, num_docs=0, compat=None, ties="trec_eval",
             unjudged="nonrelevant", labels="int", samples=1000, label_seed=0, progress=False):
    """Evaluate a run against relevance judgments.

    Parameters
    ----------
    qrels : Qrels or dict or str or path, or Prefs or JudgmentGroups
        Judgments: a :class:`Qrels`, ``{query_id: {doc_id: int label}}`` (real labels with
        ``labels="float"``, probabilities with ``labels="probability"``), a qrels file, an
        open file, a DataFrame (``query_id`` or ``q_id``, ``doc_id``, ``relevance`` or
        ``score``: ir_measures' and ranx's columns), a ranx Qrels or an iterable of records
        (ir_measures' ``Qrel``, ir_datasets' ``TrecQrel``, ``(query_id, doc_id, label)``).
        Preference judgments (:func:`fastir.read_prefs`) give the preference measures
        (``prefs_simp``, ...), judgment groups (:func:`fastir.read_judgment_groups`) the
        judgment-group ones (``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``); NumQ reads any.
    run : Run or dict or str or path
        Ranked results: a :class:`Run`, ``{query_id: {doc_id: score}}``, a run file, an open
        file, a DataFrame (``query_id`` or ``q_id``, ``doc_id``, ``score``), a ranx Run or an
        iterable of records (ir_measures' ``ScoredDoc``, ``(query_id, doc_id, score)``).
        Several runs as ``{name: run}`` (ranx's shape) give a
        :class:`~fastir.results.ResultsByRun` (``{name: Results}`` with a table of means).
    measures : str or list of str
        Measure names in ir_measures (``nDCG@10``, or its measure objects), trec_eval
        (``ndcg_cut_10``, ``P.5,10``) or ranx (``ndcg@10``) syntax. Unknown names raise
        ``ValueError`` with suggestions. Keys: trec_eval names as trec_eval prints them
        (``P.5`` -> ``P_5``), others as written.
    relevance_level : int, default 1
        A document is relevant when its label is >= this (trec_eval ``-l``). Applies to every
        binary measure without its own ``rel=``; nDCG's gains are the raw labels regardless.
    missing : {"zero", "skip"}, default "zero"
        ``"zero"``: every judged query counts and one absent from the run scores 0
        (trec_eval ``-c``; a :class:`~fastir.model.errors.MissingQueriesWarning` says how
        many, once per run). ``"skip"``: only queries in both count (trec_eval's default,
        pytrec_eval's and BEIR's means). Run queries without judgments never count (listed
        in ``Results.ignored_queries``).
    max_docs : int, optional
        Evaluate only the top ``max_docs`` documents of each query (trec_eval ``-M``).
    judged_only : bool, default False
        Drop unjudged documents from the ranking first (trec_eval ``-J``).
    num_docs : int, default 0
        Number of documents in the collection (trec_eval ``-N``; ``Utility`` and
        ``Accuracy`` read it).
    compat : {None, "10.0", "9.0.8"}, default None
        ``"9.0.8"`` reproduces trec_eval 9.0.8, the version inside pytrec_eval and
        ir_measures: scores rounded to float32 before ranking (a score beyond float32's
        range, such as 1e39, becomes +inf or -inf, its ties broken by doc id), recall levels
        rounded with ``(long)(x*R + 0.9)``, and no RBP / RBPResid / Unj / DCG / IDCG measures.
    ties : {"trec_eval", "input", "expected"}, default "trec_eval"
        How documents of equal score are ordered: by doc id descending, as trec_eval
        (``"trec_eval"``); in the run's own order (``"input"``, as ranx and most
        toolkits); or every order of each tie group, the value being the mean over them
        (``"expected"``, exact, McSherry & Najork's closed forms: the measure catalogue
        lists the families that have one; the others are refused, by name).
    unjudged : "nonrelevant", "relevant" or ("relevant", label), default "nonrelevant"
        What a retrieved document absent from the qrels counts as: non-relevant
        (trec_eval), or judged at ``label`` ("relevant" alone: 1), the number of relevant
        documents and the ideal ranking recomputed with it: the optimistic value. The
        optimistic value minus the default one is a measure's residual.
    labels : {"int", "float", "probability"}, default "int"
        What a label is: a 32-bit integer, as trec_eval (``"int"``), or a finite real
        number >= 0 (``"float"``: 0.7, read from every form, the fourth column of a qrels
        file too). With real labels, relevant means label >= ``relevance_level`` (which
        may then be real, 0.5) and the gain families take the labels as gains (nDCG: g(l)
        = l, or 2^l - 1); the families that need integer labels (ERR, RBP, the C/W/L
        family, Compat, RelString, gain tables, user measures, subtopic judgments) are
        refused, naming the measure and why: the measure catalogue's *labels* column.
        Integer labels given as floats give the values of ``"int"``, bit for bit.
        ``"probability"``: each label the probability that the document is relevant (label
        1, else 0), in [0, 1] (the fourth column of a qrels file too), or in a dict a
        distribution over integer labels (``{0: 0.2, 1: 0.5, 2: 0.3}``); each value is its
        expectation over the labels drawn independently (:mod:`fastir.worlds`): exact for a
        query of at most 1,024 label assignments (10 uncertain judgments), else estimated
        from ``samples`` drawn ones, with its standard error in
        ``Results.standard_errors``. Every family of qrels takes them but RelString (a
        text) and those of subtopic judgments.
    samples, label_seed : int
        Under ``labels="probability"``: the label assignments drawn for a query that has
        more than 1,024, and the seed they are drawn with (the same values every time).
    progress : bool
        Show a progress bar on standard error while long files are read.

    Returns
    -------
    Results
        Per-query values (``values``, ``query_ids``), ``mean``, ``to_dict()``,
        ``to_pandas()``.

    Notes
    -----
    Ranking is by score descending, ties broken by document id descending in byte order,
    exactly as trec_eval (unless ``ties`` says otherwise). Values are bit-identical to
    trec_eval 10.0 for its measures.
    A query with an empty ranking scores 0 on every measure but ``NumRel``/``NumQ``.

    Called on files (``qrels`` and ``run`` paths) from the main thread of a process that
    has not loaded numba yet, the evaluation runs in the user's warm worker when one is
    running (a ``fastir`` command or ``fastir worker start`` started it), so that the
    call pays neither numba's start-up nor kernels run as Python; the results,
    exceptions and warnings are those of an evaluation here. A call starts no worker
    unless ``FASTIR_WORKER=auto`` asks it to (the worker then exits after
    ``FASTIR_WORKER_IDLE`` seconds without a request, 600); ``FASTIR_WORKER=off`` keeps
    every call in its process (the default under CI); see :mod:`fastir.worker.library`
    and the command-line guide's "Library calls".

    Examples
    --------
    >>> import fastir
    >>> qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}}
    >>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7}}
    >>> res = fastir.evaluate(qrels, run, ["P@2", "map", "ndcg_cut_3"])
    >>> {k: round(v, 4) for k, v in res.mean.items()}
    {'P@2': 0.5, 'map': 0.8333, 'ndcg_cut_3': 0.7602}
    """
    kwargs = dict(relevance_level=relevance_level, missing=missing, max_docs=max_docs,
                  judged_only=judged_only, num_docs=num_docs, compat=compat, ties=ties,
                  unjudged=unjudged, labels=labels, samples=samples, label_seed=label_seed)
    delegated = library.call("evaluate", (qrels, run, measures), {**kwargs,
                                                                  "progress": progress})
    if delegated is not None:
        return delegated
    from fastir.evaluation import evaluate_with
    from fastir.options import Options

    return evaluate_with(qrels, run, measures, Options(**kwargs), progress)
