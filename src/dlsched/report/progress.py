"""Progress for runs whose stderr is not a terminal (a log file, CI, a pipe): one plain line
every ``every_s`` seconds of wall-clock time, so a long run is never silent.  A terminal gets
rich's bar instead (commands/_common.progress_bar)."""

from __future__ import annotations

import contextlib
import sys
import time

EVERY_S = 30.0


def throttled(every_s: float = EVERY_S, clock=time.monotonic, first: bool = False):
    """A function answering (is a line due, seconds since the start): True at most once per
    ``every_s``, and at the first call too when ``first``."""
    start = clock()
    last = [start - every_s if first else start]

    def due() -> tuple[bool, float]:
        t = clock()
        if t - last[0] >= every_s:
            last[0] = t
            return True, t - start
        return False, t - start
    return due


@contextlib.contextmanager
def plain_progress(label: str, every_s: float = EVERY_S, file=None, clock=time.monotonic):
    """Yields a callback ``(now, done, total)`` that prints at most one line per ``every_s``."""
    out = file or sys.stderr
    due = throttled(every_s, clock)

    def cb(now, done, total):
        ready, elapsed = due()
        if ready:
            print(f"dlsched: {label}: {done}/{total} jobs done, simulated time {now / 3600:,.1f} h, "
                  f"{elapsed:,.0f} s elapsed", file=out, flush=True)
    yield cb


@contextlib.contextmanager
def plain_steps(what: str, every_s: float = EVERY_S, file=None, clock=time.monotonic):
    """Yields a callback ``(done, total, label)`` for a run of many steps (``reproduce``); prints at
    most one line per ``every_s``."""
    out = file or sys.stderr
    due = throttled(every_s, clock)

    def cb(done, total, label):
        ready, elapsed = due()
        if ready:
            print(f"dlsched: {done}/{total} {what} done ({label}), {elapsed:,.0f} s elapsed", file=out, flush=True)
    yield cb
