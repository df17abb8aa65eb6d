"""What fastir says about its input: an error, or a warning that it assumed something; and
what it says of a run that ranks a doc twice (:func:`ranked_twice`)."""


class InputError(ValueError):
    """Invalid qrels or run content; the message names the source, line or query and doc."""


class FastirWarning(UserWarning):
    """fastir assumed something about the input, or evaluated something that is probably
    not what was meant (no query in common); the message says what and how to be explicit."""


class MissingQueriesWarning(FastirWarning):
    """Judged queries the run lacks were scored 0 and count in its means (``missing="zero"``,
    the default, as trec_eval -c), where pytrec_eval, BEIR and trec_eval without -c leave
    them out (``missing="skip"``). Said once per run evaluated; filter it
    (``warnings.filterwarnings("ignore", category=fastir.MissingQueriesWarning)``) to keep
    the zeros without a word."""


#: ``(source, qid, doc) -> (first line, second line) or None``: where a run file ranks a doc
#: twice. Reading files is the io layer's: :mod:`fastir.io.trec` sets it when imported (a run
#: read from a file has imported it); until then no line is named.
repeat_lines = None


def ranked_twice(run, qid, row):
    """What to say of a run that ranks the doc of its row ``row`` twice for ``qid``: the
    file and line of the second time when the run was read from a file."""
    doc = run.doc_ids[row]
    lines = None if repeat_lines is None else repeat_lines(run.source, qid, doc)
    fix = "a run ranks a doc at most once per query: remove one of them"
    if lines is None:
        return f"{run.source}: query {qid!r} ranks doc {doc!r} twice; {fix}"
    return (f"{run.source}:{lines[1]}: query {qid!r} ranks doc {doc!r} a second time (first "
            f"on line {lines[0]}); {fix}")
