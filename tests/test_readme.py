"""The README's examples run as they stand in the environment ``./dev example`` sets up:
every code block marked ``<!-- readme-test -->`` runs (Python in a subprocess, shell with
bash) in a fresh folder, which it leaves empty, with only the packages ``./dev example``
installs importable (fastir's dependencies and the extras the script names:
:mod:`environments`), and a ``text`` block right after a tested shell block is what those
commands print."""

import os
import re
import subprocess
import sys

import pytest
from environments import example_environment, example_extras

pytestmark = pytest.mark.one_engine

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
README = os.path.join(ROOT, "README.md")
BLOCK = re.compile(r"<!-- readme-test -->\n```(\w+)\n(.*?)```\n(?:\n```text\n(.*?)```\n)?",
                   re.DOTALL)


def readme_blocks():
    with open(README) as f:
        text = f.read()
    return [pytest.param(*m.groups(), id=f"{m.group(1)}-{i}")
            for i, m in enumerate(BLOCK.finditer(text))]


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
    assert not any(tmp_path.iterdir()), "the example left files where it ran"


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
