"""The performance-model contract, and the simple model the foundation runs on.

``PerfModel.price(job, gpus, plan)`` is what every policy and engine calls to
know how fast a job runs on an allocation.  It must be pure (same inputs,
same answer) so implementations can cache by placement shape.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dlsched.cluster.placement import ideal_gpus
from dlsched.cluster.topology import Cluster, Tier
from dlsched.perf.sharing.interference import PackingInfeasibleError, PackingResult, pack, packed_job
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model


@dataclass(frozen=True, slots=True)
class IterCost:
    """Seconds per iteration, split into compute and exposed (non-overlapped) communication."""

    total: float
    compute: float
    comm: float

    @property
    def comm_share(self) -> float:
        return self.comm / self.total if self.total > 0 else 0.0


class PerfModel(ABC):
    """Prices a job on an allocation."""

    # True when ``price`` depends on nothing of the job but (model, params, batch_size): a model
    # that says so has its reference times memoised per (model, params, batch, GPU count, type),
    # which the simulator asks for every arriving job.  Off by default: a model may key on more
    # (a replayed table is looked up by job id).
    spec_keyed: bool = False

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self._reference: dict = {}

    @abstractmethod
    def price(self, job: JobSpec, gpus: Sequence[int] | np.ndarray, plan=None) -> IterCost:
        """Iteration time of ``job`` on exactly these GPU ids (with a parallelism plan, if any)."""

    def iteration_time(self, job: JobSpec, gpus, plan=None) -> float:
        return self.price(job, gpus, plan).total

    def reference_gpus(self, job: JobSpec) -> np.ndarray:
        """The job's requested GPUs, as tightly placed as the empty cluster allows."""
        t = self.cluster.type_id(job.gpu_type) if job.gpu_type else None
        return ideal_gpus(self.cluster, job.num_gpus, t)

    def reference_time(self, job: JobSpec) -> float:
        """Iteration time on the requested GPUs, consolidated: turns a trace duration into iterations."""
        if not self.spec_keyed:
            return self.iteration_time(job, self.reference_gpus(job))
        key = (job.model, job.params, job.batch_size, job.num_gpus, job.gpu_type)
        t = self._reference.get(key)
        if t is None:
            t = self._reference[key] = self.iteration_time(job, self.reference_gpus(job))
        return t

    def packing(self, jobs: Sequence[JobSpec], gpu_type: str) -> PackingResult:
        """Whether these jobs fit on one GPU of ``gpu_type`` together, and the speed each keeps.

        Part of the contract, so packing means the same under every model: the
        interference model of ``dlsched.perf.sharing.interference`` (memory summed
        against the GPU's, utilisation from the built-in compute profile).
        Models with their own compute profile override to use it.
        """
        gpu = self.cluster.gpu_types[self.cluster.type_id(gpu_type)]
        return pack([packed_job(j, gpu) for j in jobs], gpu)

    def packing_factors(self, jobs: Sequence[JobSpec], gpu_type: str) -> list[float]:
        """Fraction of its solo speed each job keeps when these jobs share one GPU.

        Raises ``PackingInfeasibleError`` (an ``InputError``) when their memory
        does not fit; ask ``packing(jobs, gpu_type).feasible`` first.
        """
        res = self.packing(jobs, gpu_type)
        if not res.feasible:
            raise PackingInfeasibleError(
                f"jobs {', '.join(j.job_id for j in jobs)} need {res.memory_bytes / 2**30:.1f} GiB together; "
                f"a {gpu_type} has {res.capacity_bytes / 2**30:.0f} GiB")
        return list(res.factors)

    def describe(self) -> dict:
        return {"perf_model": type(self).__name__}


class SimplePerfModel(PerfModel):
    """Compute from FLOPs at a fixed efficiency, plus one ring all-reduce on the slowest tier.

    Deliberately coarse (no overlap, no bucketing, no per-tier hierarchy): it
    is the foundation's stand-in, and the fallback when nothing better is
    configured.  ``dlsched.perf.placement.model.PlacementPerfModel`` is the real one.
    """

    spec_keyed = True

    def __init__(self, cluster: Cluster, efficiency: float = 0.3):
        super().__init__(cluster)
        self.efficiency = efficiency
        self._cache: dict = {}

    def price(self, job: JobSpec, gpus, plan=None) -> IterCost:
        g = np.asarray(gpus, dtype=np.int64)
        n = int(g.size)
        c = self.cluster
        tier = c.tier(g)
        node = int(c.gpu_node[g[0]])
        key = (job.model, job.params, job.batch_size, int(c.gpu_type_idx[g[0]]), n, tier, node if tier <= Tier.CROSS_SOCKET else c.nodes[node].group)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        model = get_model(job.model, job.params)
        gt = c.nodes[node].gpu
        peak = (gt.fp16_tflops if model.bytes_per_param == 2 else gt.fp32_tflops) * 1e12
        compute = model.train_flops_per_sample * job.batch_size / (n * peak * self.efficiency)
        comm = 0.0
        if n > 1:
            link = c.link(tier, node)
            comm = 2 * (n - 1) * link.latency_s + 2 * (n - 1) / n * model.gradient_bytes / link.bandwidth_Bps
        cost = IterCost(compute + comm, compute, comm)
        self._cache[key] = cost
        return cost
