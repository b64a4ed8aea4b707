"""Pacing Python's cycle collector while a long loop builds objects it keeps."""

from __future__ import annotations

import gc
from contextlib import contextmanager

GC_GEN0_THRESHOLD = 100_000  # allocations between two young-generation collections inside ``rare_gc``


@contextmanager
def rare_gc(gen0: int = GC_GEN0_THRESHOLD):
    """Python's cycle collector runs every ``gen0`` net allocations instead of every 700.

    A simulation run allocates a few objects per job and event (states, records, actions,
    decisions), and a synthetic trace a spec and its ``extra`` dict per job; both keep most of
    them to the end, so at the default threshold the collector keeps re-walking a heap that
    only grows: 10-15% of a million-job run, a quarter of generating its trace.  Neither
    makes reference cycles of its own, and what a policy leaves is still collected, only
    less often.  The caller's thresholds are restored afterwards.
    """
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], gen0), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
