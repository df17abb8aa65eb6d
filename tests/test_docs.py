"""The documentation site (``docs/``, ``./dev docs``) says what fastir does:

- every docstring example (``>>>``) of fastir's modules runs and prints what it shows;
- every ``python`` code block of the site's pages runs, a page's blocks in order in one
  process, in a folder holding the bundled example's files (``qrels.txt``, ``weak.run``,
  ``strong.run``); a block right after ``<!-- not-run: why -->`` is left out;
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
from pathlib import Path

import pytest

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
BLOCK = re.compile(r"(<!-- not-run:[^>]*-->\n)?```python\n(.*?)```", re.DOTALL)


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


def page_blocks(page):
    return [code for skip, code in BLOCK.findall(page.read_text()) if not skip]


def test_pages_have_code():
    assert len(PAGES) >= 15
    assert sum(len(page_blocks(p)) for p in PAGES) >= 20


@pytest.mark.parametrize("page", [p for p in PAGES if page_blocks(p)],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_page_code_runs(page, tmp_path):
    write(tmp_path)
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
    env = dict(os.environ, FASTIR_WORKER="off", MPLBACKEND="Agg",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


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
    assert all(f"]({page}.md)" in index for page, _ in pages.values())
    toctree = index.split("```{toctree}", 1)[1]
    assert sorted(toctree.split()[1:-1]) == sorted(page for page, _ in pages.values())


def test_api_reference_lists_every_public_name():
    text = (DOCS / "api" / "index.rst").read_text()
    listed = set(re.findall(r"^   (fastir\.[\w.]+)$", text, re.MULTILINE))
    assert {f"fastir.{name}" for name in fastir.__all__} <= listed
    assert {"fastir.pytrec_eval", "fastir.ir_measures", "fastir.ranx", "fastir.torchmetrics",
            "fastir.dask"} <= listed


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
