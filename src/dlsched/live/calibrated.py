"""A perf model made of measured iteration times, for live runs and the fidelity check.

``MeasuredPerfModel`` answers "seconds per iteration of model M on n GPUs"
from what the live runtime measured, a time-weighted mean over run segments
(warm-up iteration excluded by the agent).  For a GPU count it never saw it
scales the nearest measured count by n_seen/n (linear data-parallel
speed-up); for a model it never saw it asks the fallback model.  The live
service feeds it as it goes, so policies price jobs with what they have
seen; the fidelity check builds one from a finished run's segments.

Segments that ran packed are kept apart: they give each model's packed
iteration time, and ``packing_factors`` answers with the measured solo over
packed time (the speed a model keeps when packed, whoever it was packed
with: the live emulation's interference is per job).  Turns of time-sliced
jobs run alone, so they count as solo; a segment whose mode changed while it
ran (``mixed``) is not used.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import IterCost, PerfModel, SimplePerfModel
from dlsched.workload.job import JobSpec


class MeasuredPerfModel(PerfModel):
    def __init__(self, cluster: Cluster, fallback: PerfModel | None = None):
        super().__init__(cluster)
        self.fallback = fallback or SimplePerfModel(cluster)
        self._sum: dict[tuple[str, int], float] = {}  # (model, n) -> seconds summed over timed iterations
        self._count: dict[tuple[str, int], int] = {}
        self._packed: dict[tuple[str, int], list[float]] = {}  # (model, n) -> [seconds, iterations] packed

    def observe(self, model: str, n_gpus: int, iter_time: float, iterations: int, mode: str = "exclusive") -> None:
        """Add ``iterations`` iterations measured at ``iter_time`` seconds each, in sharing ``mode``."""
        if iterations <= 0 or not iter_time > 0 or mode == "mixed":
            return
        key = (model, int(n_gpus))
        if mode == "packed":
            acc = self._packed.setdefault(key, [0.0, 0])
            acc[0] += iter_time * iterations
            acc[1] += iterations
            return
        self._sum[key] = self._sum.get(key, 0.0) + iter_time * iterations
        self._count[key] = self._count.get(key, 0) + iterations

    def packing_factors(self, jobs: Sequence[JobSpec], gpu_type: str) -> list[float]:
        """Measured solo / packed iteration time per model where both were measured (one GPU each,
        as packing is per GPU); the contract's interference model for the others."""
        factors = super().packing_factors(jobs, gpu_type)  # also the memory check
        for i, j in enumerate(jobs):
            packed, solo = self._packed.get((j.model, 1)), self.measured(j.model, 1)
            if packed and solo:
                factors[i] = min(1.0, solo / (packed[0] / packed[1]))
        return factors

    def table(self) -> dict[tuple[str, int], float]:
        """Mean seconds per iteration for every measured (model, GPU count)."""
        return {k: self._sum[k] / self._count[k] for k in sorted(self._sum)}

    def measured(self, model: str, n: int) -> float | None:
        key = (model, n)
        if key in self._count:
            return self._sum[key] / self._count[key]
        seen = [k[1] for k in self._count if k[0] == model]
        if not seen:
            return None
        near = min(seen, key=lambda m: (abs(m - n), m))
        return self._sum[(model, near)] / self._count[(model, near)] * near / n

    def price(self, job: JobSpec, gpus: Sequence[int] | np.ndarray, plan=None) -> IterCost:
        t = self.measured(job.model, len(gpus))
        if t is None:
            return self.fallback.price(job, gpus, plan)
        return IterCost(t, t, 0.0)  # measured end to end: the split is unknown

    def describe(self) -> dict:
        return {"perf_model": type(self).__name__,
                "measured_iter_s": {f"{m}@{n}": round(t, 6) for (m, n), t in self.table().items()},
                **({"measured_packed_iter_s": {f"{m}@{n}": round(s / k, 6) for (m, n), (s, k)
                                               in sorted(self._packed.items())}} if self._packed else {})}


def from_segments(cluster: Cluster, segments: list[dict], models: dict[str, str]) -> MeasuredPerfModel:
    """Build from the store's segment rows; ``models`` maps job id -> model name."""
    import json

    perf = MeasuredPerfModel(cluster)
    for s in segments:
        if s.get("iter_time") and s.get("timed_iterations"):
            perf.observe(models[s["job_id"]], len(json.loads(s["gpus"])), s["iter_time"], s["timed_iterations"],
                         mode=s.get("mode") or "exclusive")
    return perf
