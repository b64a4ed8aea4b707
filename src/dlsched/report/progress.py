"""Progress for runs whose stderr is not a terminal (a log file, CI, a pipe): one plain line
every ``every_s`` seconds of wall-clock time, so a long run is never silent.  A terminal gets
rich's bar instead (commands/_common.progress_bar)."""

from __future__ import annotations

import contextlib
import sys
import time

EVERY_S = 30.0


@contextlib.contextmanager
def plain_progress(label: str, every_s: float = EVERY_S, file=None, clock=time.monotonic):
    """Yields a callback ``(now, done, total)`` that prints at most one line per ``every_s``."""
    out = file or sys.stderr
    start = clock()
    last = [start]

    def cb(now, done, total):
        t = clock()
        if t - last[0] >= every_s:
            last[0] = t
            print(f"dlsched: {label}: {done}/{total} jobs done, simulated time {now / 3600:,.1f} h, "
                  f"{t - start:,.0f} s elapsed", file=out, flush=True)
    yield cb


@contextlib.contextmanager
def plain_steps(what: str, every_s: float = EVERY_S, file=None, clock=time.monotonic):
    """Yields a callback ``(done, total, label)`` for a run of many steps (``reproduce``); prints at
    most one line per ``every_s``."""
    out = file or sys.stderr
    start = clock()
    last = [start]

    def cb(done, total, label):
        t = clock()
        if t - last[0] >= every_s:
            last[0] = t
            print(f"dlsched: {done}/{total} {what} done ({label}), {t - start:,.0f} s elapsed", file=out, flush=True)
    yield cb
