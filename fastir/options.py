"""The evaluation options (:class:`Options`): what :func:`fastir.evaluate` and every other
entry point take besides the judgments, the run and the measures, checked once, where the
value is made (each public entry point makes it from its keywords) and then passed whole
down to the join and the plan. A new option is a field here and its check."""

import dataclasses
import math
import numbers

import numpy as np

#: The largest evaluation-wide relevance level (trec_eval's -l is a long).
MAX_LEVEL = 2**63 - 1
MISSING = ("zero", "skip")
COMPATS = (None, "10.0", "9.0.8")
#: How documents of equal score are ordered: trec_eval's order (doc id descending), the
#: run's own order (as ranx and most toolkits), or the expected value over every order of
#: each group of tied documents (:mod:`fastir.measures.ties`).
TIES = ("trec_eval", "input", "expected")
#: What a label may be: a 32-bit integer ("int", trec_eval's), a finite real >= 0
#: ("float": stored as codes, see :func:`fastir.model.values.real_labels`), or a
#: probability of relevance in [0, 1], or a distribution over integer labels
#: ("probability": :mod:`fastir.worlds`).
LABELS = ("int", "float", "probability")
#: The label assignments of a query evaluated one by one under labels="probability"
#: (10 uncertain binary judgments); a query with more is sampled (``samples``).
EXACT_WORLDS = 1024
UNJUDGED_HELP = ("unjudged must be 'nonrelevant', 'relevant' or ('relevant', label) with a "
                 "label from 0 to 2**31 - 1")


def checked_labels(value):
    """``value`` if it is one of :data:`LABELS`, else a ValueError naming ``labels``."""
    if not isinstance(value, str) or value not in LABELS:
        raise ValueError(f"labels must be 'int', 'float' or 'probability', got {value!r}")
    return value


def checked_count(name, value, low):
    """``value`` as an integer >= ``low`` (``samples``, ``label_seed``), or a ValueError naming
    ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def checked_unjudged(value):
    """``value`` as the label every unjudged retrieved document gets: None ("nonrelevant",
    trec_eval's), 1 ("relevant") or the label of ``("relevant", label)``; else a
    ValueError naming ``unjudged``."""
    if isinstance(value, str):
        if value in ("nonrelevant", "relevant"):
            return None if value == "nonrelevant" else 1
    elif isinstance(value, (tuple, list)) and len(value) == 2 and value[0] == "relevant":
        label = value[1]
        if isinstance(label, float) and label.is_integer():
            label = int(label)
        if not isinstance(label, bool) and isinstance(label, numbers.Integral) and \
                0 <= label <= 2**31 - 1:
            return int(label)
    raise ValueError(f"{UNJUDGED_HELP}, got {value!r}")


def checked_real_level(value):
    """``value`` as the relevance level of real labels (``labels="float"``): a finite real
    number >= 0 (an integer one kept as an ``int``), or a ValueError naming
    ``relevance_level``."""
    if not isinstance(value, bool) and isinstance(value, numbers.Real) and \
            math.isfinite(value) and value >= 0:
        return checked_level(value) if float(value).is_integer() and value <= MAX_LEVEL \
            else float(value)
    raise ValueError(f"relevance_level must be a finite number >= 0 (labels='float'), got "
                     f"{value!r}")


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
    ``int`` (a float holding one reads as it; with ``labels="float"``, any finite real
    >= 0); the others as given.

    ``labels``: "int" (trec_eval's 32-bit integer labels) or "float" (finite real labels
    >= 0: :attr:`fastir.Qrels.label_values`; the measures that compare them with a level
    or take them as gains accept them, the others are refused by name: the registry's
    ``Family.reals``), or "probability" (each label a probability of relevance, or a
    distribution over integer labels: :attr:`fastir.Qrels.label_probs`; each value the
    expectation over the labels, :mod:`fastir.worlds`). ``samples`` and ``label_seed``: under
    "probability", the label assignments drawn for a query that has more than
    :data:`EXACT_WORLDS`, and the seed they are drawn with.

    ``ties`` is one of :data:`TIES`; ``unjudged`` is kept as "nonrelevant" or
    ``("relevant", label)`` ("relevant" alone: label 1), its label in
    :attr:`unjudged_label`.

    ``num_docs`` is checked by the measures that read it (:class:`fastir.engine.Plan`:
    trec_eval takes any size, a negative one too), ``compat``'s measures by the plan.
    """

    relevance_level: int = 1
    missing: str = "zero"
    max_docs: int | None = None
    judged_only: bool = False
    num_docs: int = 0
    compat: str | None = None
    ties: str = "trec_eval"
    unjudged: object = "nonrelevant"
    labels: str = "int"
    samples: int = 1000
    label_seed: int = 0

    def __post_init__(self):
        real = checked_labels(self.labels) == "float"
        object.__setattr__(self, "relevance_level", (checked_real_level if real else
                                                     checked_level)(self.relevance_level))
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
        if not isinstance(self.ties, str) or self.ties not in TIES:
            raise ValueError(f"ties must be 'trec_eval', 'input' or 'expected', got "
                             f"{self.ties!r}")
        label = checked_unjudged(self.unjudged)
        object.__setattr__(self, "unjudged", "nonrelevant" if label is None else
                           ("relevant", label))
        if self.labels != "int" and label is not None:
            raise ValueError(f"unjudged={self.unjudged!r} takes integer labels only "
                             f"(labels={self.labels!r}): give unjudged='nonrelevant'")
        object.__setattr__(self, "samples", checked_count("samples", self.samples, 2))
        object.__setattr__(self, "label_seed", checked_count("label_seed", self.label_seed,
                                                             0))
        if self.ties == "expected" and max_docs is not None:
            raise ValueError("ties='expected' does not combine with max_docs: which tied "
                             "documents max_docs keeps depends on their order; give a measure "
                             "cutoff instead (nDCG@10, P@100)")

    @property
    def unjudged_label(self):
        """The label every unjudged retrieved document gets (None: none, they stay
        unjudged and count as non-relevant, trec_eval's way)."""
        return None if self.unjudged == "nonrelevant" else self.unjudged[1]

    def replace(self, **changes):
        """These options with ``changes`` (checked as made)."""
        return dataclasses.replace(self, **changes)


DEFAULT = Options()
