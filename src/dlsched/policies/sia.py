"""Sia (Jayaram Subramanya et al., "Sia: Heterogeneity-aware, Goodput-optimized ML-cluster
Scheduling", SOSP 2023), as a baseline of the Crius comparison (the Crius authors' simulator
includes it, shared/seeds/README.md).

From the Sia paper:

* **Rounds** (60 s by default): each round re-decides every job's configuration.
* **Configurations**: one GPU type per job (heterogeneity-aware, never mixed
  types) and a GPU count; counts are powers of two (Sia's configurations
  grow by doubling within a node and by whole nodes beyond; with 8-GPU nodes
  and our 16-GPU cap those are the same counts).
* **Goodput-optimising ILP**: at most one configuration per job, GPUs of each
  type within capacity, maximising the sum over jobs of goodput normalised
  by the job's goodput on its least configuration, so a job's value is
  comparable across jobs of very different speeds; a running job's other
  configurations are discounted by a restart factor, so it moves only when
  the gain outweighs the restart.
* Solved first as the LP relaxation's basic optimum (HiGHS dual simplex, as scipy's
  ``linprog(method="highs-ds")`` runs it, through HiGHS's binding), integral but for at most one job per GPU type (only
  the capacity rows can split a job); those few jobs are re-fitted greedily
  into what is left.  Where that LP is integral it is the ILP's optimum.
  Where it is not and the problem is small (at most ``MIP_SMALL_COLS``, 400,
  job x configuration columns, or ``MIP_MAX_COLS``, 700, where the rounded
  answer may have lost over 1%), HiGHS's own MIP (``highspy``) starts from the
  rounded answer and runs at most ``MIP_MAX_NODES`` (200) branch-and-bound
  nodes, a count rather than seconds so the answer is the same on any machine;
  the better of the two is kept.  On the 64-GPU testbed this takes the loss
  bound from 0.7-1.4% mean / 11.7% worst to 0.02% / 0.9%; the simulation's
  large problems (median 930 columns) mostly keep the rounded LP, whose loss
  is small there (0.06-0.08% mean, 0.5% worst); ``solve_stats`` reports it
  (docs/crius.md, "Sia").  HiGHS's primal heuristics and presolve are off in
  the MIP: in HiGHS 1.12.0 they led to a debug line printed to stdout that
  ``output_flag`` does not silence (avoided on every run measured, not
  guaranteed).

Simplifications (and why):

* **Goodput = throughput.** Sia's goodput is throughput x statistical
  efficiency under adaptive batch sizes (from Pollux); our jobs train with a
  fixed batch, so statistical efficiency is 1.  Throughput is what the
  baselines see in the Crius comparison: the data-parallel profile (Crius 8.1).
* **Linear objective.** Sia raises normalised goodput to a fairness power
  ``p`` (negative values favour fairness); we keep ``p = 1`` (pure
  goodput), which the option ``power`` changes for ``p > 0`` only, because a
  negative power turns the maximisation into a different problem whose
  "unallocated job" penalty the paper tunes and we could not verify.
* **Restart factor** ``age / (age + re-planning seconds)`` for a running job's
  new configurations (1 for its current one and for jobs not running): the
  paper's discount also grows with the job's age; its exact form is ours.
* **Candidates**: running jobs plus the ``window`` oldest waiting ones per
  round, to bound the ILP under long queues.
* **Unchanged rounds**: when the candidates are where the last solve left
  them (nobody arrived into the window, left, or failed to get the shape
  chosen), the ILP is not re-solved: the jobs it moved now count their new
  configuration as current, which only raises the value of the answer it
  gave, so only the restart factors' growth with age could change it; it is
  re-solved every ``resolve_s`` (600 s) then, not every 60-s round.  With no job waiting
  and every job on its highest-goodput configuration, "everyone stays" is the ILP's only
  optimum whatever the ages, so it is not re-solved at all, and the simulator skips Sia's
  rounds until a job arrives or finishes (``rounds_idle``).
* **Ties keep the incumbent**: a running job's current configuration counts
  ``KEEP_EDGE`` (0.5%) more.  Without this the solver swapped identical
  jobs between rounds (preempting one to start its twin, for no gain in the
  objective): 3.2 restarts per job on the testbed, 1.0 with it
  (docs/crius.md, "Sia").

Speed (docs/crius.md, "Sia"): configurations and goodputs are cached per job
shape (model, size, batch, request), re-planning prices per shape, the LP is
built from arrays and handed to HiGHS's binding without ``linprog``'s wrapper (which cost
about as much as the solve; same options, same vertex), and HiGHS runs without presolve (it cost more than it
saved on these two-nonzeros-per-column problems).  With ``lp="hot"`` (the default) one HiGHS
model is kept across rounds (``HotAssignmentLP``): jobs that left are deleted, new ones appended,
every column's value reset, and HiGHS re-solves from the basis it kept (a few simplex iterations a
round instead of a cold solve's hundreds).  Its optimum's value is the cold solve's, but where the
LP has several optimal vertices the kept basis leads to another one, so decisions differ at ties
(average JCT within 3% either way on the runs in docs/crius.md, "Speed"); ``lp="cold"`` builds
a fresh model each round, the former path, byte for byte.  ``lp="priced"`` (ours, not the
Sia paper's; ``PricedAssignmentLP``) keeps that hot model but with only the columns LP pricing
asks for: after each solve every column left out is priced with the optimum's duals and those
that would improve it join until none does, so every solve reaches the whole LP's optimum
value, from a model of a few columns a job instead of about 20; its vertex, and so decisions at
ties, can differ from ``hot``'s (docs/crius.md, "Speed": the benchmark's results within 0.2%,
the testbed's average JCT 6-15% higher), so it is an option, not the default.  The running
jobs' shapes are kept across rounds (``RunningShapes``: only the jobs that started, moved or
left are looked at), so a round that finds nothing to re-solve costs no loop over the running
jobs.  HiGHS prints nothing
(``output_flag`` off, and the MIP's options above), so no output is redirected.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.core.feasible import shape_runs
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.base import ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.policies.crius.common import (MAX_GPUS_PER_JOB, RunningShapes, Shape, apply_targets, power_counts,
                                           resolve_type)
from dlsched.policies.gavel.highs_lp import (HotAssignmentLP, PricedAssignmentLP, assignment_columns, pass_box_model,
                                             solve_box_lp_value)
from dlsched.policies.gavel.highs_lp import binding as highs_binding
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register
from dlsched.policies.common.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ChargesReplanning
from dlsched.workload.models import get_model


KEEP_EDGE = 0.005  # a running job's current configuration counts 0.5% more: ties keep the incumbent
# The exact MIP runs where the rounded LP is fractional and the problem has at most MIP_SMALL_COLS
# (job, configuration) columns, or at most MIP_MAX_COLS where the rounded LP may have lost more than
# MIP_MIN_GAP of the objective: mid-sized MIPs cost tens of ms each, worth it for the testbed's
# few-percent losses, not for the simulation's tenths of a percent (docs/crius.md, "Sia")
MIP_SMALL_COLS = 400
MIP_MAX_COLS = 700
MIP_MIN_GAP = 0.01
MIP_MAX_NODES = 200  # and stops after this many branch-and-bound nodes (a count: deterministic)


@dataclass(frozen=True, slots=True)
class Configs:
    """One job shape's configurations: parallel arrays, ordered by (GPU type, count)."""

    types: np.ndarray  # GPU type index per configuration
    counts: np.ndarray  # GPUs per configuration
    goodput: np.ndarray  # normalised goodput (1 on the least configuration)
    shapes: tuple[Shape, ...]

    def index(self, shape: Shape | None) -> int:
        return self.shapes.index(shape) if shape in self.shapes else -1


def goodput_table(cluster: Cluster, job: JobState, perf=None) -> dict[Shape, float]:
    """Normalised data-parallel goodput per (type, count): 1 on the job's least configuration.

    The goodputs are Sia's estimate; which configurations exist is the engine's answer
    (``core/feasible.py``, with ``perf`` the engine's model): a configuration the estimate fits
    and the engine prices as not running would be chosen and fail."""
    est = shared_estimator(cluster)
    spec = job.spec
    model = get_model(spec.model, spec.params)
    thr: dict[Shape, float] = {}
    for t, gt in enumerate(cluster.gpu_types):
        for n in power_counts(1, 1, min(MAX_GPUS_PER_JOB, int(cluster.type_gpus[t]))):
            cell = est.dp_only(model, spec.batch_size, gt.name, n)
            if cell is not None and (perf is None or shape_runs(perf, cluster, spec, t, n)):
                thr[(t, n)] = cell.throughput
    if not thr:  # data parallelism fits nowhere: schedule the request as submitted, weight 1
        t = resolve_type(cluster, spec.gpu_type)
        return {(0 if t is None else t, min(spec.num_gpus, MAX_GPUS_PER_JOB)): 1.0}
    low = min(thr.values())
    return {k: v / low for k, v in thr.items()}


def configs_of(cluster: Cluster, job: JobState, perf=None) -> Configs:
    """``goodput_table`` as arrays, without the configurations larger than their GPU type."""
    items = [(s, g) for s, g in sorted(goodput_table(cluster, job, perf).items())
             if s[1] <= int(cluster.type_gpus[s[0]])]
    shapes = tuple(s for s, _ in items)
    return Configs(np.array([s[0] for s in shapes], dtype=np.int64), np.array([s[1] for s in shapes], dtype=np.int64),
                   np.array([g for _, g in items], dtype=float), shapes)


def _at_best(c: Configs, shape: Shape | None) -> bool:
    """Whether a running job's current configuration has its highest goodput.

    With no job waiting, every candidate runs; a job's other configurations are worth at most
    their goodput (restart factor <= 1), its current one ``1 + KEEP_EDGE`` times its own.  When
    every job is at its best, any other assignment is worth strictly less, so the ILP's answer
    is "everyone stays" whatever the restart factors have grown to: re-solving each
    ``resolve_s`` on a quiet cluster only repeated it (4,314 solves on 150 arena jobs).
    """
    k = c.index(shape)
    return k >= 0 and c.goodput[k] >= c.goodput.max()


def shape_key(job: JobState) -> tuple:
    """What a job's configurations and re-planning prices depend on: jobs alike share one entry."""
    s = job.spec
    return (s.model, s.params, s.batch_size, s.gpu_type, s.num_gpus)


@register("sia")
class Sia(ChargesReplanning, JobPolicy):
    name = "sia"
    summary = "Sia: per-round ILP over (GPU type, count) per job maximising normalised goodput, restart-aware"
    paper = ("Jayaram Subramanya et al., Sia: Heterogeneity-aware, Goodput-optimized ML-cluster Scheduling, "
             "SOSP 2023")
    options = (
        PolicyOption("round_s", float, 60.0, "scheduling round in seconds (Sia: 60 s)", positive=True),
        PolicyOption("window", int, 64, "waiting jobs considered per round, oldest first", minimum=1),
        PolicyOption("power", float, 1.0, "fairness power p on normalised goodput (p > 0)", positive=True),
        PolicyOption("resolve_s", float, 600.0, "re-solve an unchanged cluster at most this often (seconds)",
                     positive=True),
        PolicyOption("lp", str, "hot", "'hot': one HiGHS model edited and re-solved from its last basis each "
                     "round (same optimum, ties may go another way); 'cold': a fresh model each round; "
                     "'priced' (ours): 'hot' with only the columns LP pricing asks for in the model "
                     "(column generation: the same optimum value, ties may go another way)"),
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 60.0, window: int = 64, power: float = 1.0, resolve_s: float = 600.0,
                 lp: str = "hot", costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        self.period = round_s
        self.schedule_on_events = False  # Sia decides in rounds: arrivals wait for the next one
        self.window = window
        self.power = power
        self.resolve_s = resolve_s
        if lp not in ("hot", "cold", "priced"):
            raise InputError(f"lp: must be one of hot, cold, priced, got {lp!r}", field="--option")
        self.lp = lp
        self.set_costs(costs, plan_s)
        self.reset()

    def reset(self) -> None:
        self._configs: dict[tuple, Configs] = {}  # shape key -> configurations (goodput ** power inside)
        self._perf = None  # the engine's perf model, for which configurations can run (set each round)
        self._costs: dict[tuple, np.ndarray] = {}  # shape key -> re-planning seconds per configuration
        # (the running jobs' shapes the last solve left, the candidates it left waiting, its time)
        self._expect: tuple[dict, frozenset, float] | None = None
        self._settled = False  # the last round found every job at its best with none waiting
        self._hot: HotAssignmentLP | PricedAssignmentLP | None = None  # the kept HiGHS model (lp="hot", "priced")
        self._rs = RunningShapes()  # running jobs' shapes, kept across rounds
        self._top: dict[str, bool] = {}  # running job -> whether it is on its top-goodput configuration
        self._cur_idx: dict[str, int] = {}  # running job -> its shape's index among its configurations
        self.solves = 0
        self.mip_solves = 0  # solves whose relaxation was fractional and small enough for the MIP
        self._bound_sum = self._value_sum = self._worst_gap = 0.0  # LP bound vs what was chosen

    def solve_stats(self) -> dict:
        """How far the chosen assignments may be from the ILP's optimum, over every solve: the bound
        (the LP's, or the MIP's where it ran) is at least the optimum, so these overstate the loss."""
        mean = 1.0 - self._value_sum / self._bound_sum if self._bound_sum > 0 else 0.0
        return {"solves": self.solves, "mip_solves": self.mip_solves, "gap_mean_pct": 100 * mean,
                "gap_worst_pct": 100 * self._worst_gap}

    def _configs_of(self, cluster: Cluster, job: JobState) -> Configs:
        key = shape_key(job)
        c = self._configs.get(key)
        if c is None:
            c = configs_of(cluster, job, self._perf)
            if self.power != 1.0:
                c = Configs(c.types, c.counts, c.goodput ** self.power, c.shapes)
            self._configs[key] = c
        return c

    def _costs_of(self, cluster: Cluster, job: JobState, c: Configs) -> np.ndarray:
        key = shape_key(job)
        cost = self._costs.get(key)
        if cost is None:
            cost = self._costs[key] = np.array([self.replan.price(cluster, job, s) for s in c.shapes])
        return cost

    def _values(self, cluster: Cluster, cands: list[JobState], cur: list[Shape | None], confs: list[Configs],
                now: float) -> np.ndarray:
        """Goodput x restart factor per column: a running job's other configurations are discounted by
        ``age / (age + re-planning seconds)``; its current one keeps a small edge (``KEEP_EDGE``)."""
        sizes = [len(c.shapes) for c in confs]
        ages = np.repeat([max(now - j.spec.submit_time, 0.0) for j in cands], sizes)
        costs = np.concatenate([self._costs_of(cluster, j, c) if s is not None else np.zeros(len(c.shapes))
                                for j, s, c in zip(cands, cur, confs)])
        total = ages + costs
        factor = np.divide(ages, total, out=np.ones_like(total), where=total > 0)
        offsets = np.cumsum([0] + sizes[:-1])
        for off, s, c in zip(offsets, cur, confs):
            k = c.index(s) if s is not None else -1
            if k >= 0:
                factor[off + k] = 1.0 + KEEP_EDGE
        return np.concatenate([c.goodput for c in confs]) * factor

    def _solve_hot(self, cluster: Cluster, view_jobs: dict[str, JobState], waiting: list[JobState], now: float
                   ) -> "tuple[dict[str, Shape], Solved] | None":
        """The round's ILP on the kept HiGHS model (``lp="hot"`` or ``"priced"``): the same columns and
        values as ``_values`` builds, in the model's order; the same rounding and MIP step after the
        LP.  Returns the chosen shapes by job id, and the solution.

        The running jobs are ``self._rs``'s, in no particular order: the model only needs the order
        of the jobs it does not hold yet, which are given in the candidates' order (running by
        submission, then waiting), so the model is the one a sorted candidate list builds."""
        capacity = np.asarray(cluster.type_gpus, dtype=float)
        lp = self._hot
        if lp is None:
            lp = self._hot = (PricedAssignmentLP if self.lp == "priced" else HotAssignmentLP)(capacity)
        row_of = lp.row_of
        held = self._rs.shape.keys()  # the running jobs' ids
        all_jobs = view_jobs
        new_running = sorted((all_jobs[k] for k in held - row_of.keys()), key=lambda j: (j.spec.submit_time, j.job_id))
        jobs = {j.job_id: j for j in (*new_running, *waiting)}
        ids = [*jobs, *(held & row_of.keys())]

        def columns(k):
            j = jobs[k]
            c = self._configs_of(cluster, j)
            return {"type": c.types, "count": c.counts, "goodput": c.goodput, "cost": self._costs_of(cluster, j, c),
                    "submit": np.full(len(c.shapes), j.spec.submit_time)}

        lp.sync(ids, columns)
        n = len(lp.rows)
        cur_idx = self._cur_idx
        current = np.fromiter((cur_idx.get(k, -2) for k in lp.rows), dtype=np.int64, count=n)
        col_job = lp.col_job
        ages = np.maximum(now - lp.data["submit"], 0.0)
        costs = np.where((current >= -1)[col_job], lp.data["cost"], 0.0)  # -1: running, shape not a column
        total = ages + costs
        factor = np.divide(ages, total, out=np.ones_like(total), where=total > 0)
        starts = np.searchsorted(col_job, np.arange(n))  # each job's columns are contiguous, in row order
        held = np.flatnonzero(current >= 0)
        factor[starts[held] + current[held]] = 1.0 + KEEP_EDGE
        value = lp.data["goodput"] * factor
        lp_sol = lp.solve(value)
        if lp_sol is None:
            self._hot = None  # start the next round on a fresh model
            return None
        sol = solve(capacity, n, col_job, lp.data["type"], lp.data["count"], value, lp_sol=lp_sol)
        if sol is None:
            return None
        rows = lp.rows
        return {rows[r]: shape for r, shape in sol.chosen.items()}, sol

    def rounds_idle(self) -> bool:
        return self._settled

    def _track(self, cluster: Cluster, running: list[JobState]) -> dict[str, Shape]:
        """Running jobs' shapes (job id -> shape), the index of each among its configurations
        (``self._cur_idx``) and whether it is the top-goodput one (``self._top``), brought up to date
        from the jobs that started, changed or left since the last call: the same answers as deriving
        every running job's shape each round, without the loop."""
        changed, gone = self._rs.update(cluster, running)
        for jid in gone:
            del self._top[jid], self._cur_idx[jid]
        for jid, job in changed.items():
            c = self._configs_of(cluster, job)
            shape = self._rs.shape[jid]
            self._top[jid] = _at_best(c, shape)
            self._cur_idx[jid] = c.index(shape)
        return self._rs.shape

    def schedule(self, view: ClusterView, now: float) -> Decision:
        self._perf = view.perf
        self._settled = False
        cluster = view.cluster
        running = view.running()
        shapes = self._track(cluster, running)
        waiting = []
        for job in view.queued():
            if len(waiting) >= self.window:
                break
            waiting.append(job)
        if not shapes and not waiting:
            return Decision()
        # the candidates are where the last solve left them: re-solving now gives that answer again
        # (the jobs it moved now count their new configuration as current, which only raises its
        # value), but for the restart factors' slow growth with age, so re-solve at most every
        # ``resolve_s`` then.  (The running jobs' shapes as a dict and the waiting ones' ids as a
        # set: the same test as comparing every candidate's (id, shape or None), without building them.)
        exp = self._expect
        waiting_ids = frozenset(j.job_id for j in waiting)
        if exp is not None and now - exp[2] < self.resolve_s and exp[0] == shapes and exp[1] == waiting_ids:
            return Decision()
        if not waiting and all(self._top.values()):
            # the present is the ILP's only optimum, and stays so until a job arrives or finishes
            self._settled = True
            return Decision()
        if self.lp != "cold" and highs_binding() is not None:
            found = self._solve_hot(cluster, view.jobs, waiting, now)
            targets, sol = found if found is not None else ({}, None)
        else:
            cands = sorted(running, key=lambda j: (j.spec.submit_time, j.job_id)) + waiting
            cur = [shapes.get(j.job_id) for j in cands]
            confs = [self._configs_of(cluster, j) for j in cands]
            value = self._values(cluster, cands, cur, confs, now)
            if not value.size:
                return Decision()
            jobs_idx = np.repeat(np.arange(len(cands)), [len(c.shapes) for c in confs])
            types = np.concatenate([c.types for c in confs])
            counts = np.concatenate([c.counts for c in confs])
            sol = solve(np.asarray(cluster.type_gpus, dtype=float), len(cands), jobs_idx, types, counts, value)
            targets = {cands[i].job_id: shape for i, shape in sol.chosen.items()} if sol is not None else {}
        self.solves += 1
        if sol is None:  # HiGHS failed (not seen): keep everyone as they are
            self._expect = (dict(shapes), waiting_ids, now)
            return Decision()
        self.mip_solves += sol.mip
        self._bound_sum += sol.bound
        self._value_sum += sol.value
        self._worst_gap = max(self._worst_gap, sol.gap)
        # preempted: running jobs left out, in the candidates' order (running by submission)
        jobs = view.jobs
        preempt = sorted(shapes.keys() - targets.keys(), key=lambda k: (jobs[k].spec.submit_time, k))
        self._expect = (targets, waiting_ids - targets.keys() | frozenset(preempt), now)
        moved = {jid: shape for jid, shape in targets.items() if shapes.get(jid) != shape}  # the rest stay
        return apply_targets(view, moved, view.jobs, preempt)

    def describe(self) -> dict:
        d = super().describe()
        d.update({"round_s": self.period, "window": self.window, "power": self.power, "lp": self.lp,
                  **self.replan.describe(),
                  "scheduling_profile": "data-parallel",
                  "solver": (f"LP relaxation's basic optimum rounded (HiGHS dual simplex); where fractional and "
                             f"at most {MIP_SMALL_COLS} columns (or {MIP_MAX_COLS} with a loss bound over "
                             f"{MIP_MIN_GAP:.0%}), HiGHS's MIP from it, {MIP_MAX_NODES} nodes at most")})
        return d


@dataclass(frozen=True, slots=True)
class Solved:
    """An assignment (job index -> shape), its value, and the LP bound on the ILP's optimum."""

    chosen: dict[int, Shape]
    value: float
    bound: float
    mip: bool = False  # whether the MIP ran (the relaxation was not integral and the problem small)

    @property
    def gap(self) -> float:
        """At most this share of the ILP's optimum is lost (0 when the LP solution was integral)."""
        return max(0.0, 1.0 - self.value / self.bound) if self.bound > 0 else 0.0


def solve(capacity: np.ndarray, n_jobs: int, jobs_idx: np.ndarray, types: np.ndarray, counts: np.ndarray,
          value: np.ndarray, mip_cols: int = MIP_MAX_COLS, mip_nodes: int = MIP_MAX_NODES,
          lp_sol: tuple[np.ndarray, float] | None = None) -> Solved | None:
    """Sia's ILP (at most one configuration per job, each GPU type within ``capacity``, max total value).
    Column k is job ``jobs_idx[k]`` on ``counts[k]`` GPUs of type ``types[k]``.

    First the LP relaxation's basic optimum (``rounded_lp``): integral, and then the ILP's optimum,
    unless a capacity row splits a job.  When it is not integral and the problem is small (at most
    ``MIP_SMALL_COLS`` columns, or ``mip_cols`` where the rounded answer may have lost more than
    ``MIP_MIN_GAP``), HiGHS's branch and bound (``exact_mip``) starts from the rounded answer
    and runs at most ``mip_nodes`` nodes; the better of the two is kept (the rounded one on a tie),
    and the bound is the lower of the LP's and the MIP's.  ``lp_sol`` is the relaxation's basic
    optimum (x, minimised objective) when the caller solved it (``HotAssignmentLP``)."""
    lp = rounded_lp(capacity, n_jobs, jobs_idx, types, counts, value, lp_sol)
    if lp is None or lp.gap <= 1e-12 or mip_nodes <= 0 or highs_binding() is None:
        return lp
    if len(value) > mip_cols or (len(value) > min(MIP_SMALL_COLS, mip_cols) and lp.gap <= MIP_MIN_GAP):
        return lp
    mip = exact_mip(capacity, n_jobs, jobs_idx, types, counts, value, lp.chosen, mip_nodes)
    if mip is None:
        return lp
    chosen, dual_bound = mip
    bound = min(lp.bound, dual_bound)
    picked_value = _value_of(chosen, jobs_idx, types, counts, value)
    if picked_value > lp.value + 1e-9 * max(1.0, lp.value):
        return Solved(chosen, picked_value, max(bound, picked_value), True)
    return Solved(lp.chosen, lp.value, max(bound, lp.value), True)


def _column_of(jobs_idx: np.ndarray, types: np.ndarray, counts: np.ndarray) -> dict:
    return {(int(j), int(t), int(n)): k for k, (j, t, n) in enumerate(zip(jobs_idx, types, counts))}


def _value_of(chosen: dict[int, Shape], jobs_idx, types, counts, value) -> float:
    col = _column_of(jobs_idx, types, counts)
    return float(sum(value[col[(j, t, n)]] for j, (t, n) in chosen.items()))


# HiGHS 1.12.0 prints a debug line to stdout, whatever ``output_flag`` says, when an assignment found
# in its presolved model fails the original model's rows (seen after its primal heuristics, and after
# symmetry handling on presolved models).  With presolve and the heuristics off no run printed
# (docs/crius.md, "Sia"); the seed (the rounded LP) and the node LPs give the incumbents.
_QUIET = (("presolve", "off"), ("mip_heuristic_effort", 0.0),
          *((f"mip_heuristic_run_{h}", False)
            for h in ("feasibility_jump", "rins", "rens", "root_reduced_cost", "zi_round", "shifting")))


def exact_mip(capacity: np.ndarray, n_jobs: int, jobs_idx: np.ndarray, types: np.ndarray, counts: np.ndarray,
              value: np.ndarray, start: dict[int, Shape], max_nodes: int) -> tuple[dict[int, Shape], float] | None:
    """HiGHS's MIP on Sia's ILP, seeded with ``start``, stopped after ``max_nodes`` branch-and-bound
    nodes: its best assignment and its upper bound on the optimum; None if it has no assignment.

    The limit counts nodes, not seconds, so a run gives the same answer on any machine (HiGHS's MIP
    is deterministic for a given model and options).  ``output_flag`` off and ``_QUIET`` keep it
    silent on every run measured (``tests/crius/test_truth_costs_baselines.py`` checks one)."""
    h = highs_binding()
    nvars = len(value)
    highs = h._Highs()
    for name, setting in (("output_flag", False), ("mip_max_nodes", int(max_nodes)),
                          # ties are worth KEEP_EDGE (0.5% of one job): stop only when proven far closer
                          ("mip_rel_gap", 1e-6), *_QUIET):
        highs.setOptionValue(name, setting)
    pass_box_model(highs, value, *assignment_columns(jobs_idx, n_jobs + types, counts),
                   np.concatenate([np.ones(n_jobs), capacity]), integer=True)
    col = _column_of(jobs_idx, types, counts)
    seed = np.zeros(nvars)
    seed[[col[(j, t, n)] for j, (t, n) in start.items()]] = 1.0
    sol = h.HighsSolution()
    sol.col_value = seed.tolist()
    highs.setSolution(sol)
    if highs.run() == h.HighsStatus.kError:
        return None
    info = highs.getInfo()
    if info.primal_solution_status != 2:  # kSolutionStatusFeasible: no assignment kept
        return None
    picked = np.flatnonzero(np.asarray(highs.getSolution().col_value) > 0.5)
    used = np.zeros(len(capacity))
    np.add.at(used, types[picked], counts[picked])
    if len(set(jobs_idx[picked].tolist())) < len(picked) or np.any(used > capacity):
        return None  # not an assignment (not seen): the rounded LP stands
    chosen = {int(jobs_idx[k]): (int(types[k]), int(counts[k])) for k in picked}
    return chosen, -float(info.mip_dual_bound)


def rounded_lp(capacity: np.ndarray, n_jobs: int, jobs_idx: np.ndarray, types: np.ndarray, counts: np.ndarray,
               value: np.ndarray, lp_sol: tuple[np.ndarray, float] | None = None) -> Solved | None:
    """Sia's ILP through its LP relaxation.

    A basic optimum (dual simplex) of the relaxation is integral but for at most one job per GPU
    type: a fractional job needs a tight capacity row to hold it there.  The integral part is kept,
    and each fractional job, best first, takes its highest-value configuration that still fits.
    The LP's value bounds the ILP's optimum, so ``Solved.gap`` bounds the loss."""
    sol = lp_sol
    if sol is None:
        indptr, indices, data = assignment_columns(jobs_idx, n_jobs + types, counts)
        ub = np.concatenate([np.ones(n_jobs), capacity])
        # HiGHS's dual simplex, as ``linprog(method="highs-ds")`` runs it, straight through its binding
        # (the same vertex; linprog's wrapper cost as much as the solve); presolve off: on these
        # two-nonzeros-per-column problems it cost more than it saved
        sol = solve_box_lp_value(value, indptr, indices, data, ub, presolve=False, simplex=True)
    if sol is None:
        return None
    x, fun = sol
    picked = np.flatnonzero(x > 1 - 1e-6).tolist()
    left = capacity.astype(np.int64)
    left -= np.bincount(types[picked], weights=counts[picked], minlength=len(left)).astype(np.int64)
    done = set(jobs_idx[picked].tolist())
    frac = np.flatnonzero((x > 1e-6) & (x <= 1 - 1e-6))
    for k in frac[np.argsort(-value[frac], kind="stable")]:
        j = int(jobs_idx[k])
        if j in done:
            continue
        own = np.flatnonzero(jobs_idx == j)
        own = own[counts[own] <= left[types[own]]]
        if own.size:
            best = int(own[np.argmax(value[own])])  # the first of equals: columns are ordered by count
            picked.append(best)
            done.add(j)
            left[types[best]] -= counts[best]
    chosen = dict(zip(jobs_idx[picked].tolist(), zip(types[picked].tolist(), counts[picked].tolist())))
    return Solved(chosen, float(value[picked].sum()), float(-fun))
