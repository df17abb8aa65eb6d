"""Progress bars (tqdm) on standard error for long work: never in pipes, never from the
library unless asked (``progress=True``)."""

import contextlib
import contextvars
import shutil
import sys
import threading
import time

#: A bar appears only when the work has taken this long (short work shows nothing).
DELAY = 0.3
#: The running stage's report (see :meth:`Progress.stage`), for the code under it.
_STAGE = contextvars.ContextVar("fastir_progress_stage", default=None)
#: What a bar shows: done, rate and time left (a counter where the total is unknown).
BAR = "{desc}{percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]"
COUNTER = "{desc}{n_fmt} [{elapsed}, {rate_fmt}]"


def wanted(progress):
    """Whether to show progress: ``True``/``False`` as asked, ``"auto"`` (the command line)
    when standard error is a terminal."""
    if progress == "auto":
        return sys.stderr.isatty()
    return bool(progress)


class Progress:
    """A bar over ``total`` units (bytes, runs, resamples), or nothing when not ``enabled``."""

    def __init__(self, total, description, enabled, unit="it"):
        self.bar = None
        self.started = time.monotonic()
        if enabled:
            from tqdm import tqdm

            scale = unit == "B"
            size = shutil.get_terminal_size()  # (80 x 24 where a terminal says 0 x 0,
            # where tqdm would draw nothing)
            self.bar = tqdm(total=total, desc=description, unit=unit, unit_scale=scale,
                            unit_divisor=1024 if scale else 1000, delay=DELAY, leave=False,
                            file=sys.stderr, ncols=min(size.columns, 100), nrows=size.lines,
                            bar_format=BAR if total else COUNTER)

    def add_total(self, n):
        """More work to come (known once the earlier steps ran)."""
        if self.bar is not None:
            self.bar.total += n

    def advance(self, n=1, description=None):
        if self.bar is not None:
            if description:
                self.bar.set_description(description, refresh=False)
            self.bar.update(n)

    @contextlib.contextmanager
    def stage(self, description, units):
        """A step of ``units`` (a file parsed, say): the bar shows its name and keeps its
        clock ticking, advances as the code under it reports the part done
        (:func:`report`: a file's parse, by the chunks it has scanned), then by the rest of
        ``units``."""
        if self.bar is None:
            yield
            return
        self.bar.set_description(description, refresh=False)
        done = threading.Event()
        reported = [0]

        def report(fraction):
            n = int(units * min(max(fraction, 0.0), 1.0))
            if n > reported[0]:
                self.bar.update(n - reported[0])
                reported[0] = n

        def tick():
            while not done.wait(0.2):
                if time.monotonic() - self.started >= DELAY:
                    self.bar.refresh()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        token = _STAGE.set(report)
        try:
            yield
        finally:
            _STAGE.reset(token)
            done.set()
            ticker.join()
            self.bar.update(units - reported[0])

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def reporter():
    """The running stage's ``report(fraction done)`` when a bar shows it, else None (then
    there is no one to tell: work in one piece)."""
    return _STAGE.get()
