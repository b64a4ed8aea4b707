"""A policy called at least every ``every_s`` seconds after each call (``PolicySpec.wake_every``).

A probe that samples the jobs' progress while a run goes on (the Gandiva AutoML figure's)
needs calls where nothing else happens; those calls can change what a time-slicing policy
does, so they belong to the run, and its spec says so.  Decisions are the wrapped policy's,
with a wake-up no later than ``every_s`` after the call.
"""

from __future__ import annotations

from dlsched.policies.base import JobPolicy


class WakeEvery(JobPolicy):
    def __init__(self, inner: JobPolicy, every_s: float):
        self.inner, self.every_s = inner, every_s
        self.name, self.period = inner.name, inner.period
        self.schedule_on_events = inner.schedule_on_events

    def reset(self):
        self.inner.reset()

    def on_submit(self, job, now):
        self.inner.on_submit(job, now)

    def on_finish(self, job, now):
        self.inner.on_finish(job, now)

    def overhead(self, *a):
        return self.inner.overhead(*a)

    def describe(self) -> dict:
        return {**self.inner.describe(), "wake_every_s": self.every_s}

    def timings(self) -> dict:
        return self.inner.timings()

    def schedule(self, view, now):
        d = self.inner.schedule(view, now)
        nxt = now + self.every_s
        d.wakeup = nxt if d.wakeup is None else min(d.wakeup, nxt)
        return d

    def __getattr__(self, name):  # the wrapped policy's own counters (mechanism_counts, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
