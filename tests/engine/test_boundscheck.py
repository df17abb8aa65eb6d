"""The kernel, join and reader tests once more with numba's bounds checks on (in a fresh
process and numba cache): an out-of-bounds index then fails a test instead of reading
memory the kernel does not own."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent.parent

SUBSET = ["measures/test_reference.py", "measures/test_requests.py", "loops/test_batch.py",
          "engine/test_engines.py", "io/test_io.py", "engine/test_invariants.py"]


@pytest.mark.slow
@pytest.mark.one_engine
def test_kernels_within_bounds(tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               FASTIR_BOUNDSCHECK_RUN="1")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           "-k", "numba and not slow and not warmup", "--hypothesis-seed=0",
                           *[str(TESTS / name) for name in SUBSET]],
                          env=env, capture_output=True, text=True, cwd=TESTS.parent)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
