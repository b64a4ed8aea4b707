"""ElasticFlow with deadlines (Gu et al., "ElasticFlow: An Elastic Serverless Training Platform for
Distributed Deep Learning", ASPLOS 2023): the Crius-DDL comparison's baseline (Crius section 8.5).

What follows the ElasticFlow paper:

* **Admission control.** A job arriving with a deadline is admitted only if its
  *minimum satisfactory share* (the fewest GPUs, in powers of two, at which it
  ends by its deadline, re-planning included) fits beside the shares the jobs
  already admitted need now; otherwise it is dropped at once, as ElasticFlow
  rejects jobs whose deadline it cannot guarantee.  Jobs without a deadline are
  best-effort: admitted when their smallest fitting share fits, else they wait.
* **Allocation.** Every admitted job gets its minimum satisfactory share,
  recomputed each round from its remaining iterations; spare GPUs go by
  marginal return (normalised throughput per extra GPU), doubling counts.
* **Homogeneous**, as the Crius paper ran it: a job stays on its requested GPU
  type, and the scheduler sees data-parallel profiles (Crius 8.1), while jobs
  run at the engine's truth.

Simplification (and why): ElasticFlow's admission plans each job's share over
future time slots (shares can fall as earlier jobs finish); ours asks that the
current minimum shares fit at once, which is a sufficient condition and
needs no slot horizon.  It admits somewhat fewer jobs than the slot plan
would.  An admitted job whose share can no longer meet its deadline (the
profile was optimistic against the truth) keeps running best-effort on its
smallest share, never dropped after admission.
"""

from __future__ import annotations

from dlsched.policies.base import ClusterView, Decision, JobState, JobStatus
from dlsched.policies.crius.common import queued_jobs, shape_of
from dlsched.policies.elasticflow.ls import ElasticFlowLS
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register
from dlsched.policies.common.replan_costs import COST_OPTIONS


@register("elasticflow")
class ElasticFlow(ElasticFlowLS):
    name = "elasticflow"
    summary = "deadline-aware ElasticFlow: admission control by minimum satisfactory share, drops what it cannot guarantee"
    paper = "Gu et al., ElasticFlow: An Elastic Serverless Training Platform for Distributed Deep Learning, ASPLOS 2023"
    options = (
        PolicyOption("round_s", float, 300.0, "scheduling round in seconds", positive=True),
        PolicyOption("loosen", float, 1.0, "deadline scale: slack x this (1: the trace's own deadlines)",
                     positive=True),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 300.0, loosen: float = 1.0, costs: str = "derived", plan_s: float = 30.0):
        super().__init__(round_s, loosen, costs, plan_s)
        self.schedule_on_events = True  # admission is decided when a job arrives

    def reset(self) -> None:
        super().reset()
        self.rejected = 0

    def satisfactory_share(self, view: ClusterView, job: JobState, now: float) -> int | None:
        """Fewest GPUs that end the job by its (scaled) deadline; None if no share can."""
        t, norm, iters = self._profile(view.cluster, job)
        counts = sorted(norm)
        spec = job.spec
        if spec.deadline is None:
            return counts[0]
        target = spec.submit_time + self.loosen * (spec.deadline - spec.submit_time)
        remaining = job.total_iterations - view.progress(job)
        cur = shape_of(view.cluster, job) if job.status == JobStatus.RUNNING else None
        for n in counts:
            replan = 0.0 if cur == (t, n) else self.replan.price(view.cluster, job, (t, n))
            if iters[n] > 0 and now + replan + remaining * iters[n] <= target:
                return n
        return None

    def min_share(self, view: ClusterView, job: JobState, now: float) -> int:
        s = self.satisfactory_share(view, job, now)
        return min(self._profile(view.cluster, job)[1]) if s is None else s  # admitted: best effort

    def static_share(self, cluster, job: JobState) -> int | None:
        if job.spec.deadline is not None:
            return None
        return min(self._profile(cluster, job)[1])

    def schedule(self, view: ClusterView, now: float) -> Decision:
        self._classify(view.cluster)
        if self._incremental_ok(view):  # no deadline job active: nothing to drop (incremental.py)
            self._rejected = set()
            return self._incremental_round(view)
        self._full_check = True
        cluster = view.cluster
        free = [int(c) for c in cluster.type_gpus]
        for jid, job in self._admitted.items():
            free[self._profile(cluster, job)[0]] -= self.min_share(view, job, now)
        drop: dict[str, str] = {}
        for job in queued_jobs(view):
            if job.job_id in self._admitted:
                continue
            t = self._profile(cluster, job)[0]
            s = self.satisfactory_share(view, job, now)
            if s is None:
                drop[job.job_id] = "deadline cannot be met at any share (admission control)"
            elif s <= free[t]:
                self._admit(job, cluster)
                free[t] -= s
            elif job.spec.deadline is not None:
                drop[job.job_id] = "its satisfactory share does not fit beside admitted jobs (admission control)"
        self.rejected += len(drop)
        self._rejected = set(drop)
        decision = self._full_round(view, now) if self._admitted else Decision()
        decision.drop.update(drop)
        return decision

    def describe(self) -> dict:
        d = super().describe()
        d["deadline_aware"] = True
        return d
