"""What tests/engine/test_every_door.py draws and how it judges a door's answer.

- :func:`qrels_and_runs`: judgments and a run with ties, unjudged documents and queries
  missing on either side (:func:`tidy`: without empty queries, which files cannot hold).
- :func:`measures`: a measure of the registry (every family that reads qrels), with drawn
  parameters and cutoff, written in one of the dialects that name it (ir_measures'
  canonical form, trec_eval's, ranx's, an alias); :func:`requests`: several of them.
- :func:`options`: :func:`fastir.evaluate`'s options, drawn; :func:`asks`: a request and
  options, :func:`dense_asks`: a request, level and tie mode of ``evaluate_matrix``.
- :func:`expect`: ``fastir.evaluate``'s answer (its Results, or the error it raises).
- :func:`check`, :func:`assert_same`, :func:`assert_refused`: a door's values equal the
  reference's to 1e-12, or its error names a measure of the request or an option given.
"""

import math

from checks import useful
from conftest import LABELS, SCORES
from hypothesis import event
from hypothesis import strategies as st

import fastir
from fastir.measures import registry
from fastir.measures.registry import DEPTH, FAMILIES, MULT, RANK, RECALL

#: The families a door that reads qrels can be asked for (not subtopic, preference or
#: judgment-group judgments, nor a user's measures).
QRELS_FAMILIES = sorted(name for name, f in FAMILIES.items()
                        if f.path not in ("subtopics", "prefs", "groups")
                        and type(f) is registry.Family)
#: Those ranx names (``rbp.95`` is RBP's).
RANX_FAMILIES = [name for name in QRELS_FAMILIES if FAMILIES[name].ranx or name == "RBP"]
#: Those a dense batch takes (no unjudged documents there).
DENSE_FAMILIES = [name for name in QRELS_FAMILIES if not FAMILIES[name].unjudged]

TOLERANCE = 1e-12
_FLOATS = (-1.0, 0.0, 0.1, 0.25, 0.5, 0.8, 0.95, 1.0, 2.0, 3.0)
_GAINS = (0.0, 1.0, 2.0, 2.5, 10.0)


def _float(draw, p):
    """A float of ``p``'s range (its open or closed bounds) from a small set."""
    inside = [x for x in _FLOATS if (p.low < x < p.high if p.open else p.low <= x <= p.high)]
    return draw(st.sampled_from(inside))


def _gains(draw):
    table = draw(st.dictionaries(st.integers(0, 3), st.sampled_from(_GAINS), min_size=1,
                                 max_size=3))
    return ",".join(f"{label}={gain:g}" for label, gain in sorted(table.items()))


def _value(draw, family, p):
    """A value of parameter ``p`` of ``family``, as a user gives it."""
    if p.kind == "level":
        return draw(st.integers(0, 3))
    if p.kind == "rank":  # (max_grade: the labels go up to 3; 2 is refused, by name)
        return draw(st.integers(2 if p.name == "max_grade" else 1, 6))
    if p.kind == "choice":
        return draw(st.sampled_from(p.choices))
    if p.kind == "bool":
        return draw(st.booleans())
    if p.kind == "gains":
        return _gains(draw)
    if p.kind == "levels":
        levels = draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=1,
                               max_size=3, unique=True))
        return ",".join(f"{r:g}" for r in levels)
    if p.kind == "float":
        return _float(draw, p)
    raise AssertionError(f"{family}: no draw for parameter kind {p.kind!r}")


def _cutoff(draw, f):
    if f.cutoff is None or (not f.cutoff_required and draw(st.booleans())):
        return None
    if f.cutoff is RANK:
        return draw(st.integers(1, 6))
    if f.cutoff is DEPTH:
        return draw(st.integers(0, 6))
    if f.cutoff is RECALL:
        return draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))
    if f.cutoff is MULT:
        return draw(st.sampled_from([0.2, 0.5, 1.0, 1.5, 2.0]))
    raise AssertionError(f"{f.name}: no draw for its cutoff")


@st.composite
def measure_objects(draw, families=QRELS_FAMILIES):
    """A :class:`~fastir.Measure` of a drawn family: its cutoff and some of its parameters
    drawn (the required ones always; judged_only seldom: few doors take it per measure)."""
    f = FAMILIES[draw(st.sampled_from(families))]
    params = {}
    for name, p in f.params.items():
        if name in ("min_rel", "max_rel"):
            continue
        wanted = draw(st.integers(0, 5)) == 0 if name == "judged_only" else draw(st.booleans())
        if p.required or wanted:
            params[name] = _value(draw, f.name, p)
    if "max_rel" in f.params:  # (C/W/L: min_rel < max_rel)
        low = draw(st.integers(-1, 2))
        params["max_rel"] = low + draw(st.integers(1, 3))
        if low != 0 or draw(st.booleans()):
            params["min_rel"] = low
    return registry.make(f.name, _cutoff(draw, f), **params)


def spellings(m, ranx=False):
    """The names users write for ``m`` that fastir reads as ``m`` alone: its canonical
    form, an alias's, trec_eval's (``P_5``, ``ndcg.1=3,2=9``, ``map``) and ranx's
    (``ndcg@10``, ``precision@5-l2``, ``rbp.95``); ``ranx``: ranx's only."""
    f = m.spec
    values = dict(m.values)
    level = f"-l{values['rel']}" if "rel" in values else ""
    at = "" if m.cutoff is None else f"@{m.cutoff}"
    burges = {"nDCG": ["ndcg_burges"], "DCG": ["dcg_burges"]}.get(m.family, [])
    names = [f"{name}{at}{level}" for name in (*f.ranx, *burges)]
    if m.family == "RBP" and str(m.p).startswith("0."):
        names.append(f"rbp.{str(m.p)[2:]}" + (f"-l{m.rel}" if m.rel is not None else ""))
    if not ranx:
        canonical = str(m)
        names = [canonical] + [alias + canonical[len(m.family):] for alias in f.aliases] + \
            [m.trec_name()] + names
        for t in f.trec:
            if t.style == "single" and set(values) == {"gains"}:
                names.append(f"{t.name}." + ",".join(f"{k}={g:g}" for k, g in values["gains"]))
    out = []
    for name in filter(None, names):
        try:
            parsed = registry.parse(name)
        except ValueError:
            continue
        if len(parsed) == 1 and parsed[0][1] == m and name not in out:
            out.append(name)
    return out


@st.composite
def measures(draw, families=QRELS_FAMILIES):
    """A measure as a user writes it: (the name, its :class:`~fastir.Measure`)."""
    m = draw(measure_objects(families))
    return draw(st.sampled_from(spellings(m))), m


@st.composite
def requests(draw, families=QRELS_FAMILIES, max_size=4):
    """Distinct measures in a drawn order, each as a user writes it: a list of names."""
    names, keys = [], set()
    for name, _ in draw(st.lists(measures(families), min_size=1, max_size=max_size)):
        key = registry.parse(name)[0][0]
        if key not in keys:
            keys.add(key)
            names.append(name)
    return names


@st.composite
def options(draw, compat=True):
    """Options of :func:`fastir.evaluate`, each at its default or drawn."""
    out = {}
    if draw(st.booleans()):
        out["relevance_level"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        out["missing"] = draw(st.sampled_from(["zero", "skip"]))
    if draw(st.booleans()):
        out["ties"] = draw(st.sampled_from(["trec_eval", "input", "expected"]))
    if out.get("ties") != "expected" and draw(st.integers(0, 3)) == 0:
        out["max_docs"] = draw(st.integers(0, 5))
    if draw(st.integers(0, 3)) == 0:
        out["judged_only"] = True
    if draw(st.integers(0, 3)) == 0:
        out["unjudged"] = draw(st.sampled_from(["relevant", ("relevant", 2)]))
    if draw(st.booleans()):
        out["num_docs"] = draw(st.sampled_from([20, 100]))
    if compat and draw(st.integers(0, 4)) == 0:
        out["compat"] = "9.0.8"
    return out


#: Ids as TREC files hold them: prefixes shared ("d1" < "d10" < "d2" in byte order), text
#: that reads as an integer ("7" and "007" are two docs, "3" and "003" two queries).
QUERY_IDS = ["q1", "q2", "q10", "3", "003", "20"]
DOC_IDS = st.sampled_from(["d1", "d10", "d2", "d20", "d3", "D3", "e", "é", "d5#x", "d6",
                           "d7", "d8", "7", "007", "10"])


@st.composite
def qrels_and_runs(draw):
    """Qrels of 1 to 4 queries (graded labels, -1 too) and a run over the same small
    vocabulary of docs (so: tied scores, unjudged docs), lacking some judged queries
    (often) and holding some queries without judgments (sometimes)."""
    queries = draw(st.lists(st.sampled_from(QUERY_IDS), min_size=1, max_size=4, unique=True))
    judged = queries[:max(1, len(queries) - draw(st.integers(0, 1)))]
    qrels = {q: draw(st.dictionaries(DOC_IDS, LABELS, min_size=1, max_size=8)) for q in judged}
    ranked = [q for q in queries if q not in judged or draw(st.integers(0, 3))]
    run = {q: draw(st.dictionaries(DOC_IDS, SCORES, min_size=1, max_size=8)) for q in ranked}
    return qrels, run


def _for_ties(draw, families, ties):
    """``families``, most often cut to those with an expected value over tie orders when
    ``ties`` is "expected" (the others are refused: a request of them tests little else)."""
    if ties != "expected" or draw(st.integers(0, 3)) == 0:
        return families
    return [f for f in families if FAMILIES[f].ties is not None]


@st.composite
def asks(draw, families=QRELS_FAMILIES, compat=True):
    """(a request, options): what a user asks of a door that takes evaluate's options."""
    opts = draw(options(compat))
    return draw(requests(_for_ties(draw, families, opts.get("ties")))), opts


@st.composite
def dense_asks(draw, ties=("column", "trec_eval", "input", "average", "expected")):
    """(a request, relevance level, ties) of evaluate_matrix: its tie modes."""
    tie = draw(st.sampled_from(ties))
    families = _for_ties(draw, DENSE_FAMILIES, tie)
    if tie == "average" and draw(st.booleans()):  # (nDCG and DCG are what it averages)
        families = ["nDCG", "DCG"]
    return draw(requests(families)), draw(st.integers(0, 3)), tie


def tidy(qrels, run):
    """Drawn qrels and run without queries of no document (a file cannot hold those)."""
    return ({q: docs for q, docs in qrels.items() if docs},
            {q: docs for q, docs in run.items() if docs})


def expect(qrels, run, request, **options):
    """``fastir.evaluate``'s answer: its Results, or the error it raises."""
    try:
        return fastir.evaluate(qrels, run, request, **options)
    except (ValueError, TypeError) as exc:
        return exc


def close(got, want):
    """Equal to 1e-12 (relative for large values), NaN equal to NaN."""
    if isinstance(want, str) or isinstance(got, str):
        return got == want
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def names_of(request, options=()):
    """What a refusal may name: each measure as written, canonical and by family; each
    option given (its keyword, and its value when it is text)."""
    out = []
    for name in request:
        for _, m in registry.parse(name):
            out += [name, str(m), m.family]
    for key in options:
        out.append(key)
        value = options[key] if isinstance(options, dict) else None
        if isinstance(value, str):
            out.append(value)
    return out


def assert_refused(exc, door, request, options=()):
    """The door's error names a measure of ``request`` or an option of ``options``
    (raised by fastir itself: a ValueError or TypeError)."""
    try:
        useful(exc, *names_of(request, options))
    except AssertionError as failed:
        raise AssertionError(f"{door}: {request} {dict(options)}: refused without naming "
                             f"the measure or option: {type(exc).__name__}: {exc}") from failed


class Table:
    """Reference values put together (as a Results reads): ``rows`` {query: {key: value}},
    ``mean`` {key: summary}."""

    def __init__(self, query_ids, measures, rows, mean):
        self.query_ids, self.measures, self.rows, self.mean = query_ids, measures, rows, mean

    def to_dict(self):
        return self.rows


def assert_same_results(door, want, got):
    """The door's Results equal evaluate's: keys, queries, values, summaries, texts."""
    assert list(got.measures) == list(want.measures), \
        f"{door}: keys {got.measures} != evaluate's {want.measures}"
    rows = got.to_dict()
    assert_same(door, want, got.query_ids,
                [[rows[q][k] for k in got.measures] for q in got.query_ids], got.mean)


def assert_same(door, want, got_ids, got_values, got_means=None, keys=None):
    """The door's per-query values (``got_values[i][j]``: query ``got_ids[i]``, measure
    ``j``, in the request's order; None: the door gives none) and means (``{key: mean}``)
    equal the reference Results ``want``'s. ``keys``: the columns of ``want`` to compare
    (default all)."""
    keys = list(want.measures) if keys is None else keys
    rows = want.to_dict()
    ids = [str(q) for q in got_ids]
    assert ids == [str(q) for q in want.query_ids], \
        f"{door}: queries {ids} != evaluate's {[str(q) for q in want.query_ids]}"
    for qid, row in zip(want.query_ids, () if got_values is None else got_values):
        for key, got in zip(keys, row):
            assert close(got, rows[qid][key]), \
                f"{door}: {key} on query {qid!r}: {got!r} != evaluate's {rows[qid][key]!r}"
    if got_means is not None:
        means = want.mean
        for key in keys:
            if key in means:
                assert key in got_means, f"{door}: no mean of {key} (evaluate's {means[key]!r})"
                assert close(got_means[key], means[key]), \
                    f"{door}: mean {key}: {got_means[key]!r} != evaluate's {means[key]!r}"


def check(door, want, call, request, options, compare):
    """Run ``call()`` (the door) and judge it against ``want`` (:func:`expect`'s answer):
    where evaluate refuses the door must refuse too; where evaluate answers, the door
    answers the same (``compare(got)`` asserts it) or refuses by name."""
    try:
        got = call()
    except (ValueError, TypeError) as exc:
        event(f"{door}: refused")
        assert_refused(exc, door, request, options)
        return None
    event(f"{door}: answered")
    assert not isinstance(want, Exception), \
        f"{door}: {request} {dict(options)} answered where evaluate refuses ({want})"
    compare(got)
    return got
