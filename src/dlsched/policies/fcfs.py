"""First come, first served: strict, and with EASY backfilling.

Strict FCFS starts queued jobs in submission order and stops at the first
one that does not fit, so a big job at the head holds everyone back.

``fcfs-backfill`` is EASY backfilling (Lifka, "The ANL/IBM SP scheduling
system", 1995): the head job gets a reservation at the earliest time enough
GPUs of its type will be free (from running jobs' remaining times at their
present rates), and a later job may jump ahead only if it does not delay
that reservation: it ends before the reservation, or it uses GPUs the head
will not need.  Placement is consolidated (fewest nodes, then racks).
"""

from __future__ import annotations

import bisect
import heapq
import operator

from dlsched.cluster.placement import pick_gpu_ids
from dlsched.policies.base import ClusterView, Decision, JobPolicy, JobState, exclusive_allocation
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register


def _type_id(view: ClusterView, job: JobState) -> int | None:
    t = job.spec.gpu_type
    if not t:
        return None
    cache = job.policy_data
    if "type_id" not in cache:
        cache["type_id"] = view.cluster.type_id(t)
    return cache["type_id"]


def _left(view: ClusterView, t: int | None, pending: list[list[int]]) -> int:
    """Free GPUs of type ``t`` (None: any) once ``pending`` placements are made."""
    taken = [g for gpus in pending for g in gpus]
    if t is None:
        return view.free.total_free - len(taken)
    of_gpu = view.cluster.derived("fcfs.gpu_type", lambda: view.cluster.gpu_type_idx.tolist())
    return view.free.free_of_type(t) - sum(1 for g in taken if of_gpu[g] == t)


_KEY = operator.attrgetter("rate", "ready_at", "allocation")


class EndIndex:
    """One GPU type's running jobs that backfilling started, by predicted end, kept between calls.

    A job's end is taken as ``now + remaining_time`` at the first reservation after its rate or
    start changed, and kept while they stay (``policy_data["end"]``).  Which jobs changed is
    found by comparing every job's (rate, ready_at, allocation) with the last sync's in one
    C-level list comparison, so a sync costs Python work only for the jobs that changed."""

    def __init__(self):
        self.sorted: list[tuple[float, int, str]] = []  # (end, GPUs, id)
        self.entry: dict[str, tuple[float, int, str]] = {}
        self.jobs: dict[str, JobState] = {}  # jobs with an entry, in the order of ``keys``
        self.keys: dict[str, tuple] = {}  # their ``_KEY`` when their entry was made
        self.pending: dict[str, JobState] = {}  # started since, not applied yet at the last sync

    def add(self, job: JobState) -> None:
        self.pending[job.job_id] = job

    def remove(self, jid: str) -> None:
        if self.pending.pop(jid, None) is not None:
            return
        e = self.entry.pop(jid, None)
        if e is not None:
            del self.sorted[bisect.bisect_left(self.sorted, e)]
            del self.jobs[jid], self.keys[jid]

    @staticmethod
    def _end(view: ClusterView, j: JobState) -> tuple[float, int, str]:
        """(predicted end, GPUs, id); the end is fixed while the job's rate is."""
        key = (j.rate, j.ready_at)
        pd = j.policy_data
        cached = pd.get("end")
        if cached is None or cached[0] != key:
            cached = (key, view.now + view.remaining_time(j))
            pd["end"] = cached
        return cached[1], len(j.allocation.gpus), j.job_id

    def sync(self, view: ClusterView, fresh: list, estimate) -> list[tuple[float, int, str]]:
        """The sorted ends; jobs started in this very call (not applied yet) go to ``fresh``, estimated."""
        if self.pending:
            for jid, j in list(self.pending.items()):
                if j.allocation is None:
                    fresh.append((view.now + estimate(view, j), j.spec.num_gpus, jid))
                    continue
                del self.pending[jid]
                e = self._end(view, j)
                bisect.insort(self.sorted, e)
                self.entry[jid] = e
                self.jobs[jid] = j
                self.keys[jid] = _KEY(j)
        # only a contention model or measured rates change a running exclusive job's key: without
        # them (``prices_alone``) each job keeps its entry until it finishes, and nothing is compared
        if view.prices_alone:
            return self.sorted
        jobs = list(self.jobs.values())
        cur = list(map(_KEY, jobs))
        if cur != list(self.keys.values()):
            back = []
            for j, a, b in zip(jobs, cur, list(self.keys.values())):
                if a == b:
                    continue
                jid = j.job_id
                del self.sorted[bisect.bisect_left(self.sorted, self.entry[jid])]
                if j.allocation is None:  # off its GPUs again: estimated, as a job not applied yet
                    del self.entry[jid]
                    back.append(j)
                    continue
                e = self._end(view, j)
                bisect.insort(self.sorted, e)
                self.entry[jid] = e
                self.keys[jid] = a
            for j in reversed(back):
                self.pending[j.job_id] = j
                fresh.append((view.now + estimate(view, j), j.spec.num_gpus, j.job_id))
                del self.jobs[j.job_id], self.keys[j.job_id]
        return self.sorted


@register("fcfs")
class FCFS(ChargesReplanning, JobPolicy):
    name = "fcfs"
    summary = "first come, first served; stops at the first queued job that does not fit"
    paper = "-"
    options = (PolicyOption("window", int, 200, "queued jobs looked at past the first blocked one "
                            "(backfill only)", minimum=1), *COST_OPTIONS,
               PolicyOption("arena", bool, False, "the Crius authors' FCFS: a blocked job holds back only "
                            "its GPU type; jobs run only at their tightest packing, most-free nodes first "
                            "(policies/arena_fcfs.py; strict FCFS only)"))
    backfill = False
    only_starts_queued = True  # both variants only start queued jobs: see JobPolicy

    def __init__(self, window: int = 200, costs: str = "derived", plan_s: float = PLAN_PROFILE_S,
                 arena: bool = False):
        # Backfilling looks at most this many queued jobs past the first blocked one, as
        # production backfill schedulers do (Slurm's bf_max_job_test), which bounds the cost
        # of one call on a long queue.
        self.window = window
        self.arena = arena and not self.backfill
        # a job started on its own shape still needs a plan for it: the one cost rule (replan_costs)
        self.set_costs(costs, plan_s)
        self.reset()

    def reset(self) -> None:
        self._running: dict[int | None, dict[str, JobState]] = {}  # GPU type -> jobs we started
        self._ends: dict[int | None, EndIndex] = {}  # the same jobs' predicted ends, sorted (backfilling)

    def on_finish(self, job: JobState, now: float) -> None:
        held = job.policy_data.get("held_type", -1)
        if held != -1:
            self._running.get(held, {}).pop(job.job_id, None)
            if held in self._ends:
                self._ends[held].remove(job.job_id)

    def schedule(self, view: ClusterView, now: float) -> Decision:
        decision = Decision()
        free = view.free
        if free.total_free == 0:
            return decision
        if self.arena:
            from dlsched.policies.arena_fcfs import schedule_by_type

            schedule_by_type(view, decision, _type_id, exclusive_allocation)
            return decision
        scratch = None  # copied only once something is placed
        # strict FCFS: placements not yet on a scratch map.  Most calls place one job and stop at
        # the next, which the free counts alone show does not fit: no copy is made for them
        pending: list[list[int]] = []
        reservations: dict[int | None, tuple[float, int]] = {}  # type -> (shadow time, spare GPUs)
        looked = 0
        for job in view.queued():
            if pending:
                if _left(view, _type_id(view, job), pending) < job.spec.num_gpus:
                    break  # strict FCFS stops at the first job that does not fit
                scratch = free.copy()
                for gpus in pending:
                    scratch.allocate(gpus)
                pending = []
            fm = scratch or free
            if fm.total_free == 0:
                break
            if reservations:
                looked += 1
                if looked > self.window:
                    break
                spec = job.spec
                t = _type_id(view, job) if spec.gpu_type else None
                n = spec.num_gpus
                if n > fm.free_of_type(t):
                    # most of a long queue's window does not fit the few free GPUs: a job of a
                    # type that holds a reservation already is passed over at once (the path
                    # below would only mark it blocked on GPUs that could never fit it)
                    if t in reservations:
                        continue
                    fits = False
                else:  # may it jump ahead?  It must delay no reservation on the GPUs it could take
                    est = job.policy_data.get("est_s")
                    end = view.now + (est if est is not None else self._estimate(view, job))
                    delays = False  # a reservation on GPUs it could take: it must end first or fit the spare
                    for rt, (shadow, spare) in reservations.items():
                        if (t is None or rt is None or rt == t) and end > shadow and n > spare:
                            delays = True
                            break
                    if delays:
                        continue
                    fits = True
            else:
                t = _type_id(view, job)
                n = job.spec.num_gpus
                fits = fm.free_of_type(t) >= n
            if fits and scratch is None and job.policy_data.get("blocked_at") == free.version:
                fits = False  # it did not fit on these very free GPUs at the last call
            gpus = pick_gpu_ids(fm, n, t) if fits else None
            if gpus is None and scratch is None:
                job.policy_data["blocked_at"] = free.version
            if gpus is None:  # blocked (with any type, free GPUs may be spread over types)
                if not self.backfill:
                    break
                if t not in reservations:
                    reservations[t] = self._reserve(view, job, t, fm)
                continue
            if scratch is None and not self.backfill:
                pending.append(gpus)
            else:
                if scratch is None:
                    scratch = free.copy()
                scratch.allocate(gpus)
            decision.allocate[job.job_id] = exclusive_allocation(tuple(sorted(gpus)))  # pick_gpu_ids gives ints
            if not self.backfill:
                continue  # the running set by type serves only backfilling's reservations
            held = t if t is not None else int(view.cluster.gpu_type_idx[gpus[0]])
            job.policy_data["held_type"] = held
            self._running.setdefault(held, {})[job.job_id] = job
            ends = self._ends.get(held)
            if ends is None:
                ends = self._ends[held] = EndIndex()
            ends.add(job)
            if reservations:
                self._consume(view, job, t, n, reservations)
        return decision

    # ---------------------------------------------------------------- EASY backfilling

    def _reserve(self, view: ClusterView, head: JobState, t: int | None, fm) -> tuple[float, int]:
        """When will the head fit (GPUs of its type freed by running jobs), and what is spare then?

        The running jobs' (end, GPUs) are kept sorted per type between calls (``EndIndex``): an
        end is fixed while the job's rate is, so only jobs whose rate changed are re-sorted, and
        the walk stops where the head fits instead of sorting every running job at every call."""
        types = list(self._running) if t is None else [t]
        lists, fresh = [], []
        for ty in types:
            if self._running.get(ty):
                lists.append(self._ends[ty].sync(view, fresh, self._estimate))
        if fresh:  # jobs started in this very call: not applied yet, estimated
            lists.append(sorted(fresh))
        avail = fm.free_of_type(t)
        need = head.spec.num_gpus
        for end, n, _ in (heapq.merge(*lists) if len(lists) > 1 else lists[0] if lists else ()):
            avail += n
            if avail >= need:
                return end, avail - need
        return float("inf"), 0

    def _consume(self, view: ClusterView, job: JobState, t: int | None, n: int, reservations) -> None:
        end = view.now + self._estimate(view, job)
        for rt, (shadow, spare) in list(reservations.items()):
            if (t is None or rt is None or rt == t) and end > shadow:
                reservations[rt] = (shadow, spare - n)  # it still holds these GPUs at the shadow time

    @staticmethod
    def _estimate(view: ClusterView, job: JobState) -> float:
        """Run time at the requested size, consolidated (the perf model's reference time)."""
        est = job.policy_data.get("est_s")
        if est is None:
            est = view.perf.reference_time(job.spec) * (job.total_iterations - job.done_iterations)
            job.policy_data["est_s"] = est
        return est

    def describe(self) -> dict:
        d = super().describe()
        if self.backfill:
            d["backfill_window"] = self.window
        if self.arena:
            d["arena"] = True
        return d


@register("fcfs-backfill")
class FCFSBackfill(FCFS):
    name = "fcfs-backfill"
    summary = "FCFS with EASY backfilling: later jobs jump ahead if they do not delay the head's reservation"
    paper = "Lifka, The ANL/IBM SP scheduling system, JSSPP 1995"
    backfill = True
    options = FCFS.options[:-1]  # the authors' FCFS (arena) is strict: no backfilling variant
