"""The measure registry and measure names.

A :class:`Measure` is a family plus parameters; its canonical string (ir_measures syntax,
e.g. ``nDCG@10``, ``P(rel=2)@5``, ``nDCG(dcg='exp-log2')@10``) is its identity. Names are
accepted in three dialects:

- ir_measures: ``AP``, ``AP@100``, ``P(rel=2)@5``, ``RR@10``, ``R@1000``, ``nDCG@10``,
  ``Success@5``, ``IPrec@0.1``, ``Rprec``, ``Bpref``, ``NumRet`` ...
- trec_eval: ``map``, ``P_5``, ``P.5,10``, ``ndcg_cut_10``, ``ndcg_cut.10,20``, ``recip_rank``,
  ``recall_1000``, ``iprec_at_recall_0.10``, ``gm_map`` ... (a bare ``P`` or ``ndcg_cut`` means
  trec_eval's default cutoffs).
- ranx: ``ndcg@10``, ``ndcg_burges@10``, ``precision@5``, ``recall@100``, ``mrr@10``,
  ``map@100``, ``hit_rate@5``, ``r-precision``, ``bpref``, with ``-l2`` for relevance level 2.

Adding a measure is adding one :class:`Family` to ``FAMILIES`` (and its kernel case).
"""

import difflib
import re
from dataclasses import dataclass

from fastir import kernels as K

#: trec_eval's default parameters of its cutoff measures.
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
TREC_SUCCESS = (1, 5, 10)

GAINS = {"log2": K.GAIN_LINEAR, "exp-log2": K.GAIN_EXP}


@dataclass(frozen=True)
class Family:
    """A kind of measure: its kernel case, aggregation, parameters and trec_eval name.

    ``cutoff`` is "none", "optional", "required" or "recall" (the ``@`` value is a recall
    level in [0, 1]). ``aggregate`` is "mean", "sum" or "gmean" (geometric, trec_eval gm_*).
    ``trec`` is the trec_eval base name; ``trec_cut`` the base name when a cutoff is given.
    """

    name: str
    kind: int
    cutoff: str = "none"
    aggregate: str = "mean"
    params: tuple = ("rel",)
    trec: str | None = None
    trec_cut: str | None = None
    integer: bool = False
    doc: str = ""


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
    Family("RR", K.RR, cutoff="optional", trec="recip_rank",
           doc="Reciprocal rank of the first relevant document (within the cutoff)."),
    Family("IPrec", K.IPREC, cutoff="recall", trec="iprec_at_recall",
           doc="Interpolated precision at a recall level (trec_eval 10.0 rounding)."),
    Family("P", K.P, cutoff="required", trec="P", doc="Precision at k."),
    Family("R", K.RECALL, cutoff="required", trec="recall", doc="Recall at k."),
    Family("nDCG", K.NDCG, cutoff="optional", params=("rel", "dcg"), trec="ndcg",
           trec_cut="ndcg_cut",
           doc="nDCG; gains are the labels (dcg='log2') or 2^label-1 (dcg='exp-log2'); "
               "the ideal ranks every judged document."),
    Family("DCG", K.DCG, cutoff="optional", params=("rel", "dcg"),
           doc="Discounted cumulative gain (gains as nDCG's), not normalised."),
    Family("Success", K.SUCCESS, cutoff="required", trec="success",
           doc="1 if a relevant document is in the top k."),
    Family("SetP", K.SET_P, trec="set_P", doc="Precision of the whole ranking."),
    Family("SetR", K.SET_R, trec="set_recall", doc="Recall of the whole ranking."),
    Family("SetF", K.SET_F, params=("rel", "beta"), trec="set_F",
           doc="F-measure of the whole ranking (beta=1 by default)."),
)}

_ALIASES = {  # alternative ir_measures spellings
    "MAP": "AP", "MRR": "RR", "Precision": "P", "Recall": "R", "RPrec": "Rprec",
    "BPref": "Bpref", "NDCG": "nDCG", "SetRelP": None,
}

_RANX = {  # ranx name -> (family, extra params)
    "precision": ("P", {}), "recall": ("R", {}), "mrr": ("RR", {}), "map": ("AP", {}),
    "ndcg": ("nDCG", {}), "ndcg_burges": ("nDCG", {"dcg": "exp-log2"}),
    "dcg": ("DCG", {}), "dcg_burges": ("DCG", {"dcg": "exp-log2"}),
    "hit_rate": ("Success", {}), "r-precision": ("Rprec", {}), "bpref": ("Bpref", {}),
}

_TREC = {  # trec_eval base name -> (family, extra params, default params or None)
    "num_q": ("NumQ", None), "num_ret": ("NumRet", None), "num_rel": ("NumRel", None),
    "num_rel_ret": ("NumRelRet", None), "num_nonrel_judged_ret": ("NumNonRelJudgedRet", None),
    "map": ("AP", None), "gm_map": ("GMAP", None), "Rprec": ("Rprec", None),
    "bpref": ("Bpref", None), "recip_rank": ("RR", None), "ndcg": ("nDCG", None),
    "set_P": ("SetP", None), "set_recall": ("SetR", None), "set_F": ("SetF", None),
    "P": ("P", TREC_CUTOFFS), "recall": ("R", TREC_CUTOFFS), "map_cut": ("AP", TREC_CUTOFFS),
    "ndcg_cut": ("nDCG", TREC_CUTOFFS), "success": ("Success", TREC_SUCCESS),
    "iprec_at_recall": ("IPrec", TREC_RECALLS),
}

#: trec_eval's "official" measure set (printed when no -m is given), in its print order.
OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P")


@dataclass(frozen=True)
class Measure:
    """One measure: a family with its cutoff and parameters. ``str()`` is canonical."""

    family: str
    cutoff: float | int | None = None
    rel: int | None = None
    dcg: str = "log2"
    beta: float = 1.0

    @property
    def spec(self):
        return FAMILIES[self.family]

    def __str__(self):
        params = []
        if self.rel is not None:
            params.append(f"rel={self.rel}")
        if self.dcg != "log2":
            params.append(f"dcg='{self.dcg}'")
        if self.beta != 1.0:
            params.append(f"beta={self.beta:g}")
        text = self.family + (f"({','.join(params)})" if params else "")
        if self.cutoff is not None:
            text += f"@{self.cutoff:g}" if isinstance(self.cutoff, float) else f"@{self.cutoff}"
        return text

    def trec_name(self):
        """The trec_eval output name (``P_5``, ``ndcg_cut_10``, ``iprec_at_recall_0.10``)."""
        f = self.spec
        if f.cutoff == "recall":
            return f"{f.trec}_{self.cutoff:3.2f}"
        if self.cutoff is None:
            return f.trec
        return f"{f.trec_cut or f.trec}_{self.cutoff}"


class UnknownMeasureError(ValueError):
    """A measure name that no dialect recognises; the message suggests close matches."""


_IR_RE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)(?:\(([^()]*)\))?(?:@([0-9]*\.?[0-9]+))?$")
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


def _make(family_name, cutoff=None, **params):
    f = FAMILIES[family_name]
    if f.cutoff == "none" and cutoff is not None:
        raise UnknownMeasureError(f"{family_name} takes no cutoff (got @{cutoff})")
    if f.cutoff == "required" and cutoff is None:
        raise UnknownMeasureError(f"{family_name} needs a cutoff, e.g. {family_name}@10")
    if f.cutoff == "recall":
        if cutoff is None:
            raise UnknownMeasureError(f"{family_name} needs a recall level, e.g. "
                                      f"{family_name}@0.5")
        cutoff = float(cutoff)
        if not 0.0 <= cutoff <= 1.0:
            raise UnknownMeasureError(f"{family_name} recall level must be in [0, 1]")
    elif cutoff is not None:
        if float(cutoff) != int(float(cutoff)) or int(float(cutoff)) < 1:
            raise UnknownMeasureError(f"cutoff must be a positive integer, got {cutoff}")
        cutoff = int(float(cutoff))
    for key in params:
        if key not in f.params:
            raise UnknownMeasureError(f"{family_name} has no parameter {key!r} "
                                      f"(it takes {', '.join(f.params) or 'none'})")
    if "dcg" in params and params["dcg"] not in GAINS:
        raise UnknownMeasureError(f"dcg must be one of {sorted(GAINS)}, got {params['dcg']!r}")
    if "rel" in params:
        params["rel"] = int(params["rel"])
    if "beta" in params:
        params["beta"] = float(params["beta"])
        if params["beta"] < 0:
            raise UnknownMeasureError("beta must be >= 0")
    return Measure(family_name, cutoff, **params)


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
        for item in m.group(2).split(","):
            if "=" not in item:
                raise UnknownMeasureError(f"{text!r}: parameter {item.strip()!r} must be "
                                          "name=value")
            key, value = (s.strip() for s in item.split("=", 1))
            params[key] = value.strip("'\"")
    return [_make(family, m.group(3), **params)]


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
    return [_make(family, m.group(2), **params)]


def parse_trec(text):
    """Measures of a trec_eval name (``map``, ``P_5``, ``P.5,10``, ``ndcg_cut``), or None."""
    base, dot, plist = text.partition(".")
    if dot and base in _TREC:
        values = [v for v in plist.split(",")]
        if any(v == "" for v in values):
            raise UnknownMeasureError(f"{text!r}: empty parameter in list")
        return [_trec_measure(base, v) for v in _sorted_params(base, values)]
    if text in _TREC:
        family, defaults = _TREC[text]
        if defaults is None:
            return [_make(family)]
        return [_trec_measure(text, v) for v in defaults]
    base, _, value = text.rpartition("_")
    if base in _TREC and _TREC[base][1] is not None and value:
        return [_trec_measure(base, value)]
    return None


def _sorted_params(base, values):
    numeric = [float(v) for v in values] if all(_is_number(v) for v in values) else None
    if numeric is None:
        raise UnknownMeasureError(f"{base}: parameters must be numbers, got {values}")
    return sorted(set(numeric))


def _is_number(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _trec_measure(base, value):
    family, defaults = _TREC[base]
    if defaults is None:
        raise UnknownMeasureError(f"trec_eval measure {base!r} takes no parameters")
    if not _is_number(value):
        raise UnknownMeasureError(f"{base}: parameter {value!r} is not a number")
    if FAMILIES[family].cutoff == "recall":
        return _make(family, float(value))
    return _make(family, int(float(value)))  # trec_eval truncates (atol): 23.4 -> 23


def known_names():
    """Every family, alias and dialect base name, for suggestions and documentation."""
    return sorted(set(FAMILIES) | {a for a, f in _ALIASES.items() if f} | set(_RANX)
                  | set(_TREC))


def _unknown_message(name):
    base = re.split(r"[@(._\-]", str(name).strip(), maxsplit=1)[0] or str(name)
    close = difflib.get_close_matches(str(name), known_names(), n=4, cutoff=0.5)
    close += [c for c in difflib.get_close_matches(base, known_names(), n=4, cutoff=0.5)
              if c not in close]
    hint = f"; did you mean {', '.join(close[:5])}?" if close else ""
    return (f"unknown measure {name!r}{hint} "
            "(names: ir_measures 'nDCG@10', trec_eval 'ndcg_cut_10', ranx 'ndcg@10')")
