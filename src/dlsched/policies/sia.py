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
* Solved exactly with scipy's ``milp`` (HiGHS) up to 2,000 (job,
  configuration) pairs; beyond, the LP relaxation's basic optimum (integral
  but for at most one job per GPU type) with those few jobs re-fitted
  greedily, since the exact solve took seconds per round at 1,280 GPUs.

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
* **Unchanged rounds**: when no job arrived, left or changed allocation since
  the last solve, the ILP is re-solved only every ``resolve_s`` (600 s), not
  every round: only the restart factors' growth with age could change the
  answer, and solving 60-s rounds over weeks of simulated time dominated the
  run time.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_matrix

from dlsched.cluster.topology import Cluster
from dlsched.perf.adaptive import shared_estimator
from dlsched.policies.base import Allocation, ClusterView, Decision, JobPolicy, JobState, JobStatus
from dlsched.policies.crius_common import MAX_GPUS_PER_JOB, Shape, apply_targets, power_counts, resolve_type, shape_of
from dlsched.policies.options import PolicyOption
from dlsched.policies.registry import register
from dlsched.policies.replan_costs import COST_OPTIONS, PLAN_PROFILE_S, ReplanCosts
from dlsched.workload.models import get_model


@contextmanager
def _quiet_stdout():
    """HiGHS's MIP solver writes debug lines straight to file descriptor 1 (not through Python), which
    would interleave with a run's printed tables; they carry nothing we use."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


EXACT_MAX_VARS = 2000  # above this many (job, configuration) pairs the LP relaxation is rounded


def goodput_table(cluster: Cluster, job: JobState) -> dict[Shape, float]:
    """Normalised data-parallel goodput per (type, count): 1 on the job's least configuration."""
    est = shared_estimator(cluster)
    spec = job.spec
    model = get_model(spec.model, spec.params)
    thr: dict[Shape, float] = {}
    for t, gt in enumerate(cluster.gpu_types):
        for n in power_counts(1, 1, min(MAX_GPUS_PER_JOB, int(cluster.type_gpus[t]))):
            cell = est.dp_only(model, spec.batch_size, gt.name, n)
            if cell is not None:
                thr[(t, n)] = cell.throughput
    if not thr:  # data parallelism fits nowhere: schedule the request as submitted, weight 1
        t = resolve_type(cluster, spec.gpu_type)
        return {(0 if t is None else t, min(spec.num_gpus, MAX_GPUS_PER_JOB)): 1.0}
    low = min(thr.values())
    return {k: v / low for k, v in thr.items()}


@register("sia")
class Sia(JobPolicy):
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
        *COST_OPTIONS,
    )

    def __init__(self, round_s: float = 60.0, window: int = 64, power: float = 1.0, resolve_s: float = 600.0,
                 costs: str = "derived", plan_s: float = PLAN_PROFILE_S):
        self.period = round_s
        self.schedule_on_events = False  # Sia decides in rounds: arrivals wait for the next one
        self.window = window
        self.power = power
        self.resolve_s = resolve_s
        self.replan = ReplanCosts("full", costs, plan_s)
        self.reset()

    def reset(self) -> None:
        self._tables: dict[str, dict[Shape, float]] = {}
        self._replan_s: dict[str, dict[Shape, float]] = {}  # job -> shape -> re-planning seconds
        self._last: tuple[tuple, float] | None = None  # (candidates and their shapes, time) of the last solve
        self.solves = 0

    def on_finish(self, job: JobState, now: float) -> None:
        self._tables.pop(job.job_id, None)
        self._replan_s.pop(job.job_id, None)

    def overhead(self, cluster: Cluster, job: JobState, old: Allocation | None, new: Allocation,
                 kind: str) -> float | None:
        return self.replan.seconds(cluster, job, new, kind)

    def _table(self, cluster: Cluster, job: JobState) -> dict[Shape, float]:
        tab = self._tables.get(job.job_id)
        if tab is None:
            tab = self._tables[job.job_id] = goodput_table(cluster, job)
        return tab

    def _restart_factor(self, view: ClusterView, job: JobState, shape: Shape, now: float) -> float:
        cur = shape_of(view.cluster, job) if job.status == JobStatus.RUNNING else None
        if cur is None or cur == shape:
            return 1.0
        age = max(now - job.spec.submit_time, 0.0)
        known = self._replan_s.setdefault(job.job_id, {})
        cost = known.get(shape)
        if cost is None:
            cost = known[shape] = self.replan.price(view.cluster, job, shape)
        return age / (age + cost) if age + cost > 0 else 1.0

    def schedule(self, view: ClusterView, now: float) -> Decision:
        cluster = view.cluster
        running = sorted(view.running(), key=lambda j: (j.spec.submit_time, j.job_id))
        waiting = []
        for job in view.queued():
            if len(waiting) >= self.window:
                break
            waiting.append(job)
        cands = running + waiting
        if not cands:
            return Decision()
        # nothing changed since the last solve: the answer moves only with the restart factors' slow
        # growth with age, so re-solve at most every ``resolve_s`` then (bounds solver time per job)
        state = tuple((j.job_id, shape_of(cluster, j) if j.status == JobStatus.RUNNING else None) for j in cands)
        if self._last is not None and self._last[0] == state and now - self._last[1] < self.resolve_s:
            return Decision()
        self._last = (state, now)
        keys: list[tuple[int, Shape]] = []
        value: list[float] = []
        for i, job in enumerate(cands):
            for shape, g in sorted(self._table(cluster, job).items()):
                if shape[1] > int(cluster.type_gpus[shape[0]]):
                    continue
                keys.append((i, shape))
                value.append((g ** self.power) * self._restart_factor(view, job, shape, now))
        if not keys:
            return Decision()
        chosen = self._solve(cluster, len(cands), keys, np.asarray(value))
        self.solves += 1
        if chosen is None:  # no solution within the time limit: keep everyone as they are
            return Decision()
        targets: dict[str, Shape] = {}
        preempt: list[str] = []
        for i, job in enumerate(cands):
            if i in chosen:
                targets[job.job_id] = chosen[i]
            elif job.status == JobStatus.RUNNING:
                preempt.append(job.job_id)
        return apply_targets(view, targets, view.jobs, preempt)

    @staticmethod
    def _solve(cluster: Cluster, n_jobs: int, keys: list[tuple[int, Shape]], value: np.ndarray) -> dict[int, Shape] | None:
        """The ILP: one configuration per job at most, each type within capacity, max total value."""
        ntypes = len(cluster.gpu_types)
        cols = np.arange(len(keys))
        jrows = np.array([i for i, _ in keys])
        trows = np.array([n_jobs + s[0] for _, s in keys])
        a = coo_matrix((np.concatenate([np.ones(len(keys)), [float(s[1]) for _, s in keys]]),
                        (np.concatenate([jrows, trows]), np.concatenate([cols, cols]))),
                       shape=(n_jobs + ntypes, len(keys)))
        ub = np.concatenate([np.ones(n_jobs), np.asarray(cluster.type_gpus, dtype=float)])
        if len(keys) <= EXACT_MAX_VARS:
            with _quiet_stdout():
                res = milp(-value, constraints=LinearConstraint(a.tocsr(), -np.inf, ub),
                           integrality=np.ones(len(keys)), bounds=Bounds(0, 1), options={"time_limit": 30.0})
            if res.x is None:
                return None
            return {keys[k][0]: keys[k][1] for k in np.flatnonzero(res.x > 0.5)}
        # large problems: a basic optimum of the LP relaxation (dual simplex) has at most one
        # fractional job per GPU type (only the capacity rows can split a job), so it is integral
        # but for those few; they are re-fitted greedily into what is left
        res = linprog(-value, A_ub=a.tocsr(), b_ub=ub, bounds=(0, 1), method="highs-ds")
        if res.x is None:
            return None
        chosen = {keys[k][0]: keys[k][1] for k in np.flatnonzero(res.x > 1 - 1e-6)}
        left = [int(c) for c in cluster.type_gpus]
        for s in chosen.values():
            left[s[0]] -= s[1]
        for k in np.argsort(-value, kind="stable"):
            j, s = keys[k]
            if j not in chosen and 1e-6 < res.x[k] and s[1] <= left[s[0]]:
                chosen[j] = s
                left[s[0]] -= s[1]
        return chosen

    def describe(self) -> dict:
        d = super().describe()
        d.update({"round_s": self.period, "window": self.window, "power": self.power, **self.replan.describe(),
                  "scheduling_profile": "data-parallel", "solver": "scipy milp (HiGHS)"})
        return d
