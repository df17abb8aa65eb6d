"""``fastir trec_eval -R prefs | qrels_prefs | qrels_jg``: trec_eval's output on preference
judgments and judgment groups (evaluated by :mod:`fastir.preferences`, printed as
:mod:`fastir.cli.trec_output` prints the qrels' measures)."""


from fastir import preferences
from fastir.cli.trec_output import (
    absent,
    add_notes,
    check_start,
    evaluated_queries,
    printed_plan,
    read_trec_run,
    trec_columns,
    trec_lines,
)
from fastir.engine import needs
from fastir.io.prefs import read_judgment_groups, read_prefs
from fastir.measures import prefs as PK

#: The -R formats read here, and the judgments they give.
FORMATS = {"prefs": "prefs", "qrels_prefs": "prefs", "qrels_jg": "groups"}


def format_judgments(path, run, names, options, *, rel_format, per_query=False,
                     complete=False, summary=True, zscores=None, notes=None):
    """trec_eval's output for the measures ``names`` on the ``rel_format`` judgments of
    ``path`` under ``options`` (see :func:`fastir.cli.trec_output.format_trec_eval`: the
    same options, queries, stops and exit statuses). trec_eval ignores -J and -l for the
    preference measures, and -N for all of these."""
    columns, cannot = trec_columns(names, rel_format)
    measures = [m for _, _, m in columns if m is not None]
    kind = FORMATS[rel_format]
    plan = printed_plan(measures, options, kind)
    if kind == "prefs":
        judgments = read_prefs(path, format=rel_format)
    else:
        judgments = read_judgment_groups(path)
    run, blank = read_trec_run(run, options.compat)
    done = preferences.evaluated(plan, judgments, run, options)
    old = options.compat == "9.0.8"
    evaluated = evaluated_queries(done.in_run, old, complete)
    stop = _stop(done, evaluated, measures, old, complete, run)
    check_start(evaluated, old, cannot, blank)
    add_notes(notes, columns, blank, old and not complete, done.missing_queries,
              done.ignored_run_queries)
    _note_undefined(notes, done, evaluated, measures)
    results = plan.results(done, done.values, options.missing)
    return trec_lines(columns, results, evaluated, (stop[0], blank + stop[1]), run.name,
                      per_query=per_query, summary=summary, zscores=zscores, old=old,
                      complete=complete)


def _stop(done, evaluated, measures, old, complete, run):
    """(index, reason) of the first query at which trec_eval stops, or (None, "")."""
    ranked = any(needs(m) is not None for m in measures)  # (num_q needs no ranking)
    for i in range(len(done.in_run)):
        qid = done.query_ids[i]
        if not done.in_run[i] and not complete and not old:
            return i, absent(qid)
        if not evaluated[i] or not ranked:
            continue
        if done.duplicate[i] >= 0:
            from fastir.model.errors import ranked_twice

            said = ranked_twice(run, qid, int(done.duplicate[i])).split("; ")[0]
            return i, f"{said}: trec_eval stops at such a query"
        if done.errors[i]:
            aborts = "aborts" if done.errors[i] == PK.ERROR_CYCLE else "stops"
            return i, f"{done.reasons[i]}: trec_eval {aborts} here"
    return None, ""


def _note_undefined(notes, done, evaluated, measures):
    """A note where prefs_avgjg_Rnonrel reads past trec_eval's arrays (negative levels)."""
    kinds = {m.spec.kind for m in measures if m.spec.path == "prefs"}
    if notes is None or not kinds & {PK.AVGJG_RNONREL, PK.AVGJG_RNONREL_RET}:
        return
    where = [str(q) for q, bad in zip(done.query_ids, done.undefined & evaluated) if bad]
    if where:
        notes.append(f"prefs_avgjg_Rnonrel recounts more non-relevant documents than the "
                     f"lowest level holds (negative levels) in {', '.join(where[:10])}: "
                     "trec_eval reads past its arrays there; fastir counts those it has")
