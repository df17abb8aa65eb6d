"""Benchmark inputs, generated once per session with scripts/generate.py (small sizes).

Run with: python -m pytest benchmarks --benchmark-enable
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _generate(tmp_path_factory, kind, queries, depth):
    out = tmp_path_factory.mktemp("bench") / kind
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate.py"), kind, "--queries",
                    str(queries), "--depth", str(depth), "--out", str(out)], check=True,
                   capture_output=True)
    return f"{out}.qrels", f"{out}.run"


@pytest.fixture(scope="session")
def msmarco_files(tmp_path_factory):
    return _generate(tmp_path_factory, "msmarco", 500, 100)


@pytest.fixture(scope="session")
def trecdl_files(tmp_path_factory):
    return _generate(tmp_path_factory, "trecdl", 50, 200)


@pytest.fixture(scope="session", autouse=True)
def compiled_kernels():
    """Repeated calls measure the compiled kernels (a process switches to them once its
    Python budget is spent; whole-process times of small inputs are ``./dev bench``'s)."""
    from fastir import _jit

    with _jit.forced("numba"):
        yield
