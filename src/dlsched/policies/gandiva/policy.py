"""Gandiva (Xiao et al., OSDI 2018): reactive node allocation plus introspective scheduling.

Reactive mode (every call, ``gandiva.reactive``): waiting jobs, highest
priority first then in arrival order, go where Algorithm 1 puts them -- same
affinity, empty node, any free GPUs, or time-sliced onto a node of the same
affinity -- so a job starts at once even when the cluster is full (early
feedback), and only waits when no same-affinity node exists.

Introspective mode (every ``quantum_s``, ``gandiva.introspect``):

- profiling: each job's progress rate measured over the last quantum;
- time-slicing fairness: inside an oversubscribed server the least-served
  jobs get the unshared GPUs for the next quantum (round-robin);
- migration (``migration``): time-sliced jobs move to GPUs freed elsewhere,
  jobs spread wider than needed move to tighter GPUs, and servers are
  defragmented while a waiting job finds no server with enough free GPUs;
- packing (``packing``): time-sliced groups run packed, lowest utilisation
  first; kept only while their measured packed rates beat their measured
  time-sliced rates, undone for good otherwise;
- grow-shrink (``grow_shrink``): elastic jobs (``JobSpec.elastic``) grow to
  fill their server after ``grow_idle_s`` with nobody waiting or sharing, and
  shrink back at once when an arriving job needs their GPUs.

A high-priority job is never time-sliced with (so never slowed for) a
lower-priority one.  Mechanism costs follow the paper's measurements (section
4-5): suspend + resume at the memory-cycle minimum 0.1 s to 1 s by resident
state, migration 1 s to 3.5 s by checkpoint size, more across servers.  The
per-quantum switch cost of time-slicing is the engine's (``EngineCosts.
slice_switch_s`` and ``slice_switch_s_per_gb``); the experiment sets it to
these same figures.
"""

from __future__ import annotations

from dlsched.cluster.topology import Cluster
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.gandiva.introspect import (deslice, defragment, grow_all, improve_locality, pack_groups,
                                                 rotate, shrink_all, undo_slower_growth)
from dlsched.policies.gandiva.plan import Plan
from dlsched.policies.gandiva.reactive import place_new
from dlsched.policies.gandiva.served import ServedClock
from dlsched.policies.gandiva.serving import ServingQueue
from dlsched.policies.gandiva.windows import Windows
from dlsched.policies.common.mechanism_costs import MeasuredMechanisms, rule_or_mechanism
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register


@register("gandiva")
class Gandiva(ChargesReplanning, JobPolicy):
    name = "gandiva"
    # overhead() models mechanisms (suspend/resume, migration) by the paper's measurements; a live
    # engine pays those for real, so it must not hold a launch back for them as well
    overhead_models_mechanisms = True
    summary = ("affinity-based node allocation with time-slicing; introspective packing, migration and "
               "grow-shrink (each can be switched off for ablations)")
    paper = "Xiao et al., Gandiva: Introspective Cluster Scheduling for Deep Learning, OSDI 2018"
    options = (
        PolicyOption("quantum_s", float, 60.0, "time slice and introspection interval in seconds", positive=True),
        PolicyOption("packing", bool, True, "pack time-sliced jobs when measured packed throughput is higher"),
        PolicyOption("migration", bool, True, "migrate to de-slice, improve locality and defragment"),
        PolicyOption("grow_shrink", bool, True, "grow elastic jobs when idle, shrink them when jobs arrive"),
        PolicyOption("grow_idle_s", float, 300.0, "idle time before elastic jobs grow", minimum=0.0),
        PolicyOption("pack_margin", float, 0.0, "packed must beat time-sliced by more than this fraction",
                     minimum=0.0),
        PolicyOption("defrag_threshold", int, 1, "defragment servers with at least this many free GPUs",
                     minimum=1),
        PolicyOption("suspend_min_s", float, 0.1, "suspend + resume of the smallest job", minimum=0.0),
        PolicyOption("suspend_max_s", float, 1.0, "suspend + resume of the largest job", minimum=0.0),
        PolicyOption("suspend_s_per_gb", float, 0.4, "suspend + resume per GB of model state", minimum=0.0),
        PolicyOption("migrate_min_s", float, 1.0, "migration of the smallest job", minimum=0.0),
        PolicyOption("migrate_max_s", float, 3.5, "migration of the largest job", minimum=0.0),
        PolicyOption("migrate_s_per_gb", float, 0.5, "migration per GB of checkpoint", minimum=0.0),
        PolicyOption("migrate_inter_server_s", float, 1.0, "extra for a checkpoint sent to another server",
                     minimum=0.0),
        PolicyOption("racks", bool, True, "tell racks apart when placing or migrating across servers (off: "
                     "network-agnostic above the server, as Gandiva's paper defines it and Dally ran it)"),
        *COST_OPTIONS,
    )

    def __init__(self, quantum_s: float = 60.0, packing: bool = True, migration: bool = True,
                 grow_shrink: bool = True, grow_idle_s: float = 300.0, pack_margin: float = 0.0,
                 defrag_threshold: int = 1, suspend_min_s: float = 0.1, suspend_max_s: float = 1.0,
                 suspend_s_per_gb: float = 0.4, migrate_min_s: float = 1.0, migrate_max_s: float = 3.5,
                 migrate_s_per_gb: float = 0.5, migrate_inter_server_s: float = 1.0, racks: bool = True,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        if quantum_s <= 0:
            raise ValueError("quantum_s must be positive")
        self.quantum_s = float(quantum_s)
        self.packing, self.migration, self.grow_shrink = packing, migration, grow_shrink
        self.grow_idle_s, self.pack_margin, self.defrag_threshold = grow_idle_s, pack_margin, defrag_threshold
        self.suspend = (suspend_min_s, suspend_max_s, suspend_s_per_gb)
        self.migrate = (migrate_min_s, migrate_max_s, migrate_s_per_gb, migrate_inter_server_s)
        self.mechanisms = MeasuredMechanisms(*self.suspend, *self.migrate)
        self.racks = racks
        self.set_costs(costs, plan_s)
        self.reset()

    def reset(self) -> None:
        self._next_round: float | None = None
        self._last_call: float | None = None
        self._idle_since: float | None = None
        self._rejected: set = set()  # job groups whose packing lost to time-slicing
        self.counts = {"slice": 0, "pack": 0, "unpack": 0, "migrate": 0, "rotate": 0, "resize": 0}
        # the plan the last call left, carried into the next (the engine carried it out); None: build one
        self._plan: Plan | None = None
        self._alone: list[str] = []  # co-holders of jobs that finished since the last call
        self._served = ServedClock()
        self._new: set[str] = set()  # placed by the last call, not yet counted by the round-robin
        self._rotating: set[str] = set()  # moved by the last call's rotation
        self._windows = Windows(self.quantum_s)
        # the engine's queue in serving order (highest priority, then arrival), kept across calls
        self._queue = ServingQueue()

    @staticmethod
    def _serving_key(job: JobState) -> tuple:
        return -job.spec.priority, job.spec.submit_time, job.job_id

    @staticmethod
    def _class(job: JobState) -> tuple:
        """What Algorithm 1's answer for a job depends on besides the plan (``place_new``'s question)."""
        return job.spec.num_gpus, job.spec.gpu_type, job.spec.priority

    def _enqueue(self, job: JobState) -> None:
        self._queue.add(job.job_id, job, self._serving_key(job), self._class(job))

    def on_submit(self, job: JobState, now: float) -> None:
        super().on_submit(job, now)
        self._enqueue(job)

    def _queue_of(self, view: ClusterView) -> ServingQueue:
        """The kept queue, rebuilt from the view where the engine queued a job this policy did not
        see arrive (a fault suspended it, a live launch failed)."""
        queued = view.queued()
        if len(self._queue) != len(queued):
            self._queue = ServingQueue()
            for job in queued:
                self._enqueue(job)
        return self._queue

    def on_finish(self, job: JobState, now: float) -> None:
        super().on_finish(job, now)
        jid = job.job_id
        plan = self._plan
        if plan is not None and jid in plan.gpus:
            left = plan.drop(jid)
            self._alone += left
            self._windows.mark(left)
        self._served.forget(jid)
        self._queue.remove(jid)  # a queued job dropped
        self._new.discard(jid)
        self._rotating.discard(jid)

    # ------------------------------------------------------------------ costs

    def suspend_resume_s(self, job: JobState) -> float:
        return self.mechanisms.suspend_resume_s(job)

    def overhead(self, cluster: Cluster, job: JobState, old: Allocation | None, new: Allocation,
                 kind: str) -> float | None:
        # the one cost rule (re-planning a new shape) is the least it pays; Gandiva's own measured
        # mechanism costs (suspend-resume, migration) count where they are larger
        return rule_or_mechanism(super().overhead(cluster, job, old, new, kind),
                                 self.mechanisms.seconds(cluster, job, old, new, kind))

    # ------------------------------------------------------------------ scheduling

    def _plan_for(self, view: ClusterView) -> Plan:
        """The last call's plan, if the engine still holds what it says; otherwise a fresh one."""
        plan, alone = self._plan, self._alone
        self._alone = []
        running = len(view.jobs) - len(view.queued())  # active jobs less queued ones, without a copy
        if plan is not None and plan.matches(view, running):
            plan.begin(view, alone)
            return plan
        if plan is not None:
            self._served.settle_all(plan)  # at the sharing the old plan knew, up to the last call
        plan = Plan(view)
        plan.racks = self.racks
        plan.before_change = self._settle
        served = self._served
        served.acc.clear()
        count = len(served.dts)
        for jid, job in plan.jobs.items():
            pd = job.policy_data
            if "served" in pd:
                served.acc[jid] = [pd["served"], count, pd]
        self._new = {jid for jid, job in plan.jobs.items() if "served" not in job.policy_data}
        self._windows.adopt(plan)
        self._plan = plan
        return plan

    def _settle(self, jids) -> None:
        self._served.settle(self._plan, jids)

    def schedule(self, view: ClusterView, now: float) -> Decision:
        plan = self._plan_for(view)
        self._account(plan, now)
        if self._next_round is None:
            self._next_round = now
        is_round = now >= self._next_round - 1e-9
        if is_round:
            self._windows.round(view, plan, now)
        queue = self._queue_of(view)
        if len(queue):
            self._idle_since = None  # an arrival ends the idle period that growth waits for
        waiting = self._place_all(plan, queue)
        if self.grow_shrink and waiting and shrink_all(plan):  # shrink at once, if the GPUs are needed
            waiting = self._place_all(plan, queue)
        if is_round:
            self._introspect(view, plan, waiting, now)
            waiting = self._place_all(plan, queue)
            self._next_round = now + self.quantum_s
        d = plan.decision()
        for jid, alloc in d.allocate.items():
            old = view.jobs[jid].allocation
            if old is None:
                continue
            if old.gpus != alloc.gpus and len(old.gpus) != len(alloc.gpus):
                self.counts["resize"] += 1
            elif old.gpus != alloc.gpus:
                # a time-sliced job resumed on another GPU of its server is round-robin, not a migration
                self.counts["rotate" if view.jobs[jid].policy_data.get("rotating") else "migrate"] += 1
            elif alloc.mode == "packed" and old.mode != "packed":
                self.counts["pack"] += 1
            elif old.mode == "packed" and alloc.mode == "sliced":
                self.counts["unpack"] += 1
        changed = plan.end_call()
        self._windows.restart(view, plan, now, changed)
        acc = self._served.acc
        for jid in changed:  # newly running: counted from the next call (a newcomer once placed there)
            if jid not in acc and jid in plan.gpus:
                pd = plan.jobs[jid].policy_data
                if "served" in pd:
                    self._served.start(jid, pd, pd["served"])
                else:
                    self._new.add(jid)
        if waiting or plan.shared or self._may_grow(plan):
            # introspection has work only then; otherwise the next arrival or completion calls us
            # (a months-long trace would otherwise cost a call per quantum for nothing)
            d.wakeup = self._next_round
        return d

    def _may_grow(self, plan: Plan) -> bool:
        """An elastic job could grow into free GPUs of its server, or a growth awaits its measurement."""
        return self.grow_shrink and any(
            plan.scratch.free_on_node(plan.node_of(plan.gpus[j][0])) or "grown_from" in plan.jobs[j].policy_data
            for j in plan.elastic)

    def _place_all(self, plan: Plan, queue: ServingQueue) -> int:
        """Algorithm 1 for every queued job in serving order; the placed ones leave the queue.
        Returns how many still wait.  (A job whose question already found nothing since the plan
        last changed is not asked again: ``ServingQueue.offer``, as ``place_new`` would answer.)"""
        placed = []

        def attempt(job: JobState) -> bool:
            step = place_new(plan, job)
            if step is None:
                return False
            if step == "slice":
                self.counts["slice"] += 1
            placed.append(job.job_id)
            return True

        queue.offer(attempt)
        for jid in placed:
            queue.remove(jid)
        return len(queue)

    def _account(self, plan: Plan, now: float) -> None:
        """Each running job's share of a GPU since the last call: what round-robin evens out
        (counted lazily by ``ServedClock``: the same figures, read where they are used)."""
        served = self._served
        if self._last_call is not None and now > self._last_call:
            served.tick(now - self._last_call)
        jobs = plan.jobs
        for jid in [j for j in self._rotating if j in jobs]:  # (a set's intersection with a dict walks the dict)
            jobs[jid].policy_data.pop("rotating", None)  # set by the last call's rotation only
            self._rotating.discard(jid)
        acc = served.acc
        for jid in [j for j in self._new if j in jobs]:
            # a newcomer joins the round-robin level with its server's least-served job
            # (starting from zero would hand it every unshared GPU until it caught up)
            node = plan.node_of(plan.gpus[jid][0])
            others = [served.value(plan, o) for o in plan.node_jobs(node) if o in acc]
            served.start(jid, jobs[jid].policy_data, min(others, default=0.0))
        self._new = set()
        self._last_call = now

    def _served_now(self, jid: str) -> float:
        if jid in self._served.acc:
            return self._served.value(self._plan, jid)
        return self._plan.jobs[jid].policy_data.get("served", 0.0)  # placed in this call

    def _introspect(self, view: ClusterView, plan: Plan, waiting: int, now: float) -> None:
        def ready(jid: str) -> bool:
            return plan.jobs[jid].ready_at <= now

        if self.migration:
            deslice(plan)
            improve_locality(plan, ready)
            defragment(plan, {cls[0] for cls in self._queue.classes()}, ready, self.defrag_threshold)
        self._rotating.update(rotate(plan, self._served_now))
        if self.packing:
            pack_groups(view, plan, self._rejected, self.pack_margin)
        if self.grow_shrink:
            busy = waiting or bool(plan.shared)  # a job sharing its GPUs
            if busy:
                self._idle_since = None
            elif self._idle_since is None:
                self._idle_since = now
            undo_slower_growth(plan)
            if not busy and now - self._idle_since >= self.grow_idle_s - 1e-9:
                grow_all(plan)

    def describe(self) -> dict:
        return {**super().describe(), "quantum_s": self.quantum_s, "packing": self.packing,
                "migration": self.migration, "grow_shrink": self.grow_shrink, "grow_idle_s": self.grow_idle_s,
                "pack_margin": self.pack_margin, "defrag_threshold": self.defrag_threshold,
                "suspend_s": list(self.suspend), "migrate_s": list(self.migrate),
                **({} if self.racks else {"racks": False})}  # written only when off: the default's results stay as they were

    def mechanism_counts(self) -> dict:
        """How often each mechanism acted in the last run (deterministic: reported beside results)."""
        return dict(self.counts)
