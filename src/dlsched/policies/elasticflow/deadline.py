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

Rejected jobs (``reject``): ``drop`` (default) drops a job at once when its share does not fit,
as ElasticFlow's paper has it (the user learns at submission).  ``wait`` is ElasticFlow as the
Crius authors ran it for the Crius-DDL comparison (sjtu-epcc/arena, baselines/elasticflow_sched.py,
read for facts only): a job whose share does not fit waits and is tried again later; the jobs that
waited before are tried in submission order, and the first of a GPU type that does not fit blocks
its type for the call (new arrivals are tried regardless); a waiting job is dropped once no share
can meet its deadline any more (the authors drop it when the deadline passes while it waits; it
could not be admitted in between, so the same jobs finish).  The authors retry waiting jobs only
when a job ends; ours retry at every scheduling call, which can only admit them sooner.

Simplification (and why): ElasticFlow's admission plans each job's share over
future time slots (shares can fall as earlier jobs finish); ours asks that the
current minimum shares fit at once, which is a sufficient condition and
needs no slot horizon.  It admits somewhat fewer jobs than the slot plan
would.  An admitted job whose share can no longer meet its deadline (the
profile was optimistic against the truth) keeps running best-effort on its
smallest share, never dropped after admission.
"""

from __future__ import annotations

from dlsched.errors import InputError
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
        PolicyOption("reject", str, "drop", "a job whose satisfactory share does not fit: drop (ElasticFlow's "
                     "paper) or wait (as the Crius authors ran it)"),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 300.0, loosen: float = 1.0, reject: str = "drop", costs: str = "derived",
                 plan_s: float = 30.0):
        if reject not in ("drop", "wait"):
            raise InputError(f"reject must be drop or wait, not {reject!r}", field="reject")
        self.reject = reject
        super().__init__(round_s, loosen, costs, plan_s)
        self.schedule_on_events = True  # admission is decided when a job arrives

    def reset(self) -> None:
        super().reset()
        self.rejected = 0
        self._waited: set[str] = set()  # reject=wait: jobs that did not fit at an earlier call

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
        self._perf = view.perf
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
        blocked: set[int] = set()  # reject=wait: types whose oldest waiting job did not fit
        for job in queued_jobs(view):
            jid = job.job_id
            if jid in self._admitted:
                continue
            t = self._profile(cluster, job)[0]
            s = self.satisfactory_share(view, job, now)
            waited = jid in self._waited
            if s is None:
                drop[jid] = "deadline cannot be met at any share (admission control)"
            elif waited and t in blocked:
                continue
            elif s <= free[t]:
                self._admit(job, cluster)
                self._waited.discard(jid)
                free[t] -= s
            elif job.spec.deadline is not None and self.reject == "drop":
                drop[jid] = "its satisfactory share does not fit beside admitted jobs (admission control)"
            elif self.reject == "wait":
                if waited:
                    blocked.add(t)
                self._waited.add(jid)
        self._waited.difference_update(drop)
        self.rejected += len(drop)
        self._rejected = set(drop)
        decision = self._full_round(view, now) if self._admitted else Decision()
        decision.drop.update(drop)
        return decision

    def describe(self) -> dict:
        d = super().describe()
        d["deadline_aware"] = True
        d["reject"] = self.reject
        return d
