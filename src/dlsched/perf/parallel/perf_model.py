"""A ``PerfModel`` that runs Crius's large models at their adaptive-parallelism optimum.

Optional glue for the simulator: a job whose model the parallelism model
knows (the Table 2 families) is priced at ``CellEstimator.optimum`` for its
GPU type and count, i.e. as if Alpa had tuned it on the allocation; any other
job falls back to ``fallback`` (the simple model unless given).  Placement
enters the way the Crius authors' simulator treats it when no profile exists
(shared/seeds/README.md): throughput x 0.9 for every halving of GPUs per node
when a job spans more nodes than a consolidated placement needs.  An
allocation that cannot hold the model (OOM) costs infinite time.
"""

from __future__ import annotations

import math

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import IterCost, PerfModel, SimplePerfModel
from dlsched.perf.parallel.cost import DEFAULT_PARAMS, CostParams
from dlsched.perf.parallel.estimator import CellEstimator
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.zoo_large import layer_traits

SPREAD_FACTOR = 0.9  # throughput kept per halving of GPUs per node (Crius authors' simulator)

INFEASIBLE = IterCost(math.inf, math.inf, 0.0)
_UNSEEN = object()
_EXACT_CACHE_MAX = 1 << 18  # exact-GPU price memo entries before it is cleared (the bound of the
# placement model it sits in front of: 250,000 synthetic jobs on crius-sim already price 49,000 keys)


class AdaptivePerfModel(PerfModel):
    """Iteration time of a large-model job at its full-space optimal plan."""

    def __init__(self, cluster: Cluster, fallback: PerfModel | None = None,
                 params: CostParams = DEFAULT_PARAMS, estimator: CellEstimator | None = None,
                 spread_keep: float = SPREAD_FACTOR):
        super().__init__(cluster)
        self.spread_keep = spread_keep  # throughput kept per halving of GPUs per node when spread
        self.estimator = estimator or CellEstimator(cluster, params)
        self.fallback = fallback or SimplePerfModel(cluster)
        self._large: dict = {}  # (model, variant) -> its ModelInfo if a large model, else None
        self._exact: dict = {}  # (model, variant, batch, GPU ids) -> IterCost, the fallback's too when pure
        self.spec_keyed = self.fallback.spec_keyed  # then its prices share the memo above
        self._lists: tuple[list[int], list[int], list[int]] | None = None  # see _gpu_lists

    def spread_factor(self, gpus) -> float:
        """Throughput kept when the GPUs span more nodes than a consolidated placement."""
        gpus = gpus.tolist() if hasattr(gpus, "tolist") else list(gpus)
        node_of, node_gpus = self._gpu_lists()[1:]
        nodes = sorted({node_of[g] for g in gpus})
        per_node = node_gpus[nodes[0]]
        needed = max(1, -(-len(gpus) // per_node))
        if len(nodes) <= needed:
            return 1.0
        return self.spread_keep ** math.log2(len(nodes) / needed)

    def _gpu_lists(self) -> tuple[list[int], list[int], list[int]]:
        """The cluster's GPU type index and node per GPU, and GPUs per node, as lists: an allocation
        holds a few GPUs, where indexing lists costs less than building an array to index with."""
        if self._lists is None:
            c = self.cluster
            self._lists = (c.gpu_type_idx.tolist(), c.gpu_node.tolist(), [int(n) for n in c.node_gpus])
        return self._lists

    def shape_time(self, model, batch: int, gpu: str, n: int) -> float | None:
        """Seconds per iteration consolidated on ``n`` GPUs of ``gpu`` (None: it cannot run there)."""
        cell = self.estimator.optimum(model, batch, gpu, n)
        return None if cell is None else cell.iter_time

    def price(self, job: JobSpec, gpus, plan=None) -> IterCost:
        # one memo lookup for the engine's every placement, whichever model prices the job
        gl = gpus if type(gpus) is tuple else tuple(gpus.tolist() if hasattr(gpus, "tolist") else gpus)
        exact = (job.model, job.params, job.batch_size, gl)
        hit = self._exact.get(exact)
        if hit is not None:
            return hit
        # memoised per (model, variant): building a scaled variant's ModelInfo is not free
        key = (job.model, job.params)
        model = self._large.get(key, _UNSEEN)
        if model is _UNSEEN:
            found = get_model(job.model, job.params)
            model = self._large[key] = found if layer_traits(found) is not None else None
        if model is None:
            hit = self.fallback.price(job, gpus, plan)
            if not self.spec_keyed:
                return hit
        else:  # the estimator's optimum is itself memoised, so a price never changes
            hit = self._price_large(model, job.batch_size, gl)
        if len(self._exact) >= _EXACT_CACHE_MAX:
            self._exact.clear()
        self._exact[exact] = hit
        return hit

    def _price_large(self, model, batch: int, gpus: tuple[int, ...]) -> IterCost:
        c = self.cluster
        type_of = self._gpu_lists()[0]
        worst = 0.0
        for t in sorted({type_of[g] for g in gpus}):  # a mixed allocation runs at its slowest type
            it = self.shape_time(model, batch, c.gpu_types[t].name, len(gpus))
            if it is None:
                return INFEASIBLE
            worst = max(worst, it)
        total = worst / self.spread_factor(gpus)
        return IterCost(total, total, 0.0)

    def packing(self, jobs, gpu_type: str):
        """Packing is priced per GPU, where the fallback's compute profile applies (large models never pack)."""
        return self.fallback.packing(jobs, gpu_type)

    def describe(self) -> dict:
        return {"perf_model": type(self).__name__, "fallback": self.fallback.describe()}
