"""trec_eval's measure selection (``-m``), z-scores (``-Z``) and output format."""

import math

import numpy as np

from fastir.api import Results, as_qrels, as_run, check_options, compute, relstrings
from fastir.data import InputError
from fastir.join import join
from fastir.measures import _TREC, NICKNAMES, UnknownMeasureError, parse_trec

#: trec_eval 10.0's internal measure order: output follows it, not the command line.
TREC_ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
              "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
              "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg",
              "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
              "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
              "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj")

_NOT_IN_9 = {"rbp", "rbp_resid", "unj"}

#: Measures with a summary only (trec_eval prints no per-query line for them).
_SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}

MISSING_ZSCORE = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE


def trec_measures(args, compat=None):
    """Expand ``-m`` arguments into ``[(base, raw parameters or None)]`` in trec_eval order."""
    chosen = {}
    for arg in args:
        base, dot, params = arg.partition(".")
        if base in NICKNAMES and not dot:
            for name in NICKNAMES[base]:
                if not (compat == "9.0.8" and name in _NOT_IN_9):
                    chosen.setdefault(name, None)
            continue
        if base != "runid" and base not in _TREC:
            raise UnknownMeasureError(f"illegal measure {arg!r} (trec_eval names such as "
                                      "'map', 'P.5,10', 'ndcg_cut' or nicknames 'official', "
                                      "'all_trec', 'set')")
        if compat == "9.0.8" and base in _NOT_IN_9:
            raise UnknownMeasureError(f"measure {base!r} is not in trec_eval 9.0.8")
        chosen[base] = params if dot else chosen.get(base)
    return sorted(chosen.items(), key=lambda item: TREC_ORDER.index(item[0]))


def read_zscores(path):
    """``{(qid, measure): (mean, stddev)}`` from a trec_eval ``-Z`` file."""
    table = {}
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0].startswith(b"#"):
                continue
            if len(fields) != 4:
                raise InputError(f"{path}:{number}: malformed line: expected 4 fields "
                                 "(qid measure mean stddev)")
            try:
                table[fields[0].decode(), fields[1].decode()] = (float(fields[2]),
                                                                  float(fields[3]))
            except ValueError:
                raise InputError(f"{path}:{number}: mean and stddev must be numbers") from None
    return table


def format_trec_eval(qrels, run, names, *, per_query=False, complete=False, relevance_level=1,
                     max_docs=None, judged_only=False, summary=True, num_docs=0, zscores=None,
                     compat=None, notes=None):
    """trec_eval's output for the measures ``names`` (from :func:`trec_measures`).

    ``notes`` (a list) receives what trec_eval leaves out silently: judged topics absent
    from the run (without ``complete``) and run topics without judgments.
    """
    columns = []  # (base, trec name, measure or None for runid)
    for base, params in names:
        if base == "runid":
            columns.append((base, "runid", None))
            continue
        for measure in parse_trec(base if params is None else f"{base}.{params}"):
            columns.append((base, measure.trec_name(), measure))
    measures = [m for _, _, m in columns if m is not None]
    check_options(measures, relevance_level, compat)
    qrels = as_qrels(qrels)
    run = as_run(run, compat)
    joined = join(qrels, run, max_docs=max_docs, judged_only=judged_only,
                  missing="zero" if complete else "skip")
    if not joined.in_run.any():
        raise InputError("no queries with both results and relevance info")
    if notes is not None:
        if joined.missing_queries and not complete:
            notes.append(f"{len(joined.missing_queries)} judged topic(s) absent from the run "
                         f"are not averaged (-c counts them as 0): "
                         f"{_listing(joined.missing_queries)}")
        if joined.ignored_run_queries:
            notes.append(f"{len(joined.ignored_run_queries)} run topic(s) without judgments "
                         f"are ignored: {_listing(joined.ignored_run_queries)}")
    values = compute(joined, qrels, measures, relevance_level, num_docs=num_docs,
                     compat=compat)
    names_ = [name for _, name, m in columns if m is not None]
    results = Results(joined.query_ids, names_, measures, values, joined.ignored_run_queries,
                      joined.missing_queries, "zero" if complete else "skip", joined.in_run)
    shown = np.ones(results.n_queries, dtype=bool)
    if compat == "9.0.8":  # 9.0.8 evaluates (and prints) only the queries in the run
        shown = joined.in_run
    if zscores is not None:
        values, means = _zscores(results, zscores, shown)
    else:
        means = _summaries(results, shown)
    if complete and "NumRel" in [m.family for m in measures] and zscores is None:
        # trec_eval -c: the summary counts every judgment with label > 0, whatever -l says
        means[[m.family for m in measures].index("NumRel")] = np.count_nonzero(qrels.labels > 0)
    texts = {j: relstrings(joined, 10 if m.cutoff is None else m.cutoff)
             for j, m in enumerate(measures) if m.family == "RelString"}
    prefix = "Z" if zscores is not None else ""
    lines = []
    if per_query:
        for i, qid in enumerate(results.query_ids):
            if not shown[i]:
                continue
            j = 0
            for base, name, measure in columns:
                if measure is None:
                    continue
                if j in texts:
                    lines.append(f"{name:<22}\t{qid}\t'{texts[j][i]}'\n")
                elif base not in _SUMMARY_ONLY:
                    integer = measure.spec.integer and zscores is None
                    lines.append(prefix + _line(name, qid, values[i, j], integer))
                j += 1
    if summary:
        j = 0
        for _, name, measure in columns:
            if measure is None:
                lines.append(f"{'runid':<22}\tall\t{run.name}\n")
                continue
            if j not in texts:
                integer = measure.spec.integer and zscores is None
                lines.append(prefix + _line(name, "all", means[j], integer))
            j += 1
    return "".join(lines)


def _summaries(results, shown):
    """trec_eval's 'all' values: over the shown queries, divided by every counted query."""
    n = results.n_queries
    means = results.summary()
    for j, m in enumerate(results.parsed):
        if m.spec.aggregate == "gmean" and not shown.all():
            # 9.0.8 -c: logs of the evaluated queries, then the missing ones in one step
            total = 0.0
            for v in results.values[shown, j].tolist():
                total += math.log(max(v, 1e-5))
            total += (n - int(shown.sum())) * math.log(1e-5)
            means[j] = math.exp(total / n)
    return means


def _zscores(results, table, shown):
    """Per-query z-scores of trec_eval's stored values, and their summaries."""
    values = results.values.copy()
    qids = [str(q) for q in results.query_ids]
    names = results.measures
    for j, m in enumerate(results.parsed):
        gm = m.spec.aggregate == "gmean"
        for i, qid in enumerate(qids):
            v = math.log(max(values[i, j], 1e-5)) if gm else values[i, j]
            found = table.get((qid, names[j]))
            if found is None:
                values[i, j] = MISSING_ZSCORE
            elif found[1]:
                values[i, j] = (v - found[0]) / found[1]
            else:
                values[i, j] = 0.0 if v == found[0] else MISSING_ZSCORE
    n = int(shown.sum())
    means = np.zeros(len(names))
    for j, m in enumerate(results.parsed):
        total = 0.0
        for v in values[shown, j].tolist():
            total += v
        if m.family == "NumQ":
            means[j] = n
        elif m.spec.aggregate == "sum":
            means[j] = total
        elif m.spec.aggregate == "gmean":
            means[j] = math.exp(total / n)
        else:
            means[j] = total / n
    return values, means


def _listing(ids, most=10):
    shown = ", ".join(str(q) for q in ids[:most])
    return shown + (f", ... ({len(ids) - most} more)" if len(ids) > most else "")


def _line(name, qid, value, integer):
    text = f"{int(value)}" if integer else f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{text}\n"
