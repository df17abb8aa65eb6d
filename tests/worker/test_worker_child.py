"""fastir/worker/child.py, its parts on their own: which loaded modules a client's first
module folder would give it from another file (then the command runs in-process), and the
standard streams as Python makes them (their buffers: none under ``python -u``). The
child against a real worker: tests/worker/test_worker_client.py and test_worker_peer.py."""

import io
import json
import os
import sys

import pytest

from fastir.worker import child, common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]


def test_a_module_file_in_the_first_folder_shadows(tmp_path):
    assert "json" in sys.modules
    assert child._shadowed(str(tmp_path), {}) is None
    (tmp_path / "json.py").write_text("")
    assert child._shadowed(str(tmp_path), {}) == "json"
    # a client that loaded json already: from the same file, or from that one
    assert child._shadowed(str(tmp_path), {"json": json.__file__}) is None
    assert child._shadowed(str(tmp_path), {"json": str(tmp_path / "json.py")}) == "json"


def test_a_console_script_does_not_shadow(tmp_path):
    """The ``fastir`` program's first module folder is its bin folder, which holds other
    programs named as modules (numba's own ``numba``): files without an import suffix, which
    Python never imports."""
    assert "numba" in sys.modules
    (tmp_path / "numba").write_text("#!/usr/bin/python\nimport numba\n")
    (tmp_path / "fastir").write_text("#!/usr/bin/python\nimport fastir\n")
    import fastir

    assert child._shadowed(str(tmp_path), {"fastir": fastir.__file__}) is None
    (tmp_path / "numba.py").write_text("")
    assert child._shadowed(str(tmp_path), {}) == "numba"


def test_a_package_in_the_first_folder_shadows(tmp_path):
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    assert child._shadowed(str(tmp_path), {}) == "json"


def test_a_namespace_folder_does_not_shadow_a_regular_module(tmp_path):
    """A folder without __init__.py is a namespace portion: a regular package or module
    later on the path wins in-process too."""
    (tmp_path / "json").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "data.txt").write_text("")
    assert child._shadowed(str(tmp_path), {}) is None


def test_the_clients_own_copy_of_a_module(tmp_path):
    """A client that already loaded a name (fastir, repaired by fastir/__main__ when a
    folder named fastir shadows it) resolved it as the worker did."""
    (tmp_path / "fastir").mkdir()  # (the checkout's root: no __init__.py)
    import fastir

    assert child._shadowed(str(tmp_path), {"fastir": fastir.__file__}) is None
    assert child._shadowed(str(tmp_path), {"fastir": None}) == "fastir"


def test_the_current_folder_as_the_first(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "json.py").write_text("")
    assert child._shadowed("", {}) == "json"  # ('': python -c, the working folder)
    assert child._shadowed(None, {}) is None  # (no module path at all)


@pytest.mark.parametrize("buffered", [True, False])
def test_streams_as_python_makes_them(tmp_path, buffered):
    with open(tmp_path / "out", "wb") as f:
        fd = os.dup(f.fileno())
    saved = os.dup(1)
    os.dup2(fd, 1)
    try:
        stream = child._stream(1, "utf-8", "strict", False, not buffered, buffered)
        assert isinstance(stream.buffer, io.BufferedWriter if buffered else io.FileIO)
        if buffered:
            assert stream.buffer.raw.name == "<stdout>"
            assert not stream.write_through
        stream.write("x")
        assert (tmp_path / "out").read_bytes() == (b"" if buffered else b"x")
        stream.flush()
        assert (tmp_path / "out").read_bytes() == b"x"
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)
