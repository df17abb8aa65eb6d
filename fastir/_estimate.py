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
fresh-cache ``fastir warmup`` in one process (95 s by the measurements below): it took 229 s
at load 3.4-4.0 (2026-11-28), where the load averages as it started (4.0, 2.1, 0.9) give
95-239 s.

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
COMPILE_SECONDS = {"shared": 21, "files": 6, "fusion": 6, "loops": 27, "diversity": 7,
                   "preferences": 25, "significance": 2, "containers": 1}
#: The load average of those measurements (the middle of 1.5-2.6).
COMPILE_LOAD = 2.0


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


def about(measured, processes=1, loads=None, cores=None):
    """``about 40-70 s`` or ``about 3-6 minutes`` (one figure when the range rounds to it),
    and the load it was scaled to: what a message says before a step starts."""
    loads = loads or _loads()
    cores = cores or _cores()
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
