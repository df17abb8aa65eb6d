"""Output that is all there or says it is not (fastir.output.writing): files replaced whole or
left as they were, with an OutputError naming them; standard output checked; and the
library's writers (write_run, write_parquet, the plots' save) written through them."""

import errno
import os
import stat
import sys

import pytest
from conftest import fill

import fastir
from fastir.output import writing
from fastir.output.writing import OutputError, atomic_write, write_stdout

pytestmark = pytest.mark.one_engine

BIG = "x" * 100_000  # (more than a filled small disk holds)


def _listing(folder):
    return sorted(os.listdir(folder))


def test_replaces_a_file_whole_with_its_permissions(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    path.chmod(0o640)
    with atomic_write(path) as f:
        f.write("new\n")
        assert path.read_text() == "old\n"  # (not yet: only once all of it is written)
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert _listing(tmp_path) == ["out.txt"]


def test_a_new_file_has_the_umasks_permissions(tmp_path):
    saved = os.umask(0o027)
    try:
        with atomic_write(tmp_path / "new.bin", binary=True) as f:
            f.write(b"\x00\xff")
    finally:
        os.umask(saved)
    assert (tmp_path / "new.bin").read_bytes() == b"\x00\xff"
    assert stat.S_IMODE((tmp_path / "new.bin").stat().st_mode) == 0o640


def test_a_failure_while_writing_leaves_the_file_as_it_was(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError, match="stopped"):
        with atomic_write(path) as f:
            f.write("half of it")
            raise RuntimeError("stopped")
    assert path.read_text() == "old\n"
    assert _listing(tmp_path) == ["out.txt"]


def test_a_link_is_kept_and_its_target_replaced(tmp_path):
    (tmp_path / "target.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to("target.txt")
    with atomic_write(tmp_path / "link.txt") as f:
        f.write("new\n")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "target.txt").read_text() == "new\n"


def test_a_full_disk_leaves_the_file_as_it_was(small_disk):
    path = small_disk / "out.txt"
    path.write_text("old\n")
    fill(small_disk, leave=8192)
    before = _listing(small_disk)
    with pytest.raises(OutputError) as raised:
        with atomic_write(path) as f:
            f.write(BIG)
    assert str(raised.value) == (f"cannot write {path}: No space left on device ({path} is "
                                 "left as it was)")
    assert raised.value.errno == errno.ENOSPC and raised.value.filename == str(path)
    assert path.read_text() == "old\n"
    assert _listing(small_disk) == before  # (the temporary file removed)


def test_a_new_file_on_a_full_disk_is_not_made(small_disk):
    fill(small_disk)
    with pytest.raises(OutputError, match=r"No space left on device \(nothing was written\)"):
        with atomic_write(small_disk / "new.txt") as f:
            f.write(BIG)
    assert _listing(small_disk) == ["filler"]


def test_what_is_not_a_file_is_written_in_place(tmp_path):
    (tmp_path / "full").symlink_to("/dev/full")
    with pytest.raises(OutputError) as raised:
        with atomic_write(tmp_path / "full") as f:
            f.write(BIG)
    assert str(raised.value) == (f"cannot write {tmp_path / 'full'}: No space left on device "
                                 "(the output is incomplete)")
    with atomic_write("/dev/null") as f:  # (a device is never replaced)
        f.write(BIG)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert (tmp_path / "full").is_symlink()


def test_a_folder_that_is_not_there(tmp_path):
    path = tmp_path / "no" / "such.txt"
    with pytest.raises(OutputError, match=f"cannot write {path}: No such file or directory"):
        with atomic_write(path) as f:
            f.write("x")


def _run():
    return fastir.Run.from_arrays(["q1"] * 3000, [f"d{i}" for i in range(3000)],
                                  [float(i) for i in range(3000)], name="r")


def test_write_run_to_a_full_disk(small_disk):
    path = small_disk / "a.run"
    path.write_text("q1 Q0 d1 1 1.0 old\n")
    fill(small_disk, leave=8192)
    with pytest.raises(OSError, match=f"cannot write {path}: No space left on device"):
        fastir.write_run(_run(), path)
    assert path.read_text() == "q1 Q0 d1 1 1.0 old\n"
    assert _listing(small_disk) == ["a.run", "filler"]


def test_write_parquet_to_a_full_disk(small_disk):
    pytest.importorskip("pyarrow")
    fill(small_disk)
    path = small_disk / "a.parquet"
    with pytest.raises(OSError, match=f"cannot write {path}: No space left on device"):
        fastir.write_parquet(_run(), path)
    assert _listing(small_disk) == ["filler"]


def _axes():
    pytest.importorskip("matplotlib")
    from fastir.output import plots

    plots.to_files()
    ax = plots.pyplot().subplots()[1]
    ax.plot(range(1000), [i % 7 for i in range(1000)])
    return plots, ax


def test_a_figure_to_a_full_disk(small_disk):
    plots, ax = _axes()
    fill(small_disk)
    path = small_disk / "pr.png"
    with pytest.raises(OSError, match=f"cannot write {path}: No space left on device"):
        plots.save(ax, path)
    assert _listing(small_disk) == ["filler"]


@pytest.mark.parametrize(("name", "written", "magic"), [
    ("pr.png", "pr.png", b"\x89PNG"), ("pr.PDF", "pr.PDF", b"%PDF"),
    ("pr.svg", "pr.svg", b"<?xml"), ("pr", "pr.png", b"\x89PNG")])
def test_a_figure_in_the_format_of_its_name(tmp_path, name, written, magic):
    """As matplotlib writes it: the format from the extension; none: PNG, .png added."""
    plots, ax = _axes()
    assert plots.save(ax, tmp_path / name) == str(tmp_path / written)
    assert (tmp_path / written).read_bytes().startswith(magic)
    assert _listing(tmp_path) == [written]


def test_stdout_checked(monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)  # (as Python starts with it closed)
    with pytest.raises(OutputError) as raised:
        write_stdout("x\n")
    assert str(raised.value) == ("cannot write to standard output: it is closed (nothing was "
                                 "written)")
    for data in ("text\n", b"bytes\n"):
        with open("/dev/full", "w") as full:
            monkeypatch.setattr(sys, "stdout", full)
            with pytest.raises(OutputError) as raised:
                write_stdout(data)
            assert str(raised.value) == ("cannot write to standard output: No space left on "
                                         "device (the output is incomplete)")
            writing.discard_stdout()  # (what it holds dropped: no error when it closes)


def test_a_reader_that_left_is_no_output_error(monkeypatch):
    read, write = os.pipe()
    os.close(read)
    with open(write, "w") as pipe:
        monkeypatch.setattr(sys, "stdout", pipe)
        with pytest.raises(BrokenPipeError):
            write_stdout("x\n")
        writing.discard_stdout()


def test_a_file_one_may_write_in_a_folder_one_may_not(tmp_path, monkeypatch):
    """Written in place (no temporary file can be made beside it), checked."""
    def refused(real):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(writing, "_temporary_file", refused)
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with atomic_write(path) as f:
        f.write("new\n")
    assert path.read_text() == "new\n"
    with pytest.raises(OutputError, match=f"cannot write {tmp_path / 'new.txt'}: Permission "
                       r"denied \(nothing was written\)"):
        with atomic_write(tmp_path / "new.txt") as f:
            f.write("x")


def test_text_stdout_cannot_encode_is_not_a_closed_stream(monkeypatch):
    with open(os.devnull, "w", encoding="ascii") as ascii_only:
        monkeypatch.setattr(sys, "stdout", ascii_only)
        with pytest.raises(UnicodeEncodeError):
            write_stdout("é\n")


def test_a_folder_is_not_written(tmp_path):
    with pytest.raises(OutputError, match=f"cannot write {tmp_path}: Is a directory "
                       r"\(nothing was written\)"):
        with atomic_write(tmp_path) as f:
            f.write("x")
