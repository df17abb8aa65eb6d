"""Requests of trec_eval measures, read in one place for ``fastir trec_eval -m`` and for
pytrec_eval's ``RelevanceEvaluator``.

A request is a list of names, each a nickname (``official``, ``set``, ``all_trec``: its
members), a trec_eval name with or without parameters (``P``, ``P.5,10``; pytrec_eval reads
``P_5`` too), or another name (the library's ``nDCG@10``, or a name no one knows).
:func:`read` gathers what the request gives for each trec_eval name, in the order given;
each peer then merges that by its own rule: :func:`trec_eval_params` (trec_eval: the first
parameters given) or :func:`pytrec_eval_params` (pytrec_eval: every cutoff given). Both give
``[(trec_eval name, parameters or None)]`` in trec_eval's print order, whose measures
:func:`fastir.measures.registry.parse_trec` reads.
"""

from fastir.measures.registry import NICKNAMES, TREC_NAMES, TREC_ORDER, trec_cutoff


class Given:
    """What a request gives for one trec_eval name: ``bare`` (named without parameters,
    itself or by a nickname), ``params`` (the parameter texts given, in order: ``5,10`` of
    ``P.5,10``) and ``cutoffs`` (the cutoffs named one at a time by the library's names, in
    order: ``5`` of ``P@5``)."""

    __slots__ = ("bare", "params", "cutoffs")

    def __init__(self):
        self.bare, self.params, self.cutoffs = False, [], []


def read(names, *, has, split, other=None):
    """``({trec_eval name: Given}, [the other names])`` of the request ``names`` (a string
    is one name), in the order given.

    ``has(name)``: whether the peer has the trec_eval name (a nickname stands for those of
    its members it has); ``split(name)``: ``(trec_eval name, parameters or None)`` as the
    peer reads a name (:func:`split_dotted`, :func:`split_pytrec_eval`), ``(None, None)`` for
    another name; ``other(name)``: another name as ``(trec_eval name, cutoff or None)``, or
    None to keep it as another name (the default)."""
    if isinstance(names, str):
        names = [names]
    given, others = {}, []
    for name in names:
        for member in _members(name, has):
            base, raw = split(member)
            if base is None:
                said = other(member) if other else None
                if said is None:
                    others.append(member)
                    continue
                base, cutoff = said
                _given(given, base, cutoff, one_cutoff=True)
                continue
            _given(given, base, raw, one_cutoff=False)
    return given, others


def _members(name, has):
    """A nickname's members that the peer has, or the name."""
    if isinstance(name, str) and name in NICKNAMES:
        return [member for member in NICKNAMES[name] if has(member)]
    return [name]


def _given(given, base, raw, one_cutoff):
    entry = given.setdefault(base, Given())
    if raw is None:
        entry.bare = True
    elif one_cutoff and style(base) == "cut":
        entry.cutoffs.append(raw)
    else:
        entry.params.append(raw)


def style(base):
    """How a trec_eval name takes parameters (:attr:`TrecName.style`; runid takes none)."""
    return None if base == "runid" else TREC_NAMES[base][1].style


def split_dotted(name, known):
    """``(base, parameters or None)`` of a trec_eval name as trec_eval reads it (``P``,
    ``P.5,10``: parameters after the first dot) when ``known(base)``, else ``(None, None)``."""
    base, dot, raw = name.partition(".")
    if not known(base):
        return None, None
    return base, raw if dot else None


def split_pytrec_eval(name, known):
    """``(base, parameters or None)`` of a trec_eval name as pytrec_eval splits it
    (``ndcg_cut.1,4`` and ``ndcg_cut_1,4`` -> ``("ndcg_cut", "1,4")``: the longest known
    base, then a dot or an underscore and a digit or a minus), else ``(None, None)``
    (fastir's own names, such as ``nDCG@10``)."""
    if not isinstance(name, str):
        return None, None
    if name in known:
        return name, None
    bases = [base for base in known
             if name.startswith(base) and name[len(base):len(base) + 1] in (".", "_")
             and name[len(base) + 1:len(base) + 2] in set("0123456789-")]
    if not bases:
        return None, None
    base = max(bases, key=len)
    return base, name[len(base) + 1:]


def trec_eval_params(given):
    """trec_eval's reading of ``given`` (from :func:`read`): a name's first parameters win
    (a bare name: trec_eval's defaults); the cutoffs of library names add to the list, those
    it holds already left out (``P.5`` with ``P@10``: ``5,10``; ``P`` with ``P@5``: the
    defaults)."""
    chosen = {}
    for base, entry in given.items():
        params = entry.params[0] if entry.params else None
        if entry.cutoffs:
            have = (params.split(",") if params is not None else
                    [str(v) for v in TREC_NAMES[base][1].defaults] if entry.bare else [])
            numbers = {_cutoff(base, v) for v in have}
            params = ",".join(have + [c for c in dict.fromkeys(entry.cutoffs)
                                      if _cutoff(base, c) not in numbers])
        chosen[base] = params
    return print_order(chosen)


def _cutoff(base, text):
    """A cutoff of the trec_eval list measure ``base`` as trec_eval reads it (``P.1e1`` is
    P_1), or the text when it is no number (parse_trec says what is wrong later)."""
    try:
        return trec_cutoff(TREC_NAMES[base][0], text)
    except ValueError:
        return text


def pytrec_eval_params(given):
    """pytrec_eval's reading of ``given`` (from :func:`read`), one name at a time in
    trec_eval's print order: a cutoff list merges every cutoff given, however written
    (``P.5`` with ``P_10,5``: ``10,5``, as text); a bare name gives trec_eval's defaults only
    when no cutoff is given. Another measure takes one parameter set: two are refused as
    its turn comes (ValueError; pytrec_eval joins them and trec_eval reads the first)."""
    for base, entry in print_order(given):
        if base == "runid":  # (its parameters are ignored)
            yield base, None
            continue
        values = set()
        for raw in entry.params + entry.cutoffs:
            values.update(raw.split(",") if style(base) == "cut" else [raw])
        values = sorted(values)
        if style(base) != "cut" and len(values) > 1:
            raise ValueError(f"{base} is asked for with {len(values)} parameter sets "
                             f"({', '.join(values)}); pytrec_eval keeps one of them: give one")
        yield base, ",".join(values) if values else None


def print_order(chosen):
    """The items of ``{trec_eval name: value}`` in trec_eval's print order."""
    order = {name: i for i, name in enumerate(TREC_ORDER)}
    return sorted(chosen.items(), key=lambda item: order.get(item[0], len(order)))
