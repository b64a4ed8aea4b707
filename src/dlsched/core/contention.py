"""The hook a network model plugs into to slow jobs that share links.

With no contention object a running job's iteration time is the perf model's
price for the job alone.  With one, the core tells it about every placement
change, and prices each job it names from ``iteration_time``.
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence, runtime_checkable

from dlsched.perf.base import IterCost
from dlsched.workload.job import JobSpec


@runtime_checkable
class Contention(Protocol):
    def add(self, job_id: str, spec: JobSpec, allocation: Sequence[int], cost: IterCost) -> Iterable[str]:
        """A job was placed, moved or re-planned (``cost``: its per-iteration cost alone).

        Returns the ids of running jobs whose iteration time changed (the job itself included if so).
        """

    def remove(self, job_id: str) -> Iterable[str]:
        """A job left its GPUs; returns the running jobs whose iteration time changed."""

    def iteration_time(self, job_id: str) -> tuple[float, float]:
        """(seconds per iteration, exposed communication seconds per iteration) under contention."""
