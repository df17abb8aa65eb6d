"""Output that is all there or says it is not, the one rule every command and writer follows.

Standard output is written with :func:`write_stdout` and flushed at once, files with
:func:`atomic_write` (a temporary file in the same folder, synced, then renamed over the
destination; removed on failure): a full disk, a closed stream or a folder one cannot write
raises an :class:`OutputError` naming the destination, never a silently truncated file nor
Python's "Exception ignored" at exit (:func:`settle_stdout` at a command's end); an
unbuffered standard output too (:func:`whole_stdout`, while a command runs). A reader that
leaves early (``fastir measures | head``) is not a failure: its BrokenPipeError passes
through untouched. Standard library only (the command line's client path may import it).
"""

import contextlib
import errno
import io
import os
import select
import stat
import sys

#: What an output that failed leaves behind.
INCOMPLETE = "the output is incomplete"
NOTHING = "nothing was written"


class OutputError(OSError):
    """Output that could not be written whole: ``str()`` says where to, why, and what is left
    (``filename``: the path; None for standard output)."""

    def __init__(self, code, reason, filename=None, left=INCOMPLETE):
        super().__init__(code, reason, filename)
        self.left = left

    def __str__(self):
        where = "to standard output" if self.filename is None else self.filename
        return f"cannot write {where}: {self.strerror} ({self.left})"


def _failure(exc, filename=None, left=INCOMPLETE):
    """``exc``, raised while writing, as an :class:`OutputError` (a closed file object is a
    closed stream)."""
    if isinstance(exc, ValueError):  # ("I/O operation on closed file")
        return OutputError(errno.EBADF, "it is closed", filename, left)
    return OutputError(exc.errno, exc.strerror or str(exc), filename, left)


class _WholeWrites(io.BufferedIOBase):
    """The writer under an unbuffered standard output (``python -u``, PYTHONUNBUFFERED): each
    write is written whole, or raises an :class:`OutputError`. (Python's own unbuffered
    stream hands its bytes straight to the file and takes a short write, a file size limit
    reached or a disk filling, as complete.) A failure is kept: every later write or flush
    raises it again, as a buffered stream's flush would (argparse drops the error of its
    own writes and exits 0)."""

    def __init__(self, raw):
        super().__init__()
        self._raw, self.failure, self._done = raw, None, False

    @property
    def closed(self):
        return self._done or self._raw.closed

    @property
    def name(self):
        return self._raw.name

    def close(self):  # (the file stays open: it is the process's standard output)
        self._done = True

    def writable(self):
        return True

    def fileno(self):
        return self._raw.fileno()

    def isatty(self):
        return self._raw.isatty()

    def seekable(self):
        return self._raw.seekable()

    def tell(self):
        return self._raw.tell()

    def flush(self):
        if self.failure is not None:
            raise self.failure

    def write(self, data):
        self.flush()
        view = memoryview(data).cast("B")
        while view:
            try:
                written = self._raw.write(view)
            except BrokenPipeError:
                raise
            except OSError as exc:
                self.failure = _failure(exc)
                raise self.failure from None
            if written is None:  # (a non-blocking descriptor that is full: wait)
                select.select([], [self.fileno()], [])
                continue
            if not written:
                self.failure = OutputError(errno.EIO, "the file took none of it")
                raise self.failure
            view = view[written:]
        return len(data)


@contextlib.contextmanager
def whole_stdout():
    """While a command runs: an unbuffered standard output (``python -u``,
    PYTHONUNBUFFERED) writes all it is given or raises an :class:`OutputError`, as a
    buffered one does at its flush (see :class:`_WholeWrites`); a buffered one is left as
    it is."""
    stream = sys.stdout
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        yield
        return
    writer = _WholeWrites(stream.buffer)
    sys.stdout = io.TextIOWrapper(writer, stream.encoding, stream.errors, newline="\n",
                                  line_buffering=stream.line_buffering, write_through=True)
    sys.stdout.mode = getattr(stream, "mode", "w")
    try:
        yield
    finally:
        sys.stdout = stream
        writer.close()  # (what failed was said: the stream goes without a word)


def write_stdout(data):
    """Write ``data`` to standard output and flush it (``str``, or ``bytes`` written as they
    are); an :class:`OutputError` when it cannot all be written."""
    stream = sys.stdout
    if stream is None:  # (started with it closed: Python then prints nothing, silently)
        raise OutputError(errno.EBADF, "it is closed", left=NOTHING)
    try:
        if isinstance(data, bytes):
            stream.flush()
            stream.buffer.write(data)
        else:
            stream.write(data)
        stream.flush()
    except (BrokenPipeError, UnicodeError):  # (text its encoding cannot say: not the stream's)
        raise
    except (OSError, ValueError) as exc:
        raise _failure(exc) from None


def flush_stdout():
    """Flush what was printed to standard output; an :class:`OutputError` when it cannot be
    written."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        raise _failure(exc) from None


def discard_stdout():
    """After standard output failed (said, or a reader that left): point it at /dev/null, so
    that what it still holds goes nowhere and Python's own flush at exit cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # (none, closed, or not a file)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def settle_stdout():
    """At a command's end: flush standard output, or discard it when that fails (the failure
    is said already: an error line, a reader that left, a traceback)."""
    try:
        flush_stdout()
    except OSError:
        discard_stdout()


@contextlib.contextmanager
def atomic_write(path, binary=False, encoding="utf-8"):
    """An open file (text in ``encoding``, or ``binary``) whose contents become ``path`` only
    once all of it is written: a temporary file in the same folder, synced to disk, then
    renamed over ``path`` (a symbolic link's target is replaced, the link kept; the new file
    has the old one's permissions, or the umask's). On any failure the temporary file is
    removed and ``path`` is left as it was; an OSError becomes an :class:`OutputError` naming
    ``path``. A destination that is not a regular file (``/dev/stdout``, a pipe), or a file one
    may write in a folder one may not, is written in place, checked."""
    target = os.fsdecode(path)
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        existing = None
    except OSError as exc:
        raise _failure(exc, target, NOTHING) from None
    mode, encoding = ("wb", None) if binary else ("w", encoding)
    left = NOTHING if existing is None else f"{target} is left as it was"
    real = os.path.realpath(target)
    fd = None
    if existing is None or stat.S_ISREG(existing.st_mode):
        try:
            fd, temporary = _temporary_file(real)
        except OSError as exc:
            if not isinstance(exc, PermissionError) or existing is None or \
                    not os.access(real, os.W_OK):
                raise _failure(exc, target, left) from None
    if fd is None:  # (a device, a pipe, or a file one may write in a folder one may not)
        with _written_in_place(target, mode, encoding) as file:
            yield file
        return
    try:
        with open(fd, mode, encoding=encoding) as file:
            if existing is not None:  # (the umask applies to new files only)
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, real)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError) and not isinstance(exc, (BrokenPipeError, OutputError)):
            raise _failure(exc, target, left) from None
        raise


def _temporary_file(real):
    """``(fd, path)`` of a new file beside ``real`` (its permissions the umask's)."""
    folder, name = os.path.split(real)
    while True:
        temporary = os.path.join(folder, f".{name[:200]}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue


@contextlib.contextmanager
def _written_in_place(target, mode, encoding):
    """``target`` opened and written as it is (what it held is lost on failure), checked."""
    try:
        file = open(target, mode, encoding=encoding)
    except OSError as exc:  # (a folder, say)
        raise _failure(exc, target, NOTHING) from None
    try:
        with file:
            yield file
            file.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise _failure(exc, target) from None
