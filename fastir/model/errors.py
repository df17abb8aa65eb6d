"""What fastir says about its input: an error, or a warning that it assumed something."""


class InputError(ValueError):
    """Invalid qrels or run content; the message names the source, line or query and doc."""


class FastirWarning(UserWarning):
    """fastir assumed something about the input, or evaluated something that is probably
    not what was meant (no query in common); the message says what and how to be explicit."""
