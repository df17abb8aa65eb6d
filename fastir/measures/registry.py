"""The measure registry, the one place a measure is described, and measure names.

A :class:`Family` declares, as data: its parameters (:class:`Param`: name, type, default,
allowed range), its cutoff, the kernel case that computes it (``kind``) and the cumulative
rows it reads (``path``), its aggregation, whether it needs unjudged documents, its value on
an empty ranking, and its trec_eval names (with their print order and the trec_eval versions
that have them). Everything else is derived from ``FAMILIES``: the prefix depth the kernel
builds, what ``evaluate_matrix`` can compute, trec_eval's print order and measure sets.

A :class:`Measure` is a family with its cutoff and parameters; its canonical string
(ir_measures syntax: ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``) is its identity.
Names are accepted in three dialects:

- ir_measures: ``AP``, ``AP@100``, ``P(rel=2)@5``, ``RR@10``, ``R@1000``, ``nDCG@10``,
  ``Success@5``, ``IPrec@0.1``, ``Rprec``, ``Bpref``, ``infAP``, ``RBP(p=0.8)``, ``NumRet`` ...
- trec_eval: ``map``, ``P_5``, ``P.5,10``, ``ndcg_cut_10``, ``ndcg_cut.10,20``, ``recip_rank``,
  ``recall_1000``, ``iprec_at_recall_0.10``, ``ndcg.1=3,2=9``, ``utility.2,-1,0,0`` ... (a bare
  ``P`` or ``ndcg_cut`` means trec_eval's default cutoffs; ``official``, ``all_trec`` and
  ``set`` are its measure sets).
- ranx: ``ndcg@10``, ``ndcg_burges@10``, ``precision@5``, ``recall@100``, ``mrr@10``,
  ``map@100``, ``hit_rate@5``, ``r-precision``, ``bpref``, with ``-l2`` for relevance level 2.

Adding a measure touches three places (AP_IA was added so: ``git log -S 'AP_IA = '``):

1. Here: its case number, one more constant in the block of its helper module under "kernel
   cases" below, and one :class:`Family` in ``FAMILIES`` (``path``: which kernel computes it;
   ``formula``: its value on a query; ``examples``: the names the tests evaluate).
2. Its case in the helper module of its family, which the path's switch calls:
   ``fastir/measures/precision.py`` (paths "ranks" and "set"), ``dcg.py`` ("gains", and its
   loops beside the ideal gains), ``own.py``, ``err.py``, ``cwl.py`` ("own": a family module
   the "own" switch, ``fastir/measures/kernels.py``, does not call yet needs a line there),
   ``diversity.py`` ("subtopics") or ``prefs.py`` ("prefs").
3. Its naive reference: one function in the family's module of ``tests/naive/``, named in
   ``REFERENCES`` (``tests/naive/table.py``; the diversity and C/W/L families by their
   module's tuple of names).

The tests then check it against the reference on drawn inputs and requests, on both
engines; a peer that has it gets a test against that peer too.
"""

import math
import re

import numpy as np

from fastir.measures import common
from fastir.measures import prefs as PK

#: The largest rank cutoff, relevance level or gain label (labels are 32-bit integers).
MAX_CUTOFF = 2**31 - 1

#: trec_eval's default parameters of its cutoff measures.
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
TREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

GAINS = {"log2": common.GAIN_LINEAR, "exp-log2": common.GAIN_EXP}

#: The notation of the families' formulas (:attr:`Family.formula`).
FORMULA_NOTATION = (
    "A query's ranking d_1 .. d_n is the run's documents by score descending (ties: docno "
    "descending), cut at max_docs, without the unjudged ones under judged_only. l_i is the "
    "label of d_i; rel the relevance level: the measure's rel= if given, else the "
    "evaluation's (1 for the measures whose gains are the labels: nDCG, DCG, G, RBP, ERR...); "
    "rel_i = 1 when d_i is judged with l_i >= rel, else 0; R: the judged documents "
    "with a label >= rel; N: those with 0 <= label < rel; r(k) = rel_1 + ... + rel_k, the "
    "relevant documents in the top k (ranks beyond n count 0); P@i = r(i) / i. k is the "
    "cutoff (n when it may be left out and is). The gain g(l) of a label is l when l >= rel "
    "and l >= 1, else 0 (dcg='exp-log2': 2^l - 1; gains='1=3,2=9': the table's gain, other "
    "labels their own). log2 is the base-2 logarithm: rank i is discounted by log2(i + 1). "
    "A division by 0 gives 0 unless said otherwise.")


#: How a family takes real-valued labels (``labels="float"``, :attr:`Family.reals`): it
#: compares them with the relevance level, or asks only whether a document is judged
#: ("compared"); its gains are the labels' values ("gains": g(l) as in the formulas, l a
#: real); any other text says why it takes integer labels only (refused, naming it).
REALS = ("compared", "gains")
REALS_DIGITS = "its text shows each label as one digit (trec_eval's relstring)"
REALS_RBP = ("its kernel reads the labels as numbers scaled by the query's largest, not "
             "yet mapped to real labels")
REALS_ERR = ("its stop probabilities (2^l - 1) / 2^max_grade are those of integer grades up "
             "to max_grade (gdeval)")
REALS_COMPAT = ("its ideal ranking groups the documents of each integer label (label + 1 is "
                "the next label up)")
REALS_CWL = ("its kernel reads the labels as numbers (clip(l, min_rel, max_rel)), not yet "
             "mapped to real labels")
REALS_USER = "a user's function reads the labels (ranked, judged) as integers"
REALS_OTHER = ("it reads subtopic judgments, preference judgments or judgment groups, whose "
               "labels are integers")


#: A family's ``aggregate`` as the case of the summary kernel
#: (:func:`fastir.measures.kernels.summarise`).
HOW = {"mean": 0, "sum": 1, "gmean": 2, "none": 3}

# -- kernel cases ----------------------------------------------------------------------
# A family's ``kind``: the case of its path's kernel function that computes it, one number
# each (shared by the families that differ only in how they are summarised or judged:
# GMAP, APAvgJG are AP). The kernels import these names from here; each block is one
# helper module's cases (``fastir/measures/<module>.py``).
# counts (fastir.measures.kernels: the query's counts only)
NUM_Q = 0
NUM_RET = 1
NUM_REL = 2
# precision (the rank prefix rows: at the cutoff, or anywhere down to the end)
NUM_REL_RET = 3
NUM_NONREL_JUDGED_RET = 4
AP = 5
RPREC = 6
RR = 8
IPREC = 9
P = 10
RECALL_AT = 11
SUCCESS = 13
SET_P = 14
SET_R = 15
SET_F = 16
RPREC_MULT = 20
UTILITY = 21
IPREC_AVG = 22
REL_P = 27
SET_REL_P = 28
SET_AP = 29
UNJ = 32
YAAP = 33
ACCURACY = 37
HITS = 55  # ranx's
F1 = 56  # ranx's
FALLOUT = 57  # torchmetrics' RetrievalFallOut
# dcg (the gain prefix rows, and the loops beside the ideal gains)
NDCG = 12
DCG = 17
IDEAL_DCG = 18
BING = 23
G = 24
NDCG_REL = 25
RNDCG = 26
# own (loops of their own over the ranking's labels)
BPREF = 7
INFAP = 19
RBP = 30
RBP_RESID = 31
JUDGED = 36
COMPATIBILITY = 38
# err
ERR = 34
NERR = 35
# cwl (the C/W/L family, BPM .. INSQ: one helper)
BPM = 39
SDCG = 40
NERR8 = 41
NERR9 = 42
NERR10 = 43
NERR11 = 44
INST = 45
INSQ = 46
# diversity (its own kernel, over subtopic judgments)
ALPHA_DCG = 47
ALPHA_NDCG = 48
ERR_IA = 49
NERR_IA = 50
NRBP = 51
NNRBP = 52
P_IA = 53
ST_RECALL = 54
AP_IA = 58
STRING = -1  # measures whose value is text (relstring): no kernel case


class UnknownMeasureError(ValueError):
    """A measure name or parameter no dialect accepts; the message suggests close names or
    says the allowed values."""


class UnknownNameError(UnknownMeasureError):
    """A name no dialect knows (not a known measure with bad parameters)."""


class UncomputableMeasureError(UnknownMeasureError):
    """trec_eval parameters that trec_eval accepts as it sets the measure up, and cannot
    compute with (``utility.2,-1``: not 4 coefficients). An error like any bad parameter;
    ``fastir trec_eval`` stops where trec_eval does: at the first query (exit status 4)."""


# -- parameters ------------------------------------------------------------------------
class Param:
    """A measure parameter: ``kind`` is "level" (an integer from 0: a relevance level),
    "rank" (an integer from 1), "depth" (an integer from 0), "int", "float", "bool", "choice",
    "gains" (label -> gain table) or "levels" (recall levels in [0, 1]); ``low``/``high`` bound a
    float (``open`` makes the bounds exclusive), ``high`` an integer; ``required``: it has
    no default and must be given."""

    __slots__ = ("name", "kind", "default", "low", "high", "open", "choices", "required", "doc")

    def __init__(self, name, kind, default=None, low=-math.inf, high=math.inf, open=False,
                 choices=(), required=False, doc=""):
        self.name, self.kind, self.default = name, kind, default
        self.low, self.high, self.open, self.choices, self.doc = low, high, open, choices, doc
        self.required = required

    def convert(self, family, value):
        """``value`` (a number, or text as parsed) checked and converted; an
        :class:`UnknownMeasureError` naming the family and the allowed values otherwise."""
        where = f"{family}: {self.name}"
        if isinstance(value, str) and "_" in value and self.kind != "choice":
            raise UnknownMeasureError(f"{where}: {value!r} is not a number (Python reads "
                                      "1_0 as 10, strtod as 1)")
        try:
            if self.kind in ("level", "rank", "depth", "int"):
                return self._integer(where, value)
            if self.kind == "choice":
                if value not in self.choices:
                    raise UnknownMeasureError(f"{where} must be one of "
                                              f"{', '.join(map(repr, self.choices))}, got "
                                              f"{value!r}")
                return value
            if self.kind == "bool":
                text = str(value).lower()
                if text not in ("true", "false", "1", "0"):
                    raise UnknownMeasureError(f"{where} must be True or False, got {value!r}")
                return text in ("true", "1")
            if self.kind == "gains":
                return _gain_pairs(where, value)
            if self.kind == "levels":
                items = value if isinstance(value, (tuple, list)) else str(value).split(",")
                levels = tuple(float(r) for r in items)
                if not levels or any(not 0.0 <= r <= 1.0 for r in levels):
                    raise UnknownMeasureError(f"{where} must be levels in [0, 1], got {value!r}")
                return levels
            number = float(value)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, UnknownMeasureError):
                raise
            raise UnknownMeasureError(f"{where}: bad value {value!r}") from None
        inside = self.low < number < self.high if self.open else self.low <= number <= self.high
        if not math.isfinite(number) or not inside:
            bounds = f"({self.low:g}, {self.high:g})" if self.open else \
                f"[{self.low:g}, {self.high:g}]"
            raise UnknownMeasureError(f"{where} must be a finite number in {bounds}, got "
                                      f"{value!r}")
        return number

    def _integer(self, where, value):
        lowest = {"level": 0, "rank": 1, "depth": 0, "int": -MAX_CUTOFF}[self.kind]
        highest = int(min(self.high, MAX_CUTOFF))
        number = float(value)
        if not math.isfinite(number):
            raise UnknownMeasureError(f"{where} must be finite, got {value!r}")
        if number != int(number) or not lowest <= int(number) <= highest:
            hint = " (negative labels mark unjudged documents)" if self.kind == "level" else ""
            raise UnknownMeasureError(f"{where} must be an integer from {lowest} to "
                                      f"{highest}{hint}, got {value!r}")
        return int(number)

    def text(self, value):
        """The value as the canonical string writes it."""
        if self.kind == "choice":
            return f"'{value}'"
        if self.kind == "bool":
            return str(bool(value))
        if self.kind == "gains":
            return "'" + ",".join(f"{k}={g:g}" for k, g in value) + "'"
        if self.kind == "levels":
            return "'" + ",".join(f"{r:g}" for r in value) + "'"
        return f"{value:g}" if isinstance(value, float) else str(value)


def _gain_pairs(where, value):
    """``{1: 3, 2: 9}``, ``"1=3,2=9"`` or ``"{1:3,2:9}"`` as sorted (label, gain) pairs."""
    if isinstance(value, dict):
        items = value.items()
    else:
        text = str(value).strip().strip("{}")
        items = [re.split(r"[=:]", part, maxsplit=1) for part in text.split(",") if part]
        if any(len(item) != 2 for item in items):
            raise ValueError(value)
    pairs = {}
    for label, gain in items:
        label = int(str(label).strip())
        if label in pairs:
            raise UnknownMeasureError(f"{where}: gain label {label} is given twice")
        if not 0 <= label <= MAX_CUTOFF:
            raise UnknownMeasureError(f"{where}: gain labels must be integers from 0 to "
                                      f"{MAX_CUTOFF}, got {label}")
        pairs[label] = float(gain)
        if not math.isfinite(pairs[label]):
            raise UnknownMeasureError(f"{where}: gains must be finite numbers, got {gain!r} "
                                      f"for label {label}")
    return tuple(sorted(pairs.items()))


REL = Param("rel", "level", doc="relevant means label >= rel (default: the evaluation's "
                                "relevance level)")
DCG_GAIN = Param("dcg", "choice", "log2", choices=tuple(GAINS),
                 doc="gain: the label (log2) or 2**label - 1 (exp-log2)")
GAIN_TABLE = Param("gains", "gains", doc="label=gain table, other labels are their own gain")
#: Every family's last parameter: applied to the ranking before the kernel, never read by it.
JUDGED_ONLY = Param("judged_only", "bool", False, doc="drop the unjudged documents from the "
                    "ranking first, order kept (trec_eval -J for this measure; ir_measures' "
                    "judged_only)")

MAX_GRADE = Param("max_grade", "rank", 4, high=64, doc="the largest label (gdeval: 4)")
EXP_GAIN_OVERFLOW = (f"a judged label is {common.MAX_EXP_LABEL} or more, whose exponential gain "
                     "2**label - 1 overflows (dcg='exp-log2'); use dcg='log2' or smaller labels")
LABEL_ABOVE_MAX_GRADE = ("a judged label is above max_grade; give the largest label, e.g. "
                         "ERR(max_grade=5)@20")

#: The C/W/L family's gains: labels clipped to [min_rel, max_rel], scaled to [0, 1].
CWL_PARAMS = (Param("min_rel", "int", 0, doc="the label of gain 0"),
              Param("max_rel", "int", required=True, doc="the label of gain 1 (required)"))
CWL_T = Param("T", "float", 1.0, low=0.0, open=True, doc="the expected gain (target)")
CWL_NOTE = (" Gains: (clip(label, min_rel, max_rel) - min_rel) / (max_rel - min_rel); the "
            "ranking is cut or padded to 1000 documents as cwl_eval's (ir_measures' cwl_eval).")
CWL_FORMULA = ("sum over i <= 1000 of W(i) g_i (the ranking padded with gains 0), W(i) = "
               "P(i) / sum over j of P(j), P(i) = C(1) ... C(i-1), g_i = (clip(l_i, min_rel, "
               "max_rel) - min_rel) / (max_rel - min_rel) (0 not judged); ")


def _cwl_check(values):
    if values["min_rel"] >= values["max_rel"]:
        return f"min_rel must be less than max_rel, got {values['min_rel']} and " \
               f"{values['max_rel']}"
    return None


#: The diversity measures' parameters and what they share.
ALPHA = Param("alpha", "float", 0.5, low=0.0, high=1.0, doc="novelty: an intent's gain "
              "shrinks by (1 - alpha) with every document above relevant to it")
DIVERSITY_NOTE = (" Needs subtopic judgments (qid subtopic docno label); intents S are the "
                  "subtopics judged relevant somewhere; relevant means label >= rel.")
DIVERSITY_GAIN = ("; gain_i = sum over the intents s that d_i is relevant to of "
                  "(1 - alpha)^c_s, c_s: the documents above d_i relevant to s")

#: Cutoff parameters: the ``@`` of a measure.
RANK = Param("cutoff", "rank", doc="rank cutoff k")
DEPTH = Param("cutoff", "depth", 10, doc="depth (0 prints an empty string; 10 without one)")
RECALL = Param("cutoff", "float", low=0.0, high=1.0, doc="recall level")
MULT = Param("cutoff", "float", low=0.0, doc="multiple of R")


#: The preference measures (trec_eval's prefs_*): (family, kernel kind, trec_eval name, doc),
#: in trec_eval's print order. "ful": preferences fulfilled (the preferred document ranked
#: above the other, or the other not retrieved); "poss": preferences possible.
PREFS_FAMILIES = (  # (name, kernel kind, trec_eval name, doc, formula)
    ("PrefsPoss", PK.NUM_POSS, "prefs_num_prefs_poss", "Number of preferences possible "
     "(retrieved or not).", "sum over the judgment groups of their preferences"),
    ("PrefsFul", PK.NUM_FUL, "prefs_num_prefs_ful", "Number of preferences fulfilled (one of "
     "the two retrieved counts; neither retrieved fails).",
     "sum over the judgment groups of their fulfilled preferences"),
    ("PrefsFulRet", PK.NUM_FUL_RET, "prefs_num_prefs_ful_ret", "Number of preferences "
     "fulfilled among retrieved documents (both retrieved).",
     "sum over the judgment groups of their fulfilled preferences of two retrieved documents"),
    ("PrefsSimp", PK.SIMP, "prefs_simp", "Preferences fulfilled over preferences possible.",
     "PrefsFul / PrefsPoss"),
    ("PrefsPair", PK.PAIR, "prefs_pair", "The fulfilled share of each document pair's "
     "preferences (over its judgment groups), averaged over the pairs.",
     "mean over the pairs {x, y} some judgment group states of f / (f + b): f (b) the groups "
     "preferring the one ranked higher (lower); 0 for a pair of which neither is retrieved"),
    ("PrefsAvgJG", PK.AVGJG, "prefs_avgjg", "Preferences fulfilled over possible within a "
     "judgment group, averaged over the query's groups.",
     "mean over the query's judgment groups of fulfilled / possible (0 for a group stating "
     "no preference)"),
    ("PrefsAvgJGRnonrel", PK.AVGJG_RNONREL, "prefs_avgjg_Rnonrel", "prefs_avgjg with the "
     "non-relevant documents (level 0) of each group counted as many as its relevant ones "
     "R (the first R by rank), akin to bpref.",
     "PrefsAvgJG with each group's non-relevant documents (level 0) cut to the first R_g by "
     "rank, or completed by R_g - N_g never retrieved (R_g, N_g: its relevant and "
     "non-relevant documents)"),
    ("PrefsSimpRet", PK.SIMP_RET, "prefs_simp_ret", "prefs_simp over pairs both retrieved.",
     "PrefsFulRet / the preferences of two retrieved documents"),
    ("PrefsPairRet", PK.PAIR_RET, "prefs_pair_ret", "prefs_pair over pairs both retrieved.",
     "PrefsPair over the pairs of two retrieved documents"),
    ("PrefsAvgJGRet", PK.AVGJG_RET, "prefs_avgjg_ret", "prefs_avgjg over pairs both "
     "retrieved.", "mean over the query's judgment groups of fulfilled / possible among "
     "the preferences of two retrieved documents"),
    ("PrefsAvgJGRnonrelRet", PK.AVGJG_RNONREL_RET, "prefs_avgjg_Rnonrel_ret",
     "prefs_avgjg_Rnonrel over retrieved documents.",
     "PrefsAvgJGRet with PrefsAvgJGRnonrel's recount among the retrieved documents"),
    ("PrefsSimpImp", PK.SIMP_IMP, "prefs_simp_imp", "prefs_simp over pairs of which one or "
     "both are retrieved.", "PrefsFul / the preferences of which one or both documents are "
     "retrieved"),
    ("PrefsPairImp", PK.PAIR_IMP, "prefs_pair_imp", "prefs_pair over pairs of which one or "
     "both are retrieved.", "PrefsPair over the pairs of which one or both are retrieved"),
    ("PrefsAvgJGImp", PK.AVGJG_IMP, "prefs_avgjg_imp", "prefs_avgjg over pairs of which one "
     "or both are retrieved.", "mean over the query's judgment groups of fulfilled / "
     "possible among the preferences of which one or both documents are retrieved"),
)
PREFS_COUNTS = (PK.NUM_POSS, PK.NUM_FUL, PK.NUM_FUL_RET)  # summed over queries, not averaged
PREFS_FULFILLED = ("; a judgment group's preference A > B is fulfilled when A is retrieved "
                   "and ranked above B, or B is not retrieved")
PREFS_NOTE = (" Needs preference judgments (read_prefs; trec_eval -R prefs or qrels_prefs); "
              "ties in the run ranked by docno ascending, as trec_eval ranks for them.")
GROUPS_NOTE = (" Needs judgment groups (read_judgment_groups; trec_eval -R qrels_jg): qrels "
               "whose second column names the group.")

#: The trec_eval -R formats each path's judgments come in (any other path: qrels).
JUDGMENT_FORMATS = {"prefs": ("prefs", "qrels_prefs"), "groups": ("qrels_jg",)}


def judgment_formats(family):
    """The trec_eval ``-R`` formats a family's judgments come in (``num_q``: any)."""
    if family.kind == NUM_Q and family.path == "counts":
        return ("qrels", "prefs", "qrels_prefs", "qrels_jg")
    return JUDGMENT_FORMATS.get(family.path, ("qrels",))


# -- families --------------------------------------------------------------------------
class TrecName:
    """One trec_eval name of a family: ``style`` None (no parameters), "cut" (a list of
    cutoffs, one measure each, ``defaults`` when none are given) or "single" (parameters
    of one measure, printed as ``name_<parameters as typed>``); ``order`` is its place in
    trec_eval's output; ``cut`` says that the name is the family with a cutoff;
    ``all_trec`` whether trec_eval's ``all_trec`` set has it; ``per_query`` whether trec_eval
    prints it per query (not its summary-only measures)."""

    __slots__ = ("name", "style", "defaults", "order", "cut", "all_trec", "per_query")

    def __init__(self, name, order, style=None, defaults=None, cut=False, all_trec=True,
                 per_query=True):
        self.name, self.style, self.defaults, self.order = name, style, defaults, order
        self.cut, self.all_trec, self.per_query = cut, all_trec, per_query


class Family:
    """A kind of measure, described once (see the module doc).

    ``path``: how the kernel computes it (:data:`fastir.measures.kernels.PATHS`): "counts" (the
    query's counts only), "ranks" (the rank prefix rows: relevant and AP sums, unjudged
    counts; read at its cutoff k only, or at the end without one), "set" (the same rows,
    read anywhere down to the end of the ranking: interpolated precision, R-precision, the
    set measures), "gains" (the gain prefix rows: DCG and ideal DCG, read at its cutoff),
    "own" (its own loop over the ranking) or "subtopics" (the diversity kernel, over
    subtopic judgments). The kernel dispatches on it, and the depth of the prefix rows is
    derived from it (:func:`fastir.measures.kernels.prefix_depth`). ``cutoff``: a
    :class:`Param` for ``@`` (or None), ``cutoff_required`` when it must be given.
    ``params``: its parameters; every family also takes :data:`JUDGED_ONLY`, last.
    ``aggregate``: "mean", "sum", "gmean" (trec_eval's gm_*, values floored at 1e-5) or
    "none" (text). ``unjudged``: needs unjudged documents (not in a dense batch).
    ``anywhere``: a document counts as judged when any query of the qrels judges it (BEIR's
    annotated corpus): the kernel reads each ranked document's code in the whole qrels (0,
    or -1 when no query judges it: :func:`fastir.model.join.judged_anywhere`) for its label.
    ``level_free``: the relevance level does not apply (gains are the raw labels).
    ``empty``: its value on an empty ranking ("zero"; "value": computed, as on a one
    document ranking of an unjudged document, trec_eval 10.0's placeholder for ``-c``; or
    "emptied": computed on a ranking that max_docs / judged_only emptied, 0 on a judged
    query absent from the run, which trec_eval 10.0 resets after its placeholder).
    ``ideal``: how much of the ideal ranking it reads: "none", "cutoff" (down to its cutoff,
    or all of it), "top" (the largest label) or "whole". ``num_docs``: whether it reads the
    collection size (trec_eval ``-N``): "read" (0 when not given) or "required".
    ``check``: a function of the parameter values (a dict) that returns what is wrong with
    them together, or None. ``invalid``: what a NaN from its kernel case means (the inputs
    it is not defined on), raised as an error naming the measure and the query.
    ``versions``: the trec_eval versions that have it. ``examples``: names the tests
    evaluate (the last is listed). ``formula``: what its value is on a query, in the
    notation of :data:`FORMULA_NOTATION` (checked against tests/naive/; the catalogue and
    ``fastir measures`` show it).

    Two paths read other judgments than qrels (trec_eval's other ``-R`` formats): "prefs"
    (preference judgments, :class:`fastir.model.prefs.Prefs`: their own kernel,
    :mod:`fastir.measures.prefs`, ``kind`` one of its measures) and "groups" (judgment
    groups, :class:`fastir.model.prefs.JudgmentGroups`): the family ``per_group`` names,
    with the same cutoff and level, on each judgment group of a query, averaged over them.

    ``ties``: how its value expected over the orders of tied documents is computed
    (``ties="expected"``, :mod:`fastir.measures.ties`): "closed form" (McSherry & Najork),
    "mean gain" (a sum over positions: each takes its tie group's mean) or "order-free" (no
    order changes it); None: it has none (refused by name).

    ``reals``: whether it takes real-valued labels (``labels="float"``, the catalogue's
    *labels* column): "compared", "gains" (:data:`REALS`), or why it takes integer labels
    only (refused by name; the default, :data:`REALS_OTHER`, for the families of other
    judgments)."""

    def __init__(self, name, kind, doc, *, formula, path="ranks", cutoff=None,
                 cutoff_required=False, params=(REL,), aggregate="mean", unjudged=False,
                 anywhere=False, level_free=False, integer=False, empty="zero", ideal="none",
                 num_docs=None, check=None, invalid=None, trec=(), versions=("10.0", "9.0.8"),
                 aliases=(), ranx=(), examples=(), per_group=None, ties=None,
                 reals=REALS_OTHER):
        self.name, self.kind, self.doc, self.path = name, kind, doc, path
        self.formula = formula
        self.cutoff, self.cutoff_required = cutoff, cutoff_required
        self.params = {p.name: p for p in (*params, JUDGED_ONLY)}
        self.aggregate, self.unjudged, self.level_free = aggregate, unjudged, level_free
        self.anywhere = anywhere
        self.integer, self.empty, self.ideal, self.num_docs = integer, empty, ideal, num_docs
        self.check, self.invalid, self.trec, self.versions = check, invalid, trec, versions
        self.aliases, self.ranx = aliases, ranx
        self.examples = examples or (name,)
        self.per_group = per_group
        self.ties = ties
        self.reals = reals

    @property
    def probabilities(self):
        """Why it takes no probabilistic labels (``labels="probability"``, the catalogue's
        *labels* column), or None: each assignment of labels is evaluated as integer
        labels (:mod:`fastir.worlds`), so every family of qrels takes them but those whose
        value is a text or whose judgments are not labels of documents."""
        if self.path in ("prefs", "groups", "subtopics"):
            return REALS_OTHER
        return REALS_DIGITS if self.aggregate == "none" else None

    def __repr__(self):
        return f"Family({self.name!r})"


FAMILIES = {f.name: f for f in (
    Family("NumQ", NUM_Q, "Number of queries (1 per query).", path="counts", params=(),
           aggregate="sum", integer=True, empty="value",
           trec=(TrecName("num_q", 1, per_query=False),), formula="1 per query", ties="order-free",
           reals="compared"),
    Family("NumRet", NUM_RET, "Number of ranked documents (after max_docs / judged_only).",
           path="counts", params=(), aggregate="sum", integer=True,
           trec=(TrecName("num_ret", 2),), formula="n", ties="order-free", reals="compared"),
    Family("NumRel", NUM_REL, "Number of judged documents with label >= rel.",
           path="counts", aggregate="sum", integer=True, empty="value",
           trec=(TrecName("num_rel", 3),), formula="R", ties="order-free", reals="compared"),
    Family("NumRelRet", NUM_REL_RET, "Number of relevant documents retrieved.", path="set",
           aggregate="sum", integer=True, trec=(TrecName("num_rel_ret", 4),), formula="r(n)",
           ties="order-free", reals="compared"),
    Family("NumNonRelJudgedRet", NUM_NONREL_JUDGED_RET,
           "Number of judged non-relevant documents retrieved.", path="set", aggregate="sum",
           integer=True, trec=(TrecName("num_nonrel_judged_ret", 36),),
           formula="#{i <= n : 0 <= l_i < rel}", ties="order-free", reals="compared"),
    Family("AP", AP, "Average precision (divided by the number of relevant documents R).",
           cutoff=RANK, trec=(TrecName("map", 5), TrecName("map_cut", 27, "cut", TREC_CUTOFFS,
                                                          cut=True)),
           aliases=("MAP",), ranx=("map",),
           examples=("AP", "AP@3"),
           formula="sum of P@i over the ranks i <= k with rel_i = 1, divided by R (map: k = n; "
                   "map_cut_k: the top k, still over R)", ties="closed form", reals="compared"),
    Family("GMAP", AP, "Average precision, summarised by the geometric mean (values floored "
           "at 1e-5).", aggregate="gmean", trec=(TrecName("gm_map", 6, per_query=False),),
           formula="exp(mean over the queries of log(max(AP, 1e-5)))", ties="closed form",
           reals="compared"),
    Family("Rprec", RPREC, "Precision at rank R.", path="set", trec=(TrecName("Rprec", 7),),
           aliases=("RPrec",), ranx=("r-precision",), formula="r(R) / R", ties="mean gain",
           reals="compared"),
    Family("Bpref", BPREF, "Binary preference (Buckley & Voorhees).", path="own",
           unjudged=True, trec=(TrecName("bpref", 8),), aliases=("BPref",), ranx=("bpref",),
           formula="sum over the relevant retrieved d of (1 - min(m_d, R) / min(N, R)), divided by "
                   "R; m_d: the judged non-relevant documents ranked above d (a term is 1 when m_d "
                   "= 0; unjudged documents are skipped)", reals="compared"),
    Family("RR", RR, "Reciprocal rank of the first relevant document (within the cutoff).",
           cutoff=RANK, trec=(TrecName("recip_rank", 9),), aliases=("MRR",), ranx=("mrr",),
           examples=("RR", "RR@2"), formula="1 / i for the first i <= k with rel_i = 1; 0 if none",
           ties="closed form", reals="compared"),
    Family("IPrec", IPREC, "Interpolated precision at a recall level (trec_eval 10.0 "
           "rounding).", path="set", cutoff=RECALL, cutoff_required=True,
           trec=(TrecName("iprec_at_recall", 10, "cut", TREC_RECALLS, cut=True),),
           examples=("IPrec@0.0", "IPrec@0.3", "IPrec@0.5", "IPrec@1.0"),
           formula="max of P@i over the ranks i >= i_c: c = lround(x R) (x the recall level; "
                   "9.0.8: (long)(x R + 0.9)), i_c the rank of the c-th relevant document "
                   "retrieved (the first for c = 0); 0 when c > r(n)", reals="compared"),
    Family("P", P, "Precision at k.", cutoff=RANK, cutoff_required=True,
           trec=(TrecName("P", 11, "cut", TREC_CUTOFFS, cut=True),), aliases=("Precision",),
           ranx=("precision",),
           examples=("P@1", "P@5", "P(rel=2)@5"), formula="r(k) / k", ties="mean gain",
           reals="compared"),
    Family("RelString", STRING, "The labels of the top k (default 10) as text, as "
           "trec_eval's relstring.", path="counts", cutoff=DEPTH, params=(), aggregate="none",
           unjudged=True, trec=(TrecName("relstring", 12, "single"),),
           examples=("RelString@3",),
           formula="the labels of d_1 .. d_k as characters: 0-9, '>' above 9, '-' a document not "
                   "judged, '.' a negative label", reals=REALS_DIGITS),
    Family("R", RECALL_AT, "Recall at k.", cutoff=RANK, cutoff_required=True,
           trec=(TrecName("recall", 13, "cut", TREC_CUTOFFS, cut=True),), aliases=("Recall",),
           ranx=("recall",),
           examples=("R@3", "R@50"), formula="r(k) / R", ties="mean gain", reals="compared"),
    Family("infAP", INFAP, "Inferred AP (Yilmaz & Aslam); pooled docs with a negative "
           "label are sampled.", path="own", unjudged=True, trec=(TrecName("infAP", 14),),
           formula="sum over the relevant retrieved d_j (j its 0-based rank) of 1 if j = 0, else "
                   "1/(j+1) + (j/(j+1)) (a/j) ((b + e)/(b + c + 2e)), divided by R: above d_j, b "
                   "relevant and c judged non-relevant documents, a = b + c + the documents of "
                   "negative label; e = 1e-5 (documents not in the qrels count in j only)",
           reals="compared"),
    Family("GMBpref", BPREF, "Bpref, summarised by the geometric mean (values floored at "
           "1e-5).", path="own", aggregate="gmean", unjudged=True,
           trec=(TrecName("gm_bpref", 15, per_query=False),),
           formula="exp(mean over the queries of log(max(Bpref, 1e-5)))", reals="compared"),
    Family("RprecMult", RPREC_MULT, "Precision at rank (long)(mult * R + 0.9).", path="set",
           cutoff=MULT, cutoff_required=True,
           trec=(TrecName("Rprec_mult", 16, "cut", TREC_MULTS, cut=True),),
           examples=("RprecMult@0.2", "RprecMult@1.5"),
           formula="P@c, c = (long)(x R + 0.9) (x the multiple; r(n) / c when c > n); 0 when c = "
                   "0", ties="mean gain", reals="compared"),
    Family("Utility", UTILITY, "a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret "
           "(needs num_docs for d).", path="set",
           params=(REL, Param("a", "float", 1.0), Param("b", "float", -1.0),
                   Param("c", "float", 0.0), Param("d", "float", 0.0)),
           num_docs="read", empty="emptied", trec=(TrecName("utility", 17, "single"),),
           examples=("Utility", "Utility(a=2,b=-1,c=0.5,d=0.25)"),
           formula="a r(n) + b (n - r(n)) + c (R - r(n)) + d (num_docs - n - R + r(n))",
           ties="order-free", reals="compared"),
    Family("IPrecAvg", IPREC_AVG, "Interpolated precision averaged over recall levels (11 "
           "by default).", params=(REL, Param("recalls", "levels", TREC_RECALLS)),
           path="own", trec=(TrecName("11pt_avg", 18, "single"),),
           examples=("IPrecAvg", "IPrecAvg(recalls='0.25,0.5,0.75')"),
           formula="mean of IPrec@x over the recall levels x (0, 0.1, ..., 1)", reals="compared"),
    Family("BinG", BING, "Binary G (trec_eval binG).", path="own",
           trec=(TrecName("binG", 19),), aliases=("binG",),
           formula="sum over the relevant retrieved d_i of 1 / log2(2 + m_i), divided by R; m_i: "
                   "the documents above d_i that are not relevant; 0 when none is retrieved",
           reals="compared"),
    Family("G", G, "Gain discounted by the ideal gain still missing (trec_eval G).",
           path="own", params=(REL, GAIN_TABLE), level_free=True, ideal="whole",
           trec=(TrecName("G", 20, "single"),),
           formula="sum over i <= n of g_i / log2(2 + C_i - (g_1 + ... + g_i)), divided by the sum "
                   "of the ideal gains: g_i = l_i (0 below 1), C_i = sum over j <= i of max(I_j, "
                   "1), I the judged documents' gains descending (0 beyond them)", reals="gains"),
    Family("DCG", DCG, "Discounted cumulative gain (gains as nDCG's).", path="gains",
           cutoff=RANK, params=(REL, DCG_GAIN, GAIN_TABLE), level_free=True,
           invalid=EXP_GAIN_OVERFLOW, trec=(TrecName("dcg", 21, "single", all_trec=False),),
           versions=("10.0",), ranx=("dcg",), examples=("DCG@4", "DCG(gains='1=3,2=9')"),
           formula="sum over i <= k of g(l_i) / log2(i + 1)", ties="mean gain", reals="gains"),
    Family("IDCG", IDEAL_DCG, "The ideal ranking's DCG.", path="gains", cutoff=RANK,
           params=(REL, DCG_GAIN, GAIN_TABLE), level_free=True, invalid=EXP_GAIN_OVERFLOW,
           empty="value", ideal="cutoff",
           trec=(TrecName("ideal_dcg", 22, "single", all_trec=False),), versions=("10.0",),
           examples=("IDCG", "IDCG@3", "IDCG(dcg='exp-log2')@2"),
           formula="sum over i <= k of I_i / log2(i + 1); I: the positive gains of every judged "
                   "document, descending", ties="order-free", reals="gains"),
    Family("nDCG", NDCG, "nDCG; gains are the labels (dcg='log2'), 2^label-1 "
           "(dcg='exp-log2') or a table (gains='1=3,2=9'); the ideal ranks every judged "
           "document.", path="gains", cutoff=RANK, params=(REL, DCG_GAIN, GAIN_TABLE),
           level_free=True, invalid=EXP_GAIN_OVERFLOW, ideal="cutoff",
           trec=(TrecName("ndcg", 23, "single"),
                 TrecName("ndcg_cut", 26, "cut", TREC_CUTOFFS, cut=True)),
           aliases=("NDCG",), ranx=("ndcg",),
           examples=("nDCG", "nDCG@3", "nDCG@20", "nDCG(dcg='exp-log2')@5", "nDCG(rel=2)@5",
                     "nDCG(gains='1=3,2=9')"),
           formula="DCG@k / IDCG@k = sum over i <= k of g(l_i) / log2(i + 1), divided by the same "
                   "sum over I, the positive gains of every judged document (retrieved or not) "
                   "descending; 0 when that is 0. trec_eval's ndcg: g(l) = l for l >= 1 (whatever "
                   "-l), k = n for the run and all of I", ties="mean gain", reals="gains"),
    Family("nDCGRel", NDCG_REL, "nDCG averaged over the ranks of the relevant documents.",
           path="own", params=(REL, GAIN_TABLE), ideal="whole",
           trec=(TrecName("ndcg_rel", 24, "single"),),
           formula="mean over the R' documents of positive gain of nDCG@i at the rank i of each "
                   "retrieved one, and of nDCG@n for each one not retrieved", reals="gains"),
    Family("RnDCG", RNDCG, "nDCG averaged at the R levels where the ideal gain changes.",
           path="own", params=(REL, GAIN_TABLE), ideal="whole",
           trec=(TrecName("Rndcg", 25, "single"),),
           aliases=("Rndcg",),
           formula="mean of nDCG@b over the ranks b that end a grade of the ideal ranking (its "
                   "gain drops after b), and over n when the ranking is longer than the ideal; 0 "
                   "when R = 0", reals="gains"),
    Family("RelP", REL_P, "Relevant in the top k divided by min(k, R) (BEIR's and MTEB's "
           "recall_cap, R_cap@k).", cutoff=RANK, cutoff_required=True, aliases=("R_cap",),
           trec=(TrecName("relative_P", 28, "cut", TREC_CUTOFFS, cut=True),),
           examples=("RelP@3",), formula="r(k) / min(k, R)", ties="mean gain", reals="compared"),
    Family("Success", SUCCESS, "1 if a relevant document is in the top k.", cutoff=RANK,
           cutoff_required=True, trec=(TrecName("success", 29, "cut", (1, 5, 10), cut=True),),
           ranx=("hit_rate",),
           examples=("Success@2",), formula="1 if r(k) > 0, else 0", ties="closed form",
           reals="compared"),
    Family("Hits", HITS, "Relevant documents in the top k (the whole ranking without k), "
           "ranx's hits.", cutoff=RANK, ranx=("hits",), examples=("Hits", "Hits@5"),
           formula="r(k)", ties="mean gain", reals="compared"),
    Family("F1", F1, "ranx's F1 at k: 2PR / (P + R), P = hits / k (k: the ranking's "
           "length without a cutoff), R = hits / R.", cutoff=RANK, ranx=("f1",),
           examples=("F1", "F1@5"), formula="2 P Q / (P + Q), P = r(k) / k, Q = r(k) / R",
           ties="mean gain", reals="compared"),
    Family("FallOut", FALLOUT, "Fall-out at k: the judged non-relevant documents in the "
           "top k over all judged non-relevant documents (label < rel); 0 without one "
           "(torchmetrics' RetrievalFallOut with empty_target_action='neg').", cutoff=RANK,
           ideal="whole",
           examples=("FallOut", "FallOut@3", "FallOut(rel=2)@5"),
           formula="#{i <= k : 0 <= l_i < rel} / N", ties="mean gain", reals="compared"),
    Family("SetP", SET_P, "Precision of the whole ranking.", path="set",
           trec=(TrecName("set_P", 30),), formula="r(n) / n", ties="order-free", reals="compared"),
    Family("SetRelP", SET_REL_P, "Relevant retrieved divided by min(retrieved, R).",
           path="set",
           trec=(TrecName("set_relative_P", 31),), formula="r(n) / min(n, R)", ties="order-free",
           reals="compared"),
    Family("SetR", SET_R, "Recall of the whole ranking.", path="set",
           trec=(TrecName("set_recall", 32),), formula="r(n) / R", ties="order-free",
           reals="compared"),
    Family("SetAP", SET_AP, "Set precision times set recall.", path="set",
           trec=(TrecName("set_map", 33),), formula="r(n)^2 / (n R)", ties="order-free",
           reals="compared"),
    Family("SetF", SET_F, "F of the whole ranking: (beta+1)PR/(beta P+R), beta unsquared "
           "as trec_eval.", path="set", params=(REL, Param("beta", "float", 1.0, low=0.0)),
           trec=(TrecName("set_F", 34, "single"),),
           examples=("SetF", "SetF(beta=0.5)"),
           formula="(beta + 1) P Q / (beta P + Q), P = r(n) / n, Q = r(n) / R", ties="order-free",
           reals="compared"),
    Family("YAAP", YAAP, "Yet another AP: log((1 + sum) / (1 + R - sum)) (Robertson).",
           path="set",
           empty="value", trec=(TrecName("yaap", 37, all_trec=False),),
           formula="ln((1 + s) / (1 + R - s)), s = sum of P@i over the ranks i with rel_i = 1",
           reals="compared"),
    Family("RBP", RBP, "Rank-biased precision (gains = labels, scaled to [0, 1]).",
           path="own", params=(Param("p", "float", 0.9, low=0.0, high=1.0, open=True), REL,
                               Param("scaled", "bool", True, doc="gains divided by the "
                                     "query's largest label (trec_eval); False: the labels "
                                     "themselves (ranx's rbp.95)")),
           level_free=True, ideal="top", trec=(TrecName("rbp", 38, "single"),),
           versions=("10.0",),
           examples=("RBP", "RBP(p=0.8)", "RBP(p=0.95,rel=2,scaled=False)"),
           formula="(1 - p) sum over i <= n of g_i p^(i-1): g_i = l_i / L (L the query's largest "
                   "label when above 1), 0 below rel and below 1; scaled=False: g_i = l_i",
                   ties="mean gain", reals=REALS_RBP),
    Family("RBPResid", RBP_RESID, "Rank-biased precision's residual from unjudged "
           "documents (p = 0.9).", path="own", params=(), unjudged=True,
           trec=(TrecName("rbp_resid", 39),), versions=("10.0",),
           formula="p^n + (1 - p) sum over the unjudged d_i (not judged, or a negative label) of "
                   "p^(i-1), p = 0.9; 0 when no retrieved document is unjudged", ties="mean gain",
           reals="compared"),
    Family("ERR", ERR, "Expected reciprocal rank (Chapelle et al. 2009, gdeval.pl): the "
           "user stops at a document with probability (2^label - 1) / 2^max_grade; labels "
           "above max_grade are refused, as gdeval refuses them.", path="own", cutoff=RANK,
           params=(MAX_GRADE,), level_free=True, ideal="top", invalid=LABEL_ABOVE_MAX_GRADE,
           examples=("ERR", "ERR(max_grade=3)@3", "ERR@5"),
           formula="sum over i <= k of (R_i / i) prod over j < i of (1 - R_j), R_i = (2^l_i - 1) / "
                   "2^max_grade (0 when l_i <= 0)", reals=REALS_ERR),
    Family("nERR", NERR, "ERR divided by the ERR of the ideal ranking (judged labels > 0, "
           "descending; NTCIREVAL's nERR with gdeval's stop probabilities).", path="own",
           cutoff=RANK, params=(MAX_GRADE,), level_free=True, ideal="cutoff",
           invalid=LABEL_ABOVE_MAX_GRADE, examples=("nERR", "nERR(max_grade=3)@2", "nERR@5"),
           formula="ERR@k divided by ERR@k of the ideal ranking (the positive labels, descending); "
                   "0 without a positive label", reals=REALS_ERR),
    Family("Judged", JUDGED, "Share of the top k with a judgment (any label, negative "
           "ones too), over min(k, n) (ir_measures' Judged; trec_eval's unj divides by k and "
           "counts negative labels as unjudged).", path="own", cutoff=RANK, params=(),
           unjudged=True, examples=("Judged", "Judged@3"),
           formula="#{i <= min(k, n) : d_i judged} / min(k, n)", ties="mean gain",
           reals="compared"),
    Family("Accuracy", ACCURACY, "(TP + TN) / N of the top k (or all) as the retrieved set, "
           "N the collection size (num_docs, trec_eval -N): the seed documents' Boolean "
           "accuracy, not ir_measures' pairwise Accuracy.", cutoff=RANK, empty="value",
           num_docs="required", invalid="num_docs is smaller than the documents retrieved "
           "and relevant", examples=("Accuracy", "Accuracy@3", "Accuracy(rel=2)@5"),
           formula="(TP + TN) / num_docs: TP = r(k), FP = min(k, n) - TP, FN = R - TP, TN = "
                   "num_docs - TP - FP - FN", ties="mean gain", reals="compared"),
    Family("Compat", COMPATIBILITY, "Compatibility with the ideal ranking (Clarke et al. "
           "2021): rank-biased overlap (persistence p) with the judged documents by label, "
           "normalised by the ideal's own (ir_measures' depth max(n, |ideal|)).", path="own",
           params=(Param("p", "float", 0.95, low=0.0, high=1.0, open=True),
                   Param("normalize", "bool", True)),
           level_free=True, ideal="whole",
           examples=("Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)"),
           formula="RBO(d, I) / RBO(I, I), RBO(a, b) = sum over i <= D of p^(i-1) |{a_1..a_i} & "
                   "{b_1..b_i}| / i, divided by sum over i <= D of p^(i-1); I: the documents of "
                   "positive label, label descending (ties in ranking order, those not retrieved "
                   "last); D = max(n, |I|); normalize=False: RBO(d, I)", reals=REALS_COMPAT),
    Family("BPM", BPM, "Bejewelled player model, static (Zhang et al. 2017), as cwl_eval: "
           "the user stops once the gain reaches T or at rank k; C/W/L expected utility per "
           "item." + CWL_NOTE, path="own", cutoff=RANK, cutoff_required=True,
           params=CWL_PARAMS + (Param("T", "float", 1.0, low=0.0, doc="target gain"),),
           level_free=True, check=_cwl_check, examples=("BPM(max_rel=3)@5",
                                                        "BPM(T=2,max_rel=2)@10"),
           formula=CWL_FORMULA + "C(i) = 1 while g_1 + ... + g_i < T and i < k, else 0",
           reals=REALS_CWL),
    Family("SDCG", SDCG, "Scaled DCG (cwl_eval's NDCG-k): DCG@k of gains in [0, 1] over "
           "the DCG@k of k fully relevant documents." + CWL_NOTE, path="own", cutoff=RANK,
           cutoff_required=True, params=CWL_PARAMS + (Param("dcg", "choice", "log2",
                                                            choices=("log2",)),),
           level_free=True, check=_cwl_check,
           examples=("SDCG(max_rel=3)@5", "SDCG(min_rel=1,max_rel=2)@3"),
           formula=CWL_FORMULA + "C(i) = log2(i + 1) / log2(i + 2) for i < k, else 0",
           reals=REALS_CWL),
    Family("NERR8", NERR8, "Not (but nearly) ERR, eq. 8 of Azzopardi, Mackenzie & Moffat "
           "2021: C(i) = 1 - g(i) before rank k." + CWL_NOTE, path="own", cutoff=RANK,
           cutoff_required=True, params=CWL_PARAMS, level_free=True, check=_cwl_check,
           examples=("NERR8(max_rel=3)@5",),
           formula=CWL_FORMULA + "C(i) = 1 - g_i for i < k, else 0", reals=REALS_CWL),
    Family("NERR9", NERR9, "Not (but nearly) ERR, eq. 9: C(i) = i/(i+1) (1 - g(i)) before "
           "rank k." + CWL_NOTE, path="own", cutoff=RANK, cutoff_required=True,
           params=CWL_PARAMS, level_free=True, check=_cwl_check,
           examples=("NERR9(max_rel=3)@5",),
           formula=CWL_FORMULA + "C(i) = i / (i + 1) (1 - g_i) for i < k, else 0", reals=REALS_CWL),
    Family("NERR10", NERR10, "Not (but nearly) ERR, eq. 10: C(i) = p (1 - g(i))."
           + CWL_NOTE, path="own",
           params=CWL_PARAMS + (Param("p", "float", 0.9, low=0.0, high=1.0),),
           level_free=True, check=_cwl_check,
           examples=("NERR10(max_rel=3)", "NERR10(p=0.5,max_rel=2)"),
           formula=CWL_FORMULA + "C(i) = p (1 - g_i)", reals=REALS_CWL),
    Family("NERR11", NERR11, "Not (but nearly) ERR, eq. 11: C(i) = ((i + 2T - 1) / "
           "(i + 2T))^2 (1 - g(i))." + CWL_NOTE, path="own", params=CWL_PARAMS + (CWL_T,),
           level_free=True, check=_cwl_check,
           examples=("NERR11(max_rel=3)", "NERR11(T=2,max_rel=2)"),
           formula=CWL_FORMULA + "C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i)", reals=REALS_CWL),
    Family("INST", INST, "INST (Moffat et al. 2015): C(i) = ((i + T + T_i - 1) / "
           "(i + T + T_i))^2, T_i = T - the gain so far." + CWL_NOTE, path="own",
           params=CWL_PARAMS + (CWL_T,), level_free=True, check=_cwl_check,
           examples=("INST(max_rel=3)", "INST(T=3,max_rel=3)"),
           formula=CWL_FORMULA + "C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - (g_1 + "
                   "... + g_i)", reals=REALS_CWL),
    Family("INSQ", INSQ, "INSQ (Moffat et al. 2012): C(i) = ((i + 2T - 1) / (i + 2T))^2."
           + CWL_NOTE, path="own", params=CWL_PARAMS + (CWL_T,), level_free=True,
           check=_cwl_check, examples=("INSQ(max_rel=3)", "INSQ(T=2,min_rel=-1,max_rel=1)"),
           formula=CWL_FORMULA + "C(i) = ((i + 2T - 1) / (i + 2T))^2", reals=REALS_CWL),
    Family("alpha_nDCG", ALPHA_NDCG, "alpha-nDCG (Clarke et al. 2008) as ndeval: novelty-"
           "discounted gains over the greedy ideal's." + DIVERSITY_NOTE, path="subtopics",
           cutoff=RANK, cutoff_required=True, params=(REL, ALPHA),
           examples=("alpha_nDCG@5", "alpha_nDCG(alpha=0.3)@3", "alpha_nDCG(rel=2)@10"),
           formula="sum over i <= k of gain_i / log2(i + 1), divided by the same sum of the "
                   "greedy ideal ranking (at each rank the judged document of the largest "
                   "gain); 0 when the run gains nothing" + DIVERSITY_GAIN),
    Family("alpha_DCG", ALPHA_DCG, "alpha-DCG as ndeval: over the DCG of a ranking relevant "
           "to every intent at every rank." + DIVERSITY_NOTE, path="subtopics", cutoff=RANK,
           cutoff_required=True, params=(REL, ALPHA), examples=("alpha_DCG@5",),
           formula="sum over i <= k of gain_i / log2(i + 1), divided by the sum over i <= k "
                   "of |S| (1 - alpha)^(i-1) / log2(i + 1)" + DIVERSITY_GAIN),
    Family("ERR_IA", ERR_IA, "Intent-aware ERR as ndeval: alpha is each intent's stop "
           "probability, over a ranking relevant to every intent at every rank."
           + DIVERSITY_NOTE, path="subtopics", cutoff=RANK, cutoff_required=True,
           params=(REL, ALPHA), examples=("ERR_IA@5", "ERR_IA(alpha=0.7)@2"),
           formula="sum over i <= k of gain_i / i, divided by the sum over i <= k of |S| "
                   "(1 - alpha)^(i-1) / i" + DIVERSITY_GAIN),
    Family("nERR_IA", NERR_IA, "Intent-aware ERR over the greedy ideal's (ndeval)."
           + DIVERSITY_NOTE, path="subtopics", cutoff=RANK, cutoff_required=True,
           params=(REL, ALPHA), examples=("nERR_IA@5", "nERR_IA@1"),
           formula="sum over i <= k of gain_i / i, divided by the same sum of the greedy "
                   "ideal ranking" + DIVERSITY_GAIN),
    Family("NRBP", NRBP, "Novelty- and rank-biased precision (Clarke et al. 2009) as "
           "ndeval, over the whole ranking." + DIVERSITY_NOTE, path="subtopics",
           params=(REL, ALPHA, Param("beta", "float", 0.5, low=0.0, high=1.0,
                                     doc="persistence")),
           examples=("NRBP", "NRBP(alpha=0.3,beta=0.8)"),
           formula="(1 - (1 - alpha) beta) / |S| sum over i <= n of beta^(i-1) gain_i"
                   + DIVERSITY_GAIN),
    Family("nNRBP", NNRBP, "NRBP over the greedy ideal's (ndeval; 0 where it has no "
           "intent, where ndeval divides 0 by 0)." + DIVERSITY_NOTE, path="subtopics",
           params=(REL, ALPHA, Param("beta", "float", 0.5, low=0.0, high=1.0,
                                     doc="persistence")),
           examples=("nNRBP", "nNRBP(beta=0.8)"),
           formula="NRBP divided by the NRBP of the greedy ideal ranking; 0 when that is 0"
                   + DIVERSITY_GAIN),
    Family("P_IA", P_IA, "Intent-aware precision: relevant (document, intent) pairs in the "
           "top k over k S (ndeval)." + DIVERSITY_NOTE, path="subtopics", cutoff=RANK,
           cutoff_required=True, examples=("P_IA@5", "P_IA(rel=2)@3"),
           formula="sum over i <= k of |{s : d_i relevant to s}|, divided by k |S|"),
    Family("StRecall", ST_RECALL, "Subtopic recall: the intents covered in the top k over S "
           "(ndeval's strec)." + DIVERSITY_NOTE, path="subtopics", cutoff=RANK,
           cutoff_required=True, examples=("StRecall@5", "StRecall@1"),
           formula="|{s : some d_i, i <= k, is relevant to s}| / |S|"),
    Family("AP_IA", AP_IA, "Intent-aware average precision (ndeval's MAP-IA): each intent's "
           "AP over the whole ranking, averaged over the intents." + DIVERSITY_NOTE,
           path="subtopics", aliases=("MAP_IA",), examples=("AP_IA", "AP_IA(rel=2)"),
           formula="mean over the intents s of (sum of P_s@i over the ranks i <= n with d_i "
                   "relevant to s, divided by R_s); P_s@i: the documents relevant to s in the "
                   "top i, over i; R_s: the judged documents relevant to s"),
    Family("Unj", UNJ, "Fraction of the top k that is unjudged.", cutoff=RANK,
           cutoff_required=True, params=(), unjudged=True,
           trec=(TrecName("unj", 40, "cut", (5, 10, 20), cut=True),), versions=("10.0",),
           examples=("Unj@3",), formula="#{i <= k : d_i not judged, or of a negative label} / k",
           ties="mean gain", reals="compared"),
    Family("Hole", UNJ, "Share of the top k that no query of the qrels judges (BEIR's and "
           "MTEB's hole@k: a document any query judges, with any label, is annotated; "
           "BEIR averages over the run's queries and rounds to 5 decimals).", cutoff=RANK,
           cutoff_required=True, params=(), unjudged=True, anywhere=True, aliases=("hole",),
           examples=("Hole@3",), formula="#{i <= k : no query of the qrels judges d_i} / k",
           reals="compared"),
    *(Family(name, kind, doc + PREFS_NOTE, path="prefs", params=(), empty="value",
             aggregate="sum" if kind in PREFS_COUNTS else "mean",
             integer=kind in PREFS_COUNTS, trec=(TrecName(trec, 36 + k / 100,
                                                          all_trec=False),),
             formula=formula + PREFS_FULFILLED)
      for k, (name, kind, trec, doc, formula) in enumerate(PREFS_FAMILIES, 1)),
    Family("APAvgJG", AP, "Average precision averaged over the query's judgment groups "
           "(trec_eval's map_avgjg)." + GROUPS_NOTE, path="groups", per_group="AP",
           trec=(TrecName("map_avgjg", 36.15, all_trec=False),),
           formula="mean over the query's judgment groups of AP on the group's judgments"),
    Family("PAvgJG", P, "Precision at k averaged over the query's judgment groups "
           "(trec_eval's P_avgjg)." + GROUPS_NOTE, path="groups", per_group="P", cutoff=RANK,
           cutoff_required=True, trec=(TrecName("P_avgjg", 36.16, "cut", TREC_CUTOFFS,
                                                cut=True, all_trec=False),),
           examples=("PAvgJG@1", "PAvgJG@5"),
           formula="mean over the query's judgment groups of P@k on the group's judgments"),
    Family("RprecMultAvgJG", RPREC_MULT, "Precision at rank (long)(mult * R + 0.9) "
           "averaged over the query's judgment groups (trec_eval's Rprec_mult_avgjg)."
           + GROUPS_NOTE, path="groups", per_group="RprecMult", cutoff=MULT,
           cutoff_required=True, trec=(TrecName("Rprec_mult_avgjg", 36.17, "cut", TREC_MULTS,
                                                cut=True, all_trec=False),),
           examples=("RprecMultAvgJG@0.2", "RprecMultAvgJG@1.5"),
           formula="mean over the query's judgment groups of RprecMult@x on the group's judgments"),
)}

#: trec_eval names: name -> (family, TrecName); and the order trec_eval prints them in.
TREC_NAMES = {t.name: (f.name, t) for f in FAMILIES.values() for t in f.trec}
TREC_ORDER = ("runid",) + tuple(sorted(TREC_NAMES, key=lambda n: TREC_NAMES[n][1].order))

#: trec_eval's "official" measure set (printed when no -m is given), in its print order.
OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")

NICKNAMES = {
    "official": ("runid",) + OFFICIAL,
    "all_trec": ("runid",) + tuple(n for n in TREC_ORDER[1:] if TREC_NAMES[n][1].all_trec),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
    "all_prefs": ("runid", "num_q") + tuple(trec for _, _, trec, *_ in PREFS_FAMILIES),
    "prefs": ("runid", "num_q") + tuple(trec for _, _, trec, *_ in PREFS_FAMILIES[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

_ALIASES = {alias: f.name for f in FAMILIES.values() for alias in f.aliases}
_RANX = {name: (f.name, {}) for f in FAMILIES.values() for name in f.ranx}
_RANX.update({"ndcg_burges": ("nDCG", {"dcg": "exp-log2"}),
              "dcg_burges": ("DCG", {"dcg": "exp-log2"})})


# -- the measures users define ---------------------------------------------------------------
#: The families users define (:mod:`fastir.measures.user`), by name, and their aliases: a
#: table of their own, which the registry consults after the built-ins (``FAMILIES`` holds
#: the built-ins only and is never edited).
_USER = {}
_USER_ALIASES = {}


def family_of(name):
    """The family named ``name``: a built-in, else a user's (KeyError for neither)."""
    found = FAMILIES.get(name)
    return found if found is not None else _USER[name]


def families():
    """Every family, the built-ins first, then those users defined."""
    return {**FAMILIES, **_USER}


def user_families():
    """The families users defined, by name."""
    return dict(_USER)


def user_family(name):
    """The user family ``name`` names (its name or an alias), or None."""
    return _USER.get(_USER_ALIASES.get(name, name))


def add_user_family(family):
    """Put a user's ``family`` in the user table, in place of the user family of its name
    (and that one's aliases). A ValueError when its name or an alias names a built-in
    measure in any dialect (:func:`names_a_builtin`)."""
    for text in (family.name, *family.aliases):
        if names_a_builtin(text):
            raise ValueError(f"define_measure: {text!r} names a built-in measure; choose "
                             "another name")
    remove_user_family(family.name, missing_ok=True)
    _USER[family.name] = family
    for alias in family.aliases:
        _USER_ALIASES[alias] = family.name


def remove_user_family(name, missing_ok=False):
    """Take the user family ``name`` and its aliases out of the user table."""
    family = _USER.pop(name, None)
    if family is None:
        if missing_ok:
            return
        raise KeyError(name)
    for alias in family.aliases:
        _USER_ALIASES.pop(alias, None)


def names_a_builtin(text):
    """Whether ``text`` names a built-in measure in any dialect (``P_5``, ``ndcg_cut_10``,
    ``P@5``, ``map``, ``hits``...), or one of trec_eval's output lines (``runid``), even
    with parameters a built-in refuses (``P_x``)."""
    if text in known_names(users=False) or text in TREC_ORDER:
        return True
    try:
        parse(text, users=False)
    except UnknownNameError:
        return False
    except (UnknownMeasureError, ValueError):
        return True
    return True


# -- measures --------------------------------------------------------------------------
class Measure:
    """One measure: a family with its cutoff and parameters. ``str()`` is canonical.

    Parameters read as attributes (``m.rel``, ``m.p``: the family's default when not given).
    ``label`` is the trec_eval output name when it cannot be derived (``utility_2,-1,0,0``);
    it is not part of the identity.
    """

    __slots__ = ("family", "cutoff", "values", "label")

    def __init__(self, family, cutoff=None, label=None, **values):
        spec = family_of(family)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "cutoff", cutoff)
        object.__setattr__(self, "values", tuple((name, values[name]) for name in spec.params
                                                 if values.get(name, spec.params[name].default)
                                                 != spec.params[name].default))
        object.__setattr__(self, "label", label)

    def __setattr__(self, name, value):
        raise AttributeError("measures are immutable")

    def __getattr__(self, name):
        spec = family_of(self.family)
        if name not in spec.params:
            raise AttributeError(f"{self.family} has no parameter {name!r}")
        return dict(self.values).get(name, spec.params[name].default)

    @property
    def spec(self):
        return family_of(self.family)

    def _key(self):
        return self.family, self.cutoff, self.values

    def __eq__(self, other):
        return isinstance(other, Measure) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Measure({str(self)!r})"

    def __reduce__(self):  # (pickle would set the slots, which are read-only)
        measure_of = getattr(self.spec, "measure_of", None)
        if measure_of is not None:  # (a user's measure: its family travels with it)
            return measure_of, (self.cutoff, self.values, self.label)
        return _measure, (self.family, self.cutoff, self.values, self.label)

    def __str__(self):
        spec = self.spec
        params = [f"{name}={spec.params[name].text(value)}" for name, value in self.values]
        text = self.family + (f"({','.join(params)})" if params else "")
        if self.cutoff is not None:
            text += f"@{self.cutoff:g}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        return text

    def cut(self):
        """The cutoff, or its parameter's default when none is given (relstring: 10)."""
        return self.spec.cutoff.default if self.cutoff is None else self.cutoff

    def trec_name(self):
        """The trec_eval output name (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``)."""
        if self.label:
            return self.label
        names = self.spec.trec
        plain = next((t.name for t in names if not t.cut), None)
        cut = next((t.name for t in names if t.cut), plain)
        if self.spec.cutoff in (RECALL, MULT):
            return f"{cut}_{self.cutoff:3.2f}"
        if self.family == "RelString":
            return plain if self.cut() == DEPTH.default else f"{plain}_{self.cutoff}"
        return plain if self.cutoff is None else f"{cut}_{self.cutoff}"


def how(parsed):
    """How each measure of ``parsed`` is summarised over queries: its ``aggregate``'s code
    for the summary kernel (:data:`HOW`)."""
    return np.array([HOW[m.spec.aggregate] for m in parsed], dtype=np.int64)


def _measure(family, cutoff, values, label):
    return Measure(family, cutoff, label=label, **dict(values))


def make(family_name, cutoff=None, label=None, **params):
    """A validated :class:`Measure` (parameter values may be text, as parsed)."""
    f = family_of(family_name)
    cutoff = _check_cutoff(f, cutoff)
    values = {}
    for key, value in params.items():
        if key not in f.params:
            raise UnknownMeasureError(f"{family_name} has no parameter {key!r} "
                                      f"(it takes {', '.join(f.params) or 'none'})")
        values[key] = f.params[key].convert(family_name, value)
    missing = [name for name, p in f.params.items() if p.required and name not in values]
    if missing:
        example = ",".join(f"{name}=3" for name in missing)
        raise UnknownMeasureError(f"{family_name} needs {', '.join(missing)} (e.g. "
                                  f"{family_name}({example}){'@10' if f.cutoff_required else ''})")
    wrong = f.check and f.check({name: values.get(name, p.default)
                                 for name, p in f.params.items()})
    if wrong:
        raise UnknownMeasureError(f"{family_name}: {wrong}")
    return Measure(family_name, cutoff, label=label, **values)


def _check_cutoff(f, cutoff):
    if f.cutoff is None:
        if cutoff is not None:
            raise UnknownMeasureError(f"{f.name} takes no cutoff (got @{cutoff})")
        return None
    if cutoff is None:
        if not f.cutoff_required:
            return None
        example = "@0.5" if f.cutoff is RECALL else "@1.0" if f.cutoff is MULT else "@10"
        raise UnknownMeasureError(f"{f.name} needs a cutoff, e.g. {f.name}{example}")
    return f.cutoff.convert(f.name, cutoff)


def parse(name, users=True):
    """Measures named by ``name`` (one, or several for trec_eval lists like ``P.5,10``);
    ``users``: the measures users define are known too.

    Returns a list of ``(key, Measure)``. The key rule: a trec_eval name is keyed as
    trec_eval (and pytrec_eval) print it (``P.5`` -> ``P_5``; ``P.5,10`` -> ``P_5``, ``P_10``);
    any other name is its own key, as written (a measure object of ir_measures: its text).
    """
    if isinstance(name, Measure):
        return [(str(name), name)]
    if not isinstance(name, str):
        if type(name).__module__.startswith("ir_measures"):  # its measure objects, by text
            return parse(str(name), users)
        raise TypeError(f"measure names are strings (or ir_measures measures), got {name!r}")
    text = name.strip()
    if text in NICKNAMES:  # trec_eval's measure sets: every member, keyed by its trec name
        return [(m.trec_name(), m) for base in NICKNAMES[text] if base != "runid"
                for m in parse_trec(base)]
    dialects = (_parse_ir, _parse_ranx, parse_trec)
    if text in TREC_NAMES:  # bare trec_eval names first: "P" means trec_eval's P cutoffs
        dialects = (parse_trec,)
    for dialect in dialects:
        measures = dialect(text, users) if dialect is _parse_ir else dialect(text)
        if measures is not None:
            if dialect is parse_trec:
                return [(m.trec_name(), m) for m in measures]
            return [(name, measures[0])]
    if users and load_installed():  # (the measures installed packages define: then known)
        return parse(name)
    raise UnknownNameError(_unknown_message(name))


def parse_all(names):
    """``parse`` every name; returns (keys, measures), rejecting a key given twice."""
    if isinstance(names, (str, Measure)):
        names = [names]
    keys, measures = [], []
    for name in names:
        for key, measure in parse(name):
            if key in keys:
                raise ValueError(f"measure {key!r} requested twice")
            keys.append(key)
            measures.append(measure)
    if not measures:
        raise ValueError("no measures requested")
    return keys, measures


_IR_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\((.*)\))?(?:@([0-9]*\.?[0-9]+))?$")
_RANX_RE = re.compile(r"^([a-z][a-z0-9_\-]*?)(?:@([0-9]+))?(?:-l(-?[0-9]+))?$")
_RANX_RBP_RE = re.compile(r"^rbp[.@]([0-9]+)(?:-l(-?[0-9]+))?$")
_RANX_WHOLE = {"P": "SetP", "R": "SetR"}  # ranx's precision / recall without k


def _split_params(text):
    """Split ``a=1, gains='1=3,2=9', recalls={...}`` at commas outside quotes and braces."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current)
    return parts


def _parse_ir(text, users=True):
    m = _IR_RE.match(text)
    if not m:
        return None
    family = m.group(1)
    if family not in FAMILIES:
        user = user_family(family) if users else None
        family = _ALIASES.get(family) if user is None else user.name
        if family is None:
            return None
    params = {}
    if m.group(2):
        for item in _split_params(m.group(2)):
            if "=" not in item:
                raise UnknownMeasureError(f"{text!r}: parameter {item.strip()!r} must be "
                                          "name=value")
            key, value = (s.strip() for s in item.split("=", 1))
            params[key] = value.strip("'\"")
    family = _ir_spelling(family, params)
    return [make(family, m.group(3), **params)]


def _ir_spelling(family, params):
    """ir_measures' spellings of other families: ``NumRet(rel=1)`` is NumRelRet (it prints
    NumRelRet so), ``SetP(relative=True)`` is SetRelP (``params`` loses the flag)."""
    if family == "NumRet" and "rel" in params:
        return "NumRelRet"
    if family == "SetP" and "relative" in params:
        relative = params.pop("relative")
        if relative not in ("True", "False"):
            raise UnknownMeasureError(f"SetP: relative must be True or False, got {relative!r}")
        return "SetRelP" if relative == "True" else family
    return family


def _parse_ranx(text):
    rbp = _RANX_RBP_RE.match(text)
    if rbp:  # rbp.95: persistence 0.95, the labels as gains
        params = {"p": f"0.{rbp.group(1)}", "scaled": "False"}
        if rbp.group(2) is not None:
            params["rel"] = rbp.group(2)
        return [make("RBP", **params)]
    m = _RANX_RE.match(text)
    if not m or m.group(1) not in _RANX:
        return None
    if m.group(2) is None and m.group(3) is None and m.group(1) in TREC_NAMES:
        return None  # plain "map", "ndcg", "bpref": trec_eval names, same measures
    family, params = _RANX[m.group(1)]
    if m.group(2) is None and family in _RANX_WHOLE:  # precision: of the whole ranking
        family = _RANX_WHOLE[family]
    params = dict(params)
    if m.group(3) is not None:
        params["rel"] = m.group(3)
    return [make(family, m.group(2), **params)]


def parse_trec(text):
    """Measures of a trec_eval name (``map``, ``P_5``, ``P.5,10``, ``ndcg.1=3``), or None."""
    base, dot, raw = text.partition(".")
    if not (dot and base in TREC_NAMES):
        if text in TREC_NAMES:
            base, raw = text, None
        else:
            base, _, raw = text.rpartition("_")
            if base not in TREC_NAMES or TREC_NAMES[base][1].style is None or not raw:
                return None
    family, name = TREC_NAMES[base]
    if raw is None:
        if name.style == "cut":
            return [_trec_cut(family, v) for v in name.defaults]
        return [make(family)]
    if name.style is None:
        raise UnknownMeasureError(f"trec_eval measure {base!r} takes no parameters")
    if name.style == "cut":
        values = raw.split(",")
        if any(not _is_number(v) for v in values):
            raise UnknownMeasureError(f"{base}: parameters must be numbers, got {raw!r}")
        numbers = [trec_cutoff(family, v) for v in values]
        if len(set(numbers)) < len(numbers):
            raise UnknownMeasureError(f"{base}: a cutoff is given twice in {raw!r} (trec_eval "
                                      "refuses duplicate cutoffs)")
        return [_trec_cut(family, v) for v in sorted(numbers)]
    return [_trec_single(base, family, raw)]


def trec_cutoff(family, text):
    """A cutoff of a trec_eval list (``P.5,10``) as trec_eval reads it, as a float: a recall
    level or multiple of R with ``atof``, a rank with ``atol``, which reads the leading
    integer (``1e1`` is 1, ``23.9`` is 23, ``.5`` is 0; beyond a long it saturates).
    Infinities stay as they are (trec_eval reads them as 0 and refuses them: so does
    :func:`make`)."""
    number = float(text)
    if FAMILIES[family].cutoff in (RECALL, MULT) or not math.isfinite(number):
        return number
    digits = re.match(r"\s*([+-]?[0-9]*)", text).group(1)
    whole = int(digits) if digits.strip("+-") else 0
    return float(max(-(2**63), min(whole, 2**63 - 1)))


def _trec_cut(family, value):
    number = float(value)
    if FAMILIES[family].cutoff in (RECALL, MULT) or not math.isfinite(number) \
            or abs(number) > MAX_CUTOFF:
        return make(family, number)  # (out of range: make says so)
    return make(family, int(number))  # trec_eval truncates (atol): 23.4 -> 23


def _trec_single(base, family, raw):
    """trec_eval's single-valued measures with parameters, named ``base_<raw>``."""
    label = f"{base}_{raw}"
    values = raw.split(",")
    if family == "RelString":
        return make(family, _relstring_depth(raw), label=label)
    if family == "SetF":
        return make(family, beta=raw, label=label)
    if family == "Utility":
        if len(values) != 4:
            raise UncomputableMeasureError(f"utility needs 4 coefficients, got {raw!r}")
        return make(family, label=label, **dict(zip("abcd", values)))
    if family == "IPrecAvg":
        return make(family, recalls=raw, label=label)
    if family == "RBP":
        if not raw.startswith("p=") or "," in raw:
            raise UnknownMeasureError(f"rbp takes only p=..., got {raw!r}")
        return make(family, p=raw[2:], label=label)
    return make(family, gains=raw, label=label)


def _relstring_depth(raw):
    """relstring's depth as trec_eval reads it: a number (0 prints ''), 10 by default."""
    try:
        depth = float(raw)
    except ValueError:
        raise UnknownMeasureError(f"relstring: depth {raw!r} is not a number") from None
    if not (math.isfinite(depth) and 0 <= depth <= MAX_CUTOFF):
        raise UnknownMeasureError(f"relstring: depth must be from 0 to {MAX_CUTOFF}, got {raw!r}")
    return int(depth)


def _is_number(text):
    """A number as strtod reads a whole parameter (Python's ``1_0`` is not one)."""
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return "_" not in str(text)


def known_names(users=True):
    """Every family, alias and dialect base name, for suggestions and documentation
    (``users``: the user families' and aliases too)."""
    names = set(FAMILIES) | set(_ALIASES) | set(_RANX) | set(TREC_NAMES)
    return sorted(names | set(_USER) | set(_USER_ALIASES) if users else names)


def _unknown_message(name):
    import difflib

    base = re.split(r"[@(._\-]", str(name).strip(), maxsplit=1)[0] or str(name)
    close = difflib.get_close_matches(str(name), known_names(), n=4, cutoff=0.5)
    close += [c for c in difflib.get_close_matches(base, known_names(), n=4, cutoff=0.5)
              if c not in close]
    hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
    return (f"unknown measure {name!r}{hint} "
            "(names: ir_measures 'nDCG@10', trec_eval 'ndcg_cut_10', ranx 'ndcg@10')")


#: The entry-point group an installed package lists its measures in (each entry: a
#: function :func:`fastir.measures.user.define_measure` made, or a callable that defines
#: measures when called).
ENTRY_POINTS = "fastir.measures"
_installed_loaded = False


def load_installed():
    """Define the measures installed packages list in the ``fastir.measures`` entry-point
    group (once per process): each entry is a function
    :func:`~fastir.measures.user.define_measure` made (loading its module defines it), or a
    callable that defines measures when called. Returns the entries' names."""
    global _installed_loaded
    if _installed_loaded:
        return []
    _installed_loaded = True
    from importlib.metadata import entry_points

    names = []
    for entry in entry_points(group=ENTRY_POINTS):
        try:
            value = entry.load()
            if callable(value) and not hasattr(value, "fastir_measure"):
                value()
        except Exception as exc:
            raise ValueError(f"the measures of entry point {entry.name!r} ({entry.value}, "
                             f"group {ENTRY_POINTS}) could not be defined: "
                             f"{type(exc).__name__}: {exc}") from None
        names.append(entry.name)
    return names
