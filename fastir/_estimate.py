"""How long a step will take here and now: a duration measured on the project machine,
scaled by this machine's cores and load.

A step of ``processes`` busy processes, with ``others`` other runnable processes on
``cores`` cores, gets a whole core per process while there are cores enough, and a share of
one otherwise: it takes ``max(1, (others + processes) / cores)`` times its duration on an
idle machine. A measurement (:class:`Measured`) keeps the seconds a step took and the load
average seen while it ran, its own processes counted: its slowdown then was ``max(1, load /
cores)``. An estimate scales the seconds from that slowdown to the one now, once for each of
the machine's three load averages (the last 1, 5 and 15 minutes: a load seldom holds still),
and says the range they span (:func:`about`). Checked on the project machine with a
fresh-cache ``fastir warmup`` in one process (95 s by the measurements below then): it took
229 s at load 3.4-4.0 (2026-11-28), where the load averages as it started (4.0, 2.1, 0.9)
give 95-239 s. (Since 2026-11-29 the measurements give 55 s: :data:`COMPILE_SECONDS`.)

Standard library only: ``./dev`` runs ``python3 -m fastir._estimate SECONDS LOAD
[PROCESSES]`` before any environment exists.
"""

import math
import os
import sys
from typing import NamedTuple


class Measured(NamedTuple):
    """A step's seconds, measured on a machine of ``cores`` cores whose load average, while
    the step ran (its own processes counted), was ``load``."""

    seconds: float
    load: float
    cores: int = 2


#: What compiling each ``fastir warmup`` step's kernels took on a fresh numba cache, each
#: step alone in a fresh process, minus what every step compiles ("shared": the join and
#: the measure kernel, for dicts and files): 2-core project machine, 2026-11-24, load
#: 1.5-2.6 (each step alone: files 26.8 s, containers 21.9, significance 22.8, diversity
#: 27.7, fusion 27.1, preferences 45.6, loops 47.7).
#: Scaled on 2026-11-29 by each step's compile when machine code was made for the kernels'
#: own libraries only (fastir._lazy_emit): a fresh ``fastir warmup --jobs 1`` took 107 s
#: against 178 s for the code before, back to back at load 1.0-1.1: loops (with the shared
#: kernels) x0.48, preferences x0.66, diversity x0.76, fusion x0.79, significance x0.60;
#: files x0.60 (the whole warmup's ratio); containers kept.
COMPILE_SECONDS = {"shared": 10, "files": 4, "fusion": 5, "loops": 13, "diversity": 5,
                   "preferences": 16, "significance": 1, "containers": 1}
#: The load average of those measurements (the middle of 1.5-2.6).
COMPILE_LOAD = 2.0


#: What compiling each kernel ``fastir eval`` needs for TREC files takes on a fresh numba
#: cache (seconds with a core of its own on an idle machine, its helpers included), in the
#: order the command first calls them (fastir.cli.first_run). Measured on the 2-core project
#: machine, 2026-11-28, as each compile's CPU seconds (numba's compile events) at load 8-9,
#: scaled by trec_eval's on the MS MARCO pair then (11.7 CPU seconds, 6.3 quiet: x0.54);
#: ``scan_chunks`` scaled again on 2026-11-29 by its compile's growth when its per-line
#: helpers were inlined (16-17 s against 8-11 s on a fresh cache: x1.75); ``scan_chunks`` and
#: ``evaluate_queries`` scaled again on 2026-11-29 when a helper called with a constant
#: was no longer compiled twice (3 alternated pairs of compiles, load 1.0-2.0: x0.86, x0.80).
#: Not scaled when helpers lost numba's Python entry and kernels its C entry (2026-11-29, a
#: first run's CPU x0.83): the host was then twice as slow (the binary 12.4 s), and quiet
#: first runs (16.8, 18.2, 15.8 s) fell within the lines these figures gave (14-24, 14-22,
#: 14-21 s; BENCHMARKS.md). Scaled on 2026-11-29 by each kernel's compile when machine code
#: was made for the kernels' own libraries only (fastir._lazy_emit; 2 alternated pairs of
#: fresh compiles, load 0.5-1.0: count_lines x0.79, scan_chunks x0.77, _join_kernel x0.60,
#: evaluate_queries x0.64; the others x0.9-1.0, kept).
KERNEL_SECONDS = {"fastir.io._scan.count_lines": 0.5, "fastir.io._scan.scan_chunks": 4.2,
                  "fastir.model.ids.merge_sorted_ids": 0.6, "fastir.model.ids._gather_bytes": 0.2,
                  "fastir.model.data._hash_judgments": 0.5, "fastir.model.join._join_kernel": 3.8,
                  "fastir.measures.kernels.evaluate_queries": 2.7,
                  "fastir.measures.kernels.summaries": 0.6}
#: What each process of a first run spends besides compiling, measured as above: a helper's
#: start (Python, fastir, numba) and its sample of the input as Python, about the command's
#: own start and work on that MS MARCO-shaped input (0.7-0.8 s a helper, 1.5 s the command).
PROCESS_SECONDS = 1.0
#: The load of those seconds (an idle machine's).
KERNEL_LOAD = 0.0
#: How much more work a core takes to do the same when other processes keep the machine
#: busy (sharing its caches and memory): up to this factor, linearly until the others
#: number two a core. On the 2-core project machine, 2026-11-28: trec_eval on the MS MARCO
#: pair took 11.7 CPU seconds at load 8-9 against 6.3 quiet (x1.85); a first run's
#: compiles 1.6 times the CPU seconds above at load 4.4-5.7.
CONTENTION = 1.85


def compiling(*steps, shared=True):
    """The measurement of a process compiling ``steps``' kernels (and, in a fresh process,
    the ``shared`` ones)."""
    return Measured(COMPILE_SECONDS["shared"] * shared + sum(COMPILE_SECONDS[s] for s in steps),
                    COMPILE_LOAD)


def _cores():
    """The cores this process may run on (its affinity: a container's share), else all."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _loads():
    try:
        return os.getloadavg()
    except OSError:  # (no load average on this system: an idle machine's estimate)
        return (0.0,)


def seconds(measured, processes=1, loads=None, cores=None):
    """(fewest, most) seconds ``measured`` takes here, run in ``processes`` processes, at
    each of ``loads`` (default: the machine's load averages now) on ``cores`` cores."""
    cores = cores or _cores()
    then = max(1.0, measured.load / measured.cores)
    now = [max(1.0, (load + processes) / cores) for load in (loads or _loads())]
    return measured.seconds * min(now) / then, measured.seconds * max(now) / then


def shared(measured, loads=None, cores=None):
    """(fewest, most) seconds until the last of several processes ends, each of which
    needs its ``measured`` seconds (measured alone, at one load), when they share the
    ``cores`` fairly with each of ``loads`` other runnable processes (default: the load
    averages now): each gets a whole core while there are cores enough, and a share of one
    otherwise (as :func:`seconds` has it for one process), each core slower as the others
    fill the machine (:data:`CONTENTION`)."""
    cores = cores or _cores()
    alone = sorted(m.seconds / max(1.0, m.load / m.cores) for m in measured)
    ends = [_last_end(alone, load, cores) for load in (loads or _loads())]
    return min(ends), max(ends)


def _last_end(alone, others, cores):
    """When the last of the processes needing ``alone`` seconds (sorted) of a core ends
    (each core slower by :data:`CONTENTION` as the ``others`` fill the machine)."""
    clock, done = 0.0, 0.0  # (every running process has had ``done`` seconds of a core)
    slower = 1.0 + (CONTENTION - 1.0) * min(1.0, others / (2 * cores))
    for i, need in enumerate(alone):
        rate = min(1.0, cores / (others + len(alone) - i)) / slower
        clock += (need - done) / rate
        done = need
    return clock


def about(measured, processes=1, loads=None, cores=None):
    """``about 40-70 s`` or ``about 3-6 minutes`` (one figure when the range rounds to it),
    and the load it was scaled to: what a message says before a step starts. ``measured``:
    a Measured, or a list of them for processes that share the cores (:func:`shared`)."""
    loads = loads or _loads()
    cores = cores or _cores()
    if isinstance(measured, list):
        low, high = shared(measured, loads, cores)
    else:
        low, high = seconds(measured, processes, loads, cores)
    if high < 180:
        low, high, unit = max(1, round(low)), max(1, round(high)), "s"
    else:
        low, high, unit = max(1, math.floor(low / 60)), math.ceil(high / 60), "minutes"
    span = f"{low}" if low == high else f"{low}-{high}"
    return f"about {span} {unit} at this machine's load ({loads[0]:.1f} on {cores} cores)"


if __name__ == "__main__":  # ./dev: python3 -m fastir._estimate SECONDS LOAD [PROCESSES]
    print(about(Measured(float(sys.argv[1]), float(sys.argv[2])),
                int(sys.argv[3]) if len(sys.argv) > 3 else 1))
