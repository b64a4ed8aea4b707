"""A run's per-job timeline as Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing).

Input: plain events with the attributes of the execution core's ``CoreEvent``
(``time, job_id, kind, gpus, cost_s, detail``); anything with those attributes
works (duck typing), so simulated and live runs share this exporter.

Output (the JSON object form of the trace-event format):

- process 1 "jobs": one track per job, complete ("X") slices ``queued``,
  ``running`` (args: GPUs), ``overhead`` nested inside running (restore,
  re-plan, launch), ``suspended``; instant ("i") markers for migrations,
  resizes, re-plans, packing and drops;
- process 2 "GPUs": one track per GPU with the job holding it; GPUs shared by
  packed jobs get extra lanes ("GPU 7 #2") so slices on a track never overlap.

Timestamps are microseconds; every track's slices are sorted by start time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

JOBS_PID, GPUS_PID = 1, 2
# kinds that put a job on GPUs (a new run segment); the others end or mark one
PLACING = {"start", "resume", "migrate", "resize", "replan", "pack", "slice-in"}
ENDING = {"suspend", "slice-out", "finish", "drop"}
MARKERS = {"migrate", "resize", "replan", "pack", "unpack", "drop"}


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """The execution core's event shape, for sources that are not the core (live store, old engine)."""

    time: float
    job_id: str
    kind: str
    gpus: tuple[int, ...] = ()
    cost_s: float = 0.0
    detail: str = ""


@dataclass(slots=True)
class _Open:
    """What a job is doing since ``since``: queued, running (on ``gpus``) or suspended."""

    state: str
    since: float
    gpus: tuple[int, ...] = ()
    ready: float | None = None  # end of the overhead that opened this run segment
    how: str = ""


@dataclass(slots=True)
class _Slices:
    jobs: dict[str, list[dict]] = field(default_factory=dict)
    gpus: list[tuple[int, float, float, str]] = field(default_factory=list)  # (gpu, start, end, job)
    markers: list[dict] = field(default_factory=list)


def _us(t: float) -> int:
    """Whole microseconds: exact integers, so a slice ending where the next begins never overlaps it
    by a rounding error (weeks of simulated time are ~1e12 us, past float's sub-microsecond digits)."""
    return int(round(t * 1e6))


def _slice(name: str, start: float, end: float, tid: int, cat: str, args: dict | None = None) -> dict:
    ev = {"name": name, "cat": cat, "ph": "X", "ts": _us(start), "dur": max(0, _us(end) - _us(start)),
          "pid": JOBS_PID, "tid": tid}
    if args:
        ev["args"] = args
    return ev


def _close(slices: _Slices, jid: str, tid: int, cur: _Open, now: float) -> None:
    out = slices.jobs.setdefault(jid, [])
    if cur.state == "running":
        out.append(_slice("running", cur.since, now, tid, "run",
                          {"gpus": list(cur.gpus), "how": cur.how}))
        if cur.ready is not None and cur.ready > cur.since:
            out.append(_slice("overhead", cur.since, min(cur.ready, now), tid, "overhead", {"how": cur.how}))
        slices.gpus.extend((g, cur.since, now, jid) for g in cur.gpus)
    elif now > cur.since:
        out.append(_slice(cur.state, cur.since, now, tid, "wait"))


def _collect(events, end: float | None) -> tuple[_Slices, list[str]]:
    order = sorted(events, key=lambda e: e.time)  # stable: same-time events keep their order
    tids: dict[str, int] = {}
    state: dict[str, _Open] = {}
    slices = _Slices()
    last = end if end is not None else (order[-1].time if order else 0.0)
    for e in order:
        jid, kind, now = str(e.job_id), e.kind, float(e.time)
        tid = tids.setdefault(jid, len(tids) + 1)
        cur = state.get(jid)
        if kind in MARKERS:
            slices.markers.append({"name": kind, "cat": "marker", "ph": "i", "s": "t", "ts": _us(now),
                                   "pid": JOBS_PID, "tid": tid,
                                   "args": {"gpus": list(e.gpus), "detail": str(e.detail or "")}})
        if kind == "submit":
            if cur is None:
                state[jid] = _Open("queued", now)
        elif kind in PLACING:
            if cur is not None:
                _close(slices, jid, tid, cur, now)
            state[jid] = _Open("running", now, tuple(int(g) for g in e.gpus), now + float(e.cost_s or 0.0), kind)
        elif kind == "ready" and cur is not None and cur.state == "running":
            cur.ready = now
        elif kind in ENDING:
            if cur is not None:
                _close(slices, jid, tid, cur, now)
            state[jid] = _Open("suspended", now) if kind in ("suspend", "slice-out") else None
            if state[jid] is None:
                del state[jid]
    for jid, cur in state.items():  # still active when the run stopped
        _close(slices, jid, tids[jid], cur, max(last, cur.since))
    return slices, list(tids)


def _gpu_lanes(spans: list[tuple[int, float, float, str]]) -> tuple[list[dict], dict[tuple[int, int], int]]:
    """GPU slices, packed jobs on one GPU spread over lanes so no two slices of a track overlap."""
    by_gpu: dict[int, list[tuple[float, float, str]]] = {}
    for g, s, e, j in spans:
        by_gpu.setdefault(g, []).append((s, e, j))
    out, lanes_used = [], {}
    for g in sorted(by_gpu):
        lane_end: list[float] = []
        for s, e, j in sorted(by_gpu[g]):
            lane = next((i for i, le in enumerate(lane_end) if le <= s), None)
            if lane is None:
                lane = len(lane_end)
                lane_end.append(e)
            lane_end[lane] = e
            tid = g * 16 + lane + 1 if lane else g * 16  # lanes of one GPU sit together
            lanes_used[(g, lane)] = tid
            out.append({"name": j, "cat": "gpu", "ph": "X", "ts": _us(s), "dur": max(0, _us(e) - _us(s)),
                        "pid": GPUS_PID, "tid": tid})
    return out, lanes_used


def _meta(pid: int, tid: int | None, name: str, sort: int | None = None) -> list[dict]:
    if tid is None:
        return [{"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}}]
    out = [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}]
    if sort is not None:
        out.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": {"sort_index": sort}})
    return out


def chrome_trace(events, end: float | None = None, title: str = "") -> dict:
    """The trace-event JSON object of a run's events; ``end`` closes what is still active."""
    events = list(events)
    slices, job_ids = _collect(events, end)
    gpu_slices, lanes = _gpu_lanes(slices.gpus)
    trace: list[dict] = [*_meta(JOBS_PID, None, "jobs"), *_meta(GPUS_PID, None, "GPUs")]
    markers: dict[int, list[dict]] = {}
    for m in slices.markers:
        markers.setdefault(m["tid"], []).append(m)
    for i, jid in enumerate(job_ids, start=1):
        trace += _meta(JOBS_PID, i, f"job {jid}", i)
        # in time order per track; outer slices first at equal start, so viewers nest "overhead" in "running"
        trace += sorted(slices.jobs.get(jid, []) + markers.get(i, []), key=lambda ev: (ev["ts"], -ev.get("dur", 0)))
    for (g, lane), tid in sorted(lanes.items()):
        trace += _meta(GPUS_PID, tid, f"GPU {g}" + (f" #{lane + 1}" if lane else ""), tid)
    trace += gpu_slices
    return {"traceEvents": trace, "displayTimeUnit": "ms",
            "otherData": {"title": title, "jobs": len(job_ids), "events": len(events)}}


def write_timeline(path, events, end: float | None = None, title: str = "") -> Path:
    """Write the Chrome trace of ``events`` to ``path`` (deterministic: sorted keys, fixed order)."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    doc = chrome_trace(events, end=end, title=title)
    path.write_text(json.dumps(doc, sort_keys=True, separators=(",", ":")) + "\n")
    return path
