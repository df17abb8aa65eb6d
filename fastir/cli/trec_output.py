"""trec_eval's measure selection (``-m``), z-scores (``-Z``) and output format."""

import functools
import math
import os

import numpy as np

from fastir import _jit
from fastir.engine import Plan
from fastir.io.inputs import as_qrels, as_run
from fastir.io.trec import NoResultLines, read_qrels, source_name
from fastir.measures import kernels, trec_requests
from fastir.measures.registry import (
    FAMILIES,
    HOW,
    NICKNAMES,
    TREC_NAMES,
    UncomputableMeasureError,
    UnknownMeasureError,
    judgment_formats,
    parse_trec,
)
from fastir.model.data import Run

MISSING_ZSCORE = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE


def trec_measures(args, compat=None):
    """Expand ``-m`` arguments into ``[(base, raw parameters or None)]`` in trec_eval order
    (a measure given twice keeps its first parameters, as in trec_eval:
    :func:`fastir.measures.trec_requests.trec_eval_params`).

    A name trec_eval does not know may be one of the library's (``nDCG@10``, ``AP``,
    ``P_5``) when a trec_eval name says the same measure: it is printed under that name,
    and the cutoffs of library names add to the measure's (``-m P@5 -m P@10``: P_5 and
    P_10). An unknown name raises :class:`UnknownMeasureError` with close names."""
    def split(arg):
        base, dot, params = arg.partition(".")
        if dot and not params:  # trec_eval refuses it as it reads -m (exit status 1)
            raise UnknownMeasureError(f"illegal measure {arg!r}: nothing after the '.' (give "
                                      f"parameters, e.g. 'P.5,10', or none: {base!r})")
        return _checked(trec_requests.split_dotted(arg, _is_trec_name), compat)

    given, _ = trec_requests.read(args, has=functools.partial(_in_version, compat=compat),
                                  split=split,
                                  other=lambda arg: _checked(_library_measure(arg), compat))
    return trec_requests.trec_eval_params(given)


def _is_trec_name(base):
    return base == "runid" or base in TREC_NAMES


def _checked(said, compat):
    """``said`` (a trec_eval name and its parameters), or an error when the trec_eval
    version of ``compat`` has not the name."""
    if said[0] is not None and not _in_version(said[0], compat):
        raise UnknownMeasureError(f"measure {said[0]!r} is not in trec_eval 9.0.8")
    return said


def _library_measure(arg):
    """(trec_eval base name, cutoff text or None) of a library measure name that a trec_eval
    name says exactly, or :class:`UnknownMeasureError` (with close names when unknown)."""
    import re

    from fastir.measures.registry import known_names, parse

    try:
        measures = [m for _, m in parse(arg)]
    except UnknownMeasureError as exc:
        stem = re.split(r"[@(.]", arg.strip(), maxsplit=1)[0]
        if stem in known_names():  # a known name with bad parameters: what is wrong
            raise UnknownMeasureError(f"illegal measure {arg!r}: {exc}") from None
        raise UnknownMeasureError(f"illegal measure {arg!r}{_suggestion(arg)} (trec_eval "
                                  "names such as 'map', 'P.5,10', 'ndcg_cut', nicknames "
                                  "'official', 'all_trec', 'set', or the library's "
                                  "'nDCG@10', 'AP'; `fastir measures` lists them)") from None
    trec = measures[0].trec_name() if len(measures) == 1 and measures[0].spec.trec else None
    if trec is None or parse_trec(trec) != measures:
        raise UnknownMeasureError(f"illegal measure {arg!r}: trec_eval has no name for it, so "
                                  "it cannot be printed in trec_eval's format (`fastir eval` "
                                  "evaluates it)")
    if trec in TREC_NAMES:
        return trec, None
    base, _, cutoff = trec.rpartition("_")
    return base, cutoff


def _suggestion(arg):
    """``; did you mean ...?`` with the trec_eval names, nicknames and library names closest
    to ``arg`` (or nothing)."""
    import difflib

    from fastir.measures.registry import known_names

    names = list(dict.fromkeys([*TREC_NAMES, *NICKNAMES, *known_names()]))
    close = difflib.get_close_matches(arg, names, n=4, cutoff=0.6)
    lower = {n.lower(): n for n in names}  # (ndcg for NDCG)
    close = list(dict.fromkeys(([lower[arg.lower()]] if arg.lower() in lower else []) + close))
    return f"; did you mean {', '.join(repr(n) for n in close)}?" if close else ""


def _in_version(name, compat):
    """Whether the trec_eval version of ``compat`` has the measure ``name`` (runid: yes)."""
    return name == "runid" or \
        (compat or "10.0") in FAMILIES[TREC_NAMES[name][0]].versions


class TrecEvalStop(Exception):
    """trec_eval stops before its summary: ``status`` is its exit status, ``output`` what it
    printed until then, the message what stopped it."""

    def __init__(self, status, message, output=""):
        super().__init__(message)
        self.status = status
        self.output = output


def format_trec_eval(qrels, run, names, options, *, per_query=False, complete=False,
                     summary=True, zscores=None, notes=None):
    """trec_eval's output for the measures ``names`` (from :func:`trec_measures`) on qrels
    (``-R qrels``; the other formats: :mod:`fastir.cli.trec_prefs`) under ``options``
    (:class:`~fastir.options.Options` of -l, -M, -J, -N and --compat: every judged query
    is joined, ``missing="zero"``, to find where trec_eval stops; ``complete`` (-c) says
    which count).

    Queries are evaluated in trec_eval's order: 10.0 goes through the judged queries (one
    absent from the run stops it, exit status 4, unless ``complete``: then it scores 0);
    9.0.8 through the run's judged queries (none: exit status 7). A query that ranks a doc
    twice or judges one twice stops either (exit status 4) when a measure needs rankings.
    A stop raises :class:`TrecEvalStop` with what trec_eval printed before it; so does a
    measure trec_eval cannot compute (another -R format's, ``utility.2,-1``: exit status 4 at
    the first query evaluated). A run file of blank or comment lines only is read as a run
    without results, as trec_eval reads it (an empty file is an error).
    ``notes`` (a list) receives what trec_eval leaves out silently: judged topics absent
    from the run (9.0.8 without ``complete``) and run topics without judgments.
    """
    columns, cannot = trec_columns(names, "qrels")
    measures = [m for _, _, m in columns if m is not None]
    plan = printed_plan(measures, options, "qrels")
    if isinstance(qrels, (str, os.PathLike)):
        qrels = read_qrels(qrels, allow_duplicates=True)  # trec_eval stops at the query
    qrels = as_qrels(qrels)
    run, blank = read_trec_run(run, options.compat)
    old = options.compat == "9.0.8"

    def start(joined, qrels, run):  # (trec_eval's stops before its first query, first)
        check_start(evaluated_queries(joined.in_run, old, complete), old, cannot, blank)

    results, joined = plan.evaluate(qrels, run, options, check=start, duplicates="mark")
    evaluated = evaluated_queries(joined.in_run, old, complete)
    stop, why = _stop(joined, qrels, measures, old, complete, run)
    add_notes(notes, columns, blank, old and not complete, joined.missing_queries,
              joined.ignored_run_queries)
    texts = {j: results.strings[key] for j, key in enumerate(results.measures)
             if key in results.strings}
    # trec_eval -c: the summary counts every judgment with label > 0, whatever -l says
    all_rel = np.count_nonzero(qrels.labels > 0) if complete else None
    return trec_lines(columns, results, evaluated, (stop, blank + why), run.name,
                      per_query=per_query, summary=summary, zscores=zscores, old=old,
                      complete=complete, texts=texts, all_rel=all_rel)


def printed_plan(measures, options, judgments):
    """The plan of the measures trec_eval prints; of ``num_q`` when none but runid is
    asked for (trec_eval goes through the queries and prints runid alone: no measure's
    line is printed, as :func:`trec_lines` prints the columns')."""
    return Plan(measures or ["num_q"], options, judgments=judgments)


def trec_columns(names, rel_format):
    """(columns, why trec_eval stops at the first query or None) of ``names``: a column is
    (base name, trec name, measure or None for runid) for every measure computable on
    ``rel_format`` judgments."""
    columns = []
    cannot = None
    for base, params in names:
        if base == "runid":
            columns.append((base, "runid", None))
            continue
        try:
            for measure in _trec_column(base, params, rel_format):
                columns.append((base, measure.trec_name(), measure))
        except UncomputableMeasureError as exc:
            cannot = cannot or f"{exc}: trec_eval stops at the first query"
    return columns, cannot


def read_trec_run(run, compat):
    """(the run, and a prefix for messages when it holds blank lines only: trec_eval reads
    it as a run without results)."""
    try:
        return as_run(run, compat), ""
    except NoResultLines as exc:
        return Run.from_dict({}, name="", source=source_name(run)), f"{exc}: "


def evaluated_queries(in_run, old, complete):
    """Which judged queries trec_eval evaluates: 10.0 every one with -c, else (and 9.0.8
    always) those in the run."""
    return in_run.copy() if old or not complete else np.ones(len(in_run), dtype=bool)


def check_start(evaluated, old, cannot, blank):
    """Stop as trec_eval stops before its first query: 9.0.8 with no query in common (exit
    status 7), a measure it cannot compute (4)."""
    if old and not evaluated.any():
        raise TrecEvalStop(7, f"{blank}no queries with both results and relevance info")
    if cannot is not None:
        raise TrecEvalStop(4, blank + cannot)


def add_notes(notes, columns, blank, skipped, missing_queries, ignored_run_queries):
    """Into ``notes`` (unless None), what trec_eval leaves out silently."""
    if notes is None:
        return
    if blank and any(m is None for _, _, m in columns):
        notes.append(f"{blank}runid is empty (trec_eval 10.0 prints uninitialised memory)")
    if skipped and missing_queries:
        notes.append(f"{len(missing_queries)} judged topic(s) absent from the run are not "
                     f"averaged (-c counts them as 0): {listing(missing_queries)}")
    if ignored_run_queries:
        notes.append(f"{len(ignored_run_queries)} run topic(s) without judgments are "
                     f"ignored: {listing(ignored_run_queries)}")


def trec_lines(columns, results, evaluated, stop, run_name, *, per_query, summary, zscores,
               old, complete, texts=None, all_rel=None):
    """trec_eval's output of ``results`` (rows: the judged queries, ``evaluated`` those it
    evaluates): per-query lines, then (unless ``stop``, (index, why), says where trec_eval
    stops: :class:`TrecEvalStop`) the summary. ``all_rel``: NumRel's summary under -c."""
    texts = texts or {}
    values = _zscores(results, zscores) if zscores is not None else results.values
    prefix = "Z" if zscores is not None else ""
    lines = []
    if per_query:
        for i, qid in enumerate(results.query_ids[:stop[0]]):
            if evaluated[i]:
                lines += _query_lines(columns, qid, values[i], texts, i, prefix)
    if stop[0] is not None:
        raise TrecEvalStop(4, stop[1], "".join(lines))
    # 9.0.8 -c divides by every judged query, evaluated or not
    divisor = len(evaluated) if old and complete else int(evaluated.sum())
    means = _summaries(results.parsed, values[evaluated], divisor, zscores is not None)
    families = [m.family for m in results.parsed]
    if all_rel is not None and "NumRel" in families:
        means[families.index("NumRel")] = all_rel
    if summary:
        j = 0
        for _, name, measure in columns:
            if measure is None:
                lines.append(f"{'runid':<22}\tall\t{run_name}\n")
                continue
            if j not in texts:
                integer = measure.spec.integer and zscores is None
                lines.append(prefix + _line(name, "all", means[j], integer))
            j += 1
    return "".join(lines)


def _query_lines(columns, qid, values, texts, i, prefix):
    """A query's lines: every measure trec_eval prints per query."""
    lines = []
    j = 0
    for base, name, measure in columns:
        if measure is None:
            continue
        if j in texts:
            lines.append(f"{name:<22}\t{qid}\t'{texts[j][i]}'\n")
        elif TREC_NAMES[base][1].per_query:
            integer = measure.spec.integer and not prefix
            lines.append(prefix + _line(name, qid, values[j], integer))
        j += 1
    return lines


def _trec_column(base, params, rel_format):
    """The measures of a trec_eval name and its parameters (text or None). A measure of
    another -R format raises :class:`UncomputableMeasureError` once its parameters pass
    trec_eval's set-up checks (a cutoff list is read; a single measure's parameters are
    ignored, as trec_eval ignores them)."""
    family = FAMILIES[TREC_NAMES[base][0]]
    if rel_format in judgment_formats(family):
        return parse_trec(base if params is None else f"{base}.{params}")
    if params is not None and TREC_NAMES[base][1].style == "cut":
        parse_trec(f"{base}.{params}")
    formats = " or ".join(judgment_formats(family))
    raise UncomputableMeasureError(f"{base} needs -R {formats} judgments, not -R {rel_format}")


def _stop(joined, qrels, measures, old, complete, run):
    """(index, reason) of the first evaluated query at which trec_eval stops, or (None, "")."""
    qids = joined.query_ids
    ranked = any(m.family != "NumQ" for m in measures)  # (runid and num_q need no ranking)
    twice = qrels.queries_judging_twice()[joined.qrels_query] if ranked else None
    for i in range(len(joined.in_run)):
        if not joined.in_run[i] and not complete:
            if old:
                continue  # 9.0.8 goes through the run's queries only
            return i, absent(qids[i])
        if ranked and joined.duplicate[i] >= 0:
            from fastir.model.errors import ranked_twice

            said = ranked_twice(run, qids[i], int(joined.duplicate[i])).split("; ")[0]
            return i, f"{said}: trec_eval stops at such a query"
        if ranked and twice[i] and (joined.in_run[i] or complete):
            return i, (f"query {qids[i]!r} judges a doc twice: trec_eval stops at such a "
                       "query")
    return None, ""


def absent(qid):
    """Why trec_eval 10.0 stops at a judged query absent from the run (without -c)."""
    return (f"judged query {qid!r} is absent from the run: trec_eval 10.0 stops here (-c "
            "scores such queries 0, --compat 9.0.8 skips them)")


def _summaries(parsed, values, divisor, zscores):
    """trec_eval's 'all' values of the evaluated queries' ``values``: sums in query order,
    divided by ``divisor`` (9.0.8 -c: every judged query; geometric means then count each
    missing query as the floor 1e-5, in one step, as 9.0.8 does). Z-scores of geometric
    measures are already logs: their mean is exponentiated."""
    sums = np.array([HOW["sum"]] * values.shape[1], dtype=np.int64)
    totals = _jit.select(kernels.summaries, values.size)(values[None], sums)[0]
    means = np.zeros(values.shape[1])
    for j, m in enumerate(parsed):
        if m.family == "NumQ":
            means[j] = divisor
        elif m.spec.aggregate == "sum":
            means[j] = totals[j]
        elif divisor == 0:
            continue
        elif m.spec.aggregate == "gmean":
            total = totals[j] if zscores else 0.0
            for v in [] if zscores else values[:, j].tolist():
                total += math.log(max(v, kernels.MIN_GEO_MEAN))
            total += (divisor - len(values)) * math.log(kernels.MIN_GEO_MEAN)
            means[j] = math.exp(total / divisor)
        else:
            means[j] = totals[j] / divisor
    return means


def _zscores(results, table):
    """Per-query z-scores of trec_eval's stored values (geometric measures: of their logs)
    against the (mean, stddev) of ``table``; trec_eval's marker where it has none."""
    values = results.values.copy()
    qids = [str(q) for q in results.query_ids]
    names = [m.trec_name() for m in results.parsed]
    for j, m in enumerate(results.parsed):
        gm = m.spec.aggregate == "gmean"
        for i, qid in enumerate(qids):
            v = math.log(max(values[i, j], kernels.MIN_GEO_MEAN)) if gm else values[i, j]
            found = table.get((qid, names[j]))
            if found is None:
                values[i, j] = MISSING_ZSCORE
            elif found[1]:
                values[i, j] = (v - found[0]) / found[1]
            else:
                values[i, j] = 0.0 if v == found[0] else MISSING_ZSCORE
    return values


def listing(ids, most=10):
    """Query ids as a comma-separated list, the first ``most`` of them."""
    shown = ", ".join(str(q) for q in ids[:most])
    return shown + (f", ... ({len(ids) - most} more)" if len(ids) > most else "")


def _line(name, qid, value, integer):
    text = f"{int(value)}" if integer else f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{text}\n"
