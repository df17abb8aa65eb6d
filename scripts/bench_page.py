"""BENCHMARKS.md, the page of current figures: one section per use case, each rewritten
alone by ``./dev bench --case NAME``, and what every benchmark script needs to fill one:
the machine's load seen during a run, alternated runs, and a figure's median and spread.

A section runs from its marker line (``<!-- case NAME -->``) to the next marker or the end
of the page; the page's head (before the first marker) is :data:`HEAD`, written anew with
every update, and the sections are kept in the order of the cases given to :func:`update`.
"""

import os
import re
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "BENCHMARKS.md"
#: Sections written from a script of their own (their command in the section), which
#: ``./dev bench`` keeps as they are: a comparison of two commits.
ONE_OFF = ("before-after", "first-run")
MARKER = re.compile(r"^<!-- case (\S+) -->$", re.MULTILINE)

HEAD = """# Benchmarks

Current figures, one table per use case. `./dev bench` measures every case again and
rewrites this page; `./dev bench --case NAME` measures one and rewrites its section only.
Each row gives what was timed (a command as users type it, or the call a script makes), the
median of its runs with the fastest and slowest (systems alternated run by run: A B C A B C
...), when it ran and the machine's load meanwhile (the 1-minute load average, lowest and
highest seen between runs). The machine: 2 cores of a shared virtual machine, noisy;
compare the rows of one table, not figures across tables. Rows marked *carried over* come
from the journal this page replaced and keep its date and command until `./dev bench`
measures them again; the journal, and every earlier figure, is in this file's git history.
"""


class Loads:
    """The 1-minute load average, sampled between runs: ``text()`` says its range."""

    def __init__(self):
        self.seen = []
        self.start = time.strftime("%Y-%m-%d %H:%M")
        self.sample()

    def sample(self):
        self.seen.append(os.getloadavg()[0])

    def text(self):
        """``2026-11-28 12:30, load 1.2-1.6``: when the run started and the load seen."""
        low, high = min(self.seen), max(self.seen)
        span = f"{low:.1f}" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f}"
        return f"{self.start}, load {span}"


def alternated(calls, rounds, loads, warm=1):
    """Each of ``calls`` ({name: function() -> seconds or None}) once per round, in turn,
    ``warm`` untimed rounds first; {name: [seconds, ...]} of the timed rounds (a function
    returning None in a round is left out of it: a slow peer timed fewer times)."""
    times = {name: [] for name in calls}
    for r in range(-warm, rounds):
        for name, call in calls.items():
            seconds = call()
            loads.sample()
            if r >= 0 and seconds is not None:
                times[name].append(seconds)
    return times


def spread(values, scale=1.0, digits=3):
    """``0.051 (0.050-0.053)``: the median and, in parentheses, the fastest and slowest."""
    if not values:
        return ""
    median, low, high = (f"{x * scale:.{digits}f}" for x in (statistics.median(values),
                                                             min(values), max(values)))
    return median if len(values) == 1 else f"{median} ({low}-{high})"


def table(header, rows):
    """A markdown table: ``header`` a list of (title, align) with align "l" or "r"."""
    lines = ["| " + " | ".join(title for title, _ in header) + " |",
             "|" + "|".join("---:" if align == "r" else "---" for _, align in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def section(case, title, text, body):
    """A section of the page: its marker, title, what it measures, and its tables."""
    return f"<!-- case {case} -->\n## {title}\n\n{text.strip()}\n\n{body.strip()}\n"


def sections(page_text):
    """{case: section text} of a page, in its order."""
    found = list(MARKER.finditer(page_text))
    return {m.group(1): page_text[m.start():found[i + 1].start() if i + 1 < len(found)
                                  else len(page_text)].rstrip() + "\n"
            for i, m in enumerate(found)}


def update(page, new, order):
    """Write ``page`` with the sections of ``new`` ({case: text}) in place of its own, the
    others kept, in the order of ``order`` (cases not in it last)."""
    page = Path(page)
    kept = sections(page.read_text()) if page.exists() else {}
    kept.update(new)
    ranked = sorted(kept, key=lambda c: order.index(c) if c in order else len(order))
    page.write_text(HEAD + "".join("\n" + kept[case] for case in ranked))
