"""The contract between schedulers and the engines that run them.

A policy sees a ``ClusterView`` and returns a ``Decision``.  The same policy
object runs under the simulator (``dlsched.sim``) and the live runtime
(``dlsched.live``); it never learns which.  The view hands out the engine's
own ``JobState`` objects for speed: policies read them and never write them
(debug mode checks that the engine's invariants still hold after each call).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Iterable

import numpy as np

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.topology import Cluster
from dlsched.workload.job import JobSpec

if TYPE_CHECKING:
    from dlsched.perf.base import PerfModel


class JobStatus(str, Enum):
    PENDING = "pending"  # submitted, never started
    RUNNING = "running"  # holds GPUs (possibly still paying a start/restore overhead)
    SUSPENDED = "suspended"  # ran before, back in the queue (preempted or time-sliced out)
    FINISHED = "finished"
    DROPPED = "dropped"  # removed by the policy (e.g. deadline cannot be met)


MODES = ("exclusive", "packed", "sliced")


@dataclass(frozen=True, slots=True)
class Allocation:
    """Where a job runs: GPU ids, a parallelism plan the engine passes through, and a sharing mode.

    ``mode`` is "exclusive" (the GPUs are the job's alone), "packed" (it runs at
    the same time as the other packed jobs on its GPUs, at the perf model's
    interference factor, their memory summed against the GPU's) or "sliced"
    (it takes turns with the other sliced jobs on its GPUs by a quantum, each
    turn paying a suspend and a resume).  A GPU never mixes modes.
    """

    gpus: tuple[int, ...]
    plan: object | None = None
    mode: str = "exclusive"

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"allocation mode {self.mode!r} is not one of {MODES}")

    @staticmethod
    def of(gpus: Iterable[int], plan=None, shared: bool = False, mode: str | None = None) -> "Allocation":
        """``shared=True`` is shorthand for ``mode="packed"``."""
        return Allocation(tuple(sorted(map(int, gpus))), plan,
                          mode if mode is not None else ("packed" if shared else "exclusive"))

    @property
    def shared(self) -> bool:
        """True when the job may share its GPUs (packed or sliced)."""
        return self.mode != "exclusive"

    @property
    def num_gpus(self) -> int:
        return len(self.gpus)


# the slots' setters: ``exclusive_allocation`` builds the most common allocation without the frozen
# ``__init__`` (three ``object.__setattr__`` calls by name) and the mode check a constant passes
_set_gpus, _set_plan, _set_mode = (getattr(Allocation, name).__set__ for name in ("gpus", "plan", "mode"))


def exclusive_allocation(gpus: tuple[int, ...]) -> Allocation:
    """``Allocation(gpus)`` for a sorted tuple of int ids, at half the cost: FCFS starts a million
    jobs in the scale benchmark with one each."""
    alloc = object.__new__(Allocation)
    _set_gpus(alloc, gpus)
    _set_plan(alloc, None)
    _set_mode(alloc, "exclusive")
    return alloc


@dataclass(slots=True, eq=False)
class JobState:
    """What the engine knows about a job; policies read it, engines write it."""

    spec: JobSpec
    total_iterations: int
    done_iterations: float = 0.0  # as of ``updated_at``; use ClusterView.progress for "now"
    status: JobStatus = JobStatus.PENDING
    allocation: Allocation | None = None
    rate: float = 0.0  # iterations per second at the current allocation (0 while paying overhead)
    updated_at: float = 0.0
    ready_at: float = 0.0  # start/restore overhead ends here; no progress before
    first_start: float | None = None
    finish_time: float | None = None
    queued_since: float = 0.0  # last time it entered the queue
    queued_time: float = 0.0  # total time spent waiting (excluding the current wait)
    run_time: float = 0.0  # wall time holding GPUs
    gpu_seconds: float = 0.0  # attained service: sum over time of GPUs held (a shared GPU counts 1/holders)
    gpu_share: float = 0.0  # GPUs the current allocation holds, a shared GPU counting 1/holders (set with the rate)
    comm_time: float = 0.0  # exposed communication time accumulated
    restarts: int = 0  # preemptions followed by a later start
    migrations: int = 0
    resizes: int = 0
    policy_data: dict = field(default_factory=dict)  # the policy's per-job scratch state: the one place for it

    @property
    def job_id(self) -> str:
        return self.spec.job_id

    @property
    def remaining(self) -> float:
        return self.total_iterations - self.done_iterations

    @property
    def is_active(self) -> bool:
        return self.status in (JobStatus.PENDING, JobStatus.RUNNING, JobStatus.SUSPENDED)


@dataclass(slots=True)
class Decision:
    """What a policy wants changed.  Jobs it does not mention keep what they have.

    ``allocate`` starts queued jobs and moves or resizes running ones (the
    engine tells which by diffing with the present allocation and charges the
    matching cost); ``preempt`` sends running jobs back to the queue;
    ``drop`` removes jobs for good with a reason; ``wakeup`` asks for another
    call at that time even if nothing else happens.
    """

    allocate: dict[str, Allocation] = field(default_factory=dict)
    preempt: list[str] = field(default_factory=list)
    drop: dict[str, str] = field(default_factory=dict)
    wakeup: float | None = None

    def __bool__(self) -> bool:
        return bool(self.allocate or self.preempt or self.drop)


class ClusterView:
    """Read-only window on an engine's state, given to ``JobPolicy.schedule``."""

    def __init__(self, cluster: Cluster, freemap: FreeMap, jobs: dict[str, JobState],
                 perf: "PerfModel", now: float = 0.0, *, queue_fn=None,
                 running: dict[str, JobState] | None = None):
        self.cluster = cluster
        self.free = freemap
        self.jobs = jobs  # every job the engine knows that is still active
        self.perf = perf
        self.now = now
        # engines that keep their own ordered queue / running set pass them in (speed)
        self._queue_fn = queue_fn
        self._running = running
        # True where a running exclusive job's rate, ready time and allocation change only when
        # it is placed or stopped (no contention model, fluid progress): a policy may then keep
        # what it derived from them without looking again (the engine sets it)
        self.prices_alone = False

    def queued(self) -> Iterable[JobState]:
        """Pending and suspended jobs in submission order (ties by job id).

        Iterate it within ``schedule``; it may be a live view of the engine's
        queue (no copy), so keep ``list(view.queued())`` if you need it later.
        """
        if self._queue_fn is not None:
            return self._queue_fn()
        q = [j for j in self.jobs.values()
             if j.status in (JobStatus.PENDING, JobStatus.SUSPENDED)]
        q.sort(key=lambda j: (j.spec.submit_time, j.spec.job_id))
        return q

    def queued_count(self) -> int:
        """How many jobs ``queued()`` holds, without ordering or copying them."""
        running = len(self._running) if self._running is not None else len(self.running())
        return len(self.jobs) - running  # every active job is queued or running

    def running(self) -> list[JobState]:
        if self._running is not None:
            return list(self._running.values())
        return [j for j in self.jobs.values() if j.status == JobStatus.RUNNING]

    def running_among(self, ids: set[str] | frozenset[str]) -> list[str]:
        """The ids of the running jobs that are in ``ids``, in ``running()``'s order (without
        a Python step per running job where the engine keeps its running set)."""
        if self._running is not None:
            return list(filter(ids.__contains__, self._running))
        return [j.job_id for j in self.running() if j.job_id in ids]

    @staticmethod
    def progress_of(job: JobState, now: float) -> float:
        if job.status != JobStatus.RUNNING:
            return job.done_iterations
        start = max(job.updated_at, job.ready_at)
        return min(float(job.total_iterations),
                   job.done_iterations + job.rate * max(0.0, now - start))

    def progress(self, job: JobState) -> float:
        """Iterations done as of ``now`` (the engine updates lazily)."""
        return self.progress_of(job, self.now)

    def remaining_time(self, job: JobState) -> float:
        """Seconds until a running job finishes at its present rate (inf if it has none)."""
        if job.status != JobStatus.RUNNING or job.rate <= 0:
            return float("inf")
        return max(0.0, job.ready_at - self.now) + (job.total_iterations - self.progress(job)) / job.rate

    def free_gpus(self, type_id: int | None = None) -> np.ndarray:
        """Ids of free GPUs, optionally of one type (O(GPUs); prefer the counts in ``free``)."""
        mask = self.free.occupancy == 0
        if type_id is not None:
            mask &= self.cluster.gpu_type_idx == type_id
        return np.flatnonzero(mask)


class JobPolicy(ABC):
    """A job scheduler.  Subclasses set ``name`` and implement ``schedule``.

    ``period`` is the scheduling round in seconds (None: called only on
    events).  ``schedule_on_events`` decides whether arrivals/completions
    trigger a call between rounds.  ``only_starts_queued`` says the policy's
    decisions only ever start queued jobs on free GPUs (no preemption, move,
    resize, drop or wake-up, and nothing learnt from the call itself), so an
    event call with an empty queue or no free GPU would change nothing: the
    simulator leaves those calls out.
    """

    name: str = "?"
    period: float | None = None
    schedule_on_events: bool = True
    only_starts_queued: bool = False

    def reset(self) -> None:
        """Forget all state before a new run (policies hold timers, queues, history)."""

    def on_submit(self, job: JobState, now: float) -> None:
        """A job arrived (before the next ``schedule`` call)."""

    def on_finish(self, job: JobState, now: float) -> None:
        """A job finished or was dropped."""

    def rounds_idle(self) -> bool:
        """True when every round until the next arrival or finish would repeat the last one.

        Asked by the simulator after a round's call.  A round-based policy that can tell
        (Gavel, once its allocation is stable) lets the simulator skip those rounds instead of
        stepping through each: their count arrives through ``skip_rounds`` before the next call.
        """
        return False

    def skip_rounds(self, k: int) -> None:
        """The simulator skipped ``k`` rounds that ``rounds_idle`` said would repeat the last one."""

    @abstractmethod
    def schedule(self, view: ClusterView, now: float) -> Decision:
        ...

    def overhead(self, cluster: Cluster, job: JobState, old: Allocation | None, new: Allocation,
                 kind: str) -> float | None:
        """Seconds before ``job`` makes progress on ``new``; None takes the engine's default.

        ``kind`` is "start", "resume", "migrate", "resize", "replan" (same GPUs,
        new parallelism plan), "pack", "unpack", "slice-in" or "slice-out" (same
        GPUs, new sharing mode).  Everything the cost depends on comes in as an
        argument, so a policy keeps no engine state for it; what it remembers
        per job goes in ``job.policy_data``.  Policies whose papers charge their
        own costs (Crius's re-planning time) override this.
        """
        return None

    def describe(self) -> dict:
        """Parameters that shape this policy's results (written beside every result).

        Deterministic: measurements of the policy's own speed go in ``timings``.
        """
        return {"policy": self.name, "period_s": self.period}

    def timings(self) -> dict:
        """Measurements of the policy's own running time (differ run to run; kept apart)."""
        return {}
