"""The documentation site (``docs/``, ``./dev docs``) says what fastir does:

- every docstring example (``>>>``) of fastir's modules runs and prints what it shows;
- the examples of every page run as they stand, in order, in a folder holding the bundled
  example's files (``qrels.txt``, ``weak.run``, ``strong.run``), with only what ``./dev
  example`` installs and the extras the page names in its ``**Extras:**`` line importable
  (:mod:`environments`): its ``python`` blocks in one process, then its shell examples (each
  ``bash`` block, which prints the ``text`` block right after it if there is one, and each
  ``text`` block starting ``$ COMMAND``, which prints the rest of it, warnings included); a
  block right after ``<!-- not-run: why -->`` is left out; no line of a code block is wider
  than the page shows;
- the measure catalogue has a page for every registered measure family, naming it in every
  dialect; the API reference lists every public name;
- the site builds with Sphinx, warnings as errors (skipped when Sphinx is not installed).
"""

import doctest
import importlib
import os
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from environments import example_environment

import fastir
from fastir.cli.example import write
from fastir.measures.registry import FAMILIES

pytestmark = pytest.mark.one_engine

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import fastir_docs  # noqa: E402

#: Markdown pages written by hand (the catalogue's are generated, ``_raw`` is not a page).
PAGES = sorted(p for p in DOCS.rglob("*.md")
               if not ({"_build", "measures", "_raw"} & set(p.relative_to(DOCS).parts)))
#: A fenced block: (a not-run mark before it, its language, its text), from a line opening
#: it to the next line that is only its closing fence.
FENCE = re.compile(r"(<!-- not-run:[^>]*-->\n)?^```(\S*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
#: The widest line a code block of the site shows whole: furo's content is 46em (736 px)
#: wide, code 81.25% of 16 px in a monospace font (0.6 em a character) inside 0.875rem of
#: padding each side: (736 - 28) / 7.8 = 90 characters.
CODE_WIDTH = 90
#: The line of a page naming the extras its examples need besides ``./dev example``'s.
EXTRAS = re.compile(r"^\*\*Extras:\*\* `pip install 'fastir\[([\w,-]+)\]'`", re.MULTILINE)


def doctest_modules():
    """The fastir modules whose docstrings hold examples."""
    names = []
    for path in sorted((ROOT / "fastir").rglob("*.py")):
        if ">>>" in path.read_text():
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.fixture
def example_folder(tmp_path, monkeypatch):
    write(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("module", doctest_modules())
def test_docstring_examples_run(module, example_folder):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(importlib.import_module(module)) if t.examples]
    assert tests
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} failing example(s) in {module}"


def fenced(page):
    """The fenced blocks of a page to run: (language, text, whether it follows the block
    before it with nothing between)."""
    text, blocks, end = page.read_text(), [], None
    for m in FENCE.finditer(text):
        if not m.group(1):
            blocks.append((m.group(2), m.group(3), text[end:m.start()].strip() == ""))
        end = m.end()
    return blocks


def page_blocks(page):
    return [code for language, code, _ in fenced(page) if language == "python"]


def page_commands(page):
    """The page's shell examples, in order: (commands, what they print or None, whether that
    is all they print). A bash block prints the text block right after it, among other
    lines; a ``$`` block's command prints the words of the rest of the block (standard
    error, then standard output; the block may wrap a long line), and nothing else."""
    blocks, commands = fenced(page), []
    for i, (language, code, _) in enumerate(blocks):
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        if language == "bash":
            printed = after[1] if after and after[0] == "text" and after[2] else None
            commands.append((code, printed, False))
        elif language == "text" and code.startswith("$ "):
            command, _, printed = code[2:].partition("\n")
            commands.append((f"{command} 2>&1", printed, True))
    return commands


def page_extras(page):
    """The extras a page names on its ``**Extras:**`` line."""
    named = EXTRAS.findall(page.read_text())
    return set(named[0].split(",")) if named else set()


RUN_PAGES = [p for p in PAGES if page_blocks(p) or page_commands(p)]


def test_pages_have_code():
    assert len(PAGES) >= 15
    assert sum(len(page_blocks(p)) for p in PAGES) >= 20
    assert sum(len(page_commands(p)) for p in PAGES) >= 5


def test_code_blocks_fit_the_page():
    wide = [f"{page.relative_to(DOCS)}: {line}" for page in PAGES
            for m in FENCE.finditer(page.read_text()) for line in m.group(3).splitlines()
            if len(line) > CODE_WIDTH]
    assert not wide, "\n".join(wide)


def test_pages_name_extras_fastir_has():
    extras = set(metadata.metadata("fastir").get_all("Provides-Extra"))
    named = {page.name: page_extras(page) for page in PAGES}
    assert all(names <= extras for names in named.values()), (named, extras)
    assert {"pandas", "arrow", "dask", "peers", "torch", "spark"} <= \
        set().union(*named.values())


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run(page, tmp_path):
    """The page's examples, with only ``./dev example``'s packages and the page's extras."""
    (tmp_path / "env").mkdir()
    folder = tmp_path / "work"
    write(folder)
    env = dict(example_environment(tmp_path / "env", page_extras(page)), FASTIR_WORKER="off",
               MPLBACKEND="Agg")
    script = textwrap.dedent("""
        import sys
        namespace = {"__name__": "__main__"}
        for i, code in enumerate(BLOCKS):
            try:
                exec(compile(code, f"{PAGE} block {i + 1}", "exec"), namespace)
            except BaseException:
                print(f"{PAGE}: block {i + 1} failed:\\n{code}", file=sys.stderr)
                raise
        """)
    program = f"BLOCKS = {page_blocks(page)!r}\nPAGE = {page.name!r}\n{script}"
    done = subprocess.run([sys.executable, "-c", program], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    for commands, printed, whole in page_commands(page):
        done = subprocess.run(["bash", "-e", "-c", commands], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{commands}\n{done.stderr[-3000:]}"
        if printed is not None:
            assert done.stdout.split() == printed.split() if whole else \
                printed in done.stdout, f"{commands}\n{done.stdout}"


def test_catalogue_has_every_family():
    pages = fastir_docs.catalogue_pages()
    assert list(pages) == list(FAMILIES)
    assert set(fastir_docs.NOTES) <= set(FAMILIES)
    for name, (_page, text) in pages.items():
        family = FAMILIES[name]
        assert text.startswith(f"(measure-{name})=\n# {name}\n"), name
        assert fastir_docs._escape(family.doc) in text
        formula = text.split("## Formula\n\n```text\n", 1)[1].split("```", 1)[0]
        assert " ".join(formula.split()) == family.formula, name
        for other in (*family.aliases, *(t.name for t in family.trec), *family.ranx):
            assert f"`{other}" in text, (name, other)
        for param in family.params:
            assert f"| `{param}` |" in text, (name, param)
    index = fastir_docs.catalogue_index(pages)
    assert "## Notation" in index and "discounted by log2(i + 1)" in index
    for name, family in FAMILIES.items():  # the labels column: reals, probabilities
        row = next(line for line in index.splitlines() if line.startswith(f"| [{name}]("))
        labels = row.split(" | ")[3].split(", ")
        assert ("float" in labels) == (family.reals in ("compared", "gains")), row
        assert ("probability" in labels) == (family.probabilities is None), row
    assert all(f"]({page}.md)" in index for page, _ in pages.values())
    toctree = index.split("```{toctree}", 1)[1]
    assert sorted(toctree.split()[1:-1]) == sorted(page for page, _ in pages.values())


def test_api_reference_lists_every_public_name():
    text = (DOCS / "api" / "index.rst").read_text()
    listed = set(re.findall(r"^   (fastir\.[\w.]+)$", text, re.MULTILINE))
    assert {f"fastir.{name}" for name in fastir.__all__} <= listed
    assert {"fastir.pytrec_eval", "fastir.ir_measures", "fastir.ranx", "fastir.torchmetrics",
            "fastir.dask", "fastir.spark"} <= listed


def test_site_builds(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("numpydoc")
    pytest.importorskip("myst_parser")
    pytest.importorskip("furo")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q",
                           "-b", "html", str(DOCS), str(tmp_path / "html")],
                          capture_output=True, text=True, env=dict(os.environ,
                                                                   FASTIR_WORKER="off"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "html" / "measures" / "m-ndcg.html").exists()
