"""Where a worker lives, what it must share with its clients, and how a message is framed.

Standard library only (a client imports this before anything else): a worker serves one
fastir installation run by one Python with one set of flags and numba settings (its
*identity*); its files are in a folder only the user can open; a message is a length and a
marshalled value, with file descriptors alongside.
"""

import _socket  # the C module alone: socket.py's enums and selectors cost a client ~3 ms
import marshal
import os
import stat
import struct
import sys
import zlib

PROTOCOL = 1
#: Seconds a worker waits without a request before it exits (``FASTIR_WORKER_IDLE``).
IDLE_SECONDS = 600
#: A worker that failed to start is not started again for this many seconds.
RETRY_SECONDS = 300
_LENGTH = struct.Struct("!I")
_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def mode():
    """``"off"`` (never use a worker), ``"use"`` (use a running one, never start one) or
    ``"auto"`` (use one, start one when there is none). ``FASTIR_WORKER`` says which; the
    default is ``auto``, and ``off`` where ``CI`` is set (CI leaves nothing running)."""
    value = os.environ.get("FASTIR_WORKER", "").strip().lower()
    if value in ("", "default"):
        return "off" if os.environ.get("CI") else "auto"
    if value in ("auto", "on", "1", "yes", "true"):
        return "auto"
    return "use" if value == "use" else "off"


def supported():
    """Workers need Unix sockets that carry file descriptors and name their peer's user."""
    return (sys.platform.startswith("linux") and hasattr(_socket, "SO_PEERCRED")
            and hasattr(_socket, "SCM_RIGHTS") and os.geteuid() == os.getuid())


def directory():
    """The user's private folder of workers (``FASTIR_WORKER_DIR``, else
    ``$XDG_RUNTIME_DIR/fastir``, else ``/tmp/fastir-UID``), created with mode 0700. Raises
    PermissionError unless it is a real folder of this user that no one else can open."""
    folder = os.environ.get("FASTIR_WORKER_DIR")
    if not folder:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        folder = (os.path.join(runtime, "fastir") if runtime else
                  os.path.join(os.environ.get("TMPDIR") or "/tmp", f"fastir-{os.geteuid()}"))
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(folder)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
            or info.st_mode & 0o077):
        raise PermissionError(f"{folder}: not a folder of this user alone")
    return folder


def root():
    """The folder of the fastir package this process runs."""
    import fastir

    return os.path.dirname(os.path.abspath(fastir.__file__))


def identity():
    """What a worker and its client must share for the worker to run a request as the
    client would: fastir's version and folder, the Python (executable, version, flags,
    warning options, the module path after its first entry) and the environment that is
    read at import (``PYTHON*``, ``NUMBA_*``, ``FASTIR_JIT``)."""
    import fastir

    env = sorted((k, v) for k, v in os.environ.items()
                 if k.startswith(("PYTHON", "NUMBA_")) or k == "FASTIR_JIT")
    return repr((PROTOCOL, fastir.__version__, root(), sys.executable, sys.version,
                 tuple(sys.flags), sys.warnoptions, sys._xoptions, sys.path[1:], env))


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


def paths(folder, ident):
    """{'socket', 'lock', 'log', 'failed'}: the worker's files in ``folder``."""
    base = os.path.join(folder, digest(ident))
    return {"socket": base + ".sock", "lock": base + ".lock", "log": base + ".log",
            "failed": base + ".failed"}


def peer_uid(sock):
    """The user id of the process at the other end of a Unix socket."""
    raw = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, _CREDENTIALS.size)
    return _CREDENTIALS.unpack(raw)[1]


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
    """(message, fds) of one message; message None when the peer has closed."""
    fds = []
    header = b""
    while len(header) < _LENGTH.size:
        if max_fds and not fds:
            chunk, extra, _, _ = sock.recvmsg(_LENGTH.size - len(header),
                                              _socket.CMSG_LEN(max_fds * 4))
            fds += _descriptors(extra)
        else:
            chunk = sock.recv(_LENGTH.size - len(header))
        if not chunk:
            _close_all(fds)
            return None, []
        header += chunk
    (size,) = _LENGTH.unpack(header)
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            _close_all(fds)
            return None, []
        data += chunk
    return marshal.loads(bytes(data)), fds


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
        os.close(fd)
