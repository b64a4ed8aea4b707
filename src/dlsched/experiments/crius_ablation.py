"""The Cells ablation: Crius against the same scheduler planning data-parallel only.

The engine's perf models run every job at its adaptive-parallelism optimum, whatever
the policy planned.  A data-parallel-only Crius (``crius-dp``) must also *run* its jobs
data-parallel, or the ablation would only remove information, not the plans.
``DataParallelRun`` wraps the engine's perf model: a large model's iteration time is
the wrapped model's, times how much slower the data-parallel plan is than the optimum
on that shape (both from the same estimator), and infeasible where data parallelism
runs out of memory.  Models that only run data-parallel are unchanged.
"""

from __future__ import annotations

from dlsched.perf.base import IterCost, PerfModel
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.workload.models import get_model
from dlsched.workload.zoo_large import layer_traits

INFEASIBLE = IterCost(float("inf"), float("inf"), 0.0)


class DataParallelRun(PerfModel):
    """``base``'s prices with every large model run data-parallel (see the module docstring)."""

    def __init__(self, base: PerfModel):
        super().__init__(base.cluster)
        self.base = base
        self.est = shared_estimator(base.cluster)
        self._slow: dict = {}  # (model, params, batch, type, n) -> dp / optimum time, None: DP OOM
        self._type_of = base.cluster.gpu_type_idx.tolist()

    def _slowdown(self, spec, t: int, n: int) -> float | None:
        key = (spec.model, spec.params, spec.batch_size, t, n)
        if key not in self._slow:
            model = get_model(spec.model, spec.params)
            name = self.cluster.gpu_types[t].name
            dp = self.est.dp_only(model, spec.batch_size, name, n)
            opt = self.est.optimum(model, spec.batch_size, name, n)
            self._slow[key] = None if dp is None or opt is None else max(1.0, dp.iter_time / opt.iter_time)
        return self._slow[key]

    def price(self, job, gpus, plan=None) -> IterCost:
        cost = self.base.price(job, gpus, plan)
        if layer_traits(get_model(job.model, job.params)) is None:
            return cost
        gl = list(gpus.tolist() if hasattr(gpus, "tolist") else gpus)
        worst = 1.0
        for t in sorted({self._type_of[g] for g in gl}):  # a mixed allocation runs at its slowest type
            s = self._slowdown(job, t, len(gl))
            if s is None:
                return INFEASIBLE
            worst = max(worst, s)
        return IterCost(cost.total * worst, cost.compute * worst, cost.comm)

    def packing(self, jobs, gpu_type: str):
        return self.base.packing(jobs, gpu_type)

    def describe(self) -> dict:
        return {"perf_model": "DataParallelRun", "base": self.base.describe()}
