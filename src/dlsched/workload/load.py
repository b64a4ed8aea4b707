"""Offered load: how busy a workload would keep a cluster, and arrivals scaled to a chosen load.

Offered load = the GPU-seconds the jobs ask for (each at its requested allocation, priced by the
run's perf model) over the GPU-seconds the cluster offers during the arrival window (first to
last submission).  Above 1 the cluster cannot keep up during the window and jobs queue; well
below 1 they rarely wait, and every scheduler gives the same result.

Scaling a workload to a load moves only its arrival times: each job keeps its size, model and
GPU request, and a deadline keeps its slack (deadline - submit time).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from dlsched.errors import InputError

if TYPE_CHECKING:
    from dlsched.cluster.topology import Cluster
    from dlsched.workload.job import JobSpec

# The default workload's offered load (docs/workloads.md, "The default load"): the cluster is
# offered exactly what it can serve while jobs arrive, so queues form whenever arrivals bunch or
# large jobs wait for room, and they drain after the window; the order in which a scheduler
# serves them then shows in every metric.  Far below 1 nothing waits; far above, every policy
# mostly measures one long backlog.
DEFAULT_LOAD = 1.0


@dataclass(frozen=True, slots=True)
class LoadInfo:
    """What a workload offers a cluster; ``offered_load`` is None when arrivals have no window
    (one job, or every job submitted at once: a batch)."""

    gpu_hours: float  # asked for, at the requested allocations
    cluster_gpus: int
    window_h: float  # first to last submission
    offered_load: float | None
    time_scale: float = 1.0  # factor applied to the arrival times (1: as given)

    def as_dict(self) -> dict:
        return {"offered_load": None if self.offered_load is None else round(self.offered_load, 4),
                "offered_gpu_hours": round(self.gpu_hours, 3), "arrival_window_h": round(self.window_h, 4),
                "time_scale": round(self.time_scale, 6)}

    def describe(self) -> str:
        if self.offered_load is None:
            return (f"offered {self.gpu_hours:,.1f} GPU-hours at once (batch arrivals; "
                    f"{self.cluster_gpus} GPUs)")
        return (f"offered load {self.offered_load:.2f} ({self.gpu_hours:,.1f} GPU-hours asked over a "
                f"{self.window_h:,.2f}-hour arrival window on {self.cluster_gpus} GPUs)")


def job_gpu_seconds(job: JobSpec, perf=None) -> float:
    """GPU-seconds a job asks for at its requested allocation: a duration as given, or its
    iterations priced by ``perf`` on the requested GPUs, consolidated (as ``sim.sizing`` does)."""
    if job.duration_s is not None:
        return job.num_gpus * float(job.duration_s)
    if perf is None:
        raise InputError(f"job {job.job_id} is sized in iterations; pricing it needs a perf model")
    t = perf.reference_time(job)
    return job.num_gpus * job.total_iterations * t if 0 < t < math.inf else 0.0


def measure(jobs: Sequence[JobSpec], cluster: Cluster, perf=None, time_scale: float = 1.0) -> LoadInfo:
    gpu_s = math.fsum(job_gpu_seconds(j, perf) for j in jobs)
    times = [j.submit_time for j in jobs]
    window = (max(times) - min(times)) if times else 0.0
    load = gpu_s / (cluster.num_gpus * window) if window > 0 else None
    return LoadInfo(gpu_s / 3600.0, cluster.num_gpus, window / 3600.0, load, time_scale)


def rescale_arrivals(jobs: Sequence[JobSpec], factor: float) -> list[JobSpec]:
    """Arrival gaps multiplied by ``factor`` (below 1: denser), from the first submission; sizes kept,
    each deadline keeps its slack."""
    if not (factor > 0 and math.isfinite(factor)):
        raise InputError(f"must be a positive finite number, got {factor!r}", field="--time-scale")
    if factor == 1.0 or not jobs:
        return list(jobs)
    t0 = min(j.submit_time for j in jobs)
    out = []
    for j in jobs:
        t = t0 + (j.submit_time - t0) * factor
        dl = None if j.deadline is None else t + (j.deadline - j.submit_time)
        out.append(j.with_(submit_time=round(t, 3), deadline=dl))
    return out


def apply(jobs: Sequence[JobSpec], cluster: Cluster, perf=None, *, load: float | None = None,
          time_scale: float | None = None) -> tuple[list[JobSpec], LoadInfo]:
    """Jobs with arrivals scaled to an offered ``load`` or by ``time_scale`` (not both), and
    what they offer the cluster afterwards."""
    if load is not None and time_scale is not None:
        raise InputError("give --load or --time-scale, not both", field="--load")
    before = measure(jobs, cluster, perf)
    if not jobs:  # nothing to move; the caller says there is nothing to simulate
        return [], before
    if load is not None:
        if not (load > 0 and math.isfinite(load)):
            raise InputError(f"must be a positive finite number, got {load!r}", field="--load")
        if before.offered_load is None:
            raise InputError("every job arrives at the same time (a batch): there is no arrival window "
                             "to scale to a load", field="--load")
        time_scale = before.offered_load / load
    if time_scale is None or time_scale == 1.0:
        return list(jobs), before
    scaled = rescale_arrivals(jobs, time_scale)
    return scaled, measure(scaled, cluster, perf, time_scale)
