"""Independent naive reference implementation of fastir's measures.

Every measure is written straight from its definition in plain Python (standard library
only, nothing imported from ``fastir``), one query at a time, so the fast numba kernels can
be checked against it. Clarity and exactness matter more than speed.

The authority is trec_eval 10.0 (usnistgov/trec_eval, files ``m_*.c``,
``form_res_rels.c``, ``meas_avg.c``). Where it matters for last-bit agreement the
floating-point operations are done in trec_eval's order: sums are sequential in rank
order starting from 0.0, the same divisions are made (``a / b``, never ``a * (1 / b)``),
the discount is ``gain / log2(rank + 1)`` with the C library's ``log2``, and summaries are
a sequential sum divided by the count.

Relevance codes (as in ``form_res_rels.c``): a retrieved doc gets its qrels label when
the label is >= 0, ``-2`` (RELVALUE_UNJUDGED, "pooled but unjudged") when it is in the
qrels with a negative label, and ``-1`` (RELVALUE_NONPOOL) when it is absent from the
qrels. Codes -1 and -2 are never relevant.

The less common trec_eval measures (infAP, binG, G, ndcg_rel, Rndcg, dcg / ideal_dcg, ndcg
with gain overrides, rbp, ...) are line-by-line ports of their ``m_*.c`` loops, since their
exact value depends on details of those loops (gain table order, early loop exits). An
empty ``run_q`` stands for a topic missing from the run (trec_eval ``-c``) and scores what
trec_eval prints for it. ``compat="9.0.8"`` selects trec_eval 9.0.8 behaviour: scores
rounded to float32 before ranking and ``(long)(x * R + 0.9)`` recall counts.

One module per family of measures, as fastir's kernels are laid out: ``precision`` (relevant
counts), ``dcg`` (gains, and trec_eval's gain table: ``gain_init.c``, shared by ndcg, dcg,
ideal_dcg, ndcg_rel, Rndcg, G and rbp), ``own`` (bpref, infAP, rbp, Judged, Compat), ``err``,
``cwl``, ``diversity`` (ndeval's), ``prefs`` (preference judgments and judgment groups); a
family's function takes ``codes``, the final ranked list of relevance codes. ``base`` holds
the building blocks, ``table`` the reference table (:data:`REFERENCES`: how each family is
computed), ``entry`` the entry points re-exported here, ``check`` a self-check
(``python -m naive`` from tests/).
"""

from __future__ import annotations

from .base import judge, rank, relstring_of
from .diversity import diversity
from .entry import aggregate, evaluate, evaluate_groups, evaluate_prefs, measure, parse, relstring
from .prefs import PrefsError, prefs_counts, prefs_values
from .table import REFERENCES

__all__ = ["REFERENCES", "rank", "judge", "measure", "aggregate", "evaluate", "parse",
           "relstring", "relstring_of", "diversity", "evaluate_prefs", "evaluate_groups",
           "PrefsError", "prefs_counts", "prefs_values"]
