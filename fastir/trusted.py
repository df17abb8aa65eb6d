"""Folders that no other user can change: the rule for every folder fastir runs code from
that it did not ship, or unpickles (numba's cache index files), or whose sockets it trusts.

A file in a folder another user can write, or can replace (they own a folder above it, or
may write in one that is not sticky), could be theirs: imported or unpickled, it runs their
code with this user's rights (``sudo -E`` keeps another user's ``XDG_CACHE_HOME``, say).
The worker's folder (:mod:`fastir.worker.common`) and the compile caches
(:func:`fastir.measures.user.cache_dir`, numba's cache of each kernel: :mod:`fastir._jit`)
are checked by these rules. Standard library only.
"""

import contextlib
import errno
import functools
import os
import stat


def parent_problem(info, path):
    """Why the folder ``path`` above (``os.stat_result`` ``info``) lets another user replace
    what is below it, or None: it must belong to root or this user and be writable by no
    one else (:func:`others_write`), or be sticky (as /tmp is)."""
    if info.st_uid not in (0, os.geteuid()):
        return f"belongs to user {info.st_uid}, who could replace what is below it"
    if others_write(info, path) and not info.st_mode & stat.S_ISVTX:
        return (f"is writable by others (mode {stat.S_IMODE(info.st_mode):o}), who could "
                "replace what is below it")
    return None


def own_problem(info, path, private=False):
    """Why the folder ``path`` (``info``) is not this user's alone to write (``private``: to
    open), or None."""
    if info.st_uid != os.geteuid() or (info.st_mode & 0o077 if private else
                                       others_write(info, path)):
        alone = "open" if private else "write"
        return (f"is not a folder only this user can {alone} (owner {info.st_uid}, mode "
                f"{stat.S_IMODE(info.st_mode):o})")
    return None


def others_write(info, path):
    """Whether users other than this one may write in the folder ``path`` (``info``): it is
    writable by all, or by its group, unless that group is this user's own private group
    (as under umask 002: :func:`_private_group`) and no access control list names others
    (with one, the group bits are the list's mask)."""
    if info.st_mode & 0o002:
        return True
    return bool(info.st_mode & 0o020) and not (_private_group(info.st_gid) and
                                                not _has_acl(path))


@functools.cache
def _private_group(gid):
    """Whether ``gid`` is this user's private group: the user's primary group, named as the
    user, with no other member listed (a group others may have as their primary one is
    then theirs too, unseen where the user database cannot be listed: not counted)."""
    import grp
    import pwd

    try:
        me = pwd.getpwuid(os.geteuid())
        group = grp.getgrgid(gid)
    except KeyError:
        return False
    return gid == me.pw_gid and group.gr_name == me.pw_name and \
        set(group.gr_mem) <= {me.pw_name}


#: The extended attributes of access control lists (POSIX, NFSv4).
_ACLS = ("system.posix_acl_access", "system.nfs4_acl")


def _has_acl(path):
    """Whether the file ``path`` has an access control list (any that cannot be read: one)."""
    for name in _ACLS:
        try:
            os.getxattr(path, name)
        except OSError as error:
            if error.errno in (errno.ENODATA, errno.ENOTSUP, errno.EOPNOTSUPP):
                continue
            return True
        return True
    return False


#: The most symbolic links followed on the way to a folder (the kernel's own limit).
MAX_LINKS = 40


def folder_problem(path, create=False):
    """Why another user could change what the folder ``path`` holds, or None. It is walked
    from ``/`` as the kernel resolves it: each folder passed must pass
    :func:`parent_problem`, each symbolic link on the way must belong to root or this user
    (its target is then walked in turn), and the folder itself must pass
    :func:`own_problem`. The text names the folder or link at fault. ``create``: the
    folders missing are made (mode 0700) once those above them are found safe."""
    pending = [part for part in os.path.join(os.getcwd(), path).split("/") if part]
    here, links = "/", 0
    try:
        while pending:
            problem = parent_problem(os.lstat(here), here)
            if problem is not None:
                return f"{here} {problem}"
            name = pending.pop(0)
            if name in (".", ".."):
                here = here if name == "." else os.path.dirname(here)
                continue
            there = os.path.join(here, name)
            if create and not os.path.lexists(there):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(there, 0o700)
            info = os.lstat(there)
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if info.st_uid not in (0, os.geteuid()) or links > MAX_LINKS:
                    return (f"{there} is a symbolic link of user {info.st_uid}, who could "
                            "point it elsewhere" if links <= MAX_LINKS else
                            f"{there}: too many symbolic links")
                target = os.readlink(there)
                pending[:0] = [part for part in target.split("/") if part]
                here = "/" if target.startswith("/") else here
                continue
            here = there
        info = os.lstat(here)
    except OSError as error:
        return f"{here}: {error.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"{here} is not a folder"
    problem = own_problem(info, here)
    return None if problem is None else f"{here} {problem}"
