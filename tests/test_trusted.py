"""fastir/trusted.py: the folders fastir imports or unpickles from are ones no other user can
change (a folder above of another user, or writable by others and not sticky; a folder
writable by a group with another member), and the compile caches follow it: the user
measures' folder (FASTIR_CACHE_DIR, XDG_CACHE_HOME) falls back to a private temporary one,
and a kernel whose numba cache is such a folder compiles without it, each said once."""

import os
import struct
import types
import warnings

import pytest

import fastir
from fastir import _jit, trusted
from fastir.measures import user
from fastir.model.errors import FastirWarning

pytestmark = pytest.mark.one_engine

OTHER_USER = 4242


@pytest.fixture
def shared(tmp_path):
    """tmp_path/shared (writable by all, not sticky) holding cache/: another user could
    swap cache/ for a folder of theirs."""
    parent = tmp_path / "shared"
    (parent / "cache").mkdir(parents=True, mode=0o700)
    parent.chmod(0o777)
    yield parent / "cache"
    parent.chmod(0o755)


def test_a_folder_below_one_others_can_write(shared):
    assert trusted.folder_problem(shared) == \
        f"{shared.parent} is writable by others (mode 777), who could replace what is below it"
    shared.parent.chmod(0o1777)  # (sticky, as /tmp: others cannot rename what is not theirs)
    assert trusted.folder_problem(shared) is None
    shared.chmod(0o757)
    assert "is not a folder only this user can write" in trusted.folder_problem(shared)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_folder_of_another_user_or_below_one(tmp_path):
    """sudo -E keeps another user's XDG_CACHE_HOME."""
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True)
    os.chown(home, OTHER_USER, OTHER_USER)
    assert trusted.folder_problem(home / ".cache").startswith(
        f"{home} belongs to user {OTHER_USER}")
    os.chown(home, 0, 0)
    os.chown(home / ".cache", OTHER_USER, OTHER_USER)
    assert f"(owner {OTHER_USER}," in trusted.folder_problem(home / ".cache")


def test_a_group_may_write_when_it_is_this_users_private_one(tmp_path, monkeypatch):
    """umask 002 with a user private group makes ~/.cache group-writable: the user's alone;
    another group, or an access control list (the group bits are then its mask), is not."""
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o775)
    private, acl = {}, {}
    monkeypatch.setattr(trusted, "_private_group", lambda gid: private[gid])
    monkeypatch.setattr(trusted, "_has_acl", lambda path: acl[str(path)])
    private[folder.stat().st_gid], acl[str(folder)] = True, False
    assert trusted.folder_problem(folder) is None
    acl[str(folder)] = True
    assert "only this user can write" in trusted.folder_problem(folder)
    private[folder.stat().st_gid], acl[str(folder)] = False, False
    assert "only this user can write" in trusted.folder_problem(folder)


def test_a_real_access_control_list_is_seen(tmp_path):
    """A POSIX ACL giving another user rwx (setfacl -m u:nobody:rwx): the folder's group
    bits are its mask, and the folder is not this user's alone."""
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    acl = struct.pack("<I", 2) + b"".join(  # (version 2: tag, permissions, id)
        struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in
        ((0x01, 7, 0xFFFFFFFF), (0x02, 7, OTHER_USER), (0x04, 5, 0xFFFFFFFF),
         (0x10, 7, 0xFFFFFFFF), (0x20, 5, 0xFFFFFFFF)))
    try:
        os.setxattr(folder, "system.posix_acl_access", acl)
    except OSError as error:
        pytest.skip(f"no access control lists here ({error.strerror})")
    assert folder.stat().st_mode & 0o070 == 0o070
    assert trusted._has_acl(str(folder))
    assert "only this user can write" in trusted.folder_problem(folder)


def test_only_the_users_own_private_group(monkeypatch):
    """The user's primary group, named as the user, listing no one else: nothing else
    counts (a shared primary group's other users cannot always be listed)."""
    import grp
    import pwd

    me = types.SimpleNamespace(pw_name="me", pw_uid=os.geteuid(), pw_gid=500)
    groups = {500: ("me", []), 501: ("me2", []), 600: ("staff", []), 700: ("me", ["other"])}
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: me)
    monkeypatch.setattr(grp, "getgrgid", lambda gid: types.SimpleNamespace(
        gr_name=groups[gid][0], gr_mem=groups[gid][1]))
    check = trusted._private_group.__wrapped__
    assert check(500)
    assert not check(501) and not check(600) and not check(700) and not check(900)


def test_a_symbolic_link_on_the_way_is_walked(tmp_path, shared):
    """A link in a folder others can write (they could point it elsewhere later) was
    resolved and its folder never checked."""
    safe = tmp_path / "safe"
    safe.mkdir(mode=0o700)
    (shared.parent / "link").symlink_to(safe)
    assert "shared is writable by others" in trusted.folder_problem(shared.parent / "link")
    (tmp_path / "mine").symlink_to(safe)  # (in a folder of this user's: followed)
    assert trusted.folder_problem(tmp_path / "mine") is None
    assert trusted.folder_problem(tmp_path / "mine" / "new", create=True) is None
    assert (safe / "new").is_dir()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link away needs root")
def test_a_symbolic_link_of_another_user_is_refused(tmp_path):
    safe = tmp_path / "safe"
    safe.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(safe)
    os.lchown(link, OTHER_USER, OTHER_USER)
    assert trusted.folder_problem(link) == \
        f"{link} is a symbolic link of user {OTHER_USER}, who could point it elsewhere"


def test_the_measures_cache_in_a_folder_others_could_change(shared, monkeypatch):
    monkeypatch.setenv("FASTIR_CACHE_DIR", str(shared))
    monkeypatch.setattr(user, "_CACHE_PROBLEMS_SAID", set())
    with pytest.warns(FastirWarning, match=r"compile cache: .*shared is writable by others"):
        folder = user.cache_dir()
    assert not folder.startswith(str(shared)) and trusted.folder_problem(folder) is None
    with warnings.catch_warnings():  # (said once)
        warnings.simplefilter("error")
        assert user.cache_dir() == folder
        fastir.define_measure(lambda ranked, judged, n_rel: 1.0, name="planted_x")
        try:  # (its loop's module is written and imported from the private folder)
            with _jit.forced("python"):
                    mean = fastir.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["planted_x"]).mean
        finally:
            fastir.undefine_measure("planted_x")
    assert mean == {"planted_x": 1.0}
    assert not list(shared.rglob("*")) and os.listdir(folder)
    shared.parent.chmod(0o755)
    assert user.cache_dir() == str(shared / "measures")


def _kernel(x):
    return x


def test_a_kernel_whose_numba_cache_others_could_change_compiles_without_it(shared):
    from numba.core.caching import NullCache

    def dispatcher(path):
        return types.SimpleNamespace(_cache=types.SimpleNamespace(_cache_path=str(path)))

    _jit._cache_problem.cache_clear()
    unsafe = dispatcher(shared)
    with pytest.warns(RuntimeWarning, match=r"numba's compile cache: .*writable by others"):
        _jit._refuse_a_cache_of_others(None, unsafe, _kernel)
    assert isinstance(unsafe._cache, NullCache)
    own = dispatcher(os.path.join(os.path.dirname(__file__), "__pycache__"))
    kept = own._cache
    _jit._refuse_a_cache_of_others(None, own, _kernel)  # (its source's own: trusted as it)
    assert own._cache is kept
    shared.parent.chmod(0o755)
    _jit._cache_problem.cache_clear()
    safe = dispatcher(shared)
    kept = safe._cache
    _jit._refuse_a_cache_of_others(None, safe, _kernel)
    assert safe._cache is kept
