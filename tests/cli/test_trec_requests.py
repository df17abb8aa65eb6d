"""trec_eval measure requests as users write them, read alike by ``fastir trec_eval -m`` and by
the pytrec_eval switch (both through :mod:`fastir.measures.trec_requests`).

A drawn request is a list of names: a subset of the trec_eval names of 9.0.8 (pytrec_eval's
trec_eval) in any order, bare or with parameters, the nicknames, repeats, bad names. Where
the peers read a request the same way (each name with one parameter text at most: trec_eval
keeps the first of two, pytrec_eval merges them), the command line and the switch must ask
for the same measures in the same order, or both refuse the request."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastir.cli.trec_output import trec_columns, trec_measures
from fastir.measures.registry import (
    FAMILIES,
    MULT,
    RECALL,
    TREC_CUTOFFS,
    TREC_NAMES,
    UnknownMeasureError,
)
from fastir.measures.trec_requests import style
from fastir.peers.pytrec_eval import _requested, supported_measures

pytestmark = pytest.mark.one_engine

BASES = sorted(supported_measures)
#: Parameters of the single-valued measures (one text each: see the module doc).
SINGLE = {"set_F": ["0.5", "2"], "utility": ["2,-1,0,0"], "relstring": ["3", "0"],
          "ndcg": ["1=3,2=9", "0=0"], "ndcg_rel": ["1=2"], "iprec_at_recall": []}
BAD = ["bogus", "P.x", "map.5", "ndcg_cut.0", "set_F.x", "Map", "official.5"]
NICKNAMES = ["official", "set", "all_trec"]


@st.composite
def params(draw, base):
    """A parameter text of ``base`` (or None: the bare name)."""
    if style(base) == "cut" and draw(st.booleans()):
        if FAMILIES[TREC_NAMES[base][0]].cutoff in (RECALL, MULT):
            values = st.sampled_from(["0.1", "0.25", "0.5", "1.0", "0.00"])
        else:
            values = st.integers(1, 1200).map(str)
        return ",".join(draw(st.lists(values, min_size=1, max_size=3, unique=True)))
    if style(base) == "single" and SINGLE.get(base) and draw(st.booleans()):
        return draw(st.sampled_from(SINGLE[base]))
    return None


@st.composite
def requests(draw):
    """Names as users write them: subsets, orders, parameters, repeats, bad names."""
    bases = draw(st.lists(st.sampled_from(BASES), max_size=6, unique=True))
    names = []
    for base in bases:
        text = draw(params(base))
        written = base if text is None else f"{base}.{text}"
        names += [written] * draw(st.integers(1, 2))  # (a repeat, as written)
        if text is not None and draw(st.booleans()):
            names.append(base)  # the bare name beside its parameters
    extra = st.sampled_from(NICKNAMES + (BAD if draw(st.booleans()) else []))
    names += draw(st.lists(extra, max_size=2))
    return draw(st.permutations(names))


def command_line(request):
    """The measures ``fastir trec_eval --compat 9.0.8 -m ...`` prints, by name, or the
    error's type."""
    try:
        columns, cannot = trec_columns(trec_measures(request, "9.0.8"), "qrels")
    except (UnknownMeasureError, ValueError):
        return "refused"
    if cannot is not None:
        return "refused"
    return [(name, measure) for _, name, measure in columns]


def switch(request):
    """The measures ``fastir.pytrec_eval.RelevanceEvaluator`` evaluates, by name."""
    try:
        pairs = _requested(request)
    except (UnknownMeasureError, ValueError):
        return "refused"
    return [("runid" if m is None else m.trec_name(), m) for _, m in pairs]


@settings(max_examples=150, deadline=None)
@given(requests())
def test_the_command_line_and_the_switch_read_requests_alike(request):
    got = command_line(request)
    assert got == switch(request), request
    if not any(name in BAD for name in request):
        assert got != "refused", request


@pytest.mark.parametrize("request_, cli_names, switch_names", [
    (["P.5", "P.10"], ["P_5"], ["P_5", "P_10"]),  # trec_eval: the first; pytrec_eval: all
    (["P", "P_5"], [f"P_{k}" for k in TREC_CUTOFFS], ["P_5"]),  # trec_eval: P@5 added
    (["P.5,5"], "refused", ["P_5"]),  # trec_eval refuses a cutoff twice; pytrec_eval: once
])
def test_where_the_peers_read_apart(request_, cli_names, switch_names):
    """What each peer's own rule reads differently (trec_requests' two merges)."""
    got = command_line(request_)
    assert (got if got == "refused" else [name for name, _ in got]) == cli_names
    assert [name for name, _ in switch(request_)] == switch_names
