"""The client side: hand a command to the user's warm worker, or say that none can take it.

Standard library only. :func:`run` sends the worker the command, the environment, the
umask, how Python set up the standard streams, its first module folder and loaded
modules, and its working folder and every open descriptor themselves (at their numbers:
``<(zcat run.gz)``, ``/dev/fd/N`` and ``/proc/self/fd/N`` name the same files there). The
worker checks the client itself (its rights must equal the worker's) and gives the command
the client's limits; the command's process then says "started" with a pidfd of itself,
and the client passes the signals it gets on to it directly, without the worker: Ctrl-C,
SIGTERM and SIGHUP; Ctrl-Z stops the command, then the client, and ``fg`` or ``bg``
continues both. The command's exit status becomes the client's, a death by a signal too.
A library call (:mod:`fastir.worker.library`) goes through :func:`submit`, which passes on
only Ctrl-Z and says how the command ended: the caller's own handlers keep the other
signals, and an exception they raise while it waits kills the command.

Whenever anything about the worker fails before the command started, :func:`run` returns
None and the caller runs the command in-process; so it does when the command needs what
only the caller's own process has (:func:`needs_own_process`).
"""

import os
import signal
import stat
import sys
import time

from fastir.worker import common

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: Seconds a client waits for the worker to start its command before running it itself.
START_SECONDS = 5
#: Seconds ``fastir worker status`` and ``stop`` wait for a worker's answer.
ANSWER_SECONDS = 5
#: A log longer than this is kept as ``.log.1`` when a new worker starts (bytes).
LOG_BYTES = 256 << 10


class NotAnswering(Exception):
    """A worker listens but does not answer (stopped, or hung); ``pid`` is its process."""

    def __init__(self, pid):
        super().__init__(pid)
        self.pid = pid


def connect(folder, name, timeout=None):
    """A connected socket to worker ``name`` in ``folder`` (a common.Folder), or None."""
    sock = common.unix_socket()
    try:
        sock.settimeout(timeout)
        sock.connect(folder.at(common.names(name)["socket"]))
        if common.peer_uid(sock) != os.geteuid():  # never another user's process
            raise PermissionError("the worker's socket belongs to another user")
    except OSError:
        sock.close()
        return None
    return sock


def run(argv):
    """Run ``fastir`` with arguments ``argv`` in the worker: the exit status, or None when
    no worker can (the caller then runs it in-process). A setting that cannot be used
    (FASTIR_WORKER, FASTIR_WORKER_IDLE, FASTIR_WORKER_DIR) is said in one line. The
    signals the client gets go to the command (FORWARDED), and its end becomes the
    client's: its exit status, or death by the signal that ended it."""
    ended = submit(argv)
    if ended is None:
        return None
    kind, value = ended
    if kind == "exit":
        return value
    if kind == "lost" and value is None:
        print("fastir: the command ended without an exit status (its worker had stopped)",
              file=sys.stderr)
        return 1
    return _die_by(value)  # (a signal ended it, or one passed on that ends a process)


def submit(argv, forwarded=FORWARDED, accepted=None, default_mode="auto"):
    """Run ``fastir`` with arguments ``argv`` in the worker, passing on to it the signals
    of ``forwarded`` (and Ctrl-Z, when the client has it as by default) while it runs;
    ``accepted()`` is called once the worker has accepted the command (what the client
    does meanwhile: from then on, nothing here forks); ``default_mode``: the mode when
    FASTIR_WORKER does not say (:func:`common.mode`: ``use`` never starts a worker).
    How it ended: ``("exit", status)``, ``("signal", number)`` (a signal ended it) or
    ``("lost", number or None)`` (it ended without saying: its worker was killed; the
    last signal passed on that ends a process, if any); None when no worker runs it (the
    caller then runs it in-process): nothing about the worker that fails before the
    command started is said, but a setting that cannot be used (FASTIR_WORKER,
    FASTIR_WORKER_IDLE, FASTIR_WORKER_DIR), in one line. An exception raised in the
    client while it waits (a handler of its own for a signal not passed on: Ctrl-C in a
    library call) ends the command and goes on."""
    try:
        wanted = common.mode(default_mode)
        if wanted == "off" or not common.supported() or needs_own_process(argv):
            return None
        idle = common.idle_seconds(os.environ.get("FASTIR_WORKER_IDLE") or None)
    except common.SettingError as problem:
        print(f"fastir: {problem}; running without a worker", file=sys.stderr)
        return None
    if wanted == "use" and not os.path.isdir(common.folder_path()):
        return None  # (no worker ever ran here: nothing to use, and nothing is made)
    try:
        folder = common.directory(create=wanted == "auto")
    except common.SettingError as problem:
        # (the default folder refused is not said: sudo -E keeps another user's, say)
        if "FASTIR_WORKER_DIR" in os.environ:
            print(f"fastir: {problem}; running without a worker", file=sys.stderr)
        return None
    except OSError:
        return None
    try:
        return _run(folder, wanted, idle, argv, (forwarded, accepted))
    finally:
        folder.close()


def _run(folder, wanted, idle, argv, waiting):
    try:
        ident = common.identity()
        name = common.key(ident, common.own_context())
    except (OSError, ValueError, ImportError):
        return None
    sock = connect(folder, name)
    if sock is None:
        if wanted == "auto":
            spawn(folder, name, idle, after_me=True)
        return None
    try:
        ended = _request(sock, folder, ident, argv, *waiting)
    finally:
        sock.close()
    if ended == "stale" and wanted == "auto":
        spawn(folder, name, idle, after_me=True)
    return None if ended == "stale" else ended


def needs_own_process(argv):
    """Whether the command must run in this process: a standard stream is closed or
    replaced (a caller of ``main()`` set ``sys.stdout``), or it would use a terminal as
    only a process of the terminal's session can: read it (``-`` with the terminal as
    standard input, or a terminal named as a file: a background reader is stopped), or
    write to one that stops background writers (``stty tostop``)."""
    originals = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    for fd, stream in enumerate((sys.stdin, sys.stdout, sys.stderr)):
        try:
            if stream is None or stream is not originals[fd] or stream.fileno() != fd:
                return True
        except (OSError, ValueError, AttributeError):
            return True
    if any(_names_a_terminal(arg) for arg in argv[1:]):
        return True
    for fd in (1, 2):
        if os.isatty(fd):
            import termios

            try:
                if termios.tcgetattr(fd)[3] & termios.TOSTOP:
                    return True
            except termios.error:
                pass
    return False


def _names_a_terminal(arg):
    value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
    if value == "-":
        return os.isatty(0)
    if not value.startswith(("/dev/", "/proc/")):
        return False
    try:
        info = os.stat(value)
    except (OSError, ValueError):
        return False
    major = os.major(info.st_rdev)  # (terminals: 4 and 5, /dev/tty among them; 136+: pts)
    return stat.S_ISCHR(info.st_mode) and (major in (4, 5) or 136 <= major <= 143)


def _request(sock, folder, ident, argv, forwarded=FORWARDED, accepted=None):
    try:
        streams = [(s.encoding, s.errors, s.line_buffering, s.write_through,
                    hasattr(s.buffer, "raw")) for s in (sys.stdin, sys.stdout, sys.stderr)]
        umask = os.umask(0o022)
        os.umask(umask)
        numbers = _descriptors(exclude={sock.fileno(), folder.fd})
        if len(numbers) >= common.MAX_FDS:
            return None
        request = {"identity": ident, "stamp": common.sources_stamp(),
                   "argv": [sys.argv[0], *argv], "env": dict(os.environ), "umask": umask,
                   "streams": streams, "fds": numbers,
                   "cloexec": [not os.get_inheritable(fd) for fd in numbers],
                   "path0": sys.path[0] if sys.path else None, "modules": _modules()}
        sock.settimeout(START_SECONDS)  # a worker answers at once, or is not one to wait for
        common.send(sock, ("run", request))
        answer, _ = common.receive(sock)
        if answer != ("send", None):  # (the descriptors go only to a worker that runs it)
            return "stale" if answer == ("fallback", "stale") else None
        if accepted is not None:
            accepted()
        here = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            common.send(sock, ("fds", None), fds=[here, *numbers])
        finally:
            os.close(here)
    except (OSError, AttributeError, ValueError):  # no working folder, say
        return None
    return _wait(sock, forwarded)


def _descriptors(exclude):
    """This process's open descriptors but ``exclude``, in order."""
    numbers = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd in exclude:
            continue
        try:
            os.fstat(fd)
        except OSError:  # (the listing's own, closed by now)
            continue
        numbers.append(fd)
    return sorted(numbers)


def _modules():
    """{name: file} of the loaded top-level modules (the worker checks that the client's
    first module folder would give the command none of them from another file)."""
    found = {}
    for name, module in list(sys.modules.items()):
        if "." not in name:
            file = getattr(module, "__file__", None)
            found[name] = file if isinstance(file, str) else None
    return found


def _wait(sock, forwarded):
    """How the command ended (see :func:`submit`), once its process has started; None (or
    "stale": the worker runs old code) when the worker left it to the client."""
    try:
        message, fds = common.receive(sock, max_fds=1)
    except OSError:
        return None
    if not (isinstance(message, tuple) and len(message) == 2 and message[0] == "started"
            and isinstance(message[1], int)):
        common._close_all(fds)
        return "stale" if message == ("fallback", "stale") else None
    command = _Command(message[1], fds[0] if fds else None, forwarded)
    sock.settimeout(None)
    try:
        with command:
            try:
                common.send(sock, "go")  # (the command begins once its signals reach it)
            except OSError:
                pass
            while True:
                try:
                    message, _ = common.receive(sock)
                except OSError:
                    message = None
                if message is None or (isinstance(message, tuple) and len(message) == 3
                                       and message[0] == "status"):
                    break
    except BaseException:  # (raised here while it runs: it must not run on)
        command.kill(signal.SIGKILL)
        raise
    finally:
        command.close()
    if message is None:
        return "lost", command.ending()
    return message[1], message[2]


class _Command:
    """The command's process, reached through the pidfd it sent (its pid where the kernel
    has no pidfds): while the client waits (``with``), the signals of ``signals`` the client
    gets go to the command, as they would have reached it in-process, and Ctrl-Z stops
    both."""

    def __init__(self, pid, pidfd, signals=FORWARDED):
        self.pid, self.pidfd, self.signals = pid, pidfd, signals
        self.forwarded = []
        self.previous = {}

    def kill(self, signum):
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, signum)
            else:
                os.kill(self.pid, signum)
        except OSError:  # (it has ended)
            pass

    def _forward(self, signum, frame):
        self.forwarded.append(signum)
        self.kill(signum)

    def _suspend(self, signum, frame):
        """Ctrl-Z: stop the command (SIGSTOP: its process is in no terminal's job), then
        this process, as the terminal's job; when continued, continue the command."""
        self.kill(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # (stops here until fg or bg)
        signal.signal(signal.SIGTSTP, self._suspend)
        self.kill(signal.SIGCONT)

    def __enter__(self):
        for signum in self.signals:  # (an ignored one stays so, as in-process)
            if signal.getsignal(signum) is not signal.SIG_IGN:
                self.previous[signum] = signal.signal(signum, self._forward)
        if signal.getsignal(signal.SIGTSTP) is signal.SIG_DFL:
            self.previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, self._suspend)
        return self

    def __exit__(self, *exc):
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def ending(self):
        """The last signal passed on that ends a process (not Ctrl-C), or None: when the
        command's process ended without a status (its worker was killed too), it ends
        this one too."""
        ending = [s for s in self.forwarded if s != signal.SIGINT]
        return ending[-1] if ending else None

    def close(self):
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


def _die_by(signum):
    """End this process by the signal ``signum``, as the command ended (its status should
    that fail: 128 + the number)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    return 128 + signum


# -- starting a worker ----------------------------------------------------------------------
def spawn(folder, name, idle=None, ready=None, after_me=False):
    """Start worker ``name`` in the background (detached: its own session, no terminal,
    standard streams on its log, which keeps the previous workers' lines), unless one is
    starting or failed lately; ``ready``: a descriptor it writes ``serving`` to once it
    serves; ``after_me``: it warms up once this process has ended (at most
    ``server.AFTER_SECONDS`` later), so that its warm-up does not slow down the command
    or call that started it, which runs in-process meanwhile. The sources stamp is taken
    here, before the worker imports anything of fastir: a worker whose sources changed
    while it started does not serve."""
    files = common.names(name)
    try:
        if time.time() - folder.stat(files["failed"]).st_mtime < common.RETRY_SECONDS:
            return None
    except OSError:
        pass
    if holder(folder, name) is not None:
        return None
    stamp = common.sources_stamp()
    try:
        if folder.stat(files["log"]).st_size > LOG_BYTES:
            folder.replace(files["log"], files["log"] + ".1")
    except OSError:
        pass
    try:
        log = folder.open(files["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    except OSError:  # (a link where the log goes, say: never followed)
        return None
    after = _own_pidfd() if after_me else None
    try:
        pid = os.fork()
        if pid == 0:  # the first child starts the worker and leaves, so nobody waits for it
            try:
                os.setsid()
                if os.fork() == 0:
                    _exec_worker(log, name, idle, stamp, ready, after)
            finally:
                os._exit(0)
    finally:
        for fd in (log, after):
            if fd is not None:
                os.close(fd)
    os.waitpid(pid, 0)
    return pid


def _own_pidfd():
    """A pidfd of this process (None where the kernel has none)."""
    try:
        return os.pidfd_open(os.getpid())
    except (AttributeError, OSError):
        return None


def _exec_worker(log, name, idle, stamp, ready, after):
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    passed = [fd for fd in (ready, after) if fd is not None]
    for fd in _descriptors(exclude={0, 1, 2, *passed}):  # (a pipe the caller holds must
        os.close(fd)                                       # not stay open)
    for fd in passed:
        os.set_inheritable(fd, True)
    os.chdir("/")
    package_parent = os.path.dirname(common.root())
    boot = ("import sys; sys.path[0] = sys.argv[1]; from fastir.cli.main import main; "
            "sys.exit(main(['worker', 'serve', *sys.argv[2:]]))")
    args = [package_parent, "--key", name, "--stamp", stamp]
    args += [] if idle is None else ["--idle", repr(idle)]
    args += [] if ready is None else ["--ready-fd", str(ready)]
    args += [] if after is None else ["--after-fd", str(after)]
    os.execv(sys.executable, [sys.executable, *_interpreter_flags(), "-c", boot, *args])


def _interpreter_flags():
    import subprocess

    return subprocess._args_from_interpreter_flags()


def holder(folder, name):
    """The pid of the worker that holds the lock of ``name`` (it is starting or serving;
    0 if it has not written its pid yet), or None when no process holds it."""
    import fcntl

    try:
        fd = folder.open(common.names(name)["lock"], os.O_RDWR | os.O_CREAT)
    except OSError:
        return 0
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else 0
        return None
    finally:
        os.close(fd)


def call(folder, name, ident, kind):
    """Ask worker ``name`` for its ``"status"`` or to ``"stop"``: its answer (a dict), or
    None when no worker listens. Raises NotAnswering when one listens but does not answer
    within ANSWER_SECONDS."""
    sock = connect(folder, name, timeout=ANSWER_SECONDS)
    if sock is None:
        return None
    try:
        common.send(sock, (kind, ident))
        message, _ = common.receive(sock)
    except TimeoutError:
        raise NotAnswering(common.peer_credentials(sock)[0]) from None
    except OSError:
        return None
    finally:
        sock.close()
    if isinstance(message, tuple) and len(message) == 2 and message[0] == kind \
            and isinstance(message[1], dict):
        return message[1]
    return None
