"""The core's event log: one plain row per thing that happened to a job.

Both engines record through the core, so a run's log has the same rows in
the simulator and the live runtime; timeline exporters read only this.
"""

from __future__ import annotations

from dataclasses import dataclass

# Every kind the core writes.  "ready" marks the end of a start/restore overhead:
# from then on the job makes progress.
EVENT_KINDS = ("submit", "start", "resume", "suspend", "migrate", "resize", "replan", "pack", "unpack",
               "slice-in", "slice-out", "ready", "finish", "drop")


@dataclass(frozen=True, slots=True)
class CoreEvent:
    """One line of the core's event log."""

    time: float
    job_id: str
    kind: str
    gpus: tuple[int, ...]
    cost_s: float  # overhead charged by this change (0 where none)
    detail: str  # free text: a drop's reason, the GPUs a job left, ...
