"""What fastir says about its input: an error, or a warning that it assumed something."""


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
