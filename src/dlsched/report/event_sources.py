"""Timeline events from the runs that do not yet record the execution core's ``CoreEvent``s.

- ``RecordingSimulator``: the simulator, noting every arrival, placement,
  preemption, completion and drop as a ``TimelineEvent``.  A transitional
  adaptor: once the shared execution core exposes ``SimResult.events`` the
  ``--timeline`` option reads those and this subclass goes away (it hooks the
  engine's private step methods, which the core replaces).
- ``store_events``: the live runtime's SQLite ``events`` table mapped onto the
  same kinds (``fault`` becomes a suspension with the reason as detail).
"""

from __future__ import annotations

import json

from dlsched.report.timeline import TimelineEvent
from dlsched.sim.engine import Simulator
from dlsched.policies.base import JobStatus


class RecordingSimulator(Simulator):
    """``Simulator`` that also keeps ``self.events`` (a list of ``TimelineEvent``)."""

    def run(self, progress=None):
        self.events: list[TimelineEvent] = []
        return super().run(progress)

    def _arrive(self, spec, now):
        super()._arrive(spec, now)
        self.events.append(TimelineEvent(now, spec.job_id, "submit"))

    def _place(self, job, old, alloc, now):
        resumed = old is None and job.status != JobStatus.PENDING
        super()._place(job, old, alloc, now)
        if old is None:
            kind = "resume" if resumed else "start"
        elif len(old.gpus) != len(alloc.gpus):
            kind = "resize"
        else:
            kind = "migrate" if old.gpus != alloc.gpus else "replan"
        if alloc.shared and kind in ("start", "resume"):
            kind = "pack"
        self.events.append(TimelineEvent(now, job.job_id, kind, tuple(alloc.gpus), job.ready_at - now,
                                         "shared" if alloc.shared else ""))

    def _preempt(self, job, now):
        super()._preempt(job, now)
        self.events.append(TimelineEvent(now, job.job_id, "suspend"))

    def _record(self, job, status, reason):
        super()._record(job, status, reason)
        if status == "finished":
            self.events.append(TimelineEvent(job.finish_time, job.job_id, "finish"))
        elif status == "dropped":
            self.events.append(TimelineEvent(job.updated_at, job.job_id, "drop", detail=reason))


_LIVE_KINDS = {"submit": "submit", "start": "start", "resume": "resume", "migrate": "migrate",
               "resize": "resize", "ready": "ready", "suspend": "suspend", "fault": "suspend",
               "finish": "finish", "drop": "drop"}


def store_events(rows: list[dict]) -> list[TimelineEvent]:
    """``Store.events()`` rows as timeline events; service-level rows (no job) are left out."""
    out = []
    for r in rows:
        kind = _LIVE_KINDS.get(r["kind"])
        if kind is None or r.get("job_id") is None:
            continue
        d = r.get("detail") or {}
        if isinstance(d, str):
            d = json.loads(d)
        t = float(d["finish"]) if kind == "finish" and d.get("finish") is not None else float(r["time"])
        why = d.get("reason", "") if r["kind"] in ("fault", "drop") else ""
        out.append(TimelineEvent(t, r["job_id"], kind, tuple(d.get("gpus", ())), 0.0,
                                 f"fault: {why}" if r["kind"] == "fault" else why))
    return out
