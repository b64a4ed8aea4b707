"""Round-robin time-slicing with consolidation, after Gandiva (Xiao et al., OSDI 2018).

Gandiva shares an oversubscribed cluster by suspending and resuming jobs at
iteration boundaries, a time slice (quantum) at a time, and migrates jobs to
consolidate them when fragmentation spread them over machines.  This policy
keeps those two mechanisms and nothing else (no packing, no introspection):

- Queued jobs are served least recently served first (a new job counts as
  served at its submission).  A job that fits on free GPUs starts at once,
  on any call.
- Suspensions happen only in rounds, every ``quantum_s`` from the first call:
  a job that does not fit may then take GPUs from running jobs whose slice
  has expired (held them for at least ``quantum_s``), oldest slice first,
  but only if that makes it fit; those jobs go to the back of the queue.
- A running job spread over several nodes moves onto one node as soon as one
  node can hold it (counting the GPUs it already has there), at most one
  move per call, and only once it has made progress.

Costs: the one cost rule (``common.replan_costs``), as for every policy, or
Gandiva's measured suspend-resume and migration times where those are larger
(``common.mechanism_costs``).

It asks to be called at the next round while jobs wait.

Which running jobs are spread over nodes is kept from call to call (the
policy placed, moved and preempted them itself; finishes arrive through
``on_finish``), so a call costs what the queue and the spread jobs cost, not a
pass over every running job.  The queue is offered class by class (GPU type and
count, ``serving.ServingQueue``): once a job of a class finds no GPUs, the later
jobs of that class are not offered until something is placed, since they would
find none either; a round costs its placements, not a walk over the backlog.  Where the engine's count of running jobs
differs from the policy's (a fault suspended a job), it looks at every
running job again, as it once did at every call.
"""

from __future__ import annotations

from operator import attrgetter

from dlsched.cluster.freemap import nodes_of_type
from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Tier
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState
from dlsched.policies.common.mechanism_costs import MeasuredMechanisms, rule_or_mechanism
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.gandiva.serving import ServingQueue
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register


_submitted = attrgetter("spec.submit_time", "spec.job_id")


class _NodeRoom:
    """Whether some node could hold a spread job once its own GPUs are freed, from the free
    counts alone.  The consolidation loop leaves the scratch map as it found it until a move
    succeeds (and then stops), so the most free GPUs on one node, per type, are read once;
    a best-fit search on a scratch map walks every node, for each spread job at each call."""

    def __init__(self, scratch):
        c = scratch.cluster
        self.free = scratch._nf
        self.node_of, _, self.node_type, _ = scratch._lists
        self.exact = scratch.first_free  # topology-oblivious placement has its own rule: no shortcut
        nf = scratch.node_free
        self.most = {None: int(nf.max()) if len(nf) else 0}
        self.most.update((t, int(nf[nodes].max()) if len(nodes) else 0)
                         for t, nodes in enumerate(nodes_of_type(c)))

    def may_hold(self, own, t: int | None, per_node) -> bool:
        """``per_node``: (node, the job's GPUs there) for each node of ``own``."""
        if self.exact:
            return True
        n = len(own)
        most = self.most[t]
        if most >= n:
            return True
        if most + per_node[0][1] < n:  # no node has more free than ``most``; the job holds at most that many on one
            return False
        free, node_type = self.free, self.node_type
        return any(free[node] + k >= n for node, k in per_node if t is None or node_type[node] == t)


def _gpus_by_type(c, jobs) -> dict[int | None, int]:
    """GPUs the jobs hold, per type of each one's first GPU (the type ``_by_preempting`` checks),
    and in all under None."""
    out: dict[int | None, int] = {None: 0}
    for e in jobs:
        gpus = e.allocation.gpus
        t = int(c.gpu_type_idx[gpus[0]])
        out[t] = out.get(t, 0) + len(gpus)
        out[None] += len(gpus)
    return out


def _per_node(gpu_node, gpus) -> tuple[tuple[int, int], ...]:
    """(node, the job's GPUs there) for each node of ``gpus``, most GPUs first."""
    mine: dict[int, int] = {}
    for g in gpus:
        node = int(gpu_node[g])
        mine[node] = mine.get(node, 0) + 1
    return tuple(sorted(mine.items(), key=lambda nk: -nk[1]))


class _Expired:
    """Running jobs whose slice expired, oldest slice first, as a round's preemptions walk them:
    per GPU type (of each job's first GPU; None: all), each list walked from its first job not
    yet taken.  Taking jobs one queued job at a time from the front keeps a round's walks linear
    in the expired jobs, where a walk from the start past every job taken so far was quadratic."""

    def __init__(self, jobs: list[JobState], c) -> None:
        self.lists: dict[int | None, list[JobState]] = {None: jobs}
        for e in jobs:
            self.lists.setdefault(int(c.gpu_type_idx[e.allocation.gpus[0]]), []).append(e)
        self.head = dict.fromkeys(self.lists, 0)
        self.taken: set[int] = set()  # id() of the jobs taken

    def walk(self, t: int | None):
        """The jobs of type ``t`` (any type: None) not taken yet, in order."""
        jobs = self.lists.get(t)
        if jobs is None:
            return
        taken = self.taken
        i = self.head[t]
        while i < len(jobs) and id(jobs[i]) in taken:
            i += 1
        self.head[t] = i
        for e in jobs[i:]:
            if id(e) not in taken:
                yield e

    def take(self, jobs: list[JobState]) -> None:
        self.taken.update(map(id, jobs))


@register("timeslice")
class TimeSlice(ChargesReplanning, JobPolicy):
    name = "timeslice"
    # overhead() models Gandiva's mechanisms by its measurements; a live engine pays those for real
    overhead_models_mechanisms = True
    summary = "round-robin time-slicing with consolidating migration (two of Gandiva's mechanisms only)"
    paper = "Xiao et al., Gandiva: Introspective Cluster Scheduling for Deep Learning, OSDI 2018"
    options = (
        PolicyOption("quantum_s", float, 600.0, "time slice in seconds", positive=True),
        PolicyOption("consolidate", bool, True, "migrate a job spread over nodes onto one node"),
        *COST_OPTIONS,
    )
    mechanisms = MeasuredMechanisms()  # Gandiva's measured suspend-resume and migration times

    def __init__(self, quantum_s: float = 600.0, consolidate: bool = True, costs: str = "derived",
                 plan_s: float = PLAN_PROFILE_S):
        self.set_costs(costs, plan_s)
        if quantum_s <= 0:
            raise ValueError("quantum_s must be positive")
        self.quantum_s = float(quantum_s)
        self.consolidate = consolidate
        self.reset()

    def reset(self) -> None:
        # per job, in job.policy_data: "served" (when it last left the GPUs, or arrived) and
        # "slice" (while running: when its present slice began)
        self._origin: float | None = None  # rounds fall at origin + k * quantum
        self._last_round = 0.0  # (now - origin) / quantum at the previous call
        self._nodes: dict[str, tuple] = {}  # job id -> (its GPUs, spread over nodes?, its (node, GPUs) pairs)
        self._running: set[str] | None = None  # the running jobs as this policy left them (None: unknown)
        self._spread: dict[str, JobState] = {}  # those of them spread over nodes
        # the queue in serving order: (served, submitted, job id), sorted; a queued job's key does not
        # change (served moves only when a job leaves the GPUs), so the order is kept, not re-sorted
        self._queued = ServingQueue()

    def on_submit(self, job: JobState, now: float) -> None:
        job.policy_data.setdefault("served", job.spec.submit_time)
        self._enqueue(job)

    @staticmethod
    def _key(job: JobState) -> tuple:
        return job.policy_data.get("served", job.spec.submit_time), job.spec.submit_time, job.spec.job_id

    @staticmethod
    def _class(job: JobState) -> tuple:
        """What a placement attempt for the job depends on besides the free GPUs."""
        return job.spec.gpu_type, job.spec.num_gpus

    def _enqueue(self, job: JobState) -> None:
        self._queued.add(job.spec.job_id, job, self._key(job), self._class(job))

    def _dequeue(self, job: JobState) -> None:
        self._queued.remove(job.spec.job_id)

    def _queue_from(self, view: ClusterView) -> None:
        """The queue in serving order, from the view (the first call, or after the engine queued a job
        this policy did not send back)."""
        self._queued = ServingQueue()
        for j in view.queued():
            self._enqueue(j)

    def overhead(self, cluster, job: JobState, old: Allocation | None, new: Allocation,
                 kind: str) -> float | None:
        return rule_or_mechanism(super().overhead(cluster, job, old, new, kind),
                                 self.mechanisms.seconds(cluster, job, old, new, kind))

    @staticmethod
    def _type(view: ClusterView, job: JobState) -> int | None:
        return view.cluster.type_id(job.spec.gpu_type) if job.spec.gpu_type else None

    def schedule(self, view: ClusterView, now: float) -> Decision:
        d = Decision()
        c = view.cluster
        if self._origin is None:
            self._origin = now
        rounds = (now - self._origin) / self.quantum_s
        is_round = int(rounds + 1e-9) > int(self._last_round + 1e-9)  # crossed a round boundary
        self._last_round = rounds
        next_round = self._origin + (int(rounds + 1e-9) + 1) * self.quantum_s
        # every sort key below ends in the (unique) job id, so no list needs sorting but by its own key
        known, queued = self._running, len(view.queued())
        if known is None or len(known) != len(view.jobs) - queued:
            self._look_at_every_running_job(view, now)
        if len(self._queued) != queued:
            self._queue_from(view)
        running = None  # read from the view only where a round preempts
        # running jobs whose GPUs lie on several nodes (the only ones consolidation moves)
        spread = list(self._spread.values())
        expired = None  # only a round's preemptions read it: sorted on first use (nothing it reads
        # changes before the queue has been served)
        # between rounds only free GPUs are handed out: with none free, no queued job starts and
        # nothing spread can move (a node would need free GPUs beside the job's own), so the
        # queue is neither sorted nor walked; it only asks for the next round
        if not is_round and view.free.total_free == 0:
            d = Decision()
            if queued:
                d.wakeup = next_round
            return d
        scratch = view.free.copy()
        preempted: list[JobState] = []

        def attempt(job: JobState) -> bool:
            # whether it places depends on the job's class (type, GPUs) and on what earlier
            # attempts took: ServingQueue.offer skips the offers that would fail
            nonlocal scratch, expired, freeable, running
            t = self._type(view, job)
            n = job.spec.num_gpus
            gpus = pick_gpus(scratch, n, t) if scratch.free_of_type(t) >= n else None
            if gpus is None and not is_round:
                return False
            if gpus is None:
                if expired is None:
                    running = view.running()
                    expired = sorted((j for j in running if now - j.policy_data["slice"] >= self.quantum_s),
                                     key=lambda j: (j.policy_data["slice"], j.spec.submit_time, j.spec.job_id))
                    freeable = _gpus_by_type(c, expired)  # nothing is preempted yet
                    expired = _Expired(expired, c)
                gpus, scratch2, taken = self._by_preempting(view, job, t, n, scratch, expired, freeable)
                if gpus is None:
                    return False
                scratch = scratch2
                preempted.extend(taken)
                expired.take(taken)
                for k, v in _gpus_by_type(c, taken).items():
                    freeable[k] -= v
            scratch.allocate(gpus)
            d.allocate[job.job_id] = Allocation.of(gpus)
            return True

        freeable = None
        # in serving order; started jobs leave the queue after the walk
        waiting = len(self._queued) - self._queued.offer(attempt)
        for jid, alloc in d.allocate.items():
            job = view.jobs[jid]
            self._dequeue(job)
            job.policy_data["slice"] = now
            self._started(job, alloc.gpus, c)
        for j in preempted:
            d.preempt.append(j.job_id)
            j.policy_data["served"] = now
            del j.policy_data["slice"]
            self._stopped(j.job_id)
            self._enqueue(j)
        if self.consolidate:
            gone = {j.job_id for j in preempted}
            # only jobs spread over nodes can move: those, in submission order (ties by job id)
            room = None
            for j in sorted(spread, key=_submitted):
                if j.job_id in gone or j.ready_at > now:
                    continue
                own = j.allocation.gpus
                if room is None:
                    room = _NodeRoom(scratch)
                if not room.may_hold(own, self._type(view, j), self._nodes[j.spec.job_id][2]):
                    continue  # no node could hold it: the search below would find nothing
                scratch.release(own)
                target = pick_gpus(scratch, len(own), self._type(view, j), max_tier=Tier.NVLINK)
                if target is None:
                    scratch.allocate(own)
                    continue
                scratch.allocate(target)
                d.allocate[j.job_id] = moved = Allocation.of(target, j.allocation.plan)
                self._started(j, moved.gpus, c)
                break  # one move per call: each costs a checkpoint and a migration
        if waiting or preempted:  # suspended jobs wait too: they compete again at the next round
            d.wakeup = next_round
        return d

    def on_finish(self, job: JobState, now: float) -> None:
        self._nodes.pop(job.spec.job_id, None)
        self._stopped(job.spec.job_id)
        self._dequeue(job)

    def _look_at_every_running_job(self, view: ClusterView, now: float) -> None:
        """Which jobs run and which of them are spread, from the view (the first call, or after the
        engine changed something this policy did not decide)."""
        self._running, self._spread = set(), {}
        c = view.cluster
        for j in view.running():
            pd = j.policy_data
            if "slice" not in pd:
                pd["slice"] = now  # e.g. adopted after an engine restart
            self._started(j, j.allocation.gpus, c)

    def _started(self, job: JobState, gpus: tuple[int, ...], c) -> None:
        """``job`` runs on ``gpus`` (started, resumed or moved by this call's decision)."""
        jid = job.spec.job_id
        self._running.add(jid)
        seen = self._nodes.get(jid)
        if len(gpus) > 1:
            if seen is None or seen[0] != gpus:  # worked out once per allocation
                per_node = _per_node(c.gpu_node, gpus)
                seen = self._nodes[jid] = (gpus, len(per_node) > 1, per_node)
            if seen[1]:
                self._spread[jid] = job
                return
        self._spread.pop(jid, None)

    def _stopped(self, jid: str) -> None:
        if self._running is not None:
            self._running.discard(jid)
        self._spread.pop(jid, None)

    def _by_preempting(self, view, job, t, n, scratch, expired: _Expired, freeable):
        """GPUs for ``job`` after suspending expired jobs (oldest slice first, not taken yet, of the
        job's GPU type if it has one: others' GPUs would not help), or (None, ...)."""
        # at most every eligible expired job's GPUs come free (``freeable``, kept by the caller):
        # if even that is short, the walk below (a copy, then a release per job) finds nothing
        if scratch.free_of_type(t) + freeable.get(t, 0) < n:
            return None, scratch, []
        trial = None
        taken = []
        for e in expired.walk(t):
            trial = trial or scratch.copy()
            trial.release(e.allocation.gpus)
            taken.append(e)
            if trial.free_of_type(t) >= n:
                gpus = pick_gpus(trial, n, t)
                if gpus is not None:
                    return gpus, trial, taken
        return None, scratch, []

    def describe(self) -> dict:
        return {**super().describe(), "quantum_s": self.quantum_s, "consolidate": self.consolidate}
