"""First come, first served: strict, and with EASY backfilling.

Strict FCFS starts queued jobs in submission order and stops at the first
one that does not fit, so a big job at the head holds everyone back.

``fcfs-backfill`` is EASY backfilling (Lifka, "The ANL/IBM SP scheduling
system", 1995): the head job gets a reservation at the earliest time enough
GPUs of its type will be free (from running jobs' remaining times at their
present rates), and a later job may jump ahead only if it does not delay
that reservation: it ends before the reservation, or it uses GPUs the head
will not need.  Placement is consolidated (fewest nodes, then racks).
"""

from __future__ import annotations

from dlsched.cluster.placement import pick_gpus
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.registry import register


def _type_id(view: ClusterView, job: JobState) -> int | None:
    t = job.spec.gpu_type
    if not t:
        return None
    cache = job.policy_data
    if "type_id" not in cache:
        cache["type_id"] = view.cluster.type_id(t)
    return cache["type_id"]


@register("fcfs")
class FCFS(JobPolicy):
    name = "fcfs"
    backfill = False

    def schedule(self, view: ClusterView, now: float) -> Decision:
        decision = Decision()
        free = view.free
        if free.total_free == 0:
            return decision
        queue = view.queued()
        if not queue:
            return decision
        scratch = None  # copied only once something is placed
        reservation = None  # (time, type_id, spare GPUs at that time) for the blocked head
        for job in queue:
            fm = scratch or free
            if fm.total_free == 0:
                break
            t = _type_id(view, job)
            n = job.spec.num_gpus
            fits = fm.free_of_type(t) >= n
            if fits and reservation is not None and not self._may_backfill(view, job, t, reservation):
                continue
            gpus = pick_gpus(fm, n, t) if fits else None
            if gpus is None:  # blocked (with any type, free GPUs may be spread over types)
                if not self.backfill:
                    break
                if reservation is None:
                    reservation = self._reserve(view, job, t, fm)
                continue
            if scratch is None:
                scratch = free.copy()
            scratch.allocate(gpus)
            decision.allocate[job.job_id] = Allocation.of(gpus)
            if reservation is not None:
                reservation = self._consume(view, job, t, gpus, reservation)
        return decision

    # ---------------------------------------------------------------- EASY backfilling

    def _reserve(self, view: ClusterView, head: JobState, t: int | None, fm):
        """When will the head job fit, and how many GPUs of its type are spare then?"""
        cluster = view.cluster
        ends = []
        for job in view.running():
            gpus = job.allocation.gpus
            n = len(gpus) if t is None else int((cluster.gpu_type_idx[list(gpus)] == t).sum())
            if n:
                ends.append((view.remaining_time(job), n))
        ends.sort()
        avail = fm.free_of_type(t)
        shadow = float("inf")
        for dt, n in ends:
            avail += n
            if avail >= head.spec.num_gpus:
                shadow = view.now + dt
                break
        return shadow, t, avail - head.spec.num_gpus

    def _may_backfill(self, view: ClusterView, job: JobState, t: int | None, reservation) -> bool:
        shadow, head_t, spare = reservation
        if head_t is not None and t is not None and t != head_t:
            return True  # a different GPU type never delays the head
        est = self._estimate(view, job)
        return view.now + est <= shadow or job.spec.num_gpus <= spare

    def _consume(self, view: ClusterView, job: JobState, t: int | None, gpus, reservation):
        shadow, head_t, spare = reservation
        if head_t is not None and t is not None and t != head_t:
            return reservation
        if view.now + self._estimate(view, job) > shadow:
            spare -= len(gpus)  # it will still hold these GPUs when the head should start
        return shadow, head_t, spare

    @staticmethod
    def _estimate(view: ClusterView, job: JobState) -> float:
        """Run time at the requested size, consolidated (the perf model's reference time)."""
        est = job.policy_data.get("est_s")
        if est is None:
            est = view.perf.reference_time(job.spec) * (job.total_iterations - job.done_iterations)
            job.policy_data["est_s"] = est
        return est


@register("fcfs-backfill")
class FCFSBackfill(FCFS):
    name = "fcfs-backfill"
    backfill = True
