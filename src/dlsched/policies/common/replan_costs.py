"""What re-planning and Cell profiling cost, derived from our own search model or the authors' constants.

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
  per Cell), at most 30 minutes per job (section 8.2).  The baselines' data-
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


@dataclass(frozen=True)
class ReplanCosts:
    """One policy's re-planning prices: ``search`` is "cell" (Crius) or "full" (the baselines)."""

    search: str = "full"
    mode: str = "derived"
    plan_s: float = PLAN_PROFILE_S
    profile_cells: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            from dlsched.errors import InputError

            raise InputError(f"costs must be one of {', '.join(MODES)}, not {self.mode!r}", field="costs")

    def plans(self, cluster: Cluster, job: JobState, shape: tuple[int, int]) -> int:
        """Plans the search profiles to re-plan ``job`` for ``shape`` (type index, GPUs)."""
        from dlsched.perf.parallel.adaptive import shared_estimator

        model = get_model(job.spec.model, job.spec.params)
        if layer_traits(model) is None:
            return 1  # a data-parallel-only model has one plan to check
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
            per_gpu, cap = CRIUS_REPLAN if self.search == "cell" else FULL_REPLAN
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

    def profiling(self, cells: int) -> float:
        """Seconds to profile ``cells`` Cells of one job (section 8.2), capped per job."""
        return min(cells * PLANS_PER_CELL * self.plan_s, JOB_PROFILE_CAP_S)

    def describe(self) -> dict:
        return {"costs": self.mode, "search": self.search, "plan_s": self.plan_s,
                "profile_cells": self.profile_cells}
