"""The one cost rule: what a change of a job's GPUs or parallelism plan costs, for every policy.

**The rule.**  Every job policy (``ChargesReplanning``) pays, for each change
that places a job (start, resume, migrate, resize, replan), the seconds
``ReplanCosts.seconds`` returns, and nothing else:

1. a change onto a (GPU type, GPU count) the job already has a plan for costs
   0 s (checkpoint-resume, charged 0 s by the Crius authors' simulator);
2. a change onto a new shape costs one plan search for it, priced by the search
   the policy runs (Crius's Cell-guided pruned search, or the full search every
   other policy needs to run its jobs at their adaptive-parallelism optimum);
   with derived costs a model that only runs data-parallel has one plan and no
   search (0 s); the authors' constants charge every model alike, as their
   simulator (whose models all have a plan space) does;
3. a Crius job's Cells are profiled once, at its first start (derived costs);
   the GPU types are profiled in parallel (Crius 8.2), so the charge is the
   largest per-type profiling time, not their sum.

Only the search differs between policies, which is the mechanism the Crius paper
credits; the price of a plan, the shapes that need one and what resuming costs
are the same for all.  Mode flips on the same GPUs (pack, slice) are not plan
changes and keep the engine's default (0 s).  Policies whose own papers measure
a mechanism's cost (Gandiva's suspend-resume of time-slicing) pay that where it
exceeds the rule, never less than the rule.

What re-planning and Cell profiling cost, derived from our own search model or the authors' constants.

A job that changes shape must find a parallel plan for it before it trains
again.  Two settings (``ReplanCosts.mode``):

* ``derived`` (default): seconds = plans the policy's search profiles x the time
  to profile one plan (``plan_s``, default 30 s: Crius section 8.2, "the
  average profiling time for one parallelism is reduced to about 30 seconds").
  Crius tunes inside the scheduled Cell (section 5.2: each stage searched only
  in its favoured half, ``CellEstimator.tuned(...).cost``); the baselines run
  the full search over every stage count and (dp, tp) per stage
  (``full_search_plans``).  On top, a Crius job's Cells are profiled once at
  its first start when ``profile_cells`` is on: 2 plans per Cell (about 1 minute
  per Cell, the types in parallel), at most 30 minutes per job (section 8.2).  The baselines' data-
  parallel profiles are *not* charged (the paper charges none), which favours
  the baselines.
* ``authors``: the constants of the Crius authors' simulator
  (shared/seeds/README.md): 10 s/GPU capped at 40 s for Crius, 150 s/GPU capped
  at 600 s for a full search, no Cell profiling.

Both settings charge 0 s for resuming on a shape the job already has a plan
for (checkpoint-resume, as the authors' simulator does).  Profiling is charged
as start overhead while the job holds its first allocation: a simplification
(the paper profiles Cells on single GPUs before placement), which overstates
the GPU time it takes but not the delay to the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from dlsched.cluster.topology import Cluster
from dlsched.core.actions import PLACEMENTS
from dlsched.perf.parallel.partition import stage_counts, stage_partition
from dlsched.perf.parallel.profile import profile
from dlsched.perf.parallel.space import space_size
from dlsched.policies.base import Allocation, JobState
from dlsched.policies.crius.common import CRIUS_REPLAN, FULL_REPLAN
from dlsched.policies.options import PolicyOption
from dlsched.workload.models import get_model
from dlsched.workload.zoo_large import layer_traits

MODES = ("derived", "authors")
PLAN_PROFILE_S = 30.0  # Crius section 8.2: one parallelism profiled in about 30 s
PLANS_PER_CELL = 2  # section 5.1: the DP-only and TP-only plans of a Cell
JOB_PROFILE_CAP_S = 1800.0  # section 8.2: profiling one job never exceeds 30 minutes

# the options every policy of the Crius comparison declares (``PolicyOption``), in one place
COST_OPTIONS = (
    PolicyOption("costs", str, "derived",
                 "re-planning cost: derived (plans searched x plan_s) or authors (the authors' constants)"),
    PolicyOption("plan_s", float, PLAN_PROFILE_S, "seconds to profile one plan (Crius 8.2: about 30 s)",
                 minimum=0.0),
)
PROFILE_OPTION = PolicyOption("profile_cells", bool, True,
                              "charge Cell profiling at a job's first start (Crius 8.2; derived costs only)")


def full_search_plans(model, gpu_type: str, n: int, estimator) -> int:
    """Plans a full-space tuner profiles for ``n`` GPUs: every stage count, (dp, tp) per stage."""
    return _full_plans(model, estimator.hardware(gpu_type).gpus_per_node, n)


@lru_cache(maxsize=None)
def _full_plans(model, gpus_per_node: int, n: int) -> int:
    return sum(space_size(stage_partition(model, n, ns), gpus_per_node)
               for ns in stage_counts(n, profile(model).n_layers))


@lru_cache(maxsize=None)
def _data_parallel_only(model: str, params) -> bool:
    # cached by name: the rule is asked on every start, and FCFS starts a million jobs in seconds
    return layer_traits(get_model(model, params)) is None


@dataclass(frozen=True)
class ReplanCosts:
    """One policy's re-planning prices: ``search`` is "cell" (Crius), "full" (the baselines) or
    "dp" (a data-parallel-only planner: one plan, no search)."""

    search: str = "full"
    mode: str = "derived"
    plan_s: float = PLAN_PROFILE_S
    profile_cells: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            from dlsched.errors import InputError

            raise InputError(f"costs must be one of {', '.join(MODES)}, not {self.mode!r}", field="costs")

    def plans(self, cluster: Cluster, job: JobState, shape: tuple[int, int]) -> int:
        """Plans the search profiles to re-plan ``job`` for ``shape`` (type index, GPUs); 0: no search."""
        from dlsched.perf.parallel.adaptive import shared_estimator

        if _data_parallel_only(job.spec.model, job.spec.params) or self.search == "dp":
            return 0  # one plan (data parallel): nothing to search, the job starts at once
        model = get_model(job.spec.model, job.spec.params)
        est = shared_estimator(cluster)
        gpu = cluster.gpu_types[shape[0]].name
        if self.search == "full":
            return full_search_plans(model, gpu, shape[1], est)
        best = est.best_cell(model, job.spec.batch_size, gpu, shape[1])
        tuned = None if best is None else est.tuned(model, job.spec.batch_size, gpu, shape[1], best.n_stages)
        return full_search_plans(model, gpu, shape[1], est) if tuned is None else tuned.cost

    def price(self, cluster: Cluster, job: JobState, shape: tuple[int, int]) -> float:
        """Seconds to re-plan ``job`` for a new ``shape`` (no profiling, no bookkeeping: pure)."""
        if self.mode == "authors":
            # a data-parallel-only planner searches nothing either; the authors' cheapest
            # constant (Crius's pruned search) is the floor their simulator knows
            per_gpu, cap = CRIUS_REPLAN if self.search in ("cell", "dp") else FULL_REPLAN
            return min(per_gpu * shape[1], cap)
        return self.plans(cluster, job, shape) * self.plan_s

    def seconds(self, cluster: Cluster, job: JobState, new: Allocation, kind: str) -> float:
        """What the job waits before training on ``new`` (the engine's ``overhead`` hook)."""
        shape = (int(cluster.gpu_type_idx[new.gpus[0]]), len(new.gpus))
        last = job.policy_data.get("_planned")
        job.policy_data["_planned"] = shape
        if kind != "start" and last == shape:
            return 0.0  # checkpoint-resume on a shape with a known plan
        s = self.price(cluster, job, shape)
        if (self.mode == "derived" and kind == "start" and self.profile_cells
                and not job.policy_data.get("_cells_charged")):
            job.policy_data["_cells_charged"] = True
            s += self.profiling(int(job.policy_data.get("_cells", 0)))
        return s

    @property
    def free_for_data_parallel(self) -> bool:
        """A data-parallel-only job pays nothing here: derived costs and no Cell profiling."""
        return self.mode == "derived" and not self.profile_cells

    def profiling(self, cells: int) -> float:
        """Seconds to profile ``cells`` Cells of one job (section 8.2), capped per job."""
        return min(cells * PLANS_PER_CELL * self.plan_s, JOB_PROFILE_CAP_S)

    def describe(self) -> dict:
        return {"costs": self.mode, "search": self.search, "plan_s": self.plan_s,
                "profile_cells": self.profile_cells}


class ChargesReplanning:
    """Mixin (before ``JobPolicy`` in the bases): the policy's ``overhead`` is the one cost rule.

    ``replan_search`` names the plan search the policy runs: "full" unless the
    policy has a cheaper one of its own (Crius's Cells: "cell").  A policy built
    without calling ``set_costs`` pays the rule's defaults (derived costs).
    """

    replan_search: str = "full"
    replan: ReplanCosts | None = None
    _free_dp = True  # the default rule's ``free_for_data_parallel``

    def set_costs(self, costs: str = "derived", plan_s: float = PLAN_PROFILE_S,
                  profile_cells: bool = False) -> None:
        self.replan = ReplanCosts(self.replan_search, costs, plan_s, profile_cells)
        self._free_dp = self.replan.free_for_data_parallel

    def cost_rule(self) -> ReplanCosts:
        rule = self.replan
        if rule is None:
            self.set_costs()
            rule = self.replan
        return rule

    def describe(self) -> dict:
        return {**super().describe(), **self.cost_rule().describe()}  # type: ignore[misc]

    def overhead(self, cluster: Cluster, job: JobState, old: Allocation | None, new: Allocation,
                 kind: str) -> float | None:
        if kind not in PLACEMENTS:
            return None  # a sharing-mode flip on the same GPUs: no new plan (engine default)
        spec = job.spec
        if self._free_dp and _data_parallel_only(spec.model, spec.params):
            return 0.0  # one plan, no search, no Cells: asked on every start, so answered first
        return self.cost_rule().seconds(cluster, job, new, kind)
