"""The parts of the documentation generated at build time, from fastir itself.

- The measure catalogue (``docs/measures/``): one page per family of
  :data:`fastir.measures.registry.FAMILIES` (its names in each dialect, parameters with
  defaults, definition, where it follows or departs from trec_eval and the peers) and an
  index table. :func:`catalogue_pages` is what the tests check: one page per family.
- The pictures (``docs/_generated/``): :mod:`fastir.output.plots` drawn on the bundled
  example with matplotlib's Agg backend.

As a Sphinx extension (``conf.py``: ``extensions = [..., "fastir_docs"]``) both are written
when the builder starts, before Sphinx reads the sources. The module imports fastir only
inside its functions and never imports Sphinx, so the tests import it without Sphinx.
"""

import os
import re
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent
ROOT = DOCS.parent
MEASURES_DIR = DOCS / "measures"
PICTURES_DIR = DOCS / "_generated"

#: Where a family follows or departs from trec_eval or a peer beyond what its registry
#: description says (README.md's "Where fastir differs", "Measures beyond trec_eval", the
#: peers' "Differs, and why"). Keyed by family name; the catalogue test checks every key is
#: a family.
NOTES = {
    "AP": "`AP@k` divides by all the relevant documents R, as trec_eval's `map_cut_k`; "
          "torchmetrics' `RetrievalMAP(top_k=k)` divides by the relevant found in the top k "
          "(`fastir.torchmetrics.RetrievalMAP` follows torchmetrics there).",
    "GMAP": "pytrec_eval reports the per-query `gm_map` as the log it sums; "
            "`fastir.pytrec_eval` does the same, `fastir.evaluate` gives the per-query AP.",
    "R": "Two names mean one thing to trec_eval and another to ranx and keep trec_eval's "
         "meaning: the bare `recall` is trec_eval's list `recall_5` ... `recall_1000`; ranx's "
         "whole-ranking recall is `SetR` (ranx `recall-l1`).",
    "Bpref": "ranx 0.3's `bpref` counts only label 1 as relevant on graded judgments; fastir "
             "keeps trec_eval's meaning (label >= rel). On binary judgments the two agree.",
    "RR": "On tied scores fastir keeps trec_eval's order (docno descending); ir_measures' "
          "msmarco provider (`RR@k`) takes docno ascending, so only tie-free runs agree.",
    "nDCG": "Gain overrides (`ndcg.1=3,2=9`): trec_eval sorts gain levels with an integer "
            "comparator, so levels whose gains differ by less than 1 may be misordered; "
            "fastir sorts by the real gains. `nDCG(dcg='exp-log2')@k` is gdeval's in "
            "ir_measures, which prints 5 decimals: fastir's values are unrounded (within "
            "5e-6). Given `nDCG` and `nDCG(gains=...)` in one request, ir_measures' "
            "pytrec_eval provider may compute the plain one with the other's gain table; "
            "fastir does not.",
    "DCG": "Gain overrides are sorted by the real gains (trec_eval: an integer comparator). "
           "Two of `ndcg`, `dcg`, `ideal_dcg` with a gain table abort trec_eval 10.0 "
           "(a double free); fastir computes both.",
    "IDCG": "Two of `ndcg`, `dcg`, `ideal_dcg` with a gain table abort trec_eval 10.0; "
            "fastir computes both. On an empty ranking IDCG keeps its value (the judgments').",
    "RBP": "trec_eval scales gains to [0, 1] with min/max variables it never initialises; "
           "fastir uses the true min and max of the query's gain levels (this matches "
           "trec_eval's test suite; beside `G`, `ndcg`, ... trec_eval gives other values). "
           "ir_measures' `RBP` is cwl_eval's binary one, which ir_measures' own provider "
           "keeps; ranx's `rbp.95` is `RBP(p=0.95,scaled=False)`.",
    "RBPResid": "Only p = 0.9: `rbp_resid.p=0.8` (trec_eval 10.0 takes a persistence) is "
                "refused; `RBP(p=0.8)` takes any.",
    "SetF": "`set_F`'s beta is used unsquared, as trec_eval does (`set_F.2` is not the usual "
            "F2). pytrec_eval keeps one of two parameter sets (`set_F.0.5` with `set_F.1`) "
            "where fastir raises a ValueError.",
    "SetRelP": "trec_eval divides 0 by 0 with no relevant document; fastir gives 0. "
               "ir_measures spells it `SetP(relative=True)`: accepted.",
    "RelP": "trec_eval divides 0 by 0 with no relevant document; fastir gives 0.",
    "RnDCG": "trec_eval divides 0 by 0 with `-l0` and no positive gain; fastir gives 0.",
    "IPrec": "On an empty ranking trec_eval divides 0 by 0; fastir gives 0. With "
             "`compat='9.0.8'` recall levels are counted as 9.0.8 counts them "
             "(`(long)(x*R + 0.9)`).",
    "NumRelRet": "ir_measures spells it `NumRet(rel=1)`: accepted, keyed as written.",
    "Utility": "On a judged query missing from the run trec_eval 10.0 keeps its placeholder "
               "ranking's value for `utility` with parameters (b + c*R + d*(N-1-R)); fastir "
               "gives 0. On a ranking that max_docs or judged_only empties it is "
               "c*R + d*(N-R), as in trec_eval.",
    "RelString": "Text, not a number: in `to_dict()` and `Results.strings`, not in `mean`. On "
                 "a judged query missing from the run trec_eval prints its placeholder "
                 "ranking's `'-'` for `relstring` with a depth; fastir gives `''`.",
    "Judged": "trec_eval's `unj_k` divides by k and counts negative labels as unjudged.",
    "Hole": "BEIR averages over the run's queries (fastir over the evaluated ones: the same "
            "with `missing='skip'` when every run query is judged) and rounds to 5 decimals.",
    "Accuracy": "ir_measures' `Accuracy` is a pairwise ordering measure of the same name; "
                "ir_measures keeps its own for it.",
    "Compat": "Clarke's script uses a fixed depth of 1000 and gives other numbers on short "
              "rankings; ir_measures' compat provider breaks ties by docno ascending.",
    "ERR": "gdeval prints 5 decimals; fastir's values are unrounded (within 5e-6 of "
           "gdeval's).",
    "nERR": "As NTCIREVAL's nERR, with gdeval's stop probabilities.",
    "alpha_nDCG": "ndeval stops at rank 20; fastir takes any cutoff.",
    "alpha_DCG": "ndeval leaves rank 1 undivided (2.0 for a document of two intents); "
                 "fastir divides `alpha_DCG@1` like every other cutoff.",
    "ERR_IA": "ndeval leaves rank 1 undivided; fastir divides `ERR_IA@1` like every other "
              "cutoff.",
    "nNRBP": "0 on a query without intents, where ndeval divides 0 by 0.",
}

#: Every C/W/L family (cwl_eval) and diversity family (ndeval) shares a note.
CWL = ("BPM", "SDCG", "NERR8", "NERR9", "NERR10", "NERR11", "INST", "INSQ")
CWL_NOTE = ("cwl_eval's expected utility per item over exactly 1000 ranks (a shorter ranking "
            "is padded with gain 0); `max_rel` is required, as in ir_measures. cwl_eval keeps "
            "the input order on tied scores, fastir trec_eval's (docno descending).")
DIVERSITY_NOTE = ("ndeval's values (greedy ideal, ties to the greatest docno, intents = "
                  "subtopics judged relevant), at any cutoff. ir_measures' pyndeval provider "
                  "breaks ties by docno ascending.")


def _provider_families():
    """The ir_measures measures fastir's provider claims (read from the provider's source:
    the docs need not install ir_measures)."""
    text = (ROOT / "fastir" / "peers" / "provider.py").read_text()
    body = text.split("SUPPORTED_MEASURES = [", 1)[1].split("]\n", 1)[0]
    return set(re.findall(r"M\._(\w+)", body))


def _ranx_names():
    """{family: [ranx names, as written]} (ranx's ``-lN`` suffix sets the level)."""
    from fastir.measures import registry

    names = {}
    for ranx, (family, params) in registry._RANX.items():
        label = f"`{ranx}@k`" if registry.FAMILIES[family].cutoff is not None else f"`{ranx}`"
        if params:
            label += " (" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
        names.setdefault(family, []).append(label)
    for family, whole in registry._RANX_WHOLE.items():
        for ranx in registry.FAMILIES[family].ranx:
            names.setdefault(whole, []).append(f"`{ranx}` (no @k: the whole ranking)")
    names.setdefault("RBP", []).append("`rbp.95` (p=0.95, scaled=False)")
    return names


def _trec_names(family):
    rows = []
    for t in family.trec:
        if t.style == "cut":
            cuts = ", ".join(f"{c:g}" if isinstance(c, float) else str(c) for c in t.defaults)
            first = t.defaults[0]
            first = f"{first:g}" if isinstance(first, float) else first
            rows.append(f"`{t.name}_{first}`, `{t.name}.{first}`: a list of cutoffs, bare "
                        f"`{t.name}` means {cuts}")
        elif t.style == "single":
            rows.append(f"`{t.name}`, `{t.name}.<parameters>` (one measure)")
        else:
            rows.append(f"`{t.name}`")
        extras = []
        if not t.all_trec:
            extras.append("not in `all_trec`")
        if not t.per_query:
            extras.append("summary only (`-q` prints no per-query line)")
        if extras:
            rows[-1] += " (" + "; ".join(extras) + ")"
    return rows


def _param_rows(family):
    rows = []
    if family.cutoff is not None:
        c = family.cutoff
        default = "required" if family.cutoff_required else (
            "none: the whole ranking" if c.default is None else f"`{c.text(c.default)}`")
        rows.append(("`@k`", c.kind, default, c.doc or "cutoff"))
    for p in family.params.values():
        default = "required" if p.required else (
            "the evaluation's `relevance_level`" if p.name == "rel" and p.default is None else
            "none" if p.default is None else f"`{p.text(p.default)}`")
        kind = p.kind + (f" ({', '.join(map(repr, p.choices))})" if p.choices else "")
        rows.append((f"`{p.name}`", kind, default, p.doc))
    return rows


def _escape(text):
    """Registry text as Markdown: ``*`` outside code spans is not emphasis, ``|`` is not a
    table cell's end."""
    parts = text.split("`")
    parts[::2] = [part.replace("*", "\\*") for part in parts[::2]]
    return "`".join(parts).replace("|", "\\|")


def slug(name):
    """A family's page name: ``m-`` and its name in lower case (checked unique)."""
    return "m-" + re.sub(r"[^a-z0-9_]", "-", name.lower())


def _notes(family):
    notes = []
    if family.name in NOTES:
        notes.append(NOTES[family.name])
    if family.name in CWL:
        notes.append(CWL_NOTE)
    if family.path == "subtopics":
        notes.append(DIVERSITY_NOTE)
    if family.versions == ("10.0",):
        notes.append("trec_eval 10.0 only: not computed with `compat='9.0.8'` "
                     "(`--compat 9.0.8`), as 9.0.8 (inside pytrec_eval) lacks it.")
    if family.aggregate == "sum":
        notes.append("Summarised by the sum over queries, as trec_eval does, not the mean.")
    if family.aggregate == "gmean":
        notes.append("Summarised by the geometric mean (values floored at 1e-5).")
    if family.num_docs == "required":
        notes.append("Needs the collection size: `num_docs=` (trec_eval `-N`).")
    elif family.num_docs == "read":
        notes.append("Reads the collection size `num_docs=` (trec_eval `-N`) when given.")
    if family.unjudged:
        notes.append("Reads unjudged documents, so it is not available in dense batches "
                     "(`evaluate_matrix`).")
    notes.append(_ties_note(family))
    notes.append(_labels_note(family))
    return notes


def _labels_modes(family):
    """The `labels=` a family takes, as the catalogue's index says it (`Family.reals`,
    `Family.probabilities`)."""
    modes = ["int"] + (["float"] if family.reals in ("compared", "gains") else [])
    return ", ".join(modes + (["probability"] if family.probabilities is None else []))


def _labels_note(family):
    """What a family's page says of `labels=` (real-valued labels: `Family.reals`;
    probabilistic ones: `Family.probabilities`)."""
    if family.reals == "compared":
        note = ("Labels: `labels='int'` (the default) and `'float'` (real labels, compared "
                "with the relevance level, which may then be real).")
    elif family.reals == "gains":
        note = ("Labels: `labels='int'` (the default) and `'float'` (real labels, taken as "
                "the gains: g(l) = l, or 2^l - 1).")
    else:
        note = (f"Labels: `labels='int'`; `labels='float'` is refused, naming it: "
                f"{family.reals}.")
    if family.probabilities is not None:
        return f"{note} `labels='probability'` is refused too."
    return (f"{note} `labels='probability'`: the value expected over the labels, exact for "
            "a query of at most 1,024 label assignments, else a Monte Carlo estimate with "
            "its standard error (`fastir.worlds`).")


def _ties_modes(family):
    """The `ties=` a family takes, as the catalogue's index says it."""
    if family.path in ("prefs", "groups"):
        return "trec_eval"
    return "all three" if family.ties is not None else "trec_eval, input"


def _ties_note(family):
    """What a family's page says of `ties=` (docs/guides/ties-and-holes.md)."""
    if family.path in ("prefs", "groups"):
        return ("Ties: `ties='trec_eval'` only (preference judgments and judgment groups "
                "rank as trec_eval does).")
    how = family.ties
    if how is None:
        return ("Ties: `ties='trec_eval'` (the default) and `'input'`; no expected value "
                "over tie orders, so `ties='expected'` is refused, naming it.")
    what = {"closed form": "exact, McSherry & Najork's closed form",
            "mean gain": "exact: each position of a tie group takes the group's mean",
            "order-free": "the value does not depend on the order of tied documents"}[how]
    return f"Ties: `ties='trec_eval'` (the default), `'input'` and `'expected'` ({what})."


def catalogue_pages():
    """``{family name: (page name, Markdown text)}``: one page per registered family."""
    from fastir.measures import registry

    provided = _provider_families()
    ranx = _ranx_names()
    pages = {}
    for family in registry.FAMILIES.values():
        lines = [f"(measure-{family.name})=", f"# {family.name}", "", _escape(family.doc),
                 "", f"In the catalogue's section *{section_of(family)}*.", ""]
        lines += ["## Formula", "", "```text", *textwrap.wrap(family.formula, 88), "```", "",
                  "In the [catalogue's notation](index.md#notation).", ""]
        lines += ["## Names", "", "| dialect | names |", "|---|---|",
                  f"| fastir / ir_measures | `{family.name}`"
                  + (f", `{family.name}@k`" if family.cutoff is not None else "") + " |"]
        if family.aliases:
            lines.append("| aliases | " + ", ".join(f"`{a}`" for a in family.aliases) + " |")
        if family.trec:
            lines.append("| trec_eval | " + "; ".join(_trec_names(family)) + " |")
        else:
            lines.append("| trec_eval | (none: beyond trec_eval) |")
        ir = family.per_group or family.name
        spelled = {"NumRelRet": "`NumRet(rel=1)`", "SetRelP": "`SetP(relative=True)`"}
        if family.name in spelled:
            lines.append(f"| ir_measures | {spelled[family.name]} (its spelling, accepted) |")
        elif ir in provided and not family.per_group:
            lines.append("| ir_measures | the same name; `import fastir.ir_measures` makes "
                         "fastir compute it in ir_measures' pipeline |")
        else:
            lines.append("| ir_measures | the same syntax; ir_measures' own providers keep "
                         "their measure of this name, if any |")
        if family.name in ranx:
            lines.append("| ranx | " + ", ".join(ranx[family.name])
                         + "; `-lN` sets the relevance level |")
        lines.append("| examples | " + ", ".join(f"`{e}`" for e in family.examples) + " |")
        lines += ["", "## Parameters", "", "| parameter | kind | default | meaning |",
                  "|---|---|---|---|"]
        lines += [f"| {n} | {k} | {d} | {_escape(doc)} |" for n, k, d, doc in
                  _param_rows(family)]
        lines += ["", "Parameters go in brackets, `" + family.examples[-1] + "`; every family "
                  "takes `judged_only=True` (trec_eval's `-J` for that measure alone).", ""]
        notes = _notes(family)
        if notes:
            lines += ["## Against trec_eval and the peers", ""]
            lines += [f"- {_escape(n)}" for n in notes] + [""]
        pages[family.name] = (slug(family.name), "\n".join(lines))
    if len({page for page, _ in pages.values()}) != len(pages):
        raise ValueError("two measure families have the same page name")
    return pages


#: The catalogue's sections, in order: (title, test of a family).
SECTIONS = (
    ("trec_eval's measures", lambda f: bool(f.trec) and f.path not in ("prefs", "groups")),
    ("Beyond trec_eval", lambda f: not f.trec and f.name not in CWL
     and f.path != "subtopics"),
    ("C/W/L measures (cwl_eval)", lambda f: f.name in CWL),
    ("Diversity (ndeval; subtopic judgments)", lambda f: f.path == "subtopics"),
    ("Preference judgments (trec_eval -R prefs)", lambda f: f.path == "prefs"),
    ("Judgment groups (trec_eval -R qrels_jg)", lambda f: f.path == "groups"),
)


def section_of(family):
    """The title of the catalogue section a family is listed in."""
    return next(title for title, test in SECTIONS if test(family))


def catalogue_index(pages):
    """The catalogue's front page: a table of the families of each section, the toctree."""
    from fastir.measures import registry

    lines = ["# Measure catalogue", "",
             "Generated from `fastir/measures/registry.py` when the site is built: one page "
             "per measure family, with its formula, its names in each dialect (the "
             "[names guide](../guides/names.md) gives the rules), its parameters and "
             "defaults, and where it departs from trec_eval or a peer. `fastir measures` "
             "prints the same families on the command line. The *ties* column says which "
             "`ties=` a family takes (`trec_eval`, `input`, `expected`: the "
             "[ties and holes guide](../guides/ties-and-holes.md)); the *labels* column "
             "which `labels=` (`int`: 32-bit integers, as trec_eval; `float`: real labels "
             ">= 0; `probability`: probabilities of relevance, or distributions over "
             "labels, each value its expectation: exact for a query of at most 1,024 label "
             "assignments, a Monte Carlo estimate with its standard error beyond).", "",
             "## Notation", "", _escape(registry.FORMULA_NOTATION), ""]
    order = []
    for title, _ in SECTIONS:
        rows = [(name, page) for name, (page, _) in pages.items()
                if section_of(registry.FAMILIES[name]) == title]
        order += [page for _, page in rows]
        if not rows:
            continue
        lines += [f"## {title}", "", "| family | trec_eval | ties | labels | summary |",
                  "|---|---|---|---|---|"]
        for name, page in rows:
            family = registry.FAMILIES[name]
            trec = ", ".join(f"`{t.name}`" for t in family.trec)
            summary = _escape(family.doc.split(". ")[0].rstrip("."))
            lines.append(f"| [{name}]({page}.md) | {trec} | {_ties_modes(family)} | "
                         f"{_labels_modes(family)} | {summary} |")
        lines.append("")
    lines += ["```{toctree}", ":hidden:", ""] + order + ["```", ""]
    return "\n".join(lines)


def _write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_catalogue(directory=MEASURES_DIR):
    """Write the catalogue's pages into ``directory``; return the page names."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    pages = catalogue_pages()
    wanted = {f"{page}.md" for page, _ in pages.values()} | {"index.md"}
    for stale in directory.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for page, text in pages.values():
        _write_if_changed(directory / f"{page}.md", text)
    _write_if_changed(directory / "index.md", catalogue_index(pages))
    return sorted(wanted)


#: The pictures, by file name: what each shows (the alt text).
PICTURES = {
    "pr.png": "Interpolated precision-recall curves of the example's two runs",
    "delta.png": "Per-query nDCG@10 differences of the example's strong and weak runs",
    "cutoff.png": "P@k, R@k and nDCG@k of the example's strong run for k = 1..30",
    "judges.png": "AP of eight systems under the human qrels and under a simulated lenient "
                  "LLM assessor",
    "ties.png": "nDCG@10 of the example's runs with their ranges over tie orders and their "
                "residuals",
}


def draw_pictures(directory=PICTURES_DIR):
    """Draw :data:`PICTURES` with :mod:`fastir.output.plots` on the bundled example."""
    import fastir
    from fastir.cli.example import collection
    from fastir.output import plots

    plots.to_files()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    qrels, runs = collection()
    curves = [fastir.pr_curve(qrels, runs[name], name=name) for name in ("weak", "strong")]
    plots.save(plots.plot_pr(curves), directory / "pr.png")
    comparison = fastir.compare(qrels, {"weak": runs["weak"], "strong": runs["strong"]},
                                ["nDCG@10"], baseline="weak")
    plots.save(comparison.plot_delta("nDCG@10"), directory / "delta.png")
    curve = fastir.cutoff_curve(qrels, runs["strong"], k=30, name="strong")
    plots.save(curve.plot(), directory / "cutoff.png")
    plots.save(_judges().plot(), directory / "judges.png")
    plots.save(plots.plot_ranges(_ranged(qrels, runs, "nDCG@10"), "nDCG@10"),
               directory / "ties.png")
    return sorted(PICTURES)


def _ranged(qrels, runs, measure):
    """The guide's "ties and holes" picture (docs/guides/ties-and-holes.md): each run's
    value, its range over tie orders and its optimistic value."""
    import numpy as np

    import fastir
    from fastir.output.plots import Ranged

    runs = {**runs, "rounded": runs["strong"].with_scores(np.round(runs["strong"].scores, 1))}
    rows = []
    for name in ("weak", "strong", "rounded"):
        report = fastir.tie_report(qrels, runs[name], [measure])
        optimistic = fastir.evaluate(qrels, runs[name], [measure], unjudged="relevant")
        rows.append(Ranged(name, report.value.mean[measure], report.low.mean[measure],
                           report.high.mean[measure], optimistic.mean[measure]))
    return rows


def _judges():
    """The guide's "judging the judges" (docs/guides/reproducibility.md), step for step on
    the example's files: its runs at four levels of noise, under its qrels and a simulated
    LLM assessor lenient with the weak run's top 20."""
    import tempfile

    import numpy as np

    import fastir
    from fastir.cli.example import write

    with tempfile.TemporaryDirectory() as folder:
        write(folder)
        folder = Path(folder)
        rng = np.random.default_rng(7)
        human = fastir.read_qrels(folder / "qrels.txt").to_dict()
        weak = fastir.read_run(folder / "weak.run").to_dict()
        favoured = {q: set(sorted(docs, key=docs.get, reverse=True)[:20])
                    for q, docs in weak.items()}
        llm = {q: {d: max(label, 1) if d in favoured.get(q, ()) and rng.random() < 0.8
                   else label for d, label in docs.items()} for q, docs in human.items()}
        runs = {}
        for name in ("weak", "strong"):
            run = fastir.read_run(folder / f"{name}.run")
            for noise in (0.0, 0.5, 1.0, 2.0):
                runs[f"{name}+{noise}"] = run.with_scores(
                    run.scores + rng.normal(0, noise, len(run)))
        return fastir.meta_evaluate(human, llm, runs=runs, measure="AP",
                                    names=["human", "LLM"])


def _generate(app):
    write_catalogue()
    draw_pictures()


def setup(app):
    """Sphinx's entry point: generate the catalogue and the pictures before reading."""
    os.environ.setdefault("FASTIR_WORKER", "off")
    app.connect("builder-inited", _generate)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
