"""Shortest job first: a scheduling policy written outside the dlsched package.

Run it by file (docs/extending.md walks through it):

    dlsched simulate --cluster crius-testbed --jobs 200 --policy examples/plugins/sjf.py:SJF
    dlsched compare --cluster crius-testbed --jobs 200 --policies fcfs,examples/plugins/sjf.py:SJF

Queued jobs start in order of their requested GPU-time (GPUs x iterations left), smallest
first, wherever consolidated placement finds them room; a job that does not fit now is
passed over, so small jobs never wait behind a large one (and a large one may starve).
"""

from __future__ import annotations

from dlsched.cluster.placement import pick_gpu_ids
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy
from dlsched.policies.options import PolicyOption


class SJF(JobPolicy):
    name = "sjf"
    summary = "shortest job first by requested GPU-time; passes over jobs that do not fit"
    paper = "-"
    options = (PolicyOption("max_starts", int, 1000, "most jobs started per call", minimum=1),)

    def __init__(self, max_starts: int = 1000):
        self.max_starts = max_starts

    def schedule(self, view: ClusterView, now: float) -> Decision:
        decision = Decision()
        free = view.free.copy()
        queued = sorted(view.queued(), key=lambda j: (j.spec.num_gpus * j.remaining, j.job_id))
        for job in queued[: self.max_starts]:
            type_id = view.cluster.type_id(job.spec.gpu_type) if job.spec.gpu_type else None
            gpus = pick_gpu_ids(free, job.spec.num_gpus, type_id)
            if gpus is None:
                continue
            free.allocate(gpus)
            decision.allocate[job.job_id] = Allocation(tuple(gpus))
        return decision
