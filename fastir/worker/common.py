"""Where a worker lives, whom it may serve, and how a message is framed.

Standard library only (a client imports this before anything else). A worker serves one
fastir installation run by one Python with one set of flags and numba settings (its
*identity*) for processes of one *security context* (the rights a process has: users and
groups, capabilities, namespaces, sandbox and cgroup); the key of both names its files. Its
files are in a folder only the user can open, reached from ``/`` without following a
symbolic link and opened once (:class:`Folder`): every later file is opened relative to
that descriptor. A message is a length and a marshalled value, with file descriptors
alongside.
"""

import _socket  # the C module alone: socket.py's enums and selectors cost a client ~3 ms
import errno
import marshal
import os
import struct
import sys
import zlib

from fastir import trusted

PROTOCOL = 2
#: Seconds a worker waits without a request before it exits (``FASTIR_WORKER_IDLE``).
IDLE_SECONDS = 600
#: The longest idle time accepted (30 days; a longer one overflows the event loop's timer).
MAX_IDLE_SECONDS = 30 * 24 * 3600
#: A worker that failed to start is not started again for this many seconds.
RETRY_SECONDS = 300
#: The largest message read (a request is its arguments and environment: ARG_MAX is 2 MB).
MAX_MESSAGE = 64 << 20
#: The most descriptors a message carries (the kernel's SCM_MAX_FD is 253).
MAX_FDS = 250
_LENGTH = struct.Struct("!I")
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class SettingError(ValueError):
    """A setting the user gave (an environment variable, an option) that cannot be used;
    its text is the one line to show."""


_MODES = {"auto": "auto", "on": "auto", "1": "auto", "yes": "auto", "true": "auto",
          "use": "use", "off": "off", "0": "off", "no": "off", "false": "off"}


def mode(default="auto"):
    """``"off"`` (never use a worker), ``"use"`` (use a running one, never start one) or
    ``"auto"`` (use one, start one when there is none). ``FASTIR_WORKER`` says which; unset,
    ``default`` (the command line's ``auto``; a library call's ``use``: a library starts no
    process its caller did not ask for), and ``off`` where ``CI`` is set (CI leaves
    nothing running). Raises SettingError for another value."""
    raw = os.environ.get("FASTIR_WORKER", "")
    value = raw.strip().lower()
    if value in ("", "default"):
        return "off" if os.environ.get("CI") else default
    if value not in _MODES:
        raise SettingError(f"FASTIR_WORKER={raw!r} is not one of off, use, auto")
    return _MODES[value]


def idle_seconds(text, name="FASTIR_WORKER_IDLE"):
    """The idle time ``text`` in seconds (a number above 0, at most 30 days); None for
    None. Raises SettingError naming ``name`` otherwise."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_IDLE_SECONDS:  # (False for nan)
        raise SettingError(f"{name}={text!r}: expected seconds, a number above 0 and at "
                           f"most {MAX_IDLE_SECONDS} (30 days)")
    return value


def supported():
    """Workers need Unix sockets that carry file descriptors and name their peer, and
    /proc to read a peer's rights; the process must not run with another effective user
    (a set-user-id program)."""
    return (sys.platform.startswith("linux") and hasattr(_socket, "SO_PEERCRED")
            and hasattr(_socket, "SCM_RIGHTS") and hasattr(os, "O_PATH")
            and os.geteuid() == os.getuid() and os.path.isdir("/proc/self/fd"))


# -- the folder ------------------------------------------------------------------------------
class Folder:
    """The worker folder, opened once (``fd``, an O_PATH descriptor) after checking it and
    each of its parents: every file in it is opened through ``fd`` without following a
    symbolic link, so that no one can swap the folder or a file for a link afterwards."""

    def __init__(self, fd, path):
        self.fd, self.path = fd, path

    def open(self, name, flags, mode=0o600):
        return os.open(name, flags | os.O_NOFOLLOW | _O_CLOEXEC, mode, dir_fd=self.fd)

    def stat(self, name):
        return os.stat(name, dir_fd=self.fd, follow_symlinks=False)

    def unlink(self, name):
        os.unlink(name, dir_fd=self.fd)

    def replace(self, name, new):
        os.replace(name, new, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def at(self, name):
        """A path to ``name`` through the folder's descriptor (for a socket's bind and
        connect, which take no directory descriptor; short whatever the folder's path)."""
        return f"/proc/self/fd/{self.fd}/{name}"

    def shown(self, name):
        """The file's path for people."""
        return os.path.join(self.path, name)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def folder_path():
    """The folder's path: ``FASTIR_WORKER_DIR``, else ``$XDG_RUNTIME_DIR/fastir``, else
    ``fastir-UID`` in ``$TMPDIR`` or ``/tmp``; its symbolic links resolved."""
    folder = os.environ.get("FASTIR_WORKER_DIR")
    if not folder:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        folder = (os.path.join(runtime, "fastir") if runtime else
                  os.path.join(os.environ.get("TMPDIR") or "/tmp", f"fastir-{os.geteuid()}"))
    return os.path.realpath(folder)


def directory(create=True):
    """The user's private folder of workers (:func:`folder_path`), open: a
    :class:`Folder` (see :func:`open_folder`)."""
    return open_folder(folder_path(), create)


def open_folder(path, create=True):
    """The folder ``path`` (absolute, without symbolic links; created with mode 0700 if
    missing and ``create``), open: a :class:`Folder`. Raises SettingError unless it is a
    folder of this user that no one else can open, and each folder above it belongs to
    root or this user and is writable by no one else (or is sticky, as /tmp is): then
    only this user can replace it or anything in it."""
    parts = [part for part in path.split("/") if part]
    if not parts:
        raise SettingError(f"fastir worker folder {path!r}: not a folder of its own")
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY | _O_CLOEXEC)
    try:
        _check_parent("/", fd)
        for i, name in enumerate(parts):
            here = "/" + "/".join(parts[:i + 1])
            last = i == len(parts) - 1
            parent, fd = fd, _step(fd, name, here, create=last and create)
            os.close(parent)
            if last:
                _check_own(here, fd)
            else:
                _check_parent(here, fd)
    except BaseException:
        os.close(fd)
        raise
    return Folder(fd, path)


def _step(parent, name, here, create):
    """The folder ``name`` in ``parent``, opened without following a link; created (mode
    0700) if missing and ``create``."""
    flags = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | _O_CLOEXEC
    try:
        try:
            return os.open(name, flags, dir_fd=parent)
        except FileNotFoundError:
            if not create:
                raise SettingError(f"fastir worker folder: {here} does not exist") from None
            try:
                os.mkdir(name, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
            return os.open(name, flags, dir_fd=parent)
    except OSError as error:
        why = ("a symbolic link or not a folder (the folder is reached without following "
               "a link)" if error.errno in (errno.ELOOP, errno.ENOTDIR) else error.strerror)
        raise SettingError(f"fastir worker folder: {here}: {why}") from None


def _check_parent(here, fd):
    problem = trusted.parent_problem(os.fstat(fd), f"/proc/self/fd/{fd}")
    if problem is not None:
        raise SettingError(f"fastir worker folder: {here} {problem}; set FASTIR_WORKER_DIR "
                           "to a folder of yours")


def _check_own(here, fd):
    problem = trusted.own_problem(os.fstat(fd), f"/proc/self/fd/{fd}", private=True)
    if problem is not None:
        raise SettingError(f"fastir worker folder: {here} {problem}: use a new folder, or "
                           "chmod 700 it")


# -- who a worker is and whom it serves -----------------------------------------------------
def root():
    """The folder of the fastir package this process runs (from this file: ``import
    fastir`` may find a namespace package of the same name)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def identity():
    """What a worker and its client must share for the worker to run a request as the
    client would: fastir's version and folder, the Python (executable, version, flags,
    warning options, the module path after its first entry) and the environment that is
    read at import (``PYTHON*``, ``NUMBA_*``, ``FASTIR_JIT``)."""
    from fastir._version import __version__

    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith(("PYTHON", "NUMBA_")) or k == "FASTIR_JIT")
    return repr((PROTOCOL, __version__, root(), sys.executable, sys.version,
                 tuple(sys.flags), sys.warnoptions, sys._xoptions, sys.path[1:], env))


#: The lines of /proc/PID/status that say what a process may do.
_STATUS = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
           "NoNewPrivs", "Seccomp", "Seccomp_filters")
#: The Linux security modules' labels of a process (those the kernel has).
_LABELS = ("attr/current", "attr/apparmor/current", "attr/smack/current",
           "attr/selinux/current")


def security_context(proc):
    """The rights of the process whose /proc folder is the descriptor ``proc``: its status
    lines of users, groups, capabilities, no_new_privs and seccomp; its namespaces; its
    root folder; its security labels; its cgroups. Raises OSError when a part cannot be
    read (then a worker must not serve it)."""
    context = {"status": _status(proc), "cgroup": _read(proc, "cgroup")}
    ns = os.open("ns", os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC, dir_fd=proc)
    try:
        context["ns"] = {name: os.readlink(name, dir_fd=ns) for name in sorted(os.listdir(ns))}
    finally:
        os.close(ns)
    top = os.stat("root", dir_fd=proc)
    context["root"] = (top.st_dev, top.st_ino)
    for name in _LABELS:
        try:
            context[name] = _read(proc, name)
        except OSError as error:  # no such module, or none loaded: the same for both
            if error.errno not in (errno.ENOENT, errno.EINVAL, errno.EOPNOTSUPP):
                raise
            context[name] = errno.errorcode.get(error.errno, str(error.errno))
    return context


def _status(proc):
    lines = dict(line.split(":", 1) for line in _read(proc, "status").splitlines()
                 if ":" in line)
    return {name: " ".join(lines[name].split()) for name in _STATUS if name in lines}


def _read(proc, name):
    fd = os.open(name, os.O_RDONLY | _O_CLOEXEC, dir_fd=proc)
    try:
        data = b""
        while chunk := os.read(fd, 65536):
            data += chunk
        return data.decode("utf-8", "surrogateescape")
    finally:
        os.close(fd)


def own_context():
    """This process's security context (:func:`security_context`)."""
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
    try:
        return security_context(proc)
    finally:
        os.close(proc)


def context_refusal(theirs, mine):
    """Why a worker of context ``mine`` must not run a command for a client of context
    ``theirs`` (None: it may). Equal contexts give the command the client's rights; a
    process with no_new_privs set may have entered a Landlock domain, which no other
    process can see (an unprivileged process can enter one only with no_new_privs set), or
    added its own seccomp filter: so no_new_privs on either side refuses."""
    for context in (theirs, mine):
        if context["status"].get("NoNewPrivs", "0") != "0":
            return "no_new_privs is set (a sandbox may restrict it unseen)"
    for part in sorted(set(theirs) | set(mine)):
        if theirs.get(part) != mine.get(part):
            return f"its {_differs(part, theirs.get(part), mine.get(part))} differs"
    return None


def _differs(part, theirs, mine):
    if isinstance(theirs, dict) and isinstance(mine, dict):
        names = sorted(n for n in set(theirs) | set(mine) if theirs.get(n) != mine.get(n))
        return f"{part} ({', '.join(names)})"
    return part


def key(ident, context):
    """The name of the worker of identity ``ident`` for processes of ``context``."""
    return digest(ident + "\n" + repr(sorted(context.items())))


def sources_stamp(folder=None):
    """Size and modification time of every Python source of fastir: a worker whose stamp
    differs from its client's runs old code, and retires."""
    parts = []
    for path, dirs, files in os.walk(folder or root()):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(path, name))
                parts.append(f"{path}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return digest("\n".join(parts))


def digest(text):
    """A short stable digest (not for security: the full values are compared)."""
    data = text.encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def names(name):
    """{'socket', 'lock', 'log', 'failed'}: the names of the files of worker ``name`` (its
    :func:`key`) in the folder."""
    return {"socket": name + ".sock", "lock": name + ".lock", "log": name + ".log",
            "failed": name + ".failed"}


# -- the peer of a socket -------------------------------------------------------------------
def peer_credentials(sock):
    """(pid, uid, gid) of the process at the other end of a Unix socket, as the kernel
    recorded them when it connected (or listened)."""
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, _CREDENTIALS.size)
    return _CREDENTIALS.unpack(raw)


def peer_uid(sock):
    """The user id of the process at the other end of a Unix socket."""
    return peer_credentials(sock)[1]


def peer_pidfd(sock):
    """A pidfd of the process that connected ``sock`` (the kernel's SO_PEERPIDFD, Linux 6.5:
    it cannot name a later process that reuses the pid), or None where there is none."""
    if os.uname().machine.startswith(("alpha", "mips", "parisc", "sparc")):
        return None  # (their socket options have other numbers)
    try:
        return sock.getsockopt(_socket.SOL_SOCKET, getattr(_socket, "SO_PEERPIDFD", 77))
    except OSError:
        return None


# -- messages ------------------------------------------------------------------------------
def send(sock, value, fds=()):
    """Send one message (file descriptors ``fds`` ride with its first bytes)."""
    data = marshal.dumps(value)
    header = _LENGTH.pack(len(data))
    if fds:
        rights = struct.pack(f"{len(fds)}i", *fds)
        sent = sock.sendmsg([header], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        sock.sendall(header[sent:] + data)
    else:
        sock.sendall(header + data)


def receive(sock, max_fds=0):
    """(message, fds) of one message; message None when the peer has closed. Raises
    OSError (EPROTO) for a message that is too long or not one at all."""
    fds = []
    try:
        header = b""
        while len(header) < _LENGTH.size:
            if max_fds and not fds:
                chunk, extra, _, _ = sock.recvmsg(_LENGTH.size - len(header),
                                                  _socket.CMSG_SPACE(max_fds * 4))
                fds += _descriptors(extra)
            else:
                chunk = sock.recv(_LENGTH.size - len(header))
            if not chunk:
                _close_all(fds)
                return None, []
            header += chunk
        (size,) = _LENGTH.unpack(header)
        if size > MAX_MESSAGE:
            raise OSError(errno.EPROTO, f"a message of {size} bytes")
        data = bytearray()
        while len(data) < size:
            chunk = sock.recv(min(size - len(data), 1 << 20))
            if not chunk:
                _close_all(fds)
                return None, []
            data += chunk
        try:
            return marshal.loads(bytes(data)), fds
        except (ValueError, EOFError, TypeError):
            raise OSError(errno.EPROTO, "not a message") from None
    except BaseException:
        _close_all(fds)
        raise


def _descriptors(extra):
    fds = []
    for level, kind, data in extra:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            whole = len(data) - len(data) % 4
            fds += struct.unpack(f"{whole // 4}i", data[:whole])
    return fds


def unix_socket():
    """A Unix stream socket (the C module's)."""
    return _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)


def _close_all(fds):
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
