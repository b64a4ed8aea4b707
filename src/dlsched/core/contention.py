"""The hook a network model plugs into to slow jobs that share links.

With no contention object a running job's iteration time is the perf model's
price for the job alone.  With one, the core tells it about every placement
change, and prices each job it names from ``iteration_time``.

A model may also offer, and the simulator then uses: ``drain_utilisation()``
(``(link, utilisation)`` pairs changed since the last call, written to
``links.csv``), ``advance(now)`` (the clock, before the events at ``now``),
``describe()`` (its parameters, in ``summary.json``) and
``stats`` (counters, in ``timing.json``); ``run.execute`` asks ``link_summary(end)`` for the
per-link totals of ``links.csv``'s summary.  ``dlsched.network.FlowContention``
is the flow-level one.
"""

from __future__ import annotations

from typing import Iterable, Protocol, runtime_checkable

from dlsched.perf.base import IterCost
from dlsched.policies.base import Allocation
from dlsched.workload.job import JobSpec


@runtime_checkable
class Contention(Protocol):
    def add(self, job_id: str, spec: JobSpec, allocation: Allocation, cost: IterCost) -> Iterable[str]:
        """A job was placed, moved or re-planned (``cost``: its per-iteration cost alone).

        Returns the ids of running jobs whose iteration time changed (the job itself included if so).
        """

    def remove(self, job_id: str) -> Iterable[str]:
        """A job left its GPUs; returns the running jobs whose iteration time changed."""

    def iteration_time(self, job_id: str) -> tuple[float, float]:
        """(seconds per iteration, exposed communication seconds per iteration) under contention."""
