"""Turning trace durations into iterations, so every job has a size in work."""

from __future__ import annotations

import math

from dlsched.perf.base import PerfModel
from dlsched.workload.job import JobSpec


def total_iterations(job: JobSpec, perf: PerfModel) -> int:
    """Iterations the job must run.

    A trace duration is read as "this long on the requested GPUs placed as
    tightly as the cluster allows": iterations = duration / that iteration
    time (at least one).  Jobs given in iterations keep them.
    """
    if job.total_iterations is not None:
        return int(job.total_iterations)
    t = perf.reference_time(job)
    return max(1, int(math.ceil(job.duration_s / t - 1e-9)))
