"""fastir/trusted.py: the folders fastir imports or unpickles from are ones no other user can
change (a folder above of another user, or writable by others and not sticky; a folder
writable by a group with another member), and the compile caches follow it: the user
measures' folder (FASTIR_CACHE_DIR, XDG_CACHE_HOME) falls back to a private temporary one,
and a kernel whose numba cache is such a folder compiles without it, each said once."""

import os
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


def test_a_group_may_write_when_it_is_this_users_alone(tmp_path, monkeypatch):
    """umask 002 with a user private group makes ~/.cache group-writable: no one else is in
    that group, so it is the user's alone; a group with another member is not."""
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o775)
    alone = {}
    monkeypatch.setattr(trusted, "_group_of_this_user_alone", lambda gid: alone[gid])
    alone[folder.stat().st_gid] = True
    assert trusted.folder_problem(folder) is None
    alone[folder.stat().st_gid] = False
    assert "only this user can write" in trusted.folder_problem(folder)


def test_who_else_is_in_a_group(monkeypatch):
    import grp
    import pwd

    def user(name, uid, gid):
        return types.SimpleNamespace(pw_name=name, pw_uid=uid, pw_gid=gid)

    me = user("me", os.geteuid(), 500)
    users = [me, user("other", 1001, 600)]
    groups = {500: [], 600: [], 700: ["me"], 800: ["me", "other"]}
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: me)
    monkeypatch.setattr(pwd, "getpwall", lambda: users)
    monkeypatch.setattr(grp, "getgrgid", lambda gid: types.SimpleNamespace(
        gr_mem=groups[gid]))
    check = trusted._group_of_this_user_alone.__wrapped__
    assert check(500) and check(700)  # (primary group alone; a group listing only me)
    assert not check(600) and not check(800)  # (another's primary group; another member)
    assert not check(900)  # (an unknown group: KeyError)


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
