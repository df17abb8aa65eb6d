"""ranx.fusion's functions, computed by fastir: each method (``comb_sum(runs)``,
``rrf(runs, k=60)``, ``rbc(runs, phi)``...) and the trainable ones' training
(``probfuse_train(qrels, runs, n_segments)``...), with ranx's signatures and defaults and
ranx's names of the fused runs. Runs are fused as given (ranx's ``fuse`` normalises first:
:func:`fastir.ranx.fuse`); definitions in :mod:`fastir.analysis.fusion.methods`.
"""

import numpy as np

from fastir.analysis.fusion.training import Hits
from fastir.peers.ranx import fused, trained

__all__ = ["bayesfuse", "bayesfuse_train", "bordafuse", "comb_anz", "comb_gmnz", "comb_max",
           "comb_med", "comb_min", "comb_mnz", "comb_sum", "condorcet", "isr", "log_isr",
           "logn_isr", "mapfuse_train", "mapfuse", "mixed", "posfuse_train", "posfuse",
           "probfuse_train", "probfuse", "rbc", "rrf", "segfuse_train", "segfuse",
           "slidefuse_train", "slidefuse", "weighted_bordafuse", "weighted_condorcet",
           "wmnz", "wsum", "fusion_switch", "get_candidates", "get_results",
           "_estimate_log_odds"]


def comb_sum(runs, name="comb_sum"):
    return fused(runs, "sum", name=name)


def comb_mnz(runs, name="comb_mnz"):
    return fused(runs, "mnz", name=name)


def comb_gmnz(runs, gamma, name="comb_gmnz"):
    return fused(runs, "gmnz", name=name, gamma=gamma)


def comb_max(runs, name="comb_max"):
    return fused(runs, "max", name=name)


def comb_min(runs, name="comb_min"):
    return fused(runs, "min", name=name)


def comb_med(runs, name="comb_med"):
    return fused(runs, "med", name=name)


def comb_anz(runs, name="comb_anz"):
    return fused(runs, "anz", name=name)


def wsum(runs, weights, name="weighted_sum"):
    return fused(runs, "wsum", name=name, weights=weights)


def mixed(runs, weights, name="mixed"):
    return fused(runs, "mixed", name=name, weights=weights)


def wmnz(runs, weights, name="wmnz"):
    return fused(runs, "wmnz", name=name, weights=weights)


def rrf(runs, k=60, name="rrf"):
    return fused(runs, "rrf", name=name, k=k)


def isr(runs, name="isr"):
    return fused(runs, "isr", name=name)


def log_isr(runs, name="log_isr"):
    return fused(runs, "log_isr", name=name)


def logn_isr(runs, sigma=0.01, name="logn_isr"):
    return fused(runs, "logn_isr", name=name, sigma=sigma)


def rbc(runs, phi, name="rbc"):
    return fused(runs, "rbc", name=name, phi=phi)


def bordafuse(runs, name="bordafuse"):
    return fused(runs, "bordafuse", name=name)


def weighted_bordafuse(runs, weights, name="weighted_bordafuse"):
    return fused(runs, "w_bordafuse", name=name, weights=weights)


def condorcet(runs, name="condorcet"):
    return fused(runs, "condorcet", name=name)


def weighted_condorcet(runs, weights, name="weighted_condorcet"):
    return fused(runs, "w_condorcet", name=name, weights=weights)


def mapfuse(runs, map_scores, name="mapfuse"):
    return fused(runs, "mapfuse", name=name, map_scores=map_scores)


def mapfuse_train(qrels, runs):
    return trained(qrels, runs, "mapfuse")


def posfuse(runs, probs, name="posfuse"):
    return fused(runs, "posfuse", name=name, probs=probs)


def posfuse_train(qrels, runs):
    return trained(qrels, runs, "posfuse")


def probfuse(runs, probs, name="probfuse"):
    return fused(runs, "probfuse", name=name, probs=probs)


def probfuse_train(qrels, runs, n_segments):
    return np.array(trained(qrels, runs, "probfuse", n_segments=n_segments))


def segfuse(runs, probs, name="segfuse"):
    return fused(runs, "segfuse", name=name, probs=probs)


def segfuse_train(qrels, runs):
    return trained(qrels, runs, "segfuse")


def slidefuse(runs, probs, w, name="slidefuse"):
    return fused(runs, "slidefuse", name=name, probs=probs, w=w)


def slidefuse_train(qrels, runs):
    return trained(qrels, runs, "slidefuse")


def bayesfuse(runs, log_odds, name="bayesfuse"):
    return fused(runs, "bayesfuse", name=name, log_odds=log_odds)


def bayesfuse_train(qrels, runs):
    return trained(qrels, runs, "bayesfuse")


_FUNCTIONS = {"bayesfuse": bayesfuse, "bordafuse": bordafuse, "anz": comb_anz,
              "gmnz": comb_gmnz, "max": comb_max, "med": comb_med, "min": comb_min,
              "mnz": comb_mnz, "sum": comb_sum, "condorcet": condorcet, "isr": isr,
              "log_isr": log_isr, "logn_isr": logn_isr, "mapfuse": mapfuse, "mixed": mixed,
              "posfuse": posfuse, "probfuse": probfuse, "rbc": rbc, "rrf": rrf,
              "segfuse": segfuse, "slidefuse": slidefuse, "w_bordafuse": weighted_bordafuse,
              "w_condorcet": weighted_condorcet, "wmnz": wmnz, "wsum": wsum}


def fusion_switch(method):
    """ranx's ``fusion_switch``: the function of a method name of :func:`fastir.ranx.fuse`."""
    if method not in _FUNCTIONS:
        raise ValueError(f"Fusion method {method} not supported.")
    return _FUNCTIONS[method]


# -- ranx's helpers its tests import --------------------------------------------------------
def get_candidates(runs):
    """Per query of the first run, the docs any run retrieved for it (ranx's helper; runs
    as ``{query: {doc: score}}`` tables, ``run.run``): numba typed lists, as ranx's."""
    return _typed_lists([list(dict.fromkeys(d for run in runs for d in run[q]))
                         for q in runs[0].keys()])


def get_results(runs):
    """Per query of the first run, each run's docs in ranked order (ranx's helper): numba
    typed lists, as ranx's."""
    return _typed_lists([_typed_lists([list(run[q].keys()) for run in runs])
                         for q in runs[0].keys()])


def _typed_lists(lists):
    """A numba typed list of typed lists of text ids (an empty one typed as ranx's)."""
    from numba import types
    from numba.typed import List

    typed = List()
    for items in lists:
        typed.append(items if isinstance(items, List) else
                     List(items) if items else List.empty_list(types.unicode_type))
    return typed


def _estimate_log_odds(hit_lists, cut_offs):
    """bayesfuse's log odds of one run's hit lists (one 0/1 array per query) over the
    segments ``cut_offs[i]:cut_offs[i + 1]`` (ranx's helper)."""
    cutoffs = np.asarray(list(cut_offs), dtype=np.int64)
    hits = Hits.of_lists(hit_lists)
    return hits.log_odds(np.arange(len(hits.run)), cutoffs)
