"""Crius: Cell-based scheduling of large models on heterogeneous GPUs (Algorithm 1).

Xue et al., "A Codesign of Scheduling and Parallelization for Large Model
Training in Heterogeneous Clusters" (shared/seeds/000_*.txt), section 6.

* Cells (section 6.1 "Initializing Cells"): for a job asking N_G GPUs,
  counts N_G/2, N_G, 2N_G (capped at 16 GPUs, the authors' limit, or N_G above it) on every
  GPU type, each with log2(n)+1 pipeline depths; a shape's value is its best
  *estimated* Cell (``CellEstimator.best_cell``), computed once per job and
  cached.  Jobs then run at the full-space optimum (the perf model's job).
* Triggers: every arrival and departure (Algorithm 1's two entry points;
  the engine batches those of one timestamp into one call) and a 5-minute
  round (section 7: "schedules jobs with the interval of 5 minutes";
  ``round_s``; ``on_events=False`` batches everything into rounds).  In a
  call: pending jobs first (SchedDeparture, lines 9-13), then the new
  arrivals (SchedArrival, lines 2-8), then extra scheduling on idle GPUs
  (line 12) when nobody is left pending.
* CellBasedSched (lines 14-20): ScaleResource explores choices that scale
  running jobs down or move them to another GPU type (at most ``depth``
  moves, default 3; see ``crius.search``), BestPerf picks the choice with
  the highest estimated cluster throughput, and the choice is applied to a
  *virtual* cluster (free counts per type).  One ``Decision`` is returned
  at the end (FinalizeAlloc).
* Opportunistic execution: while the oldest pending job is blocked, later
  jobs may start on idle GPUs as "opportunistic"; once the blocked job's
  minimum requirement fits in idle + opportunistic GPUs, opportunistic jobs
  are suspended to launch it.

Cluster throughput is the sum of each job's throughput normalised by its
best shape (simplification, also in docs/crius.md): raw samples/s are not
comparable across models (a Wide-ResNet sample costs far more than a BERT
one), so summing them would starve expensive models.

Variants: ``crius-ddl`` (deadline-aware, section 8.5), ``crius-na`` (no
GPU-count scaling) and ``crius-nh`` (no GPU-type scaling), section 8.6.
"""

from __future__ import annotations

import itertools
import time
from statistics import median

from dlsched.core.feasible import shape_time
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.base import ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.policies.crius.common import (job_cap, RunningShapes, Shape, ShapeTable,
                                           apply_targets, resolve_type, shape_of)
from dlsched.policies.crius.search import (GrowIndex, ReleaseIndex, VirtualCluster, best_grow, best_release,
                                          cached_release)
from dlsched.policies.options import PolicyOption
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, PROFILE_OPTION, ChargesReplanning
from dlsched.policies.registry import register
from dlsched.workload.models import get_model


_QUEUED = (JobStatus.PENDING, JobStatus.SUSPENDED)


def crius_counts(n_g: int, adaptive: bool = True) -> list[int]:
    """N_G/2, N_G, 2N_G within [1, max(16, N_G)] (section 6.1); only N_G without adaptivity scaling."""
    cap = job_cap(n_g)
    if not adaptive:
        return [min(n_g, cap)]
    out = sorted({max(1, n_g // 2), n_g, min(2 * n_g, cap)})
    return [n for n in out if n <= cap]


@register("crius")
class Crius(ChargesReplanning, JobPolicy):
    name = "crius"
    summary = "Cell-based scheduling with adaptive parallelism on heterogeneous GPUs (Algorithm 1)"
    paper = "Xue et al., A Codesign of Scheduling and Parallelization for Large Model Training in Heterogeneous Clusters"
    options = (
        PolicyOption("round_s", float, 300.0, "scheduling round in seconds (section 7: 5 minutes)", positive=True),
        PolicyOption("depth", int, 3, "ScaleResource search depth: running jobs moved per choice (section 8.4)",
                     minimum=0),
        PolicyOption("beam", int, 4, "choices kept per search level", minimum=1),
        PolicyOption("window", int, 32, "pending jobs re-tried per round past the head", minimum=1),
        PolicyOption("move_penalty", float, 0.02, "throughput share a move must win back", minimum=0.0),
        PolicyOption("grow_min_gain", float, 0.05, "least gain for growing a running job on idle GPUs",
                     minimum=0.0),
        PolicyOption("on_events", bool, True, "schedule on arrivals and departures too, not only in rounds"),
        PolicyOption("crowded_per_gpu", bool, True, "while jobs wait, pick shapes by throughput per GPU"),
        PolicyOption("fewest_moves", bool, False, "free GPUs with the fewest moves that suffice"),
        *COST_OPTIONS, PROFILE_OPTION,
    )
    replan_search = "cell"  # Cell-guided tuning (section 5.2) under the one cost rule
    adaptive = True  # GPU-count scaling (off in Crius-NA)
    dp_only = False  # plan and estimate data-parallel only, no Cells (the Cells ablation, crius-dp)
    heterogeneous = True  # GPU-type scaling (off in Crius-NH)
    deadline_aware = False
    fast = True  # False: best_grow scans every running job (the reference GrowIndex is tested against)

    def __init__(self, round_s: float = 300.0, depth: int = 3, beam: int = 4, window: int = 32,
                 move_penalty: float = 0.02, grow_min_gain: float = 0.05, on_events: bool = True,
                 crowded_per_gpu: bool = True, fewest_moves: bool = False, costs: str = "derived",
                 plan_s: float = PLAN_PROFILE_S, profile_cells: bool = True):
        # round_s: section 7's 5-minute interval.  depth: section 8.4's setting.  window: pending
        # jobs re-tried per round past the head (bounds a round's cost under long queues, as the
        # lead's FCFS backfill window does).  move_penalty: throughput a move must win back, so a
        # restart (re-planning overhead, section 8.4 "avoid frequent rescheduling") is not free.
        self.period = round_s
        self.schedule_on_events = on_events
        self.depth = depth
        self.beam = beam
        self.window = window
        self.move_penalty = move_penalty
        self.grow_min_gain = grow_min_gain
        self.crowded_per_gpu = crowded_per_gpu
        self.fewest_moves = fewest_moves
        # re-planning: Cell-guided tuning (section 5.2) priced by our search model, or the authors' constants
        self.set_costs(costs, plan_s, profile_cells)
        self.reset()

    # ------------------------------------------------------------------ state

    def reset(self) -> None:
        self._tables: dict[str, ShapeTable] = {}  # per active job, built once
        self._est_time: dict[str, dict[Shape, float]] = {}  # estimated s/iteration per shape (DDL)
        self._cells_of: dict[tuple, tuple] = {}  # a request's Cells (``_init_cells``), shared by its jobs
        self._perf = None  # the engine's perf model, from the view of the current call
        self._new: list[str] = []  # arrivals since the last call
        self._opp: dict[str, float] = {}  # opportunistic job -> time it was launched
        self.overheads: list[float] = []  # seconds of policy work per arriving job
        self.calls = 0
        self.dropped_early = 0
        self._epoch = 0  # bumped whenever GPUs are released; pending failures are memoised per epoch
        # search indexes kept across calls, updated by every virtual move (crius.search)
        self._indexes = (GrowIndex(self._tables, self.grow_min_gain), ReleaseIndex(self._tables))
        self._running = RunningShapes()  # the engine's running jobs as of the last call
        self._virtual: set[str] = set()  # jobs the last call moved virtually
        self._changed_nothing = False  # the last call's decision was empty (``rounds_idle``)
        # jobs whose allocation may have changed since the last call: those its decision named,
        # and those that finished since (``_running_shapes``)
        self._maybe: set[str] = set()

    def _running_shapes(self, view: ClusterView) -> tuple[dict[str, Shape], set[str]]:
        """The running jobs' shapes (the policy's own record: copy it before changing it), and
        the jobs whose index entries may differ from them: changed, gone, or moved virtually
        by the last call (``RunningShapes``).  Found from the jobs the last decision named and
        those that finished since where the counts allow (``RunningShapes.update_some``), else
        by comparing every running job."""
        cluster, maybe = view.cluster, self._maybe
        self._maybe = set()
        got = self._running.update_some(cluster, view.jobs, maybe, len(view.jobs) - view.queued_count())
        changed, gone = got if got is not None else self._running.update(cluster, view.running())
        dirty = self._virtual
        self._virtual = set()
        dirty |= gone
        for jid, j in changed.items():
            dirty.add(jid)
            if jid not in self._tables:
                self._init_cells(cluster, j)
        return self._running.shape, dirty

    def on_submit(self, job: JobState, now: float) -> None:
        self._new.append(job.job_id)

    @staticmethod
    def _old_pending(view: ClusterView, new_ids: set[str]):
        """Queued jobs that are not new arrivals, in submission order, lazily (``view.queued()``
        is the engine's ordered queue, not a copy: no sort of every active job per call)."""
        return (j for j in view.queued() if j.job_id not in new_ids)

    @staticmethod
    def _new_order(new_ids: set[str], jobs: dict[str, JobState]) -> list[str]:
        live = [jid for jid in new_ids if jid in jobs and jobs[jid].status in _QUEUED]
        live.sort(key=lambda jid: (jobs[jid].spec.submit_time, jid))
        return live

    def on_finish(self, job: JobState, now: float) -> None:
        self._epoch += 1  # a departure frees GPUs (SchedDeparture re-tries the pending jobs)
        self._maybe.add(job.job_id)
        self._tables.pop(job.job_id, None)
        self._est_time.pop(job.job_id, None)
        self._opp.pop(job.job_id, None)

    # ------------------------------------------------------------------ Cells

    def _types_for(self, cluster, job: JobState) -> list[int]:
        req = resolve_type(cluster, job.spec.gpu_type)
        if self.heterogeneous or req is None:
            return list(range(len(cluster.gpu_types)))
        return [req]

    def _init_cells(self, cluster, job: JobState) -> ShapeTable:
        """Section 6.1: Cells at N_G/2, N_G, 2N_G on every type; best estimated Cell per shape."""
        spec = job.spec
        # every job of one model, batch, GPU count and type request gets the same Cells (the
        # estimator is pure), so they are looked up once per such request, not once per job
        key = (cluster, spec.model, spec.params, spec.batch_size, spec.num_gpus,
               None if self.heterogeneous else spec.gpu_type)
        found = self._cells_of.get(key)
        if found is None:
            found = self._cells_of[key] = self._estimate_cells(cluster, job)
        thr, times, n_cells = found
        tab = ShapeTable.build(thr)
        # Cells profiled for this job on its slowest-to-profile type (section 8.2), charged at its
        # first start by the cost rule
        job.policy_data["_cells"] = n_cells
        job.policy_data["_cells_key"] = key  # jobs of one key have equal tables (``_cell_based_sched``)
        self._tables[job.job_id] = tab
        self._est_time[job.job_id] = dict(times)
        return tab

    def _estimate_cells(self, cluster, job: JobState) -> tuple[dict[Shape, float], dict[Shape, float], int]:
        """(throughput and iteration time per shape, Cells profiled) of a job's request."""
        est = shared_estimator(cluster)
        perf = self._perf
        spec = job.spec
        model = get_model(spec.model, spec.params)
        thr: dict[Shape, float] = {}
        times: dict[Shape, float] = {}
        for t in self._types_for(cluster, job):
            name = cluster.gpu_types[t].name
            for n in crius_counts(spec.num_gpus, self.adaptive):
                if n > int(cluster.type_gpus[t]):
                    continue
                cell = (est.dp_only if self.dp_only else est.best_cell)(model, spec.batch_size, name, n)
                if perf is None:  # no engine to ask (a policy used on its own): the Cells decide
                    if cell is not None:
                        thr[(t, n)], times[(t, n)] = cell.throughput, cell.iter_time
                    continue
                # the engine's predicate decides where the job can run, so Crius never refuses a job
                # another policy runs, nor chooses a shape the engine refuses
                ran = shape_time(perf, cluster, spec, t, n)
                if ran is None:
                    continue
                if cell is not None:
                    thr[(t, n)], times[(t, n)] = cell.throughput, cell.iter_time
                else:
                    # no Cell plan (e.g. a batch too small to split into a pipeline's micro-batches)
                    # but the job runs there data-parallel: profiled as it runs, as section 8.2
                    # profiles Cells on the GPUs
                    thr[(t, n)], times[(t, n)] = spec.batch_size / ran, ran
        # the GPU types are profiled in parallel (section 8.2), so the job waits for the type with
        # the most Cells, not for all of them one after another
        per_type: dict[int, int] = {}
        for t, n in thr:
            k = 1 if self.dp_only else len(est.cells(model, spec.batch_size, cluster.gpu_types[t].name, n))
            per_type[t] = per_type.get(t, 0) + k
        n_cells = max(per_type.values(), default=0)
        return thr, times, n_cells

    def _table(self, cluster, job: JobState) -> ShapeTable:
        tab = self._tables.get(job.job_id)
        return tab if tab is not None else self._init_cells(cluster, job)

    # ------------------------------------------------------------------ deadline hooks (DDL)

    def _allowed(self, view: ClusterView, now: float):
        """Predicate on (job id, shape) a move or placement must satisfy; None = anything goes."""
        return None

    def _drop_reason(self, view: ClusterView, job: JobState, now: float) -> str | None:
        if not self._table(view.cluster, job).thr:
            # the engine cannot run it on any type and count Crius may choose: it can never run
            return "cannot run on any candidate shape (out of memory, or no plan, on every one)"
        return None

    # ------------------------------------------------------------------ Algorithm 1

    def schedule(self, view: ClusterView, now: float) -> Decision:
        cluster = view.cluster
        self._perf = view.perf  # the engine's perf model: its feasibility is the one Crius uses
        self.calls += 1
        jobs = view.jobs
        indexes = self._indexes if self.fast else ()
        if self.fast:
            shapes, dirty = self._running_shapes(view)
            vc = VirtualCluster(view.free.type_free.tolist(), shapes, indexes, borrowed=True)
            for index in indexes:
                index.sync_some(vc.shapes, dirty)
        else:
            self._maybe = set()
            running = view.running()
            vc = VirtualCluster([int(x) for x in view.free.type_free],
                                {j.job_id: shape_of(cluster, j) for j in running})
            for j in running:
                if j.job_id not in self._tables:
                    self._init_cells(cluster, j)
        grow = indexes[0] if indexes else None
        allowed = self._allowed(view, now)
        drop: dict[str, str] = {}
        preempt: list[str] = []
        touched: set[str] = set()  # jobs whose shape this call already decided (no ping-pong)
        new_ids = set(self._new)
        self._new.clear()

        # arrivals straight from the ids (in submission order); the older pending jobs lazily from
        # the engine's ordered queue, since a call looks at no more than ``window`` of them past a block
        arrivals = [jobs[jid] for jid in self._new_order(new_ids, jobs)]
        old_pending = self._old_pending(view, new_ids)
        head = next(old_pending, None)
        if head is not None:
            old_pending = itertools.chain((head,), old_pending)

        # opportunistic jobs keep that mark only while an older job is still waiting
        oldest_wait = head.spec.submit_time if head is not None else None
        for jid in list(self._opp):
            if jid not in vc.shapes or oldest_wait is None or jobs[jid].spec.submit_time < oldest_wait:
                self._opp.pop(jid, None)

        blocked_head = False
        # SchedDeparture (lines 9-10): resume pending jobs in submission order
        for i, job in enumerate(old_pending):
            if i >= self.window and blocked_head:
                break
            if job.policy_data.get("crius_failed") == self._epoch:
                blocked_head = True  # nothing was released since it last failed: it would fail again
                continue
            reason = self._drop_reason(view, job, now)
            if reason:
                drop[job.job_id] = reason
                continue
            ok = self._cell_based_sched(cluster, vc, job, touched, allowed, crowded=True)
            if not ok and not blocked_head:
                ok = self._preempt_opportunistic(cluster, vc, job, preempt, touched, allowed)
            if ok:
                touched.add(job.job_id)
                if blocked_head:
                    self._opp[job.job_id] = now
            else:
                blocked_head = True
                job.policy_data["crius_failed"] = self._epoch

        # SchedArrival (lines 2-8): initialise Cells, schedule, else pend
        for job in arrivals:
            t0 = time.perf_counter()
            self._init_cells(cluster, job)
            reason = self._drop_reason(view, job, now)
            if reason:
                drop[job.job_id] = reason
                self.dropped_early += 1
            else:
                crowded = blocked_head or len(arrivals) > 1
                ok = self._cell_based_sched(cluster, vc, job, touched, allowed, crowded=crowded)
                if ok:
                    touched.add(job.job_id)
                    if blocked_head:  # an older job still waits: this one runs opportunistically
                        self._opp[job.job_id] = now
                else:
                    blocked_head = True
                    job.policy_data["crius_failed"] = self._epoch
            self.overheads.append(time.perf_counter() - t0)

        # extra scheduling on released resources (line 12): only when nobody waits
        if not blocked_head and any(f > 0 for f in vc.free):
            for _ in range(self.depth):
                m = (grow.best(vc.free, touched, allowed) if grow is not None
                     else best_grow(vc, self._tables, touched, self.grow_min_gain, allowed))
                if m is None:
                    break
                vc.apply([m])
                touched.add(m.job_id)

        # FinalizeAlloc (lines 8 and 13): one decision for everything that changed
        # only jobs this call touched can have a new shape (the others keep theirs)
        targets = {jid: vc.shapes[jid] for jid in touched if jid in vc.shapes}
        decision = apply_targets(view, targets, jobs, preempt, drop)
        self._virtual = vc.touched  # their index entries follow this call's plan: re-checked next call
        vc.restore()  # the running shapes' record holds the engine's state again (``_running_shapes``)
        self._maybe.update(decision.allocate)
        self._maybe.update(decision.preempt)
        self._maybe.update(decision.drop)
        if decision.preempt or decision.drop or any(
                jobs[j].allocation is not None and len(a.gpus) < len(jobs[j].allocation.gpus)
                or shape_of(cluster, jobs[j]) not in (None, targets[j]) and targets[j][0] != shape_of(cluster, jobs[j])[0]
                for j, a in decision.allocate.items()):
            self._epoch += 1  # GPUs were given back: pending jobs that failed may now fit
        self._changed_nothing = not decision
        return decision

    def rounds_idle(self) -> bool:
        """A round that changed nothing repeats until something arrives or finishes: the next
        call would see the same running shapes, free GPUs and queue, and the jobs that failed
        stay failed until GPUs are released (``_epoch``).  Crius's choices do not depend on the
        clock; the deadline-aware variant's do (remaining time), so it is never idle."""
        return self._changed_nothing and not self.deadline_aware

    def _cell_based_sched(self, cluster, vc: VirtualCluster, job: JobState, touched: set[str],
                          allowed, crowded: bool = False) -> bool:
        """ScaleResource + BestPerf + VirtualAlloc for one queued job; False = pend it.

        ``crowded``: other jobs wait behind this one, so it may not take more than the N_G it
        asked for (2N_G Cells are for idle GPUs, which extra scheduling hands out).
        """
        tab = self._table(cluster, job)
        jid = job.job_id
        best = None  # (value, -moves, -gpus, shape, moves)
        skip = None  # touched | {jid}, built when a release search first needs it
        cap = job.spec.num_gpus if crowded else job_cap(job.spec.num_gpus)
        # With jobs waiting, GPUs are the binding constraint: the ones this job does not take go
        # to the jobs behind it, so cluster throughput is maximised by throughput *per GPU*.
        per_gpu = crowded and self.crowded_per_gpu
        # shapes by estimated throughput, best first: a shape that needs moves is worth at most
        # its own gain minus one move's penalty, so once that cannot beat the best found the
        # remaining shapes are skipped (bounds the search without changing its answer, except
        # for moves that would *raise* a moved job's throughput, which extra scheduling finds)
        free = vc.free
        # the virtual cluster lives for this call only, and ``allowed`` (the deadline test) is fixed
        # within a call, so its answers may be remembered on it as well
        memo = bool(vc.indexes)
        # a job whose request (hence table), cap and objective equal those of a job that found
        # nothing in this same virtual state finds nothing too: every test below reads only
        # those and the state (its own id is never a release candidate: it is not running), so
        # the jobs of a long queue behind a blocked head are passed over by request, not re-tried
        same = None
        if memo and allowed is None:
            state = (vc.gen, len(touched))
            if vc.job_fail_key != state:
                vc.job_fail_key, vc.job_fail = state, set()
            same = (job.policy_data.get("_cells_key"), cap, per_gpu)
            if same[0] is None:
                same = None
            elif same in vc.job_fail:
                return False
        # the releases already known to fail in this state (``cached_release``), read inline:
        # most tries of a job behind a blocked head end there
        failed = vc.fail if memo and vc.memo_key == (vc.gen, len(touched)) else {}
        for shape, t, n, gain in tab.by_throughput():
            if n > cap:  # before ``allowed``: both only filter, and this test is the cheap one
                continue
            if allowed is not None and not allowed(jid, shape):
                continue
            need = n - free[t]
            div = n if per_gpu else 1
            if need <= 0:
                cand = (gain / div, 0, -n, shape, ())
            else:
                if best is not None and (gain - self.move_penalty) / div <= best[0]:
                    continue
                if need >= failed.get(t, need + 1):
                    continue
                if skip is None:
                    skip = touched | {jid}
                if memo:
                    got = cached_release(vc, self._tables, t, need, self.depth, self.beam, skip,
                                         self.move_penalty, self.fewest_moves, len(touched), allowed)
                else:
                    got = best_release(vc, self._tables, t, need, self.depth, self.beam, skip,
                                       self.move_penalty, allowed, self.fewest_moves)
                if got is None:
                    continue
                value, moves = got
                cand = ((gain + value) / div, -len(moves), -n, shape, moves)
            if best is None or cand[:3] > best[:3]:
                best = cand
        # Admission first: a choice that starts the job is taken even if the moves it needs cost
        # the running jobs more normalised throughput than the job adds.  Under linear scaling a
        # pure throughput objective is indifferent between one job on 2N GPUs and two on N, and
        # then never shrinks anyone to start a waiting job; Crius downscales "when cluster
        # resources are insufficient" (section 6.1), so starting jobs takes precedence.
        if best is None:
            if same is not None:
                vc.job_fail.add(same)
            return False
        _, _, _, shape, moves = best
        if moves:
            vc.apply(moves)
            touched.update(m.job_id for m in moves)
        vc.place(jid, shape)
        return True

    def _preempt_opportunistic(self, cluster, vc: VirtualCluster, job: JobState, preempt: list[str],
                               touched: set[str], allowed) -> bool:
        """Suspend opportunistic jobs when the blocked head's minimum requirement then fits."""
        if not self._opp:
            return False
        tab = self._table(cluster, job)
        opp_on: dict[int, list[str]] = {}
        for jid in self._opp:
            s = vc.shapes.get(jid)
            if s is not None and jid not in touched:
                opp_on.setdefault(s[0], []).append(jid)
        best = None
        for (t, n) in sorted(tab.thr, key=lambda s: (s[1], -tab.norm(s))):  # minimum first
            if allowed is not None and not allowed(job.job_id, (t, n)):
                continue
            cands = sorted(opp_on.get(t, ()), key=lambda j: -self._opp[j])  # latest launched first
            if vc.free[t] + sum(vc.shapes[j][1] for j in cands) < n:
                continue
            victims, have = [], vc.free[t]
            for j in cands:
                if have >= n:
                    break
                victims.append(j)
                have += vc.shapes[j][1]
            best = ((t, n), victims)
            break
        if best is None:
            return False
        shape, victims = best
        for j in victims:
            vc.remove(j)
            self._opp.pop(j, None)
            preempt.append(j)
            touched.add(j)
        vc.place(job.job_id, shape)
        return True

    # ------------------------------------------------------------------ reporting

    def overhead_stats(self) -> dict:
        """Per-arriving-job scheduling overhead (seconds of policy CPU time)."""
        o = sorted(self.overheads)
        if not o:
            return {"jobs": 0}
        return {"jobs": len(o), "median_s": median(o), "mean_s": sum(o) / len(o),
                "p95_s": o[int(0.95 * (len(o) - 1))], "max_s": o[-1]}

    def describe(self) -> dict:
        d = super().describe()
        d.update({"search_depth": self.depth, "beam": self.beam, "window": self.window,
                  "adaptive_scaling": self.adaptive, "heterogeneity_scaling": self.heterogeneous,
                  "deadline_aware": self.deadline_aware, **self.replan.describe()})
        return d

    def timings(self) -> dict:
        return {"per_arrival": self.overhead_stats()}


@register("crius-na")
class CriusNA(Crius):
    """Ablation without adaptivity scaling: every job keeps its requested GPU count (section 8.6)."""

    name = "crius-na"
    summary = "Crius without adaptivity scaling: every job keeps its requested GPU count (ablation, 8.6)"
    adaptive = False


@register("crius-dp")
class CriusDP(Crius):
    """Ablation of the Cells: the same scheduler planning data-parallel only.

    Each shape's estimate is the data-parallel plan's (one profiling per shape, no
    pipeline stages, no tensor parallelism), so the scheduler sees only what DP can do
    there; a shape where DP runs out of memory has no estimate.  Run it where jobs
    also *run* data-parallel (``experiments.crius_ablation.DataParallelRun``): the
    engine's perf model otherwise runs every job at its adaptive optimum.
    """

    name = "crius-dp"
    summary = "Crius planning data-parallel only: no Cells, no pipeline or tensor parallelism (ablation, ours)"
    dp_only = True
    replan_search = "dp"


@register("crius-nh")
class CriusNH(Crius):
    """Ablation without heterogeneity scaling: every job stays on its requested GPU type (section 8.6)."""

    name = "crius-nh"
    summary = "Crius without heterogeneity scaling: every job stays on its requested GPU type (ablation, 8.6)"
    heterogeneous = False


@register("crius-ddl")
class CriusDDL(Crius):
    """Deadline-aware Crius (section 8.5, following ElasticFlow).

    A shape is allowed for a job only if, at its *estimated* Cell speed plus
    the re-planning overhead, the job's remaining iterations end before its
    deadline; moves of running jobs obey the same guarantee.  Jobs for which
    no allowed shape exists are dropped early (on arrival, or while pending
    once the deadline can no longer be met).  Jobs without a deadline are
    treated as ordinary Crius jobs.
    """

    name = "crius-ddl"
    summary = "deadline-aware Crius: shapes must meet the job's deadline; hopeless jobs are dropped (8.5)"
    deadline_aware = True

    def _remaining(self, view: ClusterView, jid: str) -> float:
        job = view.jobs.get(jid)
        if job is None:
            return 0.0
        return job.total_iterations - view.progress(job)

    def _meets(self, view: ClusterView, jid: str, shape: Shape, now: float) -> bool:
        job = view.jobs.get(jid)
        if job is None or job.spec.deadline is None:
            return True
        t = self._est_time.get(jid, {}).get(shape)
        if t is None:
            return False
        cur = shape_of(view.cluster, job) if job.status == JobStatus.RUNNING else None
        cost = 0.0 if cur == shape else self.replan.price(view.cluster, job, shape)
        if cur is None and not job.policy_data.get("_cells_charged") and self.replan.mode == "derived" \
                and self.replan.profile_cells:
            cost += self.replan.profiling(int(job.policy_data.get("_cells", 0)))
        return now + cost + self._remaining(view, jid) * t <= job.spec.deadline

    def _allowed(self, view: ClusterView, now: float):
        # the answer for a (job, shape) is fixed within a call (clock, progress and shapes are), and
        # the searches ask it again for every queued job they try: remembered for the call
        seen: dict[tuple[str, Shape], bool] = {}

        def allowed(jid: str, shape: Shape) -> bool:
            key = (jid, shape)
            got = seen.get(key)
            if got is None:
                got = seen[key] = self._meets(view, jid, shape, now)
            return got
        return allowed

    def _drop_reason(self, view: ClusterView, job: JobState, now: float) -> str | None:
        base = super()._drop_reason(view, job, now)
        if base or job.spec.deadline is None:
            return base
        tab = self._table(view.cluster, job)
        if any(self._meets(view, job.job_id, s, now) for s in tab.thr):
            return None
        return "deadline cannot be met on any Cell"


def deadline_satisfactory_ratio(records) -> float | None:
    """ElasticFlow's metric (Crius section 8.5): jobs finished by their deadline / jobs with one."""
    with_ddl = [r for r in records if r.deadline is not None]
    if not with_ddl:
        return None
    met = sum(1 for r in with_ddl if r.status == "finished" and r.finish is not None
              and r.finish <= r.deadline + 1e-6)
    return met / len(with_ddl)
