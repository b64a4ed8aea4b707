"""ElasticFlow-LS (Gu et al., ASPLOS 2023) as the Crius paper ran it (section 8.1, 8.3).

ElasticFlow is elastic but homogeneous: a job stays on its requested GPU
type and its GPU count changes in powers of two (up to 16).  It schedules
with data-parallel throughput (Crius 8.1), while jobs run at their adaptive
optimum.

* Minimum satisfactory share: the fewest GPUs whose data-parallel plan fits
  in memory and, where the job has a deadline and ``loosen`` is set, ends
  by the loosened deadline ``submit + loosen * (deadline - submit)``.  "LS"
  is ElasticFlow with a loosened deadline (Crius Figure 14): by default
  (``loosen=None``) deadlines are ignored entirely, so the share is the
  smallest count data parallelism fits on, which is why ElasticFlow-LS
  "overestimates the minimum required share of large jobs" (section 8.3).
  A job whose data-parallel plan fits no count keeps its request.
* Admission, in submission order: a job is admitted when its share fits in
  its type's GPUs beside the shares of jobs already admitted; others wait
  (LS drops nobody).
* Allocation: every admitted job gets its share; spare GPUs of each type go
  greedily to the job whose doubling gives the most normalised throughput
  per extra GPU (ElasticFlow's marginal-return allocation).
"""

from __future__ import annotations

import heapq

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.crius.common import (MAX_GPUS_PER_JOB, apply_targets, power_counts, queued_jobs,
                                           resolve_type)
from dlsched.policies.options import PolicyOption
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.registry import register
from dlsched.workload.models import get_model


@register("elasticflow-ls")
class ElasticFlowLS(ChargesReplanning, JobPolicy):
    name = "elasticflow-ls"
    summary = "elastic homogeneous scheduling: minimum satisfactory share, then greedy marginal-return growth"
    paper = "Gu et al., ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning, ASPLOS 2023"
    options = (
        PolicyOption("round_s", float, 300.0, "scheduling round in seconds", positive=True),
        PolicyOption("loosen", float, None, "deadline loosening factor (none: ignore deadlines, as LS)",
                     positive=True, optional=True),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 300.0, loosen: float | None = None, costs: str = "derived",
                 plan_s: float = PLAN_PROFILE_S):
        self.period = round_s
        self.schedule_on_events = False
        self.loosen = loosen
        self.set_costs(costs, plan_s)  # a full plan search per new shape (Crius 8.1)
        self.reset()

    def reset(self) -> None:
        self._thr: dict[str, tuple[int, dict[int, float]]] = {}  # job -> (type, {count: norm thr})
        self._admitted: dict[str, JobState] = {}
        self._rejected: set[str] = set()  # dropped by admission control (deadline-aware subclass)

    def on_finish(self, job: JobState, now: float) -> None:
        self._thr.pop(job.job_id, None)
        self._admitted.pop(job.job_id, None)

    def _profile(self, cluster, job: JobState) -> tuple[int, dict[int, float], dict[int, float]]:
        hit = self._thr.get(job.job_id)
        if hit is not None:
            return hit
        spec = job.spec
        t = resolve_type(cluster, spec.gpu_type)
        t = 0 if t is None else t
        est = shared_estimator(cluster)
        model = get_model(spec.model, spec.params)
        cap = min(MAX_GPUS_PER_JOB, int(cluster.type_gpus[t]))
        thr, iters = {}, {}
        for n in power_counts(1, 1, cap):
            cell = est.dp_only(model, spec.batch_size, cluster.gpu_types[t].name, n)
            if cell is not None:
                thr[n] = cell.throughput
                iters[n] = cell.iter_time
        if thr:
            best = max(thr.values())
            norm = {n: v / best for n, v in thr.items()}
        else:  # no data-parallel profile fits: schedule it at its request, as submitted
            n = min(spec.num_gpus, cap)
            norm, iters = {n: 1.0}, {n: 0.0}
        hit = (t, norm, iters)
        self._thr[job.job_id] = hit
        return hit

    def min_share(self, view: ClusterView, job: JobState, now: float) -> int:
        """Fewest GPUs meeting memory (and the loosened deadline, if one applies)."""
        t, norm, iters = self._profile(view.cluster, job)
        counts = sorted(norm)
        spec = job.spec
        if self.loosen is None or spec.deadline is None:
            return counts[0]
        target = spec.submit_time + self.loosen * (spec.deadline - spec.submit_time)
        remaining = job.total_iterations - view.progress(job)
        for n in counts:
            if now + remaining * iters[n] <= target:
                return n
        return counts[-1]  # cannot meet even the loosened deadline: best effort, not dropped

    def schedule(self, view: ClusterView, now: float) -> Decision:
        cluster = view.cluster
        jobs = view.jobs
        ntypes = len(cluster.gpu_types)
        free = [int(c) for c in cluster.type_gpus]
        share: dict[str, int] = {}
        preempt: list[str] = []
        for jid, job in sorted(self._admitted.items(), key=lambda kv: (kv[1].spec.submit_time, kv[0])):
            t, norm, _ = self._profile(cluster, job)
            s = self.min_share(view, job, now)
            if s > free[t]:  # shares grew past the type's GPUs (deadline-aware shares rise as time runs out)
                s = max((n for n in norm if n <= free[t]), default=0)
            if s == 0:  # no room even for its smallest share: it waits, giving its GPUs back
                if job.allocation is not None:
                    preempt.append(jid)
                continue
            share[jid] = s
            free[t] -= s
        for job in queued_jobs(view):
            if job.job_id in self._admitted or job.job_id in self._rejected:
                continue
            t = self._profile(cluster, job)[0]
            s = self.min_share(view, job, now)
            if s <= free[t]:
                self._admitted[job.job_id] = job
                share[job.job_id] = s
                free[t] -= s
        # spare GPUs: doubling by best marginal normalised throughput per extra GPU
        alloc = dict(share)
        heap = []
        for jid, n in alloc.items():
            self._push_next(heap, jid, n, cluster)
        while heap and any(f > 0 for f in free[:ntypes]):
            negkey, _, jid, t, n_new = heapq.heappop(heap)
            cur = alloc[jid]
            if n_new <= cur:
                continue
            extra = n_new - cur
            if extra > free[t]:
                continue
            free[t] -= extra
            alloc[jid] = n_new
            self._push_next(heap, jid, n_new, cluster)
        targets = {jid: (self._profile(cluster, jobs[jid])[0], n) for jid, n in alloc.items()}
        return apply_targets(view, targets, jobs, preempt)

    def _push_next(self, heap, jid: str, n: int, cluster) -> None:
        job = self._admitted[jid]
        t, norm, _ = self._profile(cluster, job)
        bigger = [m for m in sorted(norm) if m > n]
        if not bigger:
            return
        m = bigger[0]
        gain = norm[m] - norm.get(n, 0.0)
        if gain <= 0:
            return
        heapq.heappush(heap, (-gain / (m - n), job.spec.submit_time, jid, t, m))

    def describe(self) -> dict:
        d = super().describe()
        d.update({"loosen": self.loosen, **self.replan.describe(),
                  "scheduling_profile": "data-parallel"})
        return d
