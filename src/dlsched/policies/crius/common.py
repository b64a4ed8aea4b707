"""Pieces shared by Crius and the baselines the Crius paper ran (Gavel, ElasticFlow-LS).

* ``ShapeTable``: a job's throughput on each (GPU type, GPU count) "shape",
  computed once per job and cached on the policy (Crius: the best estimated
  Cell over pipeline depths, section 5.1; baselines: the data-parallel-only
  plan, section 8.1 "we ... only allow them to schedule jobs with data
  profiled from data parallelism").
* ``replan_overhead``: the re-planning cost the authors' simulator charges
  (shared/seeds/README.md): 10 s per GPU, at most 40 s, for Crius's pruned
  Cell-guided search; 150 s per GPU, at most 600 s, for the full search the
  baselines do.  Resuming on the shape a job already has a plan for is free.
* ``apply_targets``: turns a virtual plan (job -> (type, count)) into one
  ``Decision``, picking GPU ids on a scratch copy of the free map.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Iterable

from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Cluster
from dlsched.errors import UnknownNameError
from dlsched.policies.base import Allocation, ClusterView, Decision, JobState

MAX_GPUS_PER_JOB = 16  # the authors' simulator caps a job at 16 GPUs


def job_cap(num_gpus: int) -> int:
    """The most GPUs a job may be given: the authors' 16, or its own request where it asks for more.
    Their traces never do; a 512-GPU job of a production mix (CRUX's) squeezed onto 16 GPUs would
    run 32 times as long, which no scheduler of such a cluster does."""
    return max(MAX_GPUS_PER_JOB, num_gpus)

CRIUS_REPLAN = (10.0, 40.0)  # seconds per GPU, cap (pruned, Cell-guided tuning)
FULL_REPLAN = (150.0, 600.0)  # seconds per GPU, cap (full-space search, baselines)

Shape = tuple[int, int]  # (GPU type index, GPU count)
_ALLOC = attrgetter("allocation")


def resolve_type(cluster: Cluster, name: str | None) -> int | None:
    """Type index for a trace's GPU name ("a100", "A100-40G", ...); None if absent or unknown."""
    if not name:
        return None
    try:
        return cluster.type_id(name)
    except (UnknownNameError, KeyError, ValueError):
        low = name.lower()
        for i, gt in enumerate(cluster.gpu_types):
            if gt.name.lower().startswith(low) or low.startswith(gt.name.lower()):
                return i
        return None


def queued_jobs(view: ClusterView) -> Iterable[JobState]:
    """Pending and suspended jobs in submission order: the one queue API, ``view.queued()``."""
    return view.queued()


def shape_of(cluster: Cluster, job: JobState) -> Shape | None:
    """(type, count) of a running job's allocation; cached per allocation object."""
    alloc = job.allocation
    if alloc is None:
        return None
    cached = job.policy_data.get("_shape")
    if cached is not None and cached[0] is alloc:
        return cached[1]
    shape = (int(cluster.gpu_type_idx[alloc.gpus[0]]), len(alloc.gpus))
    job.policy_data["_shape"] = (alloc, shape)
    return shape


class RunningShapes:
    """The engine's running jobs and their shapes, kept across policy calls.

    A running job's allocation object changes whenever the engine moves, resizes or restarts
    it, so comparing (job, allocation identity) pairs with the last call's finds every change
    in C-level set operations instead of re-deriving every shape in Python on every call
    (with 64,000 Crius jobs that re-derivation was a third of the run).  The last call's
    allocations stay referenced here, so no id can be reused by a new allocation while the
    pairs are compared.
    """

    def __init__(self):
        self.alloc: dict[str, Allocation] = {}
        self.shape: dict[str, Shape] = {}
        self._objs: list[Allocation] = []  # the last call's allocations, in the engine's order (kept alive)
        self._ids: list[int] | None = []  # and their ids (None: unknown, see ``update_some``)
        self._idset: set[int] = set()  # the same ids as a set
        self._jid_of: dict[int, str] = {}  # id of each of those allocations -> its job's id

    def update(self, cluster: Cluster, running: list[JobState]) -> tuple[dict[str, JobState], set[str]]:
        """Bring the record to ``running``; returns (jobs new or changed, ids of jobs that left)."""
        objs = list(map(_ALLOC, running))
        ids = list(map(id, objs))
        if ids == self._ids:  # the same allocation objects (the old ones are alive: ids not reused)
            return {}, set()
        idset = set(ids)
        changed: dict[str, JobState] = {}
        if len(idset) != len(ids):  # two jobs holding one allocation object: every job is news
            changed = {j.spec.job_id: j for j in running}
            gone = self.shape.keys() - changed.keys()
            objs, ids, idset, jid_of = [], [], set(), {}  # and again next call
        elif not self._ids:  # first call, or after the case above: everything is news
            changed = {j.spec.job_id: j for j in running}
            gone = self.shape.keys() - changed.keys()
            jid_of = {i: jid for i, jid in zip(ids, changed)}
        else:
            # set differences touch every id once in C; only the few changes are handled in Python
            jid_of = self._jid_of
            for i in idset - self._idset:
                j = running[ids.index(i)]
                changed[j.spec.job_id] = j
                jid_of[i] = j.spec.job_id
            gone = {jid_of.pop(i) for i in self._idset - idset} - changed.keys()
        for jid in gone:
            del self.alloc[jid]
            del self.shape[jid]
        type_idx = cluster.gpu_type_idx
        for jid, j in changed.items():
            a = j.allocation
            self.alloc[jid] = a
            self.shape[jid] = (int(type_idx[a.gpus[0]]), len(a.gpus))
        self._objs, self._ids, self._idset, self._jid_of = objs, ids, idset, jid_of
        return changed, gone

    def update_some(self, cluster: Cluster, jobs: dict[str, JobState], maybe: Iterable[str],
                    n_running: int) -> tuple[dict[str, JobState], set[str]] | None:
        """``update`` from the jobs that may have changed (``maybe``: those the policy's last
        decision started, moved, stopped or dropped, and those that finished since), without
        looking at the others: the result ``update`` would give, or None when the counts show
        something else changed too (the caller then calls ``update``).

        Only a decision starts a job, so the engine's running jobs are the record's plus those
        ``maybe`` names; once ``maybe`` is applied, a record as large as the engine's running
        set (``n_running``) is that set, and each job outside ``maybe`` keeps the allocation
        object it had (only a placement makes a new one).  Each call of ``update`` compares
        every running job's allocation, which at a long backlog (the cluster full for weeks)
        was most of a call."""
        alloc, shape = self.alloc, self.shape
        changed: dict[str, JobState] = {}
        gone: set[str] = set()
        for jid in maybe:
            j = jobs.get(jid)
            a = j.allocation if j is not None else None
            old = alloc.get(jid)
            if a is None:
                if old is not None:
                    gone.add(jid)
            elif a is not old:
                changed[jid] = j
        size = len(shape) - len(gone) + sum(1 for jid in changed if jid not in shape)
        if size != n_running:
            return None
        for jid in gone:
            del alloc[jid]
            del shape[jid]
        type_idx = cluster.gpu_type_idx
        for jid, j in changed.items():
            a = j.allocation
            alloc[jid] = a
            shape[jid] = (int(type_idx[a.gpus[0]]), len(a.gpus))
        if changed or gone:
            # the id lists no longer match the record: the next ``update`` starts afresh (None
            # never equals a list, so an empty running set is not taken for an unchanged one)
            self._objs, self._ids, self._idset, self._jid_of = [], None, set(), {}
        return changed, gone


def power_counts(n: int, lo: int = 1, hi: int = MAX_GPUS_PER_JOB) -> list[int]:
    """Powers of two in [lo, hi] (Crius, Alpa and ElasticFlow all scale by doubling)."""
    out, k = [], 1
    while k <= hi:
        if k >= lo:
            out.append(k)
        k *= 2
    return out


def replan_overhead(cost: tuple[float, float], job: JobState, new: Allocation, cluster: Cluster,
                    kind: str) -> float:
    """Seconds a job waits to re-plan its parallelism for ``new`` (0 if its shape is unchanged)."""
    shape = (int(cluster.gpu_type_idx[new.gpus[0]]), len(new.gpus))
    last = job.policy_data.get("_planned")
    job.policy_data["_planned"] = shape
    if kind != "start" and last == shape:
        return 0.0  # checkpoint-resume on a shape with a known plan: charged 0 s by the authors
    per_gpu, cap = cost
    return min(per_gpu * len(new.gpus), cap)


@dataclass(slots=True)
class ShapeTable:
    """A job's throughput (samples/s) per shape, and the same normalised to its best shape."""

    thr: dict[Shape, float]  # only feasible shapes
    ref: float  # normaliser: best throughput over the table (so values are in (0, 1])
    moves: dict = field(default_factory=dict)  # Crius search's cache: shape -> ranked release moves
    _order: list | None = None  # shapes by throughput, best first (ties by shape); built once

    def norm(self, shape: Shape) -> float:
        t = self.thr.get(shape)
        return 0.0 if t is None else t / self.ref

    def by_throughput(self) -> list[tuple[Shape, int, int, float]]:
        """(shape, type, count, normalised throughput) by throughput, best first, ties by shape
        (asked on every Crius try of a job, so built once)."""
        if self._order is None:
            thr = self.thr
            self._order = [(s, s[0], s[1], self.norm(s)) for s in sorted(thr, key=lambda s: (-thr[s], s))]
        return self._order

    def shapes_of_type(self, t: int) -> list[int]:
        return sorted(n for (tt, n) in self.thr if tt == t)

    @staticmethod
    def build(thr: dict[Shape, float]) -> "ShapeTable":
        thr = {k: v for k, v in thr.items() if v is not None and v > 0 and math.isfinite(v)}
        return ShapeTable(thr, max(thr.values()) if thr else 1.0)


def apply_targets(view: ClusterView, targets: dict[str, Shape], jobs: dict[str, JobState],
                  preempt: list[str], drop: dict[str, str] | None = None) -> Decision:
    """One ``Decision`` realising ``targets`` for the jobs that changed.

    Running jobs whose shape is unchanged keep their GPUs (no migration for
    nothing); changed or preempted jobs give theirs back on a scratch copy of
    the free map first, then new shapes are placed biggest first so large
    jobs get the most consolidated holes.
    """
    cluster = view.cluster
    d = Decision(drop=dict(drop or {}))
    changed: list[tuple[str, Shape]] = []
    release: list[int] = []
    for jid, shape in targets.items():
        job = jobs[jid]
        cur = shape_of(cluster, job)
        if cur == shape:
            continue
        changed.append((jid, shape))
        if job.allocation is not None:
            release.extend(job.allocation.gpus)
    for jid in preempt:
        alloc = jobs[jid].allocation
        if alloc is not None:
            release.extend(alloc.gpus)
            d.preempt.append(jid)
    if not changed:
        return d
    if not release and len(changed) == 1:
        # one job onto GPUs nobody gives back: pick on the engine's map itself (placement only
        # reads it), not on a copy of every GPU's state
        jid, (t, n) = changed[0]
        gpus = pick_gpus(view.free, n, t)
        if gpus is not None:
            d.allocate[jid] = Allocation.of(gpus)
        return d
    scratch = view.free.copy()
    if release:
        scratch.release(release)
    changed.sort(key=lambda x: (-x[1][1], jobs[x[0]].spec.submit_time, x[0]))
    for jid, (t, n) in changed:
        gpus = pick_gpus(scratch, n, t)
        if gpus is None:  # counts said it fits; never expected, but stay safe: keep the old state
            continue
        scratch.allocate(gpus)
        d.allocate[jid] = Allocation.of(gpus)
    return d


def fit_requests(jobs, cluster: Cluster, estimator) -> tuple[list, list]:
    """Make every request runnable at the adaptive optimum on its requested type.

    The arena trace draws GPU counts at random (Crius section 8.1), so a few
    requests cannot hold their model (e.g. MoE-10B on 4x A100-40G).  A user
    would have asked for more: ``dlsched.workload.fitting`` doubles the count
    (up to 16) until the optimum fits on the requested type (any type when
    unpinned).  Jobs that fit nowhere within 16 GPUs are returned separately
    and left out, since FCFS-like baselines would hold them forever.
    Returns (kept, removed).
    """
    from dlsched.workload.fitting import fit_requests as grow_to_fit
    from dlsched.workload.models import get_model

    answers: dict[tuple, bool] = {}  # a trace repeats a few (model, batch, type, count) requests

    def runs(spec, n: int) -> bool:
        key = (spec.model, spec.params, spec.batch_size, spec.gpu_type, n)
        found = answers.get(key)
        if found is None:
            t = resolve_type(cluster, spec.gpu_type)
            names = [cluster.gpu_types[t].name] if t is not None else [g.name for g in cluster.gpu_types]
            model = get_model(spec.model, spec.params)
            found = answers[key] = any(estimator.fits(model, spec.batch_size, nm, n) for nm in names)
        return found

    fit = grow_to_fit(jobs, runs, grow=True, cap=MAX_GPUS_PER_JOB)
    return fit.jobs, [b.job for b in fit.bad]
