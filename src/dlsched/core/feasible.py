"""Whether a job can run on some GPUs: one predicate for the engine and every policy.

The engine refuses an allocation whose iteration time the perf model prices as not
finite (the model does not fit in memory, or no plan exists there).  A policy that
judges feasibility any other way (its own estimator, its own memory model) can refuse
jobs the engine would run, or place jobs the engine refuses; so a policy asks these
functions, with the perf model the engine runs (``ClusterView.perf``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from dlsched.cluster.placement import ideal_gpus

if TYPE_CHECKING:
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.base import PerfModel
    from dlsched.workload.job import JobSpec


def iteration_runs(total_s: float) -> bool:
    """An iteration time a job can train at: positive and finite."""
    return 0.0 < total_s < math.inf


def runs_on(perf: "PerfModel", spec: "JobSpec", gpus: Sequence[int], plan=None) -> bool:
    """Whether the engine can run ``spec`` on exactly these GPUs."""
    return iteration_runs(perf.price(spec, gpus, plan).total)


def shape_runs(perf: "PerfModel", cluster: "Cluster", spec: "JobSpec", type_id: int, n: int) -> bool:
    """Whether the engine can run ``spec`` on ``n`` GPUs of type ``type_id``, tightly placed."""
    if n < 1 or n > int(cluster.type_gpus[type_id]):
        return False
    return runs_on(perf, spec, ideal_gpus(cluster, n, type_id))


def shape_time(perf: "PerfModel", cluster: "Cluster", spec: "JobSpec", type_id: int, n: int) -> float | None:
    """Seconds per iteration on that shape as the engine prices it; None where it cannot run."""
    if n < 1 or n > int(cluster.type_gpus[type_id]):
        return None
    t = perf.price(spec, ideal_gpus(cluster, n, type_id)).total
    return t if iteration_runs(t) else None
