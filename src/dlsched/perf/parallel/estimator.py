"""The scheduler-facing API: Cells priced on a cluster, cached.

    est = CellEstimator(cluster)
    est.cell(model, batch, "A100-40G", n_gpus=8, n_stages=2)   # Crius's estimate of one Cell
    est.cells(model, batch, "A100-40G", 8)                     # every feasible estimated Cell
    est.best_cell(model, batch, "A100-40G", 8)                 # best estimated Cell over stage counts
    est.optimum(model, batch, "A100-40G", 8)                   # full-space optimum ("adaptive")
    est.fits(model, batch, "A100-40G", 8)                      # optimum is not None, found cheaply
    est.dp_only(model, batch, "A100-40G", 8)                   # pure data parallelism (baselines)
    est.tuned(model, batch, "A100-40G", 8, 2)                  # Cell-guided tuned plan

Each answer is cached by (model name, variant, batch, GPU type, GPUs, stages,
GPUs per node), so a warm call is one dict lookup.  None means infeasible:
out of memory, or fewer GPUs than stages.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.cluster.gpus import gpu_type as lookup_gpu
from dlsched.cluster.topology import Cluster
from dlsched.perf.parallel.cost import DEFAULT_PARAMS, CostParams, plan_time, scaled_links
from dlsched.perf.parallel.hardware import Hardware, TierLinks
from dlsched.perf.parallel.partition import stage_counts
from dlsched.perf.parallel.plan import Plan, StagePlan
from dlsched.perf.parallel.profile import profile
from dlsched.perf.parallel.search import (
    cell_optimum,
    estimate_cell,
    optimal_plan,
    plan_fits,
    tune_cell,
)
from dlsched.workload.models import ModelInfo


@dataclass(frozen=True, slots=True)
class Cell:
    """A job on a GPU type and count with a pipeline depth, and how fast it runs."""

    model: str
    variant: str | None
    batch: int
    gpu_type: str
    n_gpus: int
    n_stages: int
    iter_time: float  # seconds per iteration
    plan: Plan
    kind: str = "estimate"  # "estimate" | "optimum" | "tuned" | "dp_only" | "cell_optimum"
    cost: int = 0  # plans profiled to obtain it (see dlsched.perf.parallel.search)

    @property
    def throughput(self) -> float:
        """Samples per second."""
        return self.batch / self.iter_time

    @property
    def feasible(self) -> bool:
        return True  # infeasible Cells are returned as None


class CellEstimator:
    """Prices Cells on one cluster; every method is pure and memoised."""

    def __init__(self, cluster: Cluster, params: CostParams = DEFAULT_PARAMS):
        self.cluster = cluster
        self.params = params
        self._hw: dict[tuple[str, str | None], Hardware] = {}
        self._cache: dict[tuple, object] = {}  # Cells, None (infeasible) and tuples of Cells

    # ------------------------------------------------------------------ plumbing

    def hardware(self, gpu_type: str, family: str | None = None) -> Hardware:
        """The GPU type and its links (scaled for ``family`` when the params are calibrated per family)."""
        key = (gpu_type, family)
        hw = self._hw.get(key)
        if hw is None:
            canonical = lookup_gpu(gpu_type).name
            hw = self._hw.get((canonical, family))
            if hw is None:
                links = scaled_links(TierLinks.from_cluster(self.cluster, canonical), canonical, self.params, family)
                hw = Hardware.of(canonical, links)
                self._hw[(canonical, family)] = hw
            self._hw[key] = hw
        return hw

    def _key(self, kind: str, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int, n_stages: int):
        return (kind, model.name, model.variant, batch, gpu_type, n_gpus, n_stages)

    def _make(self, kind, model, batch, gpu_type, n_gpus, t, plan, cost) -> Cell:
        return Cell(model.name, model.variant, batch, self.hardware(gpu_type).gpu.name, n_gpus,
                    plan.n_stages, t, plan, kind, cost)

    def _memo(self, key, compute):
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = compute()
            return value

    def _feasible_shape(self, model: ModelInfo, n_gpus: int, n_stages: int) -> bool:
        return 1 <= n_stages <= n_gpus and n_stages <= profile(model).n_layers

    # ------------------------------------------------------------------ the API

    def cell(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int, n_stages: int) -> Cell | None:
        """Crius's agile estimate of the Cell (section 5.1); None if infeasible."""
        key = self._key("estimate", model, batch, gpu_type, n_gpus, n_stages)
        hit = self._cache.get(key, key)
        if hit is not key:
            return hit

        def compute():
            if not self._feasible_shape(model, n_gpus, n_stages):
                return None
            e = estimate_cell(model, batch, self.hardware(gpu_type, model.family), n_gpus, n_stages,
                              params=self.params, profile_time=False)  # a Cell keeps its time, plan and profilings only
            return None if e is None else self._make("estimate", model, batch, gpu_type, n_gpus,
                                                     e.iter_time, e.plan, e.profilings)
        return self._memo(key, compute)

    def estimate(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int, n_stages: int):
        """The full ``CellEstimate`` (favours, assembly counts, profiling GPU time); not cached."""
        if not self._feasible_shape(model, n_gpus, n_stages):
            return None
        return estimate_cell(model, batch, self.hardware(gpu_type, model.family), n_gpus, n_stages,
                            params=self.params)

    def cells(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int) -> tuple[Cell, ...]:
        """Every feasible estimated Cell of the job on these GPUs, shallowest pipeline first."""
        key = self._key("cells", model, batch, gpu_type, n_gpus, 0)
        hit = self._cache.get(key)
        if hit is not None:  # asked again for every job of the same model (profile() hashes the model)
            return hit

        def compute():
            depths = stage_counts(n_gpus, profile(model).n_layers) if n_gpus >= 1 else ()
            found = (self.cell(model, batch, gpu_type, n_gpus, s) for s in depths)
            return tuple(c for c in found if c is not None)
        return self._memo(key, compute)

    def best_cell(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int) -> Cell | None:
        """The best estimated Cell over pipeline depths 1, 2, 4, ... (log2(n_gpus) + 1 of them)."""
        key = self._key("best", model, batch, gpu_type, n_gpus, 0)
        hit = self._cache.get(key, key)
        if hit is not key:
            return hit

        def compute():
            cells = self.cells(model, batch, gpu_type, n_gpus)
            return min(cells, key=lambda c: (c.iter_time, c.n_stages)) if cells else None
        return self._memo(key, compute)

    def optimum(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int) -> Cell | None:
        """Full-space optimum over stage counts, splits and (dp, tp): the "adaptive" ground truth."""
        key = self._key("optimum", model, batch, gpu_type, n_gpus, 0)
        hit = self._cache.get(key, key)
        if hit is not key:
            return hit

        def compute():
            if n_gpus < 1:
                return None
            found = optimal_plan(model, batch, self.hardware(gpu_type, model.family), n_gpus, self.params)
            return None if found is None else self._make("optimum", model, batch, gpu_type, n_gpus,
                                                         found[0], found[1], 0)
        return self._memo(key, compute)

    def fits(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int) -> bool:
        """Whether ``optimum`` is not None, without searching for the optimum (unless it is cached)."""
        hit = self._cache.get(self._key("optimum", model, batch, gpu_type, n_gpus, 0), self)
        if hit is not self:
            return hit is not None
        key = self._key("fits", model, batch, gpu_type, n_gpus, 0)
        return self._memo(key, lambda: n_gpus >= 1 and plan_fits(model, batch, self.hardware(gpu_type, model.family),
                                                                 n_gpus, self.params))

    adaptive = optimum  # the name the scheduler/simulator side uses for the ground truth

    def cell_optimum(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int,
                     n_stages: int) -> Cell | None:
        """Best plan inside one Cell (its stages fixed): what unpruned tuning would find."""
        return self._searched("cell_optimum", cell_optimum, model, batch, gpu_type, n_gpus, n_stages)

    def tuned(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int, n_stages: int) -> Cell | None:
        """The plan Cell-guided tuning (section 5.2) finds for a scheduled Cell."""
        return self._searched("tuned", tune_cell, model, batch, gpu_type, n_gpus, n_stages)

    def _searched(self, kind: str, search, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int,
                  n_stages: int) -> Cell | None:
        """A Cell whose plan a search inside fixed stages finds (``search`` returns iter_time/plan/cost)."""
        key = self._key(kind, model, batch, gpu_type, n_gpus, n_stages)

        def compute():
            if not self._feasible_shape(model, n_gpus, n_stages):
                return None
            r = search(model, batch, self.hardware(gpu_type, model.family), n_gpus, n_stages, params=self.params)
            return None if r is None else self._make(kind, model, batch, gpu_type, n_gpus,
                                                     r.iter_time, r.plan, r.cost)
        return self._memo(key, compute)

    def dp_only(self, model: ModelInfo, batch: int, gpu_type: str, n_gpus: int) -> Cell | None:
        """Pure data parallelism on all GPUs (what DP-profiling baselines schedule with)."""
        key = self._key("dp_only", model, batch, gpu_type, n_gpus, 1)

        def compute():
            if n_gpus < 1:
                return None
            plan = Plan((StagePlan(0, profile(model).n_layers, n_gpus, 1),))
            t = plan_time(model, batch, plan, self.hardware(gpu_type, model.family), self.params)
            return None if t is None else self._make("dp_only", model, batch, gpu_type, n_gpus, t, plan, 1)
        return self._memo(key, compute)

    def cache_size(self) -> int:
        return len(self._cache)
