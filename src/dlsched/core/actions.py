"""What the core hands an engine after applying a decision: plain data, no behaviour.

The simulator turns each action into timed events; the live runtime into calls
on the job's workers.  ``kind`` is one of ``PLACEMENTS`` (the job now runs on
``gpus`` from ``ready_at`` on: a new run segment), ``MODE_FLIPS`` (same GPUs
and plan, sharing mode changed: the job keeps running), ``"rate"`` (only its
iteration time changed, e.g. a co-tenant came or went), ``"suspend"`` or
``"drop"`` (it left its GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass

PLACEMENTS = ("start", "resume", "migrate", "resize", "replan")
MODE_FLIPS = ("pack", "unpack", "slice-in", "slice-out")


@dataclass(slots=True)  # not frozen: built for every change, where frozen's __init__ costs ~5x; never mutated
class Action:
    """One change the core made to a job, for the engine to turn into events or agent calls."""

    kind: str
    job_id: str
    gpus: tuple[int, ...]  # where the job runs after the action (() once it left)
    old_gpus: tuple[int, ...] = ()
    cost_s: float = 0.0  # overhead charged before the job makes progress again
    by_policy: bool = False  # the cost came from ``policy.overhead`` (not the engine's default)
    detail: str = ""  # a drop's reason
