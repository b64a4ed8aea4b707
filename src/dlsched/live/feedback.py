"""``serve``'s running commentary: one line per job start, finish, preemption and fault.

An ``EventPrinter`` is set as the store's listener, so every event the
service records is seen here the moment it is written, and nothing in the
scheduling loop has to know about printing.  Kinds not listed are internal
bookkeeping (launch, segment-end, ...) and are not printed.
"""

from __future__ import annotations

import sys
from typing import TextIO


def _gpus(d: dict) -> str:
    return ",".join(map(str, d.get("gpus", [])))


def _mode(d: dict) -> str:
    return f" ({d['mode']})" if d.get("mode") else ""


def _last_line(text: str) -> str:
    lines = [x for x in str(text).strip().splitlines() if x.strip()]
    return lines[-1].strip() if lines else ""


_FORMATS = {
    "submit": lambda d: "arrived",
    "start": lambda d: f"starts on GPU(s) {_gpus(d)}{_mode(d)}",
    "resume": lambda d: f"resumes on GPU(s) {_gpus(d)}{_mode(d)}",
    "migrate": lambda d: f"migrates to GPU(s) {_gpus(d)}{_mode(d)}",
    "resize": lambda d: f"resized to GPU(s) {_gpus(d)}{_mode(d)}",
    "pack": lambda d: f"packed on GPU(s) {_gpus(d)}",
    "unpack": lambda d: f"unpacked: GPU(s) {_gpus(d)} {d.get('mode')}",
    "slice-in": lambda d: f"time-sliced on GPU(s) {_gpus(d)}",
    "slice-out": lambda d: f"has GPU(s) {_gpus(d)} to itself again",
    "slice-suspend": lambda d: f"turn over: suspended at iteration {d.get('iterations', 0):.0f}",
    "suspend": lambda d: f"preempted at iteration {d.get('iterations', 0):.0f}",
    "finish": lambda d: "finished",
    "drop": lambda d: f"dropped: {d.get('reason', '')}",
    "adopt": lambda d: "still running from before the restart: adopted",
    "worker-error": lambda d: f"worker on GPU {d.get('gpu')} failed: {_last_line(d.get('error', ''))}",
    "fault": lambda d: f"fault ({d.get('reason', '')}): back to the queue from iteration "
                       f"{d.get('resume_from', 0):.0f}",
    "backoff": lambda d: f"restart {d.get('attempt')} waits {d.get('wait_s', 0):g} s",
    "failed": lambda d: f"FAILED: {d.get('reason', '')}",
    "unschedulable": lambda d: f"UNSCHEDULABLE ({d.get('field')}): {d.get('reason', '')}",
    "node-lost": lambda d: f"node(s) {', '.join(d.get('nodes', []))} lost: GPU(s) {_gpus(d)}",
    "layout-change": lambda d: f"the cluster was replaced: now {d.get('gpus')} GPUs",
}


class EventPrinter:
    def __init__(self, out: TextIO | None = None):
        self.out = out or sys.stdout

    def __call__(self, t: float, job_id: str | None, kind: str, detail: dict) -> None:
        fmt = _FORMATS.get(kind)
        if fmt is None:
            return
        who = f"{job_id} " if job_id else ""
        print(f"[{t:9.1f} s] {who}{fmt(detail)}", file=self.out, flush=True)
