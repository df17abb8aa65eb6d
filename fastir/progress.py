"""Progress bars (tqdm) on standard error for long work: never in pipes, never from the
library unless asked (``progress=True``)."""

import contextlib
import shutil
import sys
import threading
import time

#: A bar appears only when the work has taken this long (short work shows nothing).
DELAY = 0.3
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
        """A step of ``units`` that reports nothing while it runs (a file parsed by one
        kernel call, say): the bar shows its name and keeps its clock ticking, then
        advances by ``units``."""
        if self.bar is None:
            yield
            return
        self.bar.set_description(description, refresh=False)
        done = threading.Event()

        def tick():
            while not done.wait(0.2):
                if time.monotonic() - self.started >= DELAY:
                    self.bar.refresh()

        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()
            self.bar.update(units)

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
