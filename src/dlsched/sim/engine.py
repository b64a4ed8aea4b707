"""The discrete-event simulator: the execution core, with time passing by events.

``Simulator.step()`` handles one timestamp: it takes every event due then,
each by its own handler, asks the policy when something happened or a round
is due, hands the decision to the core (``ExecutionCore.apply``) and turns
the returned actions into future events.  ``run()`` steps until nothing is
left and builds the result.

Between two events every running job advances at a constant rate
(iterations/s), so nothing is simulated per iteration.  A job's completion
is predicted once and kept in a heap; a prediction superseded by a later
change is skipped by the job's version number.  Arrivals are read from the
sorted trace with a cursor rather than pushed into the heap.
"""

from __future__ import annotations

import math
from math import ceil as _ceil
from heapq import heappop, heappush
from operator import attrgetter
import time as _time
from dataclasses import asdict, dataclass, field

from dlsched import defaults as D
from dlsched.cluster.topology import Cluster
from dlsched.core import Action, Contention, CoreEvent, EngineCosts, ExecutionCore, RoundTimer
from dlsched.core.actions import MODE_FLIPS, PLACEMENTS
from dlsched.core.records import job_record
from dlsched.errors import InvariantError
from dlsched.gctuning import rare_gc
from dlsched.perf.base import PerfModel
from dlsched.policies.base import JobPolicy, JobState, JobStatus
from dlsched.report.records import JobRecord, TimeSeries
from dlsched.report.summary import summarize
from dlsched.sim import fcfs_loop
from dlsched.sim.sizing import total_iterations
from dlsched.workload.job import JobSpec

# heap event kinds, in the order they are handled at one timestamp
_COMPLETE, _READY, _ROUND, _WAKEUP = 0, 1, 2, 3
_REPREDICT = frozenset(PLACEMENTS + MODE_FLIPS + ("rate",))
_RUNNING = JobStatus.RUNNING
_job_id = attrgetter("job_id")
_trace_order = attrgetter("submit_time", "job_id")


@dataclass(frozen=True)
class SimConfig:
    """Engine parameters; every run writes them beside its results."""

    seed: int = 0
    debug: bool = False  # check invariants after every timestamp (slow)
    # engine costs: defaults and their sources in dlsched/defaults.py
    start_overhead_s: float = D.START_OVERHEAD_S
    restore_base_s: float = D.RESTORE_BASE_S
    restore_s_per_gb: float = D.RESTORE_S_PER_GB
    checkpoint_interval_s: float | None = D.CHECKPOINT_INTERVAL_S
    max_time: float | None = None  # stop here; active jobs are reported unfinished
    record_series: bool = True
    record_events: bool = True  # keep the core's event log (SimResult.events); off for huge runs
    slice_quantum_s: float = D.SLICE_QUANTUM_S
    slice_switch_s: float = D.SLICE_SWITCH_S
    slice_switch_s_per_gb: float = 0.0  # ... plus this per GB of model state (see core.costs.EngineCosts)
    slice_switch_max_s: float | None = None  # None: no cap

    def costs(self) -> EngineCosts:
        return EngineCosts(self.start_overhead_s, self.restore_base_s, self.restore_s_per_gb,
                           self.checkpoint_interval_s, self.slice_switch_s, self.slice_quantum_s,
                           self.slice_switch_s_per_gb, self.slice_switch_max_s)


@dataclass
class SimResult:
    """What a run gives back: records, series, summary, the parameters that shaped it, its timings."""

    records: list[JobRecord]
    series: TimeSeries
    summary: dict
    params: dict
    stats: dict = field(default_factory=dict)
    events: list[CoreEvent] = field(default_factory=list)  # empty when SimConfig.record_events is off
    links: list[tuple[float, str, float]] = field(default_factory=list)  # (time, link, utilisation) changes,
    # from a contention model that reports them (the flow model: links.csv)


def _shaping(cfg: SimConfig) -> dict:
    """The settings that shape a run's results: the event log is only kept or not, so a run
    with and without it writes the same summary."""
    d = asdict(cfg)
    del d["record_events"]
    return d


class Simulator:
    def __init__(self, cluster: Cluster, policy: JobPolicy, jobs: list[JobSpec],
                 perf: PerfModel | None = None, config: SimConfig | None = None,
                 contention: Contention | None = None, placement: str = "packed"):
        from dlsched.cluster.oblivious import check_mode
        from dlsched.perf.default import default_perf_model

        self.cluster = cluster
        self.policy = policy
        self.perf = perf or default_perf_model(cluster)
        self.config = config or SimConfig()
        self.contention = contention
        self.placement = check_mode(placement)  # how job policies place jobs (cluster/oblivious.py)
        self.specs = sorted(jobs, key=_trace_order)  # a C-level key: a million tuples in one pass
        ids = [j.job_id for j in self.specs]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            dup = sorted({i for i in ids if i in seen or seen.add(i)})[:5]
            raise InvariantError(f"duplicate job ids in the trace: {dup}")

    # ------------------------------------------------------------------ run = start, step*, result

    def run(self, progress=None) -> SimResult:
        """Simulate to the end; ``progress(now, done, total)`` is called now and then."""
        with rare_gc():
            self.start()
            if fcfs_loop.applies(self):  # strict FCFS's own loop: same results, a fraction of the work
                self._loop = "fcfs"
                fcfs_loop.run(self, progress)
                if progress is not None:
                    progress(self.now, len(self.specs), len(self.specs))
                return self.result()
            last = _time.perf_counter()
            while self.step():
                if progress is not None and _time.perf_counter() - last > 0.2:
                    last = _time.perf_counter()
                    progress(self.now, self.done, len(self.specs))
            if progress is not None:
                progress(self.now, len(self.specs), len(self.specs))
            return self.result()

    def start(self) -> None:
        """Fresh state for a run."""
        cfg = self.config
        self.policy.reset()
        self.core = ExecutionCore(self.cluster, self.policy, self.perf, cfg.costs(),
                                  contention=self.contention, record_events=cfg.record_events,
                                  placement=self.placement)
        self.rounds = RoundTimer(self.policy.period)
        self._idle_next: float | None = None  # while rounds are skipped: the first one skipped
        self._round_ver = 0  # round events of an older version were given up
        self.now = 0.0
        self.cursor = 0  # next arrival in self.specs
        self.done = 0  # jobs recorded (finished, dropped)
        self._heap: list = []
        self._seq = 0
        self._version: dict[str, int] = {}
        self._thr = 0.0  # samples/s of running jobs past their overhead
        self._contrib: dict[str, float] = {}
        self.series = TimeSeries()
        self.links: list[tuple[float, str, float]] = []
        self._drain_links = getattr(self.contention, "drain_utilisation", None)
        self._clock = getattr(self.contention, "advance", None)  # a model that integrates over time
        self.events = 0
        self.sched_calls = 0
        self.sched_time = 0.0
        self._wall0 = _time.perf_counter()
        self._loop = "general"  # or "fcfs": strict FCFS's own loop (sim/fcfs_loop.py), same results
        self._records_in_order = False  # the compiled FCFS loop records jobs in trace order already
        self._handlers = (self._on_complete, self._on_ready, self._on_round, self._on_wakeup)
        self._periodic = self.rounds.period is not None
        self._on_events, self._starts_only = self.policy.schedule_on_events, self.policy.only_starts_queued
        self._record_series, self._max_time, self._debug = cfg.record_series, cfg.max_time, cfg.debug
        self._num_gpus = self.cluster.num_gpus

    def step(self) -> bool:
        """Handle every event at the next timestamp; False once the run is over."""
        # the hot loop of a million-job run: attributes read once into locals, the stale-prediction
        # sweep and the series sample written out in place
        core, specs, n = self.core, self.specs, len(self.specs)
        cursor = self.cursor
        if cursor >= n and not core.jobs:
            return False  # every job is recorded: later rounds or stale predictions change nothing
        heap, version = self._heap, self._version
        while heap:  # superseded completion/ready predictions neither advance time nor count
            top = heap[0]
            if top[2] > _READY or version.get(top[3]) == top[4]:
                break
            heappop(heap)
        t = specs[cursor].submit_time if cursor < n else math.inf
        if heap and heap[0][0] < t:
            t = heap[0][0]
        if t == math.inf:
            return False
        max_time = self._max_time
        if max_time is not None and t > max_time:
            self.now = max_time
            if self._clock is not None:
                self._clock(max_time)
            return False
        self.now = t
        if self._clock is not None:
            self._clock(t)
        self._round_due = False  # set by the handlers, as ``_changed``
        changed = False
        first = cursor  # events are counted once per step, not per event
        if cursor < n and specs[cursor].submit_time == t:
            # arrivals inline (``_on_arrival``): a million-job run admits one per step
            perf, submit, job_state = self.perf, core.submit, JobState
            while cursor < n:
                spec = specs[cursor]
                if spec.submit_time != t:
                    break
                it = spec.total_iterations  # ``total_iterations(spec, perf)``, spelled out
                if it is None:
                    it = max(1, int(_ceil(spec.duration_s / perf.reference_time(spec) - 1e-9)))
                else:
                    it = int(it)
                version[spec.job_id] = 0
                submit(job_state(spec, it, updated_at=t, queued_since=t), t)
                cursor += 1
            changed = True
        self.cursor = cursor
        self._changed = changed
        popped = 0
        if heap and heap[0][0] == t:
            handlers = self._handlers
            while heap and heap[0][0] == t:
                _, _, kind, jid, ver = heappop(heap)
                popped += 1
                handlers[kind](jid, ver)
            changed = self._changed
        self.events += cursor - first + popped
        if self._idle_next is not None and changed:
            self._wake_rounds(t)
        if self._periodic and core.jobs and self._idle_next is None:
            # an empty cluster has no rounds: empty time costs nothing
            nxt = self.rounds.arm(t)
            if nxt is not None:
                self._push(nxt, _ROUND, "", self._round_ver)
        if self._round_due or (changed and self._on_events
                               and not (self._starts_only and (not core.queue or not core.free.total_free))):
            self._call_policy()
            if self._round_due and heap and self.policy.rounds_idle():
                self._idle_rounds()
        if self._record_series:
            # ``TimeSeries.add``, spelled out: one sample per step
            thr = self._thr
            if thr <= 0.0:
                thr = 0.0
            busy, running, queued = self._num_gpus - core.free.total_free, len(core.running), len(core.queue)
            s = self.series
            times = s.time
            if times:
                if times[-1] == t:
                    s.busy_gpus[-1], s.running_jobs[-1] = busy, running
                    s.queued_jobs[-1], s.throughput[-1] = queued, thr
                elif (s.busy_gpus[-1] == busy and s.running_jobs[-1] == running
                        and s.queued_jobs[-1] == queued and s.throughput[-1] == thr):
                    s._tail = t
                else:
                    s._tail = None
                    times.append(t)
                    s.busy_gpus.append(busy)
                    s.running_jobs.append(running)
                    s.queued_jobs.append(queued)
                    s.throughput.append(thr)
            else:
                s.add(t, busy, running, queued, thr)
        if self._drain_links is not None:
            self.links.extend((t, name, u) for name, u in self._drain_links())
        if self._debug:
            core.check(t)
        # queued jobs that nothing can unblock: the run is over
        return bool(heap or cursor < n or not core.queue or core.running)

    def result(self) -> SimResult:
        cfg, core = self.config, self.core
        now = self.now
        stopped = cfg.max_time is not None and now >= cfg.max_time
        core.close(now, "simulation stopped at max_time" if stopped else
                   "the policy left it queued with nothing else running (cannot be placed)", ordered=False)
        for spec in self.specs[self.cursor:]:  # the run stopped before they arrived: recorded, never dropped
            t = spec.submit_time
            job = JobState(spec, total_iterations(spec, self.perf), updated_at=t, queued_since=t)
            core.records.append(job_record(job, "unfinished", "submitted after the simulation stopped at "
                                                              "max_time", t))
        if not self._records_in_order:
            core.records[:] = self._in_trace_order(core.records)
        self.series.close()
        wall = _time.perf_counter() - self._wall0
        summary = summarize(core.records, self.series, self.cluster.num_gpus)
        params = {"cluster": self.cluster.name, "num_gpus": self.cluster.num_gpus, "jobs": len(self.specs),
                  **self.policy.describe(), **self.perf.describe(), "sim": _shaping(cfg)}
        stats = {"wall_s": wall, "loop": self._loop, "events": self.events,
                 "events_per_s": self.events / wall if wall > 0 else 0.0,
                 "schedule_calls": self.sched_calls, "schedule_s": self.sched_time, "policy": self.policy.timings()}
        if hasattr(self.contention, "describe"):
            params["network"] = self.contention.describe()
        if hasattr(self.contention, "stats"):
            stats["network"] = dict(self.contention.stats)
        return SimResult(core.records, self.series, summary, params, stats, core.events or [], self.links)

    def _in_trace_order(self, records: list[JobRecord]) -> list[JobRecord]:
        """``records`` in trace order (submission time, then job id), which ``self.specs`` already
        has: each record goes to its job's slot, O(n) where sorting a million records takes seconds."""
        slot = dict(zip(map(_job_id, self.specs), range(len(self.specs))))  # C loops: a million ids
        out: list = [None] * len(self.specs)
        for r in records:
            out[slot[r.job_id]] = r
        missing = [s.job_id for s, r in zip(self.specs, out) if r is None]
        if missing or len(records) != len(out):
            raise InvariantError(f"{len(missing)} job(s) without a record (e.g. {missing[:3]}) or recorded twice")
        return out

    # ------------------------------------------------------------------ one handler per event kind
    # Each takes (job id, version) from the heap entry; ``_changed`` asks for a policy call
    # (if the policy wants one on events), ``_round_due`` for a round's call.

    def _on_arrival(self, spec: JobSpec) -> None:
        now = self.now
        job = JobState(spec, total_iterations(spec, self.perf), updated_at=now, queued_since=now)
        self._version[spec.job_id] = 0
        self.core.submit(job, now)
        self._changed = True

    def _on_complete(self, jid: str, ver: int) -> None:
        version = self._version
        if version.get(jid) != ver:
            return  # superseded by a later change to the job
        core = self.core
        job = core.jobs[jid]
        del version[jid]  # every prediction of a recorded job is stale
        contrib = self._contrib  # ``_drop_contrib``, spelled out: once per job
        self._thr -= contrib.pop(jid, 0.0)
        if not contrib:
            self._thr = 0.0
        actions = core.finish(job, self.now)
        if actions:
            self._carry_out(actions)
        self.done += 1
        self._changed = True

    def _on_ready(self, jid: str, ver: int) -> None:
        if self._version.get(jid) == ver:
            job = self.core.jobs[jid]
            self._set_contrib(job)
            self.core.ready(job, self.now)

    def _on_round(self, jid: str, ver: int) -> None:
        if ver != self._round_ver:
            return  # a round given up when the policy said its rounds would repeat
        self.rounds.fire(self.now)
        self._round_due = True

    # A round-based policy whose rounds would repeat until something arrives or finishes
    # (``rounds_idle``) is not called for them: the pending round is given up, and at the next
    # arrival or finish the rounds the timer would have fired meanwhile are counted and handed
    # to the policy (``skip_rounds``).  Gavel's 100,000-odd stable rounds on its own trace (and
    # Sia's on a quiet cluster) cost a step each otherwise.  Results are the same: those rounds
    # changed nothing.

    def _idle_rounds(self) -> None:
        self._idle_next = self.rounds.give_up()
        self._round_ver += 1

    def _wake_rounds(self, t: float) -> None:
        """Count the rounds skipped before ``t``; the round at ``t`` itself, if any, is due now."""
        k, r = self.rounds.skipped(self._idle_next, t)
        self._idle_next = None
        if k:
            self.policy.skip_rounds(k)
        if r == t:
            self._round_due = True
        else:
            self.rounds.next = r
            self._push(r, _ROUND, "", self._round_ver)

    def _on_wakeup(self, jid: str, ver: int) -> None:
        self._changed = True

    # ------------------------------------------------------------------ the policy and its decisions

    def _call_policy(self) -> None:
        core, now = self.core, self.now
        core.view.now = now
        before = core.snapshot() if self._debug else None
        s0 = _time.perf_counter()
        decision = self.policy.schedule(core.view, now)
        self.sched_time += _time.perf_counter() - s0
        self.sched_calls += 1
        if before is not None and before != core.snapshot():
            raise InvariantError(f"policy {self.policy.name} changed engine state inside schedule() "
                                 f"at t={now}; policies must only read the view")
        if decision.wakeup is not None and decision.wakeup > now:
            self._push(decision.wakeup, _WAKEUP, "", 0)
        if decision.allocate or decision.preempt or decision.drop:  # ``bool(decision)``, without its call
            actions = core.apply(decision, now)
            if actions:
                self._carry_out(actions)

    def _carry_out(self, actions: list[Action]) -> None:
        """Turn the core's actions into events: new completion predictions, or none for jobs that left."""
        jobs = self.core.jobs
        predict = self._predict
        for a in actions:
            job = jobs.get(a.job_id)
            if a.kind in _REPREDICT:
                if job is not None and job.status == _RUNNING:
                    predict(job)
            else:  # suspend, drop: the job left its GPUs
                if job is None:
                    self.done += 1
                    self._version.pop(a.job_id, None)
                    self._drop_contrib(a.job_id)
                else:
                    self._forget(job)

    def _predict(self, job: JobState) -> None:
        now, version = self.now, self._version
        spec = job.spec
        jid = spec.job_id
        ver = version[jid] + 1
        version[jid] = ver
        ready = job.ready_at
        start = ready if ready > now else now
        # ``_push``, spelled out: once per start
        seq = self._seq + 1
        heappush(self._heap, (start + (job.total_iterations - job.done_iterations) / job.rate, seq, _COMPLETE,
                              jid, ver))
        self._seq = seq
        if ready > now:
            self._drop_contrib(jid)
            self._push(ready, _READY, jid, ver)
        else:  # ``_set_contrib``, spelled out
            contrib = self._contrib
            c = job.rate * spec.batch_size
            self._thr += c - contrib.get(jid, 0.0)
            contrib[jid] = c

    def _forget(self, job: JobState) -> None:
        """The job's predictions are void (it left its GPUs, or finished)."""
        self._version[job.job_id] += 1
        self._drop_contrib(job.job_id)

    # ------------------------------------------------------------------ heap

    def _push(self, t: float, kind: int, jid: str, ver: int) -> None:
        self._seq += 1
        heappush(self._heap, (t, self._seq, kind, jid, ver))

    # ------------------------------------------------------------------ series

    def _set_contrib(self, job: JobState) -> None:
        jid = job.spec.job_id
        c = job.rate * job.spec.batch_size
        self._thr += c - self._contrib.get(jid, 0.0)
        self._contrib[jid] = c

    def _drop_contrib(self, jid: str) -> None:
        self._thr -= self._contrib.pop(jid, 0.0)
        if not self._contrib:
            self._thr = 0.0  # no float drift survives an empty cluster

