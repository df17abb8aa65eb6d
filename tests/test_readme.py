"""The README's examples run as they stand in the environment ``./dev example`` sets up:
every code block marked ``<!-- readme-test -->`` runs (Python in a subprocess, shell with
bash) in a fresh folder, with only the packages ``./dev example`` installs importable (fastir's
dependencies and the extras the script names), and a ``text`` block right after a tested shell
block is what those commands print."""

import os
import re
import subprocess
import sys
from importlib import metadata

import pytest

pytestmark = pytest.mark.one_engine

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
README = os.path.join(ROOT, "README.md")
BLOCK = re.compile(r"<!-- readme-test -->\n```(\w+)\n(.*?)```\n(?:\n```text\n(.*?)```\n)?",
                   re.DOTALL)
#: What a fresh virtual environment holds besides what is installed in it.
FRESH_VENV = {"pip", "setuptools", "wheel"}


def readme_blocks():
    with open(README) as f:
        text = f.read()
    return [pytest.param(*m.groups(), id=f"{m.group(1)}-{i}")
            for i, m in enumerate(BLOCK.finditer(text))]


def example_extras():
    """The extras ``./dev example`` installs (its ``ensure_env`` calls)."""
    with open(os.path.join(ROOT, "dev")) as f:
        case = re.search(r"\n  example\)(.*?);;", f.read(), re.DOTALL).group(1)
    return {extra for extra in re.findall(r'ensure_env "?(\w*)"?', case) if extra}


def installed_by_example():
    """The distributions ``./dev example`` installs: fastir, its dependencies and those of
    the extras it names, with theirs (normalised names)."""
    from packaging.requirements import Requirement

    extras = example_extras()
    wanted, seen = [("fastir", extras)], set()
    while wanted:
        name, with_extras = wanted.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or any(req.marker.evaluate({"extra": e})
                                         for e in with_extras | {""}):
                wanted.append((req.name, set(req.extras)))
    return seen


def example_environment(folder):
    """``os.environ`` for a command of the examples: this interpreter's folder first on
    PATH, and a ``sitecustomize`` first on PYTHONPATH that refuses to import the modules of
    every installed distribution ``./dev example`` would not install."""
    allowed = installed_by_example() | FRESH_VENV
    refused = sorted(module for module, dists in metadata.packages_distributions().items()
                     if not any(re.sub(r"[-_.]+", "-", d).lower() in allowed for d in dists))
    (folder / "sitecustomize.py").write_text(
        "import sys\n\n"
        f"REFUSED = {set(refused)!r}\n\n\n"
        "class NotInstalled:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] in REFUSED:\n"
        "            raise ModuleNotFoundError(f'No module named {name!r} (./dev example does "
        "not install it)', name=name)\n\n\n"
        "sys.meta_path.insert(0, NotInstalled())\n")
    paths = [str(folder)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths),
                PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


@pytest.fixture(scope="module")
def environment(tmp_path_factory):
    return example_environment(tmp_path_factory.mktemp("dev-example"))


@pytest.mark.parametrize("language, code, output", readme_blocks())
def test_readme_example_runs(tmp_path, environment, language, code, output):
    assert language in ("python", "bash")
    command = [sys.executable, "-c", code] if language == "python" else [
        "bash", "-e", "-c", code]
    done = subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    if output is not None:
        assert output in done.stdout


def test_the_readme_has_tested_examples():
    assert len(readme_blocks()) >= 3


def test_the_examples_see_only_what_dev_example_installs(tmp_path, environment):
    """The environment refuses a package of the test extra (pandas), not one ``./dev
    example`` installs (numpy, matplotlib for ``fastir plot``)."""
    code = ("import importlib.util as u\n"
            "for name in ('pandas', 'numpy', 'matplotlib'):\n"
            "    try:\n"
            "        __import__(name)\n"
            "        print(name, 'yes')\n"
            "    except ImportError:\n"
            "        print(name, 'no')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=environment,
                          capture_output=True, text=True)
    assert done.stdout.split("\n")[:3] == ["pandas no", "numpy yes", "matplotlib yes"], \
        done.stderr
    assert "plot" in example_extras()
