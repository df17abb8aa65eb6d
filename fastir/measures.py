"""The measure registry and measure names.

A :class:`Measure` is a family plus parameters; its canonical string (ir_measures syntax,
e.g. ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``) is its identity. Names are
accepted in three dialects:

- ir_measures: ``AP``, ``AP@100``, ``P(rel=2)@5``, ``RR@10``, ``R@1000``, ``nDCG@10``,
  ``Success@5``, ``IPrec@0.1``, ``Rprec``, ``Bpref``, ``infAP``, ``RBP(p=0.8)``, ``NumRet`` ...
- trec_eval: ``map``, ``P_5``, ``P.5,10``, ``ndcg_cut_10``, ``ndcg_cut.10,20``, ``recip_rank``,
  ``recall_1000``, ``iprec_at_recall_0.10``, ``ndcg.1=3,2=9``, ``utility.2,-1,0,0`` ... (a bare
  ``P`` or ``ndcg_cut`` means trec_eval's default cutoffs; ``official``, ``all_trec`` and
  ``set`` are its measure sets).
- ranx: ``ndcg@10``, ``ndcg_burges@10``, ``precision@5``, ``recall@100``, ``mrr@10``,
  ``map@100``, ``hit_rate@5``, ``r-precision``, ``bpref``, with ``-l2`` for relevance level 2.

Adding a measure is adding one :class:`Family` to ``FAMILIES`` (and its kernel case).
"""

import math
import re
from dataclasses import dataclass, field

from fastir import kernels as K

#: The largest rank cutoff, relevance level or gain label (labels are 32-bit integers).
MAX_CUTOFF = 2**31 - 1

#: trec_eval's default parameters of its cutoff measures.
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
TREC_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

GAINS = {"log2": K.GAIN_LINEAR, "exp-log2": K.GAIN_EXP}
STRING = -1  # kernel kind of measures whose value is text (relstring)


@dataclass(frozen=True)
class Family:
    """A kind of measure: its kernel case, aggregation, parameters and trec_eval name.

    ``cutoff``: "none", "optional", "required" (a rank), "recall" (a level in [0, 1]) or
    "mult" (a positive multiple of R). ``aggregate``: "mean", "sum" or "gmean" (geometric,
    trec_eval's gm_*). ``trec``: trec_eval's base name; ``trec_cut``: its name with a cutoff.
    ``level_free``: the relevance level does not apply (gain-based measures).
    """

    name: str
    kind: int
    cutoff: str = "none"
    aggregate: str = "mean"
    params: tuple = ("rel",)
    trec: str | None = None
    trec_cut: str | None = None
    integer: bool = False
    level_free: bool = False
    since_10: bool = False  # absent from trec_eval 9.0.8
    doc: str = ""


_GAIN_PARAMS = ("gains",)
FAMILIES = {f.name: f for f in (
    Family("NumQ", K.NUM_Q, aggregate="sum", params=(), trec="num_q", integer=True,
           doc="Number of queries (1 per query)."),
    Family("NumRet", K.NUM_RET, aggregate="sum", params=(), trec="num_ret", integer=True,
           doc="Number of ranked documents (after max_docs / judged_only)."),
    Family("NumRel", K.NUM_REL, aggregate="sum", trec="num_rel", integer=True,
           doc="Number of judged documents with label >= rel."),
    Family("NumRelRet", K.NUM_REL_RET, aggregate="sum", trec="num_rel_ret", integer=True,
           doc="Number of relevant documents retrieved."),
    Family("NumNonRelJudgedRet", K.NUM_NONREL_JUDGED_RET, aggregate="sum",
           trec="num_nonrel_judged_ret", integer=True,
           doc="Number of judged non-relevant documents retrieved."),
    Family("AP", K.AP, cutoff="optional", trec="map", trec_cut="map_cut",
           doc="Average precision (divided by the number of relevant documents R)."),
    Family("GMAP", K.AP, aggregate="gmean", trec="gm_map",
           doc="Average precision, summarised by the geometric mean (values floored at 1e-5)."),
    Family("Rprec", K.RPREC, trec="Rprec", doc="Precision at rank R."),
    Family("Bpref", K.BPREF, trec="bpref", doc="Binary preference (Buckley & Voorhees)."),
    Family("GMBpref", K.BPREF, aggregate="gmean", trec="gm_bpref",
           doc="Bpref, summarised by the geometric mean (values floored at 1e-5)."),
    Family("RR", K.RR, cutoff="optional", trec="recip_rank",
           doc="Reciprocal rank of the first relevant document (within the cutoff)."),
    Family("IPrec", K.IPREC, cutoff="recall", trec="iprec_at_recall",
           doc="Interpolated precision at a recall level (trec_eval 10.0 rounding)."),
    Family("IPrecAvg", K.IPREC_AVG, params=("rel", "recalls"), trec="11pt_avg",
           doc="Interpolated precision averaged over recall levels (11 by default)."),
    Family("P", K.P, cutoff="required", trec="P", doc="Precision at k."),
    Family("R", K.RECALL, cutoff="required", trec="recall", doc="Recall at k."),
    Family("RelP", K.REL_P, cutoff="required", trec="relative_P",
           doc="Relevant in the top k divided by min(k, R)."),
    Family("RprecMult", K.RPREC_MULT, cutoff="mult", trec="Rprec_mult",
           doc="Precision at rank (long)(mult * R + 0.9)."),
    Family("nDCG", K.NDCG, cutoff="optional", params=("rel", "dcg", "gains"), trec="ndcg",
           trec_cut="ndcg_cut", level_free=True,
           doc="nDCG; gains are the labels (dcg='log2'), 2^label-1 (dcg='exp-log2') or a "
               "table (gains='1=3,2=9'); the ideal ranks every judged document."),
    Family("DCG", K.DCG, cutoff="optional", params=("rel", "dcg", "gains"), trec="dcg",
           level_free=True, doc="Discounted cumulative gain (gains as nDCG's)."),
    Family("IDCG", K.IDEAL_DCG, cutoff="optional", params=("rel", "dcg", "gains"),
           trec="ideal_dcg", level_free=True, doc="The ideal ranking's DCG."),
    Family("nDCGRel", K.NDCG_REL, params=("rel", "gains"), trec="ndcg_rel",
           doc="nDCG averaged over the ranks of the relevant documents."),
    Family("RnDCG", K.RNDCG, params=("rel", "gains"), trec="Rndcg",
           doc="nDCG averaged at the R levels where the ideal gain changes."),
    Family("G", K.G, params=("rel", "gains"), trec="G",
           doc="Gain discounted by the ideal gain still missing (trec_eval G)."),
    Family("BinG", K.BING, trec="binG", doc="Binary G (trec_eval binG)."),
    Family("infAP", K.INFAP, trec="infAP",
           doc="Inferred AP (Yilmaz & Aslam); pooled docs with a negative label are sampled."),
    Family("Success", K.SUCCESS, cutoff="required", trec="success",
           doc="1 if a relevant document is in the top k."),
    Family("SetP", K.SET_P, trec="set_P", doc="Precision of the whole ranking."),
    Family("SetR", K.SET_R, trec="set_recall", doc="Recall of the whole ranking."),
    Family("SetRelP", K.SET_REL_P, trec="set_relative_P",
           doc="Relevant retrieved divided by min(retrieved, R)."),
    Family("SetAP", K.SET_AP, trec="set_map", doc="Set precision times set recall."),
    Family("SetF", K.SET_F, params=("rel", "beta"), trec="set_F",
           doc="F of the whole ranking: (beta+1)PR/(beta P+R), beta unsquared as trec_eval."),
    Family("Utility", K.UTILITY, params=("rel", "a", "b", "c", "d"), trec="utility",
           doc="a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret (needs num_docs "
               "for d)."),
    Family("RBP", K.RBP, params=("p",), trec="rbp", level_free=True, since_10=True,
           doc="Rank-biased precision (gains = labels, scaled to [0, 1])."),
    Family("RBPResid", K.RBP_RESID, params=(), trec="rbp_resid", since_10=True,
           doc="Rank-biased precision's residual from unjudged documents (p = 0.9)."),
    Family("Unj", K.UNJ, cutoff="required", params=(), trec="unj", since_10=True,
           doc="Fraction of the top k that is unjudged."),
    Family("YAAP", K.YAAP, trec="yaap",
           doc="Yet another AP: log((1 + sum) / (1 + R - sum)) (Robertson)."),
    Family("RelString", STRING, cutoff="optional", aggregate="none", params=(),
           trec="relstring",
           doc="The labels of the top k (default 10) as text, as trec_eval's relstring."),
)}

_DEFAULTS = {"rel": None, "dcg": "log2", "beta": 1.0, "gains": None, "p": 0.9,
             "a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0, "recalls": TREC_RECALLS}

_ALIASES = {  # alternative ir_measures spellings
    "MAP": "AP", "MRR": "RR", "Precision": "P", "Recall": "R", "RPrec": "Rprec",
    "BPref": "Bpref", "NDCG": "nDCG", "binG": "BinG", "Rndcg": "RnDCG",
}

_RANX = {  # ranx name -> (family, extra params)
    "precision": ("P", {}), "recall": ("R", {}), "mrr": ("RR", {}), "map": ("AP", {}),
    "ndcg": ("nDCG", {}), "ndcg_burges": ("nDCG", {"dcg": "exp-log2"}),
    "dcg": ("DCG", {}), "dcg_burges": ("DCG", {"dcg": "exp-log2"}),
    "hit_rate": ("Success", {}), "r-precision": ("Rprec", {}), "bpref": ("Bpref", {}),
    "rbp": ("RBP", {}),
}

# trec_eval base name -> (family, parameter style, defaults). Styles: None (no parameters),
# "cut" (a list of cutoffs, one measure each), "single" (parameters of one measure,
# printed as ``name_<parameters as typed>``).
_TREC = {
    "num_q": ("NumQ", None, None), "num_ret": ("NumRet", None, None),
    "num_rel": ("NumRel", None, None), "num_rel_ret": ("NumRelRet", None, None),
    "num_nonrel_judged_ret": ("NumNonRelJudgedRet", None, None),
    "map": ("AP", None, None), "gm_map": ("GMAP", None, None), "Rprec": ("Rprec", None, None),
    "bpref": ("Bpref", None, None), "gm_bpref": ("GMBpref", None, None),
    "recip_rank": ("RR", None, None), "infAP": ("infAP", None, None),
    "binG": ("BinG", None, None), "set_P": ("SetP", None, None),
    "set_recall": ("SetR", None, None), "set_relative_P": ("SetRelP", None, None),
    "set_map": ("SetAP", None, None), "rbp_resid": ("RBPResid", None, None),
    "yaap": ("YAAP", None, None),
    "P": ("P", "cut", TREC_CUTOFFS), "recall": ("R", "cut", TREC_CUTOFFS),
    "map_cut": ("AP", "cut", TREC_CUTOFFS), "ndcg_cut": ("nDCG", "cut", TREC_CUTOFFS),
    "relative_P": ("RelP", "cut", TREC_CUTOFFS), "success": ("Success", "cut", (1, 5, 10)),
    "unj": ("Unj", "cut", (5, 10, 20)), "iprec_at_recall": ("IPrec", "cut", TREC_RECALLS),
    "Rprec_mult": ("RprecMult", "cut", TREC_MULTS),
    "ndcg": ("nDCG", "single", None), "ndcg_rel": ("nDCGRel", "single", None),
    "Rndcg": ("RnDCG", "single", None), "G": ("G", "single", None),
    "dcg": ("DCG", "single", None), "ideal_dcg": ("IDCG", "single", None),
    "rbp": ("RBP", "single", None), "utility": ("Utility", "single", None),
    "11pt_avg": ("IPrecAvg", "single", None), "relstring": ("RelString", "single", None),
    "set_F": ("SetF", "single", None),
}

#: trec_eval's "official" measure set (printed when no -m is given), in its print order.
OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")

ALL_TREC = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP",
             "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel",
             "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
             "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
             "rbp", "rbp_resid", "unj")

NICKNAMES = {
    "official": ("runid",) + OFFICIAL,
    "all_trec": ALL_TREC,
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
            "set_recall", "set_relative_P", "set_map", "set_F"),
}


@dataclass(frozen=True)
class Measure:
    """One measure: a family with its cutoff and parameters. ``str()`` is canonical.

    ``label`` is the trec_eval output name when it cannot be derived (``utility_2,-1,0,0``);
    it is not part of the identity.
    """

    family: str
    cutoff: float | int | None = None
    rel: int | None = None
    dcg: str = "log2"
    beta: float = 1.0
    gains: tuple | None = None  # ((label, gain), ...) sorted by label
    p: float = 0.9
    a: float = 1.0
    b: float = -1.0
    c: float = 0.0
    d: float = 0.0
    recalls: tuple = TREC_RECALLS
    label: str | None = field(default=None, compare=False)

    @property
    def spec(self):
        return FAMILIES[self.family]

    def __str__(self):
        params = []
        for name in ("rel", "dcg", "gains", "beta", "p", "a", "b", "c", "d", "recalls"):
            value = getattr(self, name)
            if value == _DEFAULTS[name]:
                continue
            if name == "dcg":
                params.append(f"dcg='{value}'")
            elif name == "gains":
                params.append("gains='" + ",".join(f"{k}={g:g}" for k, g in value) + "'")
            elif name == "recalls":
                params.append("recalls='" + ",".join(f"{r:g}" for r in value) + "'")
            else:
                params.append(f"{name}={value:g}")
        text = self.family + (f"({','.join(params)})" if params else "")
        if self.cutoff is not None:
            text += f"@{self.cutoff:g}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        return text

    def trec_name(self):
        """The trec_eval output name (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``)."""
        if self.label:
            return self.label
        f = self.spec
        if f.cutoff in ("recall", "mult"):
            return f"{f.trec}_{self.cutoff:3.2f}"
        if self.cutoff is None or f.name == "RelString":
            return f.trec if self.cutoff in (None, 10) else f"{f.trec}_{self.cutoff}"
        return f"{f.trec_cut or f.trec}_{self.cutoff}"


class UnknownMeasureError(ValueError):
    """A measure name that no dialect recognises; the message suggests close matches."""


_IR_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\((.*)\))?(?:@([0-9]*\.?[0-9]+))?$")
_RANX_RE = re.compile(r"^([a-z_\-]+?)(?:@([0-9]+))?(?:-l(-?[0-9]+))?$")


def parse(name):
    """Measures named by ``name`` (one, or several for trec_eval lists like ``P.5,10``).

    Returns a list of ``(key, Measure)``; ``key`` is ``name`` itself when it names one
    measure, otherwise each measure's trec_eval name.
    """
    if isinstance(name, Measure):
        return [(str(name), name)]
    if not isinstance(name, str):
        raise TypeError(f"measure names are strings, got {name!r}")
    text = name.strip()
    if text in NICKNAMES:  # trec_eval's measure sets: every member, keyed by its trec name
        return [(m.trec_name(), m) for base in NICKNAMES[text] if base != "runid"
                for m in parse_trec(base)]
    dialects = (_parse_ir, _parse_ranx, parse_trec)
    if text in _TREC:  # bare trec_eval names first: "P" means trec_eval's P cutoffs
        dialects = (parse_trec,)
    for dialect in dialects:
        measures = dialect(text)
        if measures is not None:
            if len(measures) == 1:
                return [(name, measures[0])]
            return [(m.trec_name(), m) for m in measures]
    raise UnknownMeasureError(_unknown_message(name))


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


def make(family_name, cutoff=None, label=None, **params):
    """A validated :class:`Measure` (parameter values may be text, as parsed)."""
    f = FAMILIES[family_name]
    cutoff = _check_cutoff(f, cutoff)
    values = {}
    for key, value in params.items():
        if key not in f.params:
            raise UnknownMeasureError(f"{family_name} has no parameter {key!r} "
                                      f"(it takes {', '.join(f.params) or 'none'})")
        values[key] = _convert(family_name, key, value)
    return Measure(family_name, cutoff, label=label, **values)


def _check_cutoff(f, cutoff):
    if f.cutoff == "none":
        if cutoff is not None:
            raise UnknownMeasureError(f"{f.name} takes no cutoff (got @{cutoff})")
        return None
    if cutoff is None:
        if f.cutoff in ("optional",):
            return None
        example = {"recall": "@0.5", "mult": "@1.0"}.get(f.cutoff, "@10")
        raise UnknownMeasureError(f"{f.name} needs a cutoff, e.g. {f.name}{example}")
    try:
        value = float(cutoff)
    except (TypeError, ValueError):
        raise UnknownMeasureError(f"{f.name}: cutoff {cutoff!r} is not a number") from None
    if not math.isfinite(value):
        raise UnknownMeasureError(f"{f.name}: cutoff must be finite, got {cutoff}")
    if f.cutoff == "recall":
        if not 0.0 <= value <= 1.0:
            raise UnknownMeasureError(f"{f.name} recall level must be in [0, 1], got {cutoff}")
        return value
    if f.cutoff == "mult":
        if not value >= 0.0:
            raise UnknownMeasureError(f"{f.name} multiple must be >= 0, got {cutoff}")
        return value
    lowest = 0 if f.name == "RelString" else 1  # relstring.0 prints an empty string
    if value != int(value) or not lowest <= int(value) <= MAX_CUTOFF:
        raise UnknownMeasureError(f"{f.name}: cutoff must be an integer from {lowest} to "
                                  f"{MAX_CUTOFF}, got {cutoff}")
    return int(value)


def _convert(family_name, key, value):
    if isinstance(value, str) and "_" in value:  # Python reads 1_0 as 10; strtod as 1
        raise UnknownMeasureError(f"{family_name}: bad value {value!r} for {key}")
    try:
        if key == "rel":
            level = int(value)
            if not 0 <= level <= MAX_CUTOFF:
                raise UnknownMeasureError(f"{family_name}: rel must be an integer from 0 to "
                                          f"{MAX_CUTOFF} (negative labels mark unjudged "
                                          f"documents), got {value!r}")
            return level
        if key == "dcg":
            if value not in GAINS:
                raise UnknownMeasureError(f"dcg must be one of {sorted(GAINS)}, got {value!r}")
            return value
        if key == "gains":
            return _gain_pairs(value)
        if key == "recalls":
            items = value if isinstance(value, (tuple, list)) else str(value).split(",")
            recalls = tuple(float(r) for r in items)
            if not recalls or any(not 0.0 <= r <= 1.0 for r in recalls):
                raise UnknownMeasureError("recalls must be levels in [0, 1]")
            return recalls
        number = float(value)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UnknownMeasureError):
            raise
        raise UnknownMeasureError(f"{family_name}: bad value {value!r} for {key}") from None
    if not math.isfinite(number):
        raise UnknownMeasureError(f"{family_name}: {key} must be finite, got {value!r}")
    if key == "beta" and number < 0:
        raise UnknownMeasureError("beta must be >= 0")
    if key == "p" and not 0.0 < number < 1.0:
        raise UnknownMeasureError("p must be in (0, 1)")
    return number


def _gain_pairs(value):
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
            raise UnknownMeasureError(f"gain label {label} is given twice")
        if not 0 <= label <= MAX_CUTOFF:
            raise UnknownMeasureError(f"gain labels must be integers from 0 to {MAX_CUTOFF}, "
                                      f"got {label}")
        pairs[label] = float(gain)
        if not math.isfinite(pairs[label]):
            raise UnknownMeasureError(f"gains must be finite numbers, got {gain!r} for label "
                                      f"{label}")
    return tuple(sorted(pairs.items()))


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


def _parse_ir(text):
    m = _IR_RE.match(text)
    if not m:
        return None
    family = m.group(1)
    if family not in FAMILIES:
        family = _ALIASES.get(family)
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
    return [make(family, m.group(3), **params)]


def _parse_ranx(text):
    m = _RANX_RE.match(text)
    if not m or m.group(1) not in _RANX:
        return None
    if m.group(2) is None and m.group(3) is None and m.group(1) in _TREC:
        return None  # plain "map", "ndcg", "bpref": trec_eval names, same measures
    family, params = _RANX[m.group(1)]
    params = dict(params)
    if m.group(3) is not None:
        params["rel"] = m.group(3)
    return [make(family, m.group(2), **params)]


def parse_trec(text):
    """Measures of a trec_eval name (``map``, ``P_5``, ``P.5,10``, ``ndcg.1=3``), or None."""
    base, dot, raw = text.partition(".")
    if not (dot and base in _TREC):
        if text in _TREC:
            base, raw = text, None
        else:
            base, _, raw = text.rpartition("_")
            if base not in _TREC or _TREC[base][1] is None or not raw:
                return None
    family, style, defaults = _TREC[base]
    if raw is None:
        if style == "cut":
            return [_trec_cut(family, v) for v in defaults]
        return [make(family)]
    if style is None:
        raise UnknownMeasureError(f"trec_eval measure {base!r} takes no parameters")
    if style == "cut":
        values = raw.split(",")
        if any(not _is_number(v) for v in values):
            raise UnknownMeasureError(f"{base}: parameters must be numbers, got {raw!r}")
        numbers = [float(v) for v in values]
        if FAMILIES[family].cutoff not in ("recall", "mult"):  # trec_eval truncates (atol)
            numbers = [float(int(n)) if abs(n) <= MAX_CUTOFF else n for n in numbers]
        if len(set(numbers)) < len(numbers):
            raise UnknownMeasureError(f"{base}: a cutoff is given twice in {raw!r} (trec_eval "
                                      "refuses duplicate cutoffs)")
        return [_trec_cut(family, v) for v in sorted(numbers)]
    return [_trec_single(base, family, raw)]


def _trec_cut(family, value):
    number = float(value)
    if FAMILIES[family].cutoff in ("recall", "mult") or not math.isfinite(number) \
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
            raise UnknownMeasureError(f"utility needs 4 coefficients, got {raw!r}")
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


def known_names():
    """Every family, alias and dialect base name, for suggestions and documentation."""
    return sorted(set(FAMILIES) | set(_ALIASES) | set(_RANX) | set(_TREC))


def _unknown_message(name):
    base = re.split(r"[@(._\-]", str(name).strip(), maxsplit=1)[0] or str(name)
    import difflib

    close = difflib.get_close_matches(str(name), known_names(), n=4, cutoff=0.5)
    close += [c for c in difflib.get_close_matches(base, known_names(), n=4, cutoff=0.5)
              if c not in close]
    hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
    return (f"unknown measure {name!r}{hint} "
            "(names: ir_measures 'nDCG@10', trec_eval 'ndcg_cut_10', ranx 'ndcg@10')")
