"""The evaluation options (:class:`Options`): what :func:`fastir.evaluate` and every other
entry point take besides the judgments, the run and the measures, checked once, where the
value is made (each public entry point makes it from its keywords) and then passed whole
down to the join and the plan. A new option is a field here and its check."""

import dataclasses
import numbers

import numpy as np

#: The largest evaluation-wide relevance level (trec_eval's -l is a long).
MAX_LEVEL = 2**63 - 1
MISSING = ("zero", "skip")
COMPATS = (None, "10.0", "9.0.8")


def checked_level(value):
    """``value`` as a relevance level (an integer from 0 to 2**63 - 1, a float that holds
    one accepted; above the largest label, 2**31 - 1, no document is relevant), or a
    ValueError naming ``relevance_level``."""
    if type(value) is int and 0 <= value <= MAX_LEVEL:
        return value
    level = value
    if isinstance(level, float) and level.is_integer():
        level = int(level)
    if isinstance(level, bool) or not isinstance(level, numbers.Integral) or not \
            0 <= level <= MAX_LEVEL:
        raise ValueError(f"relevance_level must be an integer from 0 to 2**63 - 1, got "
                         f"{value!r}")
    return int(level)


@dataclasses.dataclass(frozen=True)
class Options:
    """The options of one evaluation (as for :func:`fastir.evaluate`), checked as made: a
    bad value raises a ValueError naming the option. ``relevance_level`` is kept as an
    ``int`` (a float holding one reads as it); the others as given.

    ``num_docs`` is checked by the measures that read it (:class:`fastir.engine.Plan`:
    trec_eval takes any size, a negative one too), ``compat``'s measures by the plan.
    """

    relevance_level: int = 1
    missing: str = "zero"
    max_docs: int | None = None
    judged_only: bool = False
    num_docs: int = 0
    compat: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "relevance_level", checked_level(self.relevance_level))
        if self.compat not in COMPATS:
            raise ValueError(f"compat must be None, '10.0' or '9.0.8', got {self.compat!r}")
        if self.missing not in MISSING:
            raise ValueError(f"missing must be 'zero' or 'skip', got {self.missing!r}")
        max_docs = self.max_docs
        if max_docs is not None and (isinstance(max_docs, bool) or not isinstance(
                max_docs, numbers.Real) or not max_docs >= 0 or int(max_docs) != max_docs):
            raise ValueError(f"max_docs must be a non-negative integer, got {max_docs!r}")
        if not isinstance(self.judged_only, (bool, np.bool_)):
            raise ValueError(f"judged_only must be True or False, got {self.judged_only!r}")

    def replace(self, **changes):
        """These options with ``changes`` (checked as made)."""
        return dataclasses.replace(self, **changes)


DEFAULT = Options()
