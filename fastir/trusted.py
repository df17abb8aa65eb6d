"""Folders that no other user can change: the rule for every folder fastir runs code from
that it did not ship, or unpickles (numba's cache index files), or whose sockets it trusts.

A file in a folder another user can write, or can replace (they own a folder above it, or
may write in one that is not sticky), could be theirs: imported or unpickled, it runs their
code with this user's rights (``sudo -E`` keeps another user's ``XDG_CACHE_HOME``, say).
The worker's folder (:mod:`fastir.worker.common`) and the compile caches
(:func:`fastir.measures.user.cache_dir`, numba's cache of each kernel: :mod:`fastir._jit`)
are checked by these rules. Standard library only.
"""

import functools
import os
import stat


def parent_problem(info):
    """Why a folder above (``os.stat_result`` ``info``) lets another user replace what is
    below it, or None: it must belong to root or this user and be writable by no one else
    (:func:`others_write`), or be sticky (as /tmp is)."""
    if info.st_uid not in (0, os.geteuid()):
        return f"belongs to user {info.st_uid}, who could replace what is below it"
    if others_write(info) and not info.st_mode & stat.S_ISVTX:
        return (f"is writable by others (mode {stat.S_IMODE(info.st_mode):o}), who could "
                "replace what is below it")
    return None


def own_problem(info, private=False):
    """Why a folder (``info``) is not this user's alone to write (``private``: to open), or
    None."""
    if info.st_uid != os.geteuid() or (info.st_mode & 0o077 if private else
                                       others_write(info)):
        alone = "open" if private else "write"
        return (f"is not a folder only this user can {alone} (owner {info.st_uid}, mode "
                f"{stat.S_IMODE(info.st_mode):o})")
    return None


def others_write(info):
    """Whether users other than this one may write in the folder ``info``: it is writable by
    all, or by a group that is not this user's own (a user private group, as under umask
    002, has no other member)."""
    return bool(info.st_mode & 0o002 or
                info.st_mode & 0o020 and not _group_of_this_user_alone(info.st_gid))


@functools.cache
def _group_of_this_user_alone(gid):
    """Whether no other user is in the group ``gid``: as a listed member, or by having it as
    their primary group (unknown groups and users count as others)."""
    import grp
    import pwd

    try:
        me = pwd.getpwuid(os.geteuid())
        members = grp.getgrgid(gid).gr_mem
        others = [user for user in pwd.getpwall() if user.pw_gid == gid and
                  user.pw_uid != me.pw_uid]
    except KeyError:
        return False
    return not others and set(members) <= {me.pw_name}


def folder_problem(path, create=False):
    """Why another user could change what the folder ``path`` holds, or None: the folder
    (its symbolic links resolved) must pass :func:`own_problem` and each folder above it
    :func:`parent_problem`. The text names the folder at fault. ``create``: the folders
    missing are made (mode 0700) once those above them are found safe."""
    real = os.path.realpath(path)
    parts = [part for part in real.split("/") if part]
    here = "/"
    try:
        for name in parts:
            problem = parent_problem(os.lstat(here))
            if problem is not None:
                return f"{here} {problem}"
            here = os.path.join(here, name)
            if create and not os.path.lexists(here):
                os.makedirs(here, mode=0o700, exist_ok=True)
        info = os.lstat(here)
    except OSError as error:
        return f"{here}: {error.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{here} is not a folder"
    problem = own_problem(info)
    return None if problem is None else f"{here} {problem}"
