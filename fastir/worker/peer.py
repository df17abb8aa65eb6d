"""The client of a request as the worker sees it: its process, pinned so that its pid
cannot name another process; its rights (to compare with the worker's own); and its
limits, which the command's process takes before it runs the command.

Never what the client says: the kernel names the process at the other end of the socket
(SO_PEERPIDFD, or SO_PEERCRED's pid on a kernel before 6.5) and the worker reads /proc and
the process's limits itself. On the worker's side only (it may import what it likes).
"""

import ctypes
import os
import resource
import signal

from fastir.worker import common

#: Every resource limit of the platform, once each (RLIMIT_OFILE is RLIMIT_NOFILE).
RLIMITS = sorted({getattr(resource, name): name for name in dir(resource)
                  if name.startswith("RLIMIT_")}.items())


class Refused(Exception):
    """The request must run in-process; the text says why (for the worker's log)."""


class Peer:
    """The process that connected ``conn``, pinned: ``proc`` is its /proc folder opened as
    a descriptor (reads through it fail once the process has gone, whoever takes its pid
    next). The kernel's pidfd of the peer proves the folder is the peer's: it names the
    process that connected, and the folder was opened while that process still ran. Without
    one (Linux before 6.5) the pid the kernel recorded at connect is used, and a process
    that started after the connection was accepted is refused (a pid reused in that time
    would need the whole pid space to wrap within the same clock tick)."""

    def __init__(self, conn, accepted_ticks):
        self.proc = self.pidfd = None
        pid, uid, gid = common.peer_credentials(conn)
        if pid <= 0 or (uid, gid) != (os.geteuid(), os.getegid()):
            raise Refused("its user or group differs, or its pid is not visible here")
        self.pidfd = common.peer_pidfd(conn)
        if self.pidfd is not None:
            pid = _pidfd_pid(self.pidfd)
        self.pid = pid
        try:
            self.proc = os.open(f"/proc/{pid}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise Refused(f"its /proc folder: {error.strerror}") from None
        if self.pidfd is None and _start_ticks(self.proc) > accepted_ticks:
            raise Refused("its pid names a process that started after it connected")
        self.check_alive()

    def check_alive(self):
        """Raise Refused if the peer has ended (so its pid may name another process)."""
        try:
            if self.pidfd is not None:
                signal.pidfd_send_signal(self.pidfd, 0)
            else:
                os.stat("stat", dir_fd=self.proc)
        except OSError:
            raise Refused("it ended") from None

    def context(self):
        """Its security context (:func:`common.security_context`)."""
        try:
            return common.security_context(self.proc)
        except OSError as error:
            raise Refused(f"its rights cannot be read ({error.strerror})") from None

    def limits(self):
        """The limits the command's process takes (:func:`take`): resource limits, nice,
        CPU affinity, scheduling policy, I/O priority and OOM score adjustment."""
        pid = self.pid
        try:
            found = {"rlimits": [(number, *resource.prlimit(pid, number))
                                 for number, _ in RLIMITS],
                     "nice": os.getpriority(os.PRIO_PROCESS, pid),
                     "affinity": sorted(os.sched_getaffinity(pid)),
                     "scheduler": (os.sched_getscheduler(pid),
                                   os.sched_getparam(pid).sched_priority),
                     "ioprio": _ioprio_get(pid),
                     "oom_score_adj": int(common._read(self.proc, "oom_score_adj"))}
        except (OSError, ValueError) as error:
            raise Refused(f"its limits cannot be read ({error})") from None
        self.check_alive()  # (read by pid: the process was the peer throughout)
        return found

    def close(self):
        for fd in (self.proc, self.pidfd):
            if fd is not None:
                os.close(fd)
        self.proc = self.pidfd = None


def _pidfd_pid(pidfd):
    with open(f"/proc/self/fdinfo/{pidfd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                pid = int(line.split()[1])
                if pid > 0:
                    return pid
    raise Refused("it ended, or its pid is not visible here")


def _start_ticks(proc):
    """When the process started, in clock ticks since boot (/proc/PID/stat's 22nd field)."""
    text = common._read(proc, "stat")
    return int(text[text.rindex(")") + 2:].split()[19])


def now_ticks():
    """The clock ticks since boot now (as :func:`_start_ticks` counts them)."""
    with open("/proc/uptime") as uptime:
        return int(float(uptime.read().split()[0]) * os.sysconf("SC_CLK_TCK"))


# -- the command's process takes the limits -------------------------------------------------
def take(limits):
    """Give this process (every thread of it) the client's ``limits``; raises Refused
    where it cannot (a hard limit above this process's, a higher priority than its own:
    those need privileges the client has not shown the worker; an address-space or data
    limit below what this process maps already)."""
    try:
        for number, soft, hard in limits["rlimits"]:
            _check_room(number, soft)
            if resource.getrlimit(number) != (soft, hard):
                resource.setrlimit(number, (soft, hard))
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
        for tid in threads:
            if os.getpriority(os.PRIO_PROCESS, tid) != limits["nice"]:
                os.setpriority(os.PRIO_PROCESS, tid, limits["nice"])
            if sorted(os.sched_getaffinity(tid)) != limits["affinity"]:
                os.sched_setaffinity(tid, limits["affinity"])
            policy, priority = limits["scheduler"]
            if (os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority) != \
                    (policy, priority):
                os.sched_setscheduler(tid, policy, os.sched_param(priority))
            if limits["ioprio"] is not None and _ioprio_get(tid) != limits["ioprio"]:
                _ioprio_set(tid, limits["ioprio"])
        with open("/proc/self/oom_score_adj", "r+") as oom:
            if int(oom.read()) != limits["oom_score_adj"]:
                oom.seek(0)
                oom.write(str(limits["oom_score_adj"]))
    except (OSError, ValueError) as error:
        raise Refused(f"its limits cannot be taken ({error})") from None


#: The limits a forked process already spends part of: its address space and data, as
#: /proc/self/status counts them (kB).
_SPENT = {resource.RLIMIT_AS: "VmSize", resource.RLIMIT_DATA: "VmData"}


def _check_room(number, soft):
    """Raise Refused if this process already maps more than the limit ``soft`` allows (the
    warm worker's memory, which a fresh process would not have: the command would fail
    here where it might not in-process)."""
    if number not in _SPENT or soft == resource.RLIM_INFINITY:
        return
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(_SPENT[number] + ":") and int(line.split()[1]) * 1024 >= soft:
                raise Refused(f"its limit of {soft} bytes of {_SPENT[number]} is below what "
                              "the worker's process maps already")


# I/O priority (ionice): a system call without a wrapper. Its numbers on the common
# machines; elsewhere the I/O priority is not compared (None).
_IOPRIO_CALLS = {"x86_64": (252, 251), "aarch64": (31, 30), "riscv64": (31, 30)}
_IOPRIO_WHO_PROCESS = 1


def _syscall(number, *args):
    libc = ctypes.CDLL(None, use_errno=True)
    result = libc.syscall(number, *args)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return result


def _ioprio_get(tid):
    calls = _IOPRIO_CALLS.get(os.uname().machine)
    return None if calls is None else _syscall(calls[0], _IOPRIO_WHO_PROCESS, tid)


def _ioprio_set(tid, value):
    _syscall(_IOPRIO_CALLS[os.uname().machine][1], _IOPRIO_WHO_PROCESS, tid, value)

