"""Timeline events from the live runtime, whose store keeps events as rows, not ``CoreEvent``s.

The simulator's timeline reads ``SimResult.events`` (the execution core's log)
directly; ``store_events`` maps the live runtime's SQLite ``events`` table onto
the same kinds (``fault`` becomes a suspension with the reason as detail).
"""

from __future__ import annotations

import json

from dlsched.report.timeline import TimelineEvent


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
