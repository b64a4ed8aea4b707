"""``ExecutionCore``: the cluster state both engines share, and how a ``Decision`` changes it.

The core owns the free map, every active job's ``JobState``, the queue and the
running set.  ``apply(decision, now)`` diffs a decision against the present,
classifies each change (``costs.classify``), charges its cost
(``policy.overhead`` or the engine default), prices the jobs it touched, and
returns plain ``Action``s.  It keeps the event log and builds every
``JobRecord``.  It reads no clock and does no I/O: the caller says what time
it is, so a test can drive it with a list of decisions.

Accounting is settled lazily: a job's counters are brought up to ``now`` only
when something about it changes.  With ``fluid`` progress (the simulator) the
core also advances iterations at the job's rate; without it (live) progress
is what the workers report, and the core only keeps time and GPU-seconds.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.topology import Cluster
from dlsched.core.actions import PLACEMENTS, Action
from dlsched.core.contention import Contention
from dlsched.core.costs import EngineCosts, classify, default_cost, slice_switch_cost
from dlsched.core.events import CoreEvent
from dlsched.core.late_jobs import LateJobs, Merged
from dlsched.core.records import job_record
from dlsched.errors import InvariantError
from dlsched.perf.base import PerfModel
from dlsched.perf.sharing.interference import PackingInfeasibleError
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.report.records import JobRecord

_QUEUED = (JobStatus.PENDING, JobStatus.SUSPENDED)
_RUNNING = JobStatus.RUNNING
_PENDING = JobStatus.PENDING
_INF = float("inf")


def add_holder(holders: dict[int, set[str]], job_id: str, alloc: Allocation) -> None:
    """Count ``job_id`` among the holders of its allocation's GPUs if it shares them (an exclusive
    job is nobody's co-holder): the map ``gpu_share`` divides a shared GPU's time by."""
    if alloc.shared:
        for g in alloc.gpus:
            holders.setdefault(g, set()).add(job_id)


def gpu_share(alloc: Allocation, holders: dict[int, set[str]]) -> float:
    """GPUs ``alloc`` holds, a shared GPU counting 1/its holders (``holders``: GPU -> jobs on it).

    GPU time split this way never sums past the cluster's capacity; counted whole, packed jobs
    put utilisation above 1."""
    if not alloc.shared:
        return float(len(alloc.gpus))
    return sum(1.0 / max(1, len(holders.get(g, ()))) for g in alloc.gpus)


class ExecutionCore:
    def __init__(self, cluster: Cluster, policy: JobPolicy, perf: PerfModel, costs: EngineCosts | None = None, *,
                 contention: Contention | None = None, record_events: bool = True, fluid: bool = True,
                 error: Callable[[str], Exception] = InvariantError, placement: str = "packed"):
        self.cluster = cluster
        self.policy = policy
        self.perf = perf
        self.costs = costs or EngineCosts()
        self.contention = contention
        self.fluid = fluid
        self._error = error  # the exception type the engine reports policy mistakes with
        self.free = FreeMap(cluster, first_free=placement == "first-free")
        self.jobs: dict[str, JobState] = {}  # active jobs
        # pending + suspended, in submit order once sorted.  An OrderedDict because jobs leave from
        # the front: a plain dict keeps their dead slots until it resizes, so reaching the head of a
        # long queue would cost a walk over every job that left since
        self.queue: OrderedDict[str, JobState] = OrderedDict()
        self.running: dict[str, JobState] = {}
        self.comm_per_iter: dict[str, float] = {}
        self.holders: dict[int, set[str]] = {}  # GPU id -> jobs on it, only where GPUs are shared
        self.records: list[JobRecord] = []
        self.events: list[CoreEvent] | None = [] if record_events else None
        self._queue_sorted = True
        self._late = LateJobs()  # suspended jobs not yet in the queue's order (``queued``)
        self.view = ClusterView(cluster, self.free, self.jobs, perf, 0.0, queue_fn=self.queued,
                                running=self.running)
        # only _place and _stop price an exclusive job then (_reprice needs contention or sharing)
        self.view.prices_alone = fluid and contention is None

    # ------------------------------------------------------------------ queue and log

    def queued(self):
        """Pending and suspended jobs in submission order (ties by job id): ``view.queued()``.

        A read-only view of the queue, not a copy: a long backlog costs nothing
        to a policy that looks only at its head.
        """
        late = self._late
        if late and self._queue_sorted and not late.due(len(self.queue)):
            return Merged(self.queue, late)  # the few suspended jobs merged in as it is read
        if not self._queue_sorted or late:
            order = sorted(self.queue.values(), key=lambda j: (j.spec.submit_time, j.spec.job_id))
            self.queue.clear()
            self.queue.update((j.job_id, j) for j in order)
            self._queue_sorted = True
            late.clear()
        return self.queue.values()

    def _log(self, now: float, job_id: str, kind: str, gpus=(), cost: float = 0.0, detail: str = "") -> None:
        if self.events is not None:
            self.events.append(CoreEvent(now, job_id, kind, tuple(gpus), cost, detail))

    # ------------------------------------------------------------------ arrivals, ends

    def submit(self, job: JobState, now: float) -> None:
        jid = job.spec.job_id
        self.jobs[jid] = job
        self.queue[jid] = job
        if self.events is not None:
            self.events.append(CoreEvent(now, jid, "submit", (), 0.0, ""))
        self.policy.on_submit(job, now)

    def adopt(self, job: JobState) -> None:
        """Take in a job as it already is (the live service rebuilding its state after a restart)."""
        self.jobs[job.job_id] = job
        if job.status == JobStatus.RUNNING:
            alloc = job.allocation
            self.free.allocate(alloc.gpus, mode=alloc.mode)
            self.running[job.job_id] = job
            job.gpu_share = float(len(alloc.gpus))
            if alloc.shared:  # split its GPUs' time with the co-holders adopted so far, as _place does
                add_holder(self.holders, job.job_id, alloc)
                for jid in self._cotenants(job):
                    self.jobs[jid].gpu_share = gpu_share(self.jobs[jid].allocation, self.holders)
        else:
            self.queue[job.job_id] = job
            self._queue_sorted = False

    def withdraw(self, job: JobState) -> None:
        """Take a queued job out of the active set without a record (live: held back after a fault,
        or failed for good); ``adopt`` takes it back in."""
        del self.jobs[job.job_id]
        self.queue.pop(job.job_id, None)
        self._late.discard(job.job_id)

    def ready(self, job: JobState, now: float) -> None:
        """The job's overhead is paid: progress begins."""
        self._log(now, job.job_id, "ready", job.allocation.gpus if job.allocation else ())

    def finish(self, job: JobState, now: float) -> list[Action]:
        """The job ran its last iteration at ``now``; returns the co-tenants re-priced."""
        self.settle(job, now)
        job.done_iterations = float(job.total_iterations)
        job.finish_time = now
        gpus = job.allocation.gpus
        actions: list[Action] = []
        self._stop(job, now, actions)
        job.status = JobStatus.FINISHED
        if self.events is not None:
            self._log(now, job.job_id, "finish", gpus)
        self._record(job, "finished", "", now)
        self.policy.on_finish(job, now)
        return actions

    def drop(self, job: JobState, now: float, reason: str, actions: list[Action] | None = None) -> list[Action]:
        """Remove a job for good (the policy's decision, or a user's cancellation)."""
        actions = [] if actions is None else actions
        self.settle(job, now)
        gpus = job.allocation.gpus if job.allocation else ()
        if job.status == JobStatus.RUNNING:
            self._stop(job, now, actions)
            job.queued_since = now
        elif job.status in _QUEUED:
            job.queued_time += now - job.queued_since
            job.queued_since = now
        actions.append(Action("drop", job.job_id, (), gpus, detail=reason))
        self._log(now, job.job_id, "drop", gpus, detail=reason)
        self._record(job, "dropped", reason, now)
        self.policy.on_finish(job, now)
        return actions

    def suspend(self, job: JobState, now: float, lost_iterations: float = 0.0,
                actions: list[Action] | None = None) -> list[Action]:
        """Send a running job back to the queue (a preemption, or a fault), losing ``lost_iterations``."""
        actions = [] if actions is None else actions
        self.settle(job, now)
        job.done_iterations = max(0.0, job.done_iterations - lost_iterations)
        gpus = job.allocation.gpus
        self._stop(job, now, actions)
        job.restarts += 1
        job.queued_since = now
        self.queue[job.job_id] = job
        self._late.add(job)  # out of order at the end: merged in when read (``queued``)
        actions.append(Action("suspend", job.job_id, (), gpus))
        self._log(now, job.job_id, "suspend", gpus)
        return actions

    def close(self, now: float, reason: str, *, ordered: bool = True) -> None:
        """Record every job still active as unfinished, with ``reason``, and put ``records`` in
        submission order (ties by job id); ``ordered=False`` leaves that to an engine with a
        cheaper way (the simulator knows each job's place in the sorted trace)."""
        for job in list(self.jobs.values()):
            self.settle(job, now)
            self._record(job, "unfinished", reason, now)
        if ordered:
            self.records.sort(key=lambda r: (r.submit, r.job_id))

    def _record(self, job: JobState, status: str, reason: str, now: float) -> None:
        self.records.append(job_record(job, status, reason, now))
        jid = job.spec.job_id
        del self.jobs[jid]
        self.queue.pop(jid, None)  # a finished job left the queue when it started
        self._late.discard(jid)
        self.comm_per_iter.pop(jid, None)
        if status != "unfinished":
            job.status = JobStatus.FINISHED if status == "finished" else JobStatus.DROPPED

    # ------------------------------------------------------------------ accounting

    def settle(self, job: JobState, now: float) -> None:
        """Bring a running job's counters up to ``now``.

        Live (not ``fluid``), ``now`` may lie a little before the last settle: a
        worker's finish time is reported after the poll that already counted it.
        """
        if job.status == _RUNNING:
            updated = job.updated_at
            dt = now - updated
            if dt > 0 or (dt < 0 and not self.fluid):
                job.run_time += dt
                job.gpu_seconds += dt * (job.gpu_share or len(job.allocation.gpus))  # not priced yet: whole GPUs
                ready = job.ready_at
                start = updated if updated > ready else ready
                rate = job.rate
                if self.fluid and now > start and rate > 0:
                    prog = min(rate * (now - start), job.total_iterations - job.done_iterations)
                    job.done_iterations += prog
                    job.comm_time += prog * self.comm_per_iter.get(job.spec.job_id, 0.0)
        job.updated_at = now

    # ------------------------------------------------------------------ decisions

    def apply(self, d: Decision, now: float) -> list[Action]:
        """Carry out a decision: drops, then preemptions, then (re)allocations; returns what changed.

        Every moved job's old GPUs are released before any new ones are taken,
        so a policy may swap jobs in one decision.
        """
        actions: list[Action] = []
        if not (d.allocate or d.preempt or d.drop):  # ``not d``, without its call
            return actions
        name = self.policy.name
        for jid, reason in d.drop.items():
            self.drop(self._known(jid, "drop"), now, reason or "dropped by policy", actions)
        for jid in d.preempt:
            job = self._known(jid, "preempt")
            if job.status != JobStatus.RUNNING:
                raise self._error(f"policy {name} preempted job {jid}, which is not running")
            self.suspend(job, now, self._lost_work(job, now), actions)
        moves = []
        jobs = self.jobs
        for jid, alloc in d.allocate.items():
            job = jobs.get(jid) or self._known(jid, "allocate")  # the call only for its error
            if not alloc.gpus:
                raise self._error(f"policy {name} gave job {jid} an empty allocation")
            old = job.allocation
            if old is None:  # ``classify``'s first case, spelled out: every start takes it
                kind = "start" if job.status == _PENDING else "resume"
            else:
                kind = classify(job.status, old, alloc)
            if kind is not None:
                moves.append((job, old, alloc, kind))
        for job, old, _, _ in moves:
            if old is not None:
                self.settle(job, now)
                self._stop(job, now, actions)
                job.status = JobStatus.RUNNING  # still running: only its GPUs change
        for job, old, alloc, kind in moves:
            self._place(job, old, alloc, kind, now, actions)
        return actions

    def _lost_work(self, job: JobState, now: float) -> float:
        """Iterations since the last periodic checkpoint of this run segment (none without a period)."""
        interval = self.costs.checkpoint_interval_s
        if not interval or job.rate <= 0 or now <= job.ready_at:
            return 0.0
        return job.rate * ((now - job.ready_at) % interval)

    def _known(self, jid: str, what: str) -> JobState:
        job = self.jobs.get(jid)
        if job is None:
            raise self._error(f"policy {self.policy.name} asked to {what} job {jid}, which is not active")
        return job

    def _place(self, job: JobState, old: Allocation | None, alloc: Allocation, kind: str, now: float,
               actions: list[Action]) -> None:
        gpus = alloc.gpus
        jid = job.spec.job_id
        if gpus[0] < 0 or gpus[-1] >= self.cluster.num_gpus:
            raise self._error(f"policy {self.policy.name}: job {jid} got GPU ids out of range")
        try:
            self.free.allocate(gpus, mode=alloc.mode)
        except InvariantError as e:
            raise self._error(f"policy {self.policy.name}: job {jid}: {e}") from None
        if old is None:
            job.queued_time += now - job.queued_since
            del self.queue[jid]
            if self._late:
                self._late.discard(jid)
        elif kind == "migrate":
            job.migrations += 1
        elif kind == "resize":
            job.resizes += 1
        cost = self.policy.overhead(self.cluster, job, old, alloc, kind)
        by_policy = cost is not None
        if cost is None:
            cost = default_cost(kind, job.spec, self.costs)
        if job.first_start is None:
            job.first_start = now
        job.status = JobStatus.RUNNING
        job.allocation = alloc
        job.updated_at = now
        if kind in PLACEMENTS:
            job.ready_at = now + cost
        else:  # a mode flip: the job stays where it is; a charged cost postpones its progress
            job.ready_at = max(job.ready_at, now) + cost
        self.running[jid] = job
        actions.append(Action(kind, jid, gpus, old.gpus if old else (), cost, by_policy))
        if self.events is not None:
            self._log(now, jid, kind, gpus, cost, f"from {list(old.gpus)}" if old and old.gpus != gpus else "")
            if self.fluid and job.ready_at <= now:
                self.ready(job, now)  # live learns readiness from the worker's first iteration instead
        shared = alloc.mode != "exclusive"
        if not shared and self.contention is None:
            self._price(job)  # an exclusive job alone on its GPUs: nobody else's price changes
            return
        touched = {jid}
        if shared:
            add_holder(self.holders, jid, alloc)
            touched |= self._cotenants(job)
        if self.contention is not None:
            touched |= set(self.contention.add(job.job_id, job.spec, alloc, self._solo_cost(job)))
        if touched == {job.job_id}:
            self._price(job)
        else:
            self._reprice(touched, now, actions, placed=job.job_id)

    def _stop(self, job: JobState, now: float, actions: list[Action]) -> None:
        """Take a settled job off its GPUs; co-tenants and contended jobs are re-priced."""
        alloc = job.allocation
        self.free.release(alloc.gpus)
        del self.running[job.spec.job_id]
        job.allocation = None
        job.rate = 0.0
        job.status = JobStatus.SUSPENDED
        if alloc.mode == "exclusive" and self.contention is None:
            return  # an exclusive job priced alone: nobody else's price changes
        touched: set[str] = set()
        if alloc.shared:
            for g in alloc.gpus:
                s = self.holders.get(g)
                if s:
                    s.discard(job.job_id)
                    touched |= s
                    if not s:
                        del self.holders[g]
        if self.contention is not None:
            touched |= set(self.contention.remove(job.job_id))
        touched.discard(job.job_id)
        if touched:
            self._reprice(touched, now, actions)

    # ------------------------------------------------------------------ pricing

    def _solo_cost(self, job: JobState):
        alloc = job.allocation
        return self.perf.price(job.spec, alloc.gpus, alloc.plan)

    def _price(self, job: JobState) -> None:
        """Set a running job's rate from the perf model, sharing and contention."""
        alloc = job.allocation
        cost = self.perf.price(job.spec, alloc.gpus, alloc.plan)
        total, comm = cost.total, cost.comm
        if self.contention is not None:
            total, comm = self.contention.iteration_time(job.job_id)
        shared = alloc.mode != "exclusive"
        factor = self._share_factor(job) if shared else 1.0
        # ``iteration_runs(total)`` (the predicate every policy asks too), spelled out: once per placement
        if not 0.0 < total < _INF or factor <= 0.0:
            raise self._error(
                f"policy {self.policy.name}: job {job.job_id} ({job.spec.model}) cannot run on GPUs "
                f"{list(alloc.gpus)[:8]}: iteration time {total} s, sharing factor {factor} "
                f"(e.g. the model does not fit in GPU memory)")
        job.rate = factor / total
        self.comm_per_iter[job.spec.job_id] = comm
        # GPU time is split between a shared GPU's holders, so the jobs' GPU-seconds never sum past
        # the cluster's capacity (packed jobs counted each GPU whole: utilisation above 1)
        job.gpu_share = gpu_share(alloc, self.holders) if shared else float(len(alloc.gpus))

    def _reprice(self, ids, now: float, actions: list[Action], placed: str | None = None) -> None:
        for jid in sorted(ids):
            job = self.jobs.get(jid)
            if job is not None and job.status == JobStatus.RUNNING and job.allocation is not None:
                self.settle(job, now)
                self._price(job)
                if jid != placed:
                    actions.append(Action("rate", jid, job.allocation.gpus))

    def _cotenants(self, job: JobState) -> set[str]:
        out = {job.job_id}
        for g in job.allocation.gpus:
            out |= self.holders.get(g, set())
        return out

    def _share_factor(self, job: JobState) -> float:
        """The slowest of the job's GPUs sets its pace (synchronous data parallelism)."""
        alloc = job.allocation
        factor = 1.0
        gtype = self.cluster.nodes[int(self.cluster.gpu_node[alloc.gpus[0]])].gpu.name
        for g in alloc.gpus:
            ids = sorted(self.holders.get(g, ()))
            if len(ids) <= 1:
                continue
            if alloc.mode == "sliced":
                # fluid turn-taking: 1/n of the GPU, less one suspend + resume per quantum
                c = self.costs
                f = max(0.0, 1.0 - slice_switch_cost(job.spec, c) / c.slice_quantum_s) / len(ids)
            else:
                try:
                    f = self.perf.packing_factors([self.jobs[i].spec for i in ids], gtype)[ids.index(job.job_id)]
                except PackingInfeasibleError as e:
                    raise self._error(f"policy {self.policy.name} packed jobs on GPU {g} that overflow its "
                                      f"memory: {e}") from None
            factor = min(factor, f)
        return factor

    # ------------------------------------------------------------------ debug checks

    def snapshot(self):
        """The state a policy must not change inside ``schedule`` (debug mode compares two)."""
        self._late.clear()
        self._queue_sorted = False
        self.queued()  # the queue is sorted lazily; sorting it is not a state change
        jobs = tuple((j.job_id, j.status, j.allocation, j.done_iterations, j.rate, j.ready_at)
                     for j in self.jobs.values())
        return jobs, self.free.occupancy.tobytes(), self.free.mode.tobytes(), tuple(self.queue), \
            tuple(self.running)

    def check(self, now: float) -> None:
        """Every invariant the core keeps (debug mode, after every timestamp)."""
        self.free.check()
        occ = [0] * self.cluster.num_gpus
        held: dict[int, set[str]] = {}
        for job in self.running.values():
            if job.status != JobStatus.RUNNING or job.allocation is None:
                raise InvariantError(f"job {job.job_id} is in the running set but not running")
            for g in job.allocation.gpus:
                occ[g] += 1
                if job.allocation.shared:
                    held.setdefault(g, set()).add(job.job_id)
                elif occ[g] > 1:
                    raise InvariantError(f"GPU {g} held by two jobs without sharing")
                if self.free.mode[g] != {"exclusive": 1, "packed": 2, "sliced": 3}[job.allocation.mode]:
                    raise InvariantError(f"GPU {g} mixes sharing modes (job {job.job_id} is "
                                         f"{job.allocation.mode})")
        if occ != self.free.occupancy.tolist():
            raise InvariantError("GPU occupancy map disagrees with the running jobs")
        if held != {g: s for g, s in self.holders.items() if s}:
            raise InvariantError("the shared GPUs' holder lists disagree with the running jobs")
        for job in self.jobs.values():
            done = ClusterView.progress_of(job, now)
            if done < -1e-9 or done > job.total_iterations + 1e-6:
                raise InvariantError(f"job {job.job_id} progress {done} outside [0, {job.total_iterations}]")
            if (job.job_id in self.queue) != (job.status in _QUEUED):
                raise InvariantError(f"job {job.job_id} queue membership disagrees with status {job.status}")
