"""trec_eval's measure selection (``-m``) and output format, on top of :func:`evaluate`."""

import numpy as np

from fastir.api import as_qrels, as_run, compute
from fastir.data import InputError
from fastir.join import join
from fastir.measures import _TREC, OFFICIAL, UnknownMeasureError, parse_trec

#: trec_eval 10.0's internal measure order: output follows it, not the command line.
TREC_ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
              "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
              "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg",
              "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success",
              "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
              "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj")

NICKNAMES = {"official": ("runid",) + OFFICIAL}

#: Measures with a summary only (trec_eval prints no per-query line for them).
_SUMMARY_ONLY = {"runid", "num_q", "gm_map", "gm_bpref"}


def trec_measures(args):
    """Expand ``-m`` arguments into ``[(base, param list or None)]`` in trec_eval order."""
    chosen = {}
    for arg in args:
        base, dot, params = arg.partition(".")
        if base in NICKNAMES and not dot:
            for name in NICKNAMES[base]:
                chosen.setdefault(name, None)
            continue
        if base != "runid" and base not in _TREC:
            if base in TREC_ORDER:
                raise UnknownMeasureError(f"trec_eval measure {base!r} is not implemented yet")
            raise UnknownMeasureError(f"illegal measure {arg!r} (trec_eval names such as "
                                      "'map', 'P.5,10', 'ndcg_cut' or nicknames 'official')")
        chosen[base] = params if dot else chosen.get(base)
    return sorted(chosen.items(), key=lambda item: TREC_ORDER.index(item[0]))


def format_trec_eval(qrels, run, names, *, per_query=False, complete=False, relevance_level=1,
                     max_docs=None, judged_only=False, summary=True):
    """trec_eval's output for the measures ``names`` (from :func:`trec_measures`)."""
    qrels = as_qrels(qrels)
    run = as_run(run)
    joined = join(qrels, run, max_docs=max_docs, judged_only=judged_only,
                  missing="zero" if complete else "skip")
    if not joined.query_ids:
        raise InputError("no queries with both results and relevance info")
    columns = []  # (base, trec name, measure or None)
    for base, params in names:
        if base == "runid":
            columns.append((base, "runid", None))
            continue
        text = base if params is None else f"{base}.{params}"
        for measure in parse_trec(text):
            columns.append((base, measure.trec_name(), measure))
    measures = [m for _, _, m in columns if m is not None]
    values = compute(joined, qrels, measures, relevance_level)
    from fastir.api import Results

    results = Results(joined.query_ids, [c[1] for c in columns if c[2] is not None], measures,
                      values, joined.ignored_run_queries, joined.missing_queries,
                      "zero" if complete else "skip", joined.in_run)
    means = results.summary()
    if complete and any(m.family == "NumRel" for m in measures):
        means[[m.family for m in measures].index("NumRel")] = np.count_nonzero(qrels.labels > 0)
    lines = []
    if per_query:
        for i, qid in enumerate(results.query_ids):
            j = 0
            for base, name, measure in columns:
                if measure is None:
                    continue
                if base not in _SUMMARY_ONLY:
                    lines.append(_line(name, qid, values[i, j], measure.spec.integer))
                j += 1
    if summary:
        j = 0
        for _, name, measure in columns:
            if measure is None:
                lines.append(f"{'runid':<22}\tall\t{run.name}\n")
                continue
            lines.append(_line(name, "all", means[j], measure.spec.integer))
            j += 1
    return "".join(lines)


def _line(name, qid, value, integer):
    text = f"{int(value)}" if integer else f"{value:6.4f}"
    return f"{name:<22}\t{qid}\t{text}\n"
