"""Benchmark inputs, generated once per session with scripts/generate.py (small sizes).

Run with: python -m pytest benchmarks --benchmark-enable
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def msmarco_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "msmarco"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "generate.py"), "msmarco",
                    "--queries", "500", "--depth", "100", "--out", str(out)], check=True,
                   capture_output=True)
    return f"{out}.qrels", f"{out}.run"
