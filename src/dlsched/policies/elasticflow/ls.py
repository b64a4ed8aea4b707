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

Speed: while every active job's share is fixed (no deadline applies), a round runs
incrementally (``incremental.py``) with the same decisions as the full round below.
"""

from __future__ import annotations

import heapq

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.crius.common import (MAX_GPUS_PER_JOB, apply_targets, power_counts,
                                           queued_jobs, resolve_type, shape_of)
from dlsched.policies.elasticflow.incremental import AllocationWatch, Backlog, Growth
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
        # the incremental round's record (incremental.py)
        self._new: dict[str, JobState] = {}  # arrived since the last round, not yet classified
        self._static: dict[str, tuple[int, int]] = {}  # job with a fixed share -> (type, share)
        self._dynamic: set[str] = set()  # active jobs whose share may change (a deadline applies)
        self._backlog = Backlog()  # static jobs not admitted yet
        self._growth = Growth()  # admitted static jobs' first doublings
        self._share_sum: dict[int, int] = {}  # type -> sum of admitted static jobs' shares
        self._watch = AllocationWatch()
        self._keys: dict[str, dict[int, tuple | None]] = {}  # job -> count -> its next doubling's key
        self._grown: dict[str, int] = {}  # last incremental round: jobs given more than their share
        self._recheck: set[str] = set()  # jobs that differed from their targets last round
        self._full_check = True  # the next incremental round compares every admitted job

    def on_submit(self, job: JobState, now: float) -> None:
        self._new[job.job_id] = job

    def on_finish(self, job: JobState, now: float) -> None:
        jid = job.job_id
        self._thr.pop(jid, None)
        self._keys.pop(jid, None)
        admitted = self._admitted.pop(jid, None) is not None
        self._new.pop(jid, None)
        self._dynamic.discard(jid)
        self._grown.pop(jid, None)
        self._recheck.discard(jid)
        st = self._static.pop(jid, None)
        if st is not None:
            if admitted:
                self._share_sum[st[0]] -= st[1]
                self._growth.remove(jid)
            else:
                self._backlog.remove(jid)

    def static_share(self, cluster, job: JobState) -> int | None:
        """The job's share when it never changes (no deadline applies to it), else None."""
        if self.loosen is not None and job.spec.deadline is not None:
            return None
        return min(self._profile(cluster, job)[1])

    def _classify(self, cluster) -> None:
        """Sort the jobs that arrived since the last round into fixed and changing shares."""
        for jid, job in self._new.items():
            s = self.static_share(cluster, job)
            if s is None or s < 1:
                self._dynamic.add(jid)
            else:
                t = self._profile(cluster, job)[0]
                self._static[jid] = (t, s)
                self._backlog.add(job, t, s)
        self._new.clear()

    def _admit(self, job: JobState, cluster) -> None:
        jid = job.job_id
        self._admitted[jid] = job
        st = self._static.get(jid)
        if st is not None and self._backlog.remove(jid):
            t, s = st
            self._share_sum[t] = self._share_sum.get(t, 0) + s
            key = self._next_key(jid, s, cluster)
            if key is not None:
                self._growth.add(key)

    def _incremental_ok(self, view: ClusterView) -> bool:
        """True when the incremental round decides as the full one would (see incremental.py)."""
        if self._dynamic or len(view.jobs) != len(self._admitted) + len(self._backlog):
            return False
        type_gpus = view.cluster.type_gpus
        return all(v <= type_gpus[t] for t, v in self._share_sum.items())

    def _incremental_round(self, view: ClusterView) -> Decision:
        cluster = view.cluster
        jobs = view.jobs
        free = [int(c) for c in cluster.type_gpus]
        for t, v in self._share_sum.items():
            free[t] -= v
        admitted: list[str] = []
        for t in range(len(free)):
            while free[t] > 0:
                hit = self._backlog.admit(t, free[t])
                if hit is None:
                    break
                jid, s = hit
                job = jobs[jid]
                self._admitted[jid] = job
                self._share_sum[t] = self._share_sum.get(t, 0) + s
                key = self._next_key(jid, s, cluster)
                if key is not None:
                    self._growth.add(key)
                free[t] -= s
                admitted.append(jid)
        grown: dict[str, int] = {}

        def push(heap, jid, n):
            self._push_next(heap, jid, n, cluster)

        for t in range(len(free)):
            if free[t] > 0:
                grown.update(self._growth.grow(t, free[t], self._static, push))
        moved = self._watch.changed(view.running())
        if self._full_check:
            check = set(self._admitted)
            self._full_check = False
        else:
            check = self._recheck.union(moved, grown, self._grown, admitted)
        targets: dict = {}
        differ: set[str] = set()
        static = self._static
        for jid in sorted((j for j in check if j in self._admitted),
                          key=lambda j: (jobs[j].spec.submit_time, j)):
            t, s = static[jid]
            shape = (t, grown.get(jid, s))
            targets[jid] = shape
            if shape_of(cluster, jobs[jid]) != shape:
                differ.add(jid)
        self._grown, self._recheck = grown, differ
        return apply_targets(view, targets, jobs, [])

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
        self._classify(view.cluster)
        if self._incremental_ok(view):
            return self._incremental_round(view)
        return self._full_round(view, now)

    def _full_round(self, view: ClusterView, now: float) -> Decision:
        """The round as ElasticFlow states it: every admitted and queued job looked at."""
        self._full_check = True
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
                self._admit(job, cluster)
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
        key = self._next_key(jid, n, cluster)
        if key is not None:
            heapq.heappush(heap, key)

    def _next_key(self, jid: str, n: int, cluster) -> tuple | None:
        """The marginal-return heap's entry for an admitted job's next doubling from ``n`` (cached:
        it depends only on the job's profile)."""
        keys = self._keys.get(jid)
        if keys is None:
            keys = self._keys[jid] = {}
        elif n in keys:
            return keys[n]
        key = keys[n] = self._make_next_key(jid, n, cluster)
        return key

    def _make_next_key(self, jid: str, n: int, cluster) -> tuple | None:
        job = self._admitted[jid]
        t, norm, _ = self._profile(cluster, job)
        bigger = [m for m in sorted(norm) if m > n]
        if not bigger:
            return None
        m = bigger[0]
        gain = norm[m] - norm.get(n, 0.0)
        if gain <= 0:
            return None
        return (-gain / (m - n), job.spec.submit_time, jid, t, m)

    def describe(self) -> dict:
        d = super().describe()
        d.update({"loosen": self.loosen, **self.replan.describe(),
                  "scheduling_profile": "data-parallel"})
        return d
