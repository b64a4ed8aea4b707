"""The discrete-event simulator: fluid job progress between events.

Between two events every running job advances at a constant rate
(iterations/s) given by the perf model for its allocation, so nothing is
simulated per iteration.  Job progress is settled lazily: a job's counters
are brought up to date only when something about it changes, and its
completion is predicted once and kept in a heap (stale predictions are
skipped by a version number).  Arrivals are read from the sorted trace
with a cursor instead of being pushed into the heap.  Policies are called
after all events of one timestamp are processed, on arrivals/completions
(if the policy wants that) and at its round period.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from dataclasses import asdict, dataclass, field

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.topology import Cluster
from dlsched.errors import InvariantError
from dlsched.perf.base import IterCost, PerfModel
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.report.records import JobRecord, TimeSeries
from dlsched.report.summary import summarize
from dlsched.sim.sizing import total_iterations
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

# event kinds, in the order they are handled at one timestamp
_COMPLETE, _READY, _ROUND, _WAKEUP = 0, 1, 2, 3


@dataclass(frozen=True)
class SimConfig:
    """Engine parameters; every run writes them beside its results."""

    seed: int = 0
    debug: bool = False  # check invariants after every timestamp (slow)
    start_overhead_s: float = 0.0  # launching a job the first time
    restore_base_s: float = 5.0  # resume/migrate/resize: fixed part (Gandiva: suspend-resume ~1 s, migration seconds)
    restore_s_per_gb: float = 2.0  # ... plus this per GB of model state (weights + optimizer)
    checkpoint_interval_s: float | None = None  # None: checkpoint at every preemption, no work lost
    max_time: float | None = None  # stop here; active jobs are reported unfinished
    record_series: bool = True


@dataclass
class SimResult:
    records: list[JobRecord]
    series: TimeSeries
    summary: dict
    params: dict
    stats: dict = field(default_factory=dict)
    links: list = field(default_factory=list)  # (time, link, utilisation) rows, with a contention model


class Simulator:
    def __init__(self, cluster: Cluster, policy: JobPolicy, jobs: list[JobSpec],
                 perf: PerfModel | None = None, config: SimConfig | None = None, contention=None):
        from dlsched.perf.default import default_perf_model

        # optional flow-level model of jobs sharing links (dlsched.network.FlowContention protocol:
        # add / remove / iteration_time); None prices every job alone, as before
        self.contention = contention

        self.cluster = cluster
        self.policy = policy
        self.perf = perf or default_perf_model(cluster)
        self.config = config or SimConfig()
        self.specs = sorted(jobs, key=lambda j: (j.submit_time, j.job_id))
        ids = [j.job_id for j in self.specs]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise InvariantError(f"duplicate job ids in the trace: {dup}")

    # ------------------------------------------------------------------ run

    def run(self, progress=None) -> SimResult:
        """Simulate to the end; ``progress(now, done, total)`` is called now and then."""
        cfg = self.config
        cluster, policy, perf = self.cluster, self.policy, self.perf
        policy.reset()
        self.free = FreeMap(cluster)
        self.jobs: dict[str, JobState] = {}  # active jobs
        self.queue: dict[str, JobState] = {}  # pending + suspended, kept in submit order
        self.running: dict[str, JobState] = {}
        self._queue_sorted = True
        self._heap: list = []
        self._seq = 0
        self._version: dict[str, int] = {}
        self._comm_per_iter: dict[str, float] = {}
        self._shared: dict[int, set[str]] = {}  # GPU id -> jobs on it, only where packing happens
        self._thr = 0.0  # samples/s of running jobs past their overhead
        self._contrib: dict[str, float] = {}
        self.records: list[JobRecord] = []
        self.series = TimeSeries()
        self.links: list[tuple[float, str, float]] = []
        view = ClusterView(cluster, self.free, self.jobs, perf, 0.0, queue_fn=self._queued,
                           running=self.running)
        specs = self.specs
        n = len(specs)
        cursor = 0
        period = policy.period
        next_round = None
        sched_calls = 0
        sched_time = 0.0
        events = 0
        wall0 = _time.perf_counter()
        now = 0.0
        last_progress = wall0
        while True:
            if cursor >= n and not self.jobs:
                break  # every job is recorded: later rounds or stale predictions change nothing
            self._drop_stale()
            t_arr = specs[cursor].submit_time if cursor < n else math.inf
            t_heap = self._heap[0][0] if self._heap else math.inf
            t = min(t_arr, t_heap)
            if t == math.inf:
                break
            if cfg.max_time is not None and t > cfg.max_time:
                now = cfg.max_time
                break
            now = t
            dirty = False
            is_round = False
            while cursor < n and specs[cursor].submit_time == now:
                self._arrive(specs[cursor], now)
                cursor += 1
                events += 1
                dirty = True
            while self._heap and self._heap[0][0] == now:
                _, _, kind, jid, ver = heapq.heappop(self._heap)
                events += 1
                if kind == _COMPLETE:
                    if self._version.get(jid) == ver:
                        self._complete(self.jobs[jid], now)
                        dirty = True
                elif kind == _READY:
                    if self._version.get(jid) == ver:
                        self._set_contrib(self.jobs[jid])
                elif kind == _ROUND:
                    is_round = True
                    next_round = None
                else:  # wakeup
                    dirty = True
            if period is not None and next_round is None and (self.jobs or cursor < n):
                nxt = (math.floor(now / period) + 1) * period
                next_round = nxt
                self._push(nxt, _ROUND, "", 0)
            if is_round or (dirty and policy.schedule_on_events):
                view.now = now
                before = self._snapshot() if cfg.debug else None
                s0 = _time.perf_counter()
                decision = policy.schedule(view, now)
                sched_time += _time.perf_counter() - s0
                if before is not None and before != self._snapshot():
                    raise InvariantError(f"policy {policy.name} changed engine state inside schedule() "
                                         f"at t={now}; policies must only read the view")
                sched_calls += 1
                self._apply(decision, now)
            if cfg.record_series:
                self.series.add(now, cluster.num_gpus - self.free.total_free, len(self.running),
                                len(self.queue), max(0.0, self._thr))
            if self.contention is not None:
                self.links.extend((now, name, u) for name, u in self.contention.drain_utilisation())
            if cfg.debug:
                self._check(now)
            if progress is not None and _time.perf_counter() - last_progress > 0.2:
                last_progress = _time.perf_counter()
                progress(now, n - cursor - len(self.jobs), n)
            if not self._heap and cursor >= n and self.queue and not self.running:
                break  # nothing can change any more: the queued jobs are stuck
        # whatever is still active did not finish
        for job in list(self.jobs.values()):
            self._settle(job, now)
            reason = ("simulation stopped at max_time" if cfg.max_time is not None and now >= cfg.max_time
                      else "the policy left it queued with nothing else running (cannot be placed)")
            self._record(job, "unfinished", reason)
        self.records.sort(key=lambda r: (r.submit, r.job_id))
        wall = _time.perf_counter() - wall0
        summary = summarize(self.records, self.series, cluster.num_gpus)
        params = {"cluster": cluster.name, "num_gpus": cluster.num_gpus, "jobs": n,
                  **policy.describe(), **perf.describe(), "sim": asdict(cfg)}
        stats = {"wall_s": wall, "events": events, "events_per_s": events / wall if wall > 0 else 0.0,
                 "schedule_calls": sched_calls, "schedule_s": sched_time, "policy": policy.timings()}
        if self.contention is not None:
            params["network"] = self.contention.describe()
            stats["network"] = dict(self.contention.stats)
        if progress is not None:
            progress(now, n, n)
        return SimResult(self.records, self.series, summary, params, stats, self.links)

    def _queued(self) -> list[JobState]:
        if not self._queue_sorted:
            order = sorted(self.queue.values(), key=lambda j: (j.spec.submit_time, j.spec.job_id))
            self.queue.clear()
            self.queue.update((j.job_id, j) for j in order)
            self._queue_sorted = True
        return list(self.queue.values())

    # ------------------------------------------------------------------ events

    def _drop_stale(self) -> None:
        """Pop superseded completion/ready predictions so they neither advance time nor count."""
        heap, version = self._heap, self._version
        while heap and heap[0][2] in (_COMPLETE, _READY) and version.get(heap[0][3]) != heap[0][4]:
            heapq.heappop(heap)

    def _push(self, t: float, kind: int, jid: str, ver: int) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, kind, jid, ver))

    def _arrive(self, spec: JobSpec, now: float) -> None:
        job = JobState(spec, total_iterations(spec, self.perf), updated_at=now, queued_since=now)
        self.jobs[spec.job_id] = job
        self.queue[spec.job_id] = job
        self._version[spec.job_id] = 0
        self.policy.on_submit(job, now)

    def _complete(self, job: JobState, now: float) -> None:
        self._settle(job, now)
        job.done_iterations = float(job.total_iterations)
        job.finish_time = now
        self._stop(job)
        job.status = JobStatus.FINISHED
        self._record(job, "finished", "")
        self.policy.on_finish(job, now)

    # ------------------------------------------------------------------ job state changes

    def _settle(self, job: JobState, now: float) -> None:
        """Bring a running job's counters up to ``now``."""
        if job.status == JobStatus.RUNNING:
            dt = now - job.updated_at
            if dt > 0:
                job.run_time += dt
                job.gpu_seconds += dt * len(job.allocation.gpus)
                start = max(job.updated_at, job.ready_at)
                if now > start and job.rate > 0:
                    prog = min(job.rate * (now - start), job.total_iterations - job.done_iterations)
                    job.done_iterations += prog
                    job.comm_time += prog * self._comm_per_iter.get(job.job_id, 0.0)
        job.updated_at = now

    def _set_contrib(self, job: JobState) -> None:
        c = job.rate * job.spec.batch_size
        self._thr += c - self._contrib.get(job.job_id, 0.0)
        self._contrib[job.job_id] = c

    def _drop_contrib(self, job: JobState) -> None:
        self._thr -= self._contrib.pop(job.job_id, 0.0)
        if not self._contrib:
            self._thr = 0.0  # no float drift survives an empty cluster

    def _stop(self, job: JobState) -> None:
        """Take a job off its GPUs (it has been settled)."""
        alloc = job.allocation
        self.free.release(alloc.gpus)
        del self.running[job.job_id]
        self._drop_contrib(job)
        self._version[job.job_id] += 1
        job.allocation = None
        job.rate = 0.0
        job.status = JobStatus.SUSPENDED
        if alloc.shared:
            touched = self._unshare(job, alloc)
            self._reprice(touched, job.updated_at)
        if self.contention is not None:
            self._rerate_contended(self.contention.remove(job.job_id), job.job_id, job.updated_at)

    def _record(self, job: JobState, status: str, reason: str) -> None:
        s = job.spec
        queued = job.queued_time + (job.updated_at - job.queued_since
                                    if job.status in (JobStatus.PENDING, JobStatus.SUSPENDED) else 0.0)
        self.records.append(JobRecord(
            s.job_id, s.model if not s.params else f"{s.model}-{s.params}", s.num_gpus, s.gpu_type or "",
            s.submit_time, job.first_start, job.finish_time, status, job.total_iterations,
            round(job.done_iterations, 6), queued, job.run_time, job.gpu_seconds, job.comm_time,
            job.restarts, job.migrations, job.resizes, s.deadline, reason))
        self.jobs.pop(s.job_id, None)
        self.queue.pop(s.job_id, None)
        self._version.pop(s.job_id, None)
        self._comm_per_iter.pop(s.job_id, None)
        if status != "unfinished":
            job.status = JobStatus.FINISHED if status == "finished" else JobStatus.DROPPED

    def _restore_cost(self, job: JobState) -> float:
        cfg = self.config
        model = get_model(job.spec.model, job.spec.params)
        # weights + gradients-sized optimizer state (Adam keeps two moments: 3x the weights in all)
        gb = 3 * model.params * model.bytes_per_param / 1e9
        return cfg.restore_base_s + cfg.restore_s_per_gb * gb

    def _preempt(self, job: JobState, now: float) -> None:
        self._settle(job, now)
        interval = self.config.checkpoint_interval_s
        if interval and job.rate > 0 and now > job.ready_at:
            # work since the last periodic checkpoint of this run segment is lost
            lost_time = (now - job.ready_at) % interval
            job.done_iterations = max(0.0, job.done_iterations - job.rate * lost_time)
        self._stop(job)
        job.restarts += 1
        job.queued_since = now
        self.queue[job.job_id] = job
        self._queue_sorted = False

    # ------------------------------------------------------------------ decisions

    def _apply(self, d: Decision, now: float) -> None:
        if d.wakeup is not None and d.wakeup > now:
            self._push(d.wakeup, _WAKEUP, "", 0)
        if not d:
            return
        for jid, reason in d.drop.items():
            job = self._known(jid, "drop")
            self._settle(job, now)
            if job.status == JobStatus.RUNNING:
                self._stop(job)
                job.queued_since = now
            elif job.status in (JobStatus.PENDING, JobStatus.SUSPENDED):
                job.queued_time += now - job.queued_since
                job.queued_since = now
            self._record(job, "dropped", reason or "dropped by policy")
            self.policy.on_finish(job, now)
        for jid in d.preempt:
            job = self._known(jid, "preempt")
            if job.status != JobStatus.RUNNING:
                raise InvariantError(f"policy {self.policy.name} preempted job {jid}, which is not running")
            self._preempt(job, now)
        moves = []
        for jid, alloc in d.allocate.items():
            job = self._known(jid, "allocate")
            if not alloc.gpus:
                raise InvariantError(f"policy {self.policy.name} gave job {jid} an empty allocation")
            old = job.allocation
            if old is not None and old.gpus == alloc.gpus and old.plan == alloc.plan:
                continue
            moves.append((job, old, alloc))
        # release every moved job's old GPUs before taking new ones, so policies may swap
        for job, old, _ in moves:
            if old is not None:
                self._settle(job, now)
                self._stop(job)
                job.status = JobStatus.RUNNING  # still running: only its GPUs change
        for job, old, alloc in moves:
            self._place(job, old, alloc, now)

    def _known(self, jid: str, what: str) -> JobState:
        job = self.jobs.get(jid)
        if job is None:
            raise InvariantError(f"policy {self.policy.name} asked to {what} job {jid}, which is not active")
        return job

    def _place(self, job: JobState, old: Allocation | None, alloc: Allocation, now: float) -> None:
        gpus = alloc.gpus
        if gpus[0] < 0 or gpus[-1] >= self.cluster.num_gpus:
            raise InvariantError(f"policy {self.policy.name}: job {job.job_id} got GPU ids out of range")
        try:
            self.free.allocate(gpus, shared=alloc.shared)
        except InvariantError as e:
            raise InvariantError(f"policy {self.policy.name}: job {job.job_id}: {e}") from None
        if old is None:
            kind = "start" if job.status == JobStatus.PENDING else "resume"
            job.queued_time += now - job.queued_since
            del self.queue[job.job_id]
        else:
            kind = "migrate" if len(old.gpus) == len(gpus) and old.gpus != gpus else (
                "resize" if len(old.gpus) != len(gpus) else "replan")
            if kind == "migrate":
                job.migrations += 1
            elif kind == "resize":
                job.resizes += 1
        cost = self.policy.overhead(job, old, alloc, kind)
        if cost is None:
            cost = self.config.start_overhead_s if kind == "start" else self._restore_cost(job)
        if job.first_start is None:
            job.first_start = now
        job.status = JobStatus.RUNNING
        job.allocation = alloc
        job.updated_at = now
        job.ready_at = now + cost
        self.running[job.job_id] = job
        if alloc.shared:
            for g in gpus:
                self._shared.setdefault(g, set()).add(job.job_id)
            self._reprice(self._cotenants(job), now)
        else:
            self._price(job, now)

    def _price(self, job: JobState, now: float) -> None:
        """Set a running job's rate from the perf model and predict its completion."""
        cost = self.perf.price(job.spec, job.allocation.gpus, job.allocation.plan)
        factor = self._packing_factor(job) if job.allocation.shared else 1.0
        if not (0.0 < cost.total < math.inf) or factor <= 0.0:
            raise InvariantError(
                f"policy {self.policy.name}: job {job.job_id} ({job.spec.model}) cannot run on GPUs "
                f"{list(job.allocation.gpus)[:8]}: iteration time {cost.total} s, packing factor {factor} "
                f"(e.g. the model does not fit in GPU memory)")
        if self.contention is not None:
            changed = self.contention.add(job.job_id, job.spec, job.allocation, cost)
            self._set_rate(job, self._contended(job.job_id), factor, now)
            self._rerate_contended(changed, job.job_id, now)
        else:
            self._set_rate(job, cost, factor, now)

    def _contended(self, jid: str) -> IterCost:
        total, comm = self.contention.iteration_time(jid)
        return IterCost(total, total - comm, comm)

    def _rerate_contended(self, ids, skip: str, now: float) -> None:
        """Running jobs whose iteration time the contention model changed: settle, then re-rate."""
        for jid in ids:
            other = self.running.get(jid)
            if jid == skip or other is None:
                continue
            self._settle(other, now)
            factor = self._packing_factor(other) if other.allocation.shared else 1.0
            self._set_rate(other, self._contended(jid), factor, now)

    def _set_rate(self, job: JobState, cost: IterCost, factor: float, now: float) -> None:
        """Rate from a price and packing factor; predict the completion."""
        job.rate = factor / cost.total
        self._comm_per_iter[job.job_id] = cost.comm
        ver = self._version[job.job_id] + 1
        self._version[job.job_id] = ver
        start = max(now, job.ready_at)
        self._push(start + job.remaining / job.rate, _COMPLETE, job.job_id, ver)
        if job.ready_at > now:
            self._drop_contrib(job)
            self._push(job.ready_at, _READY, job.job_id, ver)
        else:
            self._set_contrib(job)

    # ------------------------------------------------------------------ packing

    def _cotenants(self, job: JobState) -> set[str]:
        out = {job.job_id}
        for g in job.allocation.gpus:
            out |= self._shared.get(g, set())
        return out

    def _unshare(self, job: JobState, alloc: Allocation) -> set[str]:
        touched = set()
        for g in alloc.gpus:
            s = self._shared.get(g)
            if s:
                s.discard(job.job_id)
                touched |= s
                if not s:
                    del self._shared[g]
        return touched

    def _packing_factor(self, job: JobState) -> float:
        """Slowest of the job's GPUs sets its pace (synchronous data parallelism)."""
        factor = 1.0
        gtype = self.cluster.nodes[int(self.cluster.gpu_node[job.allocation.gpus[0]])].gpu.name
        for g in job.allocation.gpus:
            ids = sorted(self._shared.get(g, ()))
            if len(ids) > 1:
                specs = [self.jobs[i].spec for i in ids]
                f = self.perf.packing_factors(specs, gtype)[ids.index(job.job_id)]
                factor = min(factor, f)
        return factor

    def _reprice(self, ids, now: float) -> None:
        for jid in sorted(ids):
            job = self.jobs.get(jid)
            if job is not None and job.status == JobStatus.RUNNING:
                self._settle(job, now)
                self._price(job, now)

    # ------------------------------------------------------------------ debug checks

    def _snapshot(self):
        self._queued()  # the queue is sorted lazily; sorting it is not a state change
        jobs = tuple((j.job_id, j.status, j.allocation, j.done_iterations, j.rate, j.ready_at)
                     for j in self.jobs.values())
        return jobs, self.free.occupancy.tobytes(), tuple(self.queue), tuple(self.running)

    def _check(self, now: float) -> None:
        self.free.check()
        occ = [0] * self.cluster.num_gpus
        for job in self.running.values():
            if job.status != JobStatus.RUNNING or job.allocation is None:
                raise InvariantError(f"job {job.job_id} is in the running set but not running")
            for g in job.allocation.gpus:
                occ[g] += 1
                if occ[g] > 1 and not job.allocation.shared:
                    raise InvariantError(f"GPU {g} held by two jobs without packing")
        if occ != self.free.occupancy.tolist():
            raise InvariantError("GPU occupancy map disagrees with the running jobs")
        for job in self.jobs.values():
            done = ClusterView.progress_of(job, now)
            if done < -1e-9 or done > job.total_iterations + 1e-6:
                raise InvariantError(f"job {job.job_id} progress {done} outside [0, {job.total_iterations}]")
            in_queue = job.job_id in self.queue
            if in_queue != (job.status in (JobStatus.PENDING, JobStatus.SUSPENDED)):
                raise InvariantError(f"job {job.job_id} queue membership disagrees with status {job.status}")
