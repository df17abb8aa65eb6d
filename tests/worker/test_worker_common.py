"""fastir/worker/common.py: the settings a user gives (FASTIR_WORKER, FASTIR_WORKER_IDLE),
the worker folder (reached from / without a symbolic link, each folder above it the user's
or root's and writable by no one else unless sticky, the folder the user's alone), the
files in it opened through its descriptor without following a link, the sources stamp,
the security context and the messages (one that is not one raises EPROTO)."""

import errno
import os
import socket
import struct

import pytest

from fastir.worker import client, common

pytestmark = [pytest.mark.one_engine,
              pytest.mark.skipif(not common.supported(), reason="workers are Linux only")]

OTHER_USER = 4242


def test_modes(monkeypatch):
    monkeypatch.delenv("FASTIR_WORKER", raising=False)
    monkeypatch.delenv("CI", raising=False)
    assert common.mode() == "auto"
    monkeypatch.setenv("CI", "true")
    assert common.mode() == "off"
    for value, mode in [("off", "off"), ("0", "off"), ("use", "use"), ("auto", "auto"),
                        (" On ", "auto"), ("default", "off")]:
        monkeypatch.setenv("FASTIR_WORKER", value)
        assert common.mode() == mode
    monkeypatch.setenv("FASTIR_WORKER", "bogus")
    with pytest.raises(common.SettingError, match="FASTIR_WORKER='bogus' is not one of"):
        common.mode()


@pytest.mark.parametrize("text", ["abc", "nan", "inf", "-inf", "0", "-5", "1e9", ""])
def test_idle_seconds_refused(text):
    with pytest.raises(common.SettingError, match=r"^--idle=.*expected seconds"):
        common.idle_seconds(text, "--idle")


def test_idle_seconds():
    assert common.idle_seconds(None) is None
    assert common.idle_seconds("0.5") == 0.5
    assert common.idle_seconds("600") == 600
    assert common.idle_seconds(str(common.MAX_IDLE_SECONDS)) == common.MAX_IDLE_SECONDS


def _chain(tmp_path):
    """tmp_path/a/b: a, the parent of the worker folder b."""
    parent = tmp_path / "a"
    parent.mkdir(mode=0o755)
    parent.chmod(0o755)
    return parent, parent / "b"


def test_the_folder_is_made_private(tmp_path):
    _, folder = _chain(tmp_path)
    opened = common.open_folder(str(folder))
    try:
        assert folder.is_dir() and folder.stat().st_mode & 0o777 == 0o700
        assert os.path.samefile(f"/proc/self/fd/{opened.fd}", folder)
    finally:
        opened.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_parent_of_another_user_is_refused(tmp_path):
    """sudo -E keeps another user's XDG_RUNTIME_DIR: its owner could swap the folder."""
    parent, folder = _chain(tmp_path)
    os.chown(parent, OTHER_USER, OTHER_USER)
    with pytest.raises(common.SettingError, match=f"{parent} belongs to user {OTHER_USER}"):
        common.open_folder(str(folder))
    assert not folder.exists()


def test_a_parent_others_can_write_is_refused_unless_sticky(tmp_path):
    parent, folder = _chain(tmp_path)
    parent.chmod(0o777)
    with pytest.raises(common.SettingError, match=f"{parent} is writable by others"):
        common.open_folder(str(folder))
    parent.chmod(0o1777)  # as /tmp: others cannot rename or remove what is not theirs
    common.open_folder(str(folder)).close()


@pytest.mark.parametrize("mode", [0o755, 0o710, 0o701])
def test_a_folder_others_can_open_is_refused(tmp_path, mode):
    _, folder = _chain(tmp_path)
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(common.SettingError, match="not a folder only this user can open"):
        common.open_folder(str(folder))


def test_a_link_on_the_way_is_refused(tmp_path):
    """The walk never follows a link (folder_path resolves the links the user set up; one
    swapped in afterwards is refused)."""
    parent, folder = _chain(tmp_path)
    folder.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(parent)
    with pytest.raises(common.SettingError, match="a symbolic link or not a folder"):
        common.open_folder(str(tmp_path / "link" / "b"))
    os.environ["FASTIR_WORKER_DIR"] = str(tmp_path / "link" / "b")
    try:
        assert common.folder_path() == str(folder)
    finally:
        del os.environ["FASTIR_WORKER_DIR"]


def test_files_in_the_folder_are_never_followed(tmp_path):
    """A link planted where the worker's log goes (by whoever could, before the folder was
    checked) is not followed: nothing is truncated or written through it, and nothing
    starts."""
    _, folder = _chain(tmp_path)
    opened = common.open_folder(str(folder))
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    name = "0" * 16
    (folder / common.names(name)["log"]).symlink_to(victim)
    try:
        with pytest.raises(OSError) as raised:
            opened.open(common.names(name)["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        assert raised.value.errno == errno.ELOOP
        assert client.spawn(opened, name) is None
        assert client.holder(opened, name) is None  # (nothing started)
    finally:
        opened.close()
    assert victim.read_text() == "keep me\n"


def test_sources_stamp_follows_the_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    first = common.sources_stamp(str(tmp_path))
    (tmp_path / "a.py").write_text("x = 22\n")
    assert common.sources_stamp(str(tmp_path)) != first


def test_identity_needs_no_import_of_the_package():
    """The root is this file's package (``import fastir`` may find a namespace package)."""
    assert common.root() == os.path.dirname(os.path.dirname(common.__file__))
    assert os.path.isfile(os.path.join(common.root(), "_version.py"))


def test_own_context_reads_the_rights():
    context = common.own_context()
    assert set(context["status"]) >= {"Uid", "Gid", "Groups", "CapEff", "CapBnd",
                                      "NoNewPrivs"}
    assert "mnt" in context["ns"] and "user" in context["ns"]
    assert context["root"] == (os.stat("/").st_dev, os.stat("/").st_ino)
    assert common.context_refusal(context, common.own_context()) is None


def test_context_refusal_names_what_differs():
    mine = common.own_context()
    theirs = {**mine, "status": {**mine["status"], "Groups": "4242"}}
    assert common.context_refusal(theirs, mine) == "its status (Groups) differs"
    theirs = {**mine, "ns": {**mine["ns"], "mnt": "mnt:[1]"}}
    assert common.context_refusal(theirs, mine) == "its ns (mnt) differs"
    theirs = {**mine, "status": {**mine["status"], "NoNewPrivs": "1"}}
    assert "no_new_privs" in common.context_refusal(theirs, mine)
    assert "no_new_privs" in common.context_refusal(mine, theirs)  # (either side)


@pytest.mark.parametrize("data", [
    struct.pack("!I", 5) + b"\xff\xff\xff\xff\xff",  # not marshal
    struct.pack("!I", common.MAX_MESSAGE + 1),  # too long
])
def test_a_message_that_is_not_one_raises_eproto(data):
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(data)
        with pytest.raises(OSError) as raised:
            common.receive(ours)
        assert raised.value.errno == errno.EPROTO


def test_messages_carry_descriptors():
    ours, theirs = socket.socketpair()
    read, write = os.pipe()
    with ours, theirs:
        common.send(theirs, ("run", {"a": [1, "b"]}), fds=[read])
        message, fds = common.receive(ours, max_fds=4)
        assert message == ("run", {"a": [1, "b"]}) and len(fds) == 1
        os.write(write, b"x")
        assert os.read(fds[0], 1) == b"x"
    for fd in (read, write, *fds):
        os.close(fd)
