"""The README's examples run as they stand: every code block marked ``<!-- readme-test -->``
runs (Python in a subprocess, shell with bash) in a fresh folder, and a ``text`` block right
after a tested shell block is what those commands print."""

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.one_engine

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")
BLOCK = re.compile(r"<!-- readme-test -->\n```(\w+)\n(.*?)```\n(?:\n```text\n(.*?)```\n)?",
                   re.DOTALL)


def readme_blocks():
    with open(README) as f:
        text = f.read()
    return [pytest.param(*m.groups(), id=f"{m.group(1)}-{i}")
            for i, m in enumerate(BLOCK.finditer(text))]


@pytest.mark.parametrize("language, code, output", readme_blocks())
def test_readme_example_runs(tmp_path, language, code, output):
    assert language in ("python", "bash")
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep
               + os.environ.get("PATH", ""))
    command = [sys.executable, "-c", code] if language == "python" else [
        "bash", "-e", "-c", code]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    if output is not None:
        assert output in done.stdout


def test_the_readme_has_tested_examples():
    assert len(readme_blocks()) >= 3
