"""What a cluster can ever give one job: GPUs by type.

A job pinned to a GPU type the cluster lacks, or asking for more GPUs than
the cluster has, would wait forever; ``submit`` rejects it when the cluster
is known (the state holds the layout once a service has started) and the
service holds it as ``unschedulable`` with the reason otherwise, so one bad
job never keeps the others or ``--exit-when-done`` waiting.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from dlsched.workload.job import JobSpec


@dataclass(frozen=True)
class Capacity:
    gpus_by_type: dict[str, int]

    @staticmethod
    def of_layout(layout) -> "Capacity":
        """From a ``ClusterLayout`` (every node it lists, as the cluster model numbers them)."""
        counts: Counter[str] = Counter()
        for node in layout.nodes:
            counts[node.gpu_type] += node.gpus
        return Capacity(dict(sorted(counts.items())))

    @property
    def total(self) -> int:
        return sum(self.gpus_by_type.values())

    def describe(self) -> str:
        return ", ".join(f"{n} {t}" for t, n in self.gpus_by_type.items())

    def unfit(self, spec: JobSpec) -> tuple[str, str] | None:
        """(job-file field, reason) when the job can never run here, else None."""
        if spec.gpu_type is not None:
            have = self.gpus_by_type.get(spec.gpu_type, 0)
            if have == 0:
                return "gpu_type", (f"the cluster has no {spec.gpu_type} GPUs (it has {self.describe()})")
            if spec.num_gpus > have:
                return "num_gpus", (f"asks for {spec.num_gpus} {spec.gpu_type} GPUs; the cluster has {have}")
        elif spec.num_gpus > self.total:
            return "num_gpus", f"asks for {spec.num_gpus} GPUs; the cluster has {self.total} ({self.describe()})"
        return None
