"""Packing priced from Gavel's measured co-location throughputs (a direct table look-up, no fit).

Why: under our fitted interference model (``perf/sharing/interference.py``)
every pair the ``gandiva-100`` runs try packing keeps 0.70-0.90 of its solo
speed each, so Gandiva's keep-or-undo introspection undoes every trial and
packing can never pay.  Gavel (Narayanan et al., OSDI 2020) measured pairs of
real jobs sharing one GPU: in
``../shared/anchors/profiles/gavel-colocated-throughputs.csv`` 85% of the
1-GPU P100 pairs run faster together than one after the other (summed
normalised throughput above 1).  Pricing packed jobs from that table shows
whether Gandiva's packing pays where co-location really pays.

``MeasuredPackingPerfModel`` wraps any perf model: two jobs sharing a GPU
that both carry a Gavel job type (``extra["job_type"]``) run at their
measured co-located over isolated steps per second; anything else (other
jobs, three or more on a GPU, a pair the table lacks) is priced by the
wrapped model, and counted.  A 0 in the table (Gavel's mark for a pair that
did not run together, e.g. out of memory) is counted and also left to the
wrapped model, whose memory check decides: a group packed as three that
shrinks to such a pair must stay priceable (replay.py treats Gavel's 0s the
same way).  Solo speeds stay the wrapped model's.

Simplifications: Gavel measured K80, P100 and V100, not P40; a P40 (same
Pascal generation, more memory, lower bandwidth) is priced with the P100
rows.  The table's scale factor is the job's GPU count.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from dlsched.experiments.shared import shared_dir
from dlsched.perf.base import PerfModel
from dlsched.perf.sharing.interference import PackingResult
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers.gavel import parse_job_type

COLOCATED = Path("anchors") / "profiles" / "gavel-colocated-throughputs.csv"
ISOLATED = Path("anchors") / "traces" / "gavel-simulation-throughputs-isolated.csv"
GPU_ROWS = {"p100": "p100", "p40": "p100", "v100": "v100", "k80": "k80"}  # our type -> Gavel's column


def tables_missing() -> str | None:
    """None when both Gavel tables are in ../shared, else why the measured setting is skipped."""
    missing = [str(shared_dir() / p) for p in (COLOCATED, ISOLATED) if not (shared_dir() / p).is_file()]
    return f"Gavel's throughput tables are absent ({', '.join(missing)})" if missing else None


@dataclass(frozen=True)
class CoLocationTable:
    """(gpu, type, scale, other type, other scale) -> (this job's, the other's) fraction of solo speed."""

    factors: dict[tuple[str, str, int, str, int], tuple[float, float]]
    job_types: tuple[str, ...]  # 1-GPU job types with an isolated P100 figure, for workloads

    @classmethod
    def load(cls, root: Path | None = None) -> CoLocationTable:
        root = root or shared_dir()
        iso: dict[tuple[str, int, str], float] = {}
        with open(root / ISOLATED, newline="") as f:
            for r in csv.DictReader(f):
                for g in ("v100", "p100", "k80"):
                    iso[(r["job_type"], int(r["scale_factor"]), g)] = float(r[f"{g}_steps_per_s"])
        out: dict = {}
        with open(root / COLOCATED, newline="") as f:
            for r in csv.DictReader(f):
                a, sa = r["job_type"], int(r["scale_factor"])
                b, sb = r["other_job_type"], int(r["other_scale_factor"])
                g = r["gpu"].lower()
                ia, ib = iso.get((a, sa, g)), iso.get((b, sb, g))
                if not ia or not ib:
                    continue
                out[(g, a, sa, b, sb)] = (float(r["steps_per_s"]) / ia, float(r["other_steps_per_s"]) / ib)
        types = tuple(sorted({k[0] for k, v in iso.items() if k[1] == 1 and k[2] == "p100" and v > 0}))
        return cls(out, types)

    def pair(self, gpu: str, a: str, sa: int, b: str, sb: int) -> tuple[float, float] | None:
        return self.factors.get((GPU_ROWS.get(gpu.lower(), gpu.lower()), a, sa, b, sb))

    def paying_share(self, gpu: str = "p100") -> float:
        """Share of measured 1-GPU pairs whose summed normalised throughput beats running one at a time."""
        vals = [x + y for (g, _, sa, _, sb), (x, y) in self.factors.items() if g == gpu and sa == sb == 1]
        return float(np.mean([v > 1.0 for v in vals])) if vals else 0.0


@dataclass
class LookupCounts:
    measured: int = 0  # packings priced from the table
    zero: int = 0  # pairs the table marks 0 (did not run together): priced by the wrapped model
    modelled: int = 0  # packings the table has no row for: the wrapped model priced them


class MeasuredPackingPerfModel(PerfModel):
    """A perf model whose packed pairs of Gavel job types run at Gavel's measured co-located speeds."""

    def __init__(self, base: PerfModel, table: CoLocationTable):
        super().__init__(base.cluster)
        self.base = base
        self.table = table
        self.spec_keyed = base.spec_keyed
        self.counts = LookupCounts()

    def price(self, job: JobSpec, gpus, plan=None):
        return self.base.price(job, gpus, plan)

    def packing(self, jobs: Sequence[JobSpec], gpu_type: str) -> PackingResult:
        types = [(j.extra or {}).get("job_type") for j in jobs]
        if len(jobs) != 2 or None in types:
            self.counts.modelled += 1
            return self.base.packing(jobs, gpu_type)
        key = (gpu_type, types[0], jobs[0].num_gpus, types[1], jobs[1].num_gpus)
        got = self.table.pair(*key)
        if got is None or min(got) <= 0.0:
            if got is None:
                self.counts.modelled += 1
            else:
                self.counts.zero += 1
            return self.base.packing(jobs, gpu_type)
        base = self.base.packing(jobs, gpu_type)  # the memory check stays the model's
        if not base.feasible:
            return base
        self.counts.measured += 1
        return PackingResult(True, got, base.memory_bytes, base.capacity_bytes)

    def __getattr__(self, name):
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def describe(self) -> dict:
        return {**self.base.describe(), "packing": "gavel-colocated (measured look-up)"}


def as_gavel_jobs(jobs: Sequence[JobSpec], table: CoLocationTable, seed: int) -> list[JobSpec]:
    """The same arrivals, GPU counts and durations, each job given a Gavel job type (uniform, seeded)."""
    rng = np.random.Generator(np.random.PCG64(seed + 7))
    picks = rng.integers(0, len(table.job_types), len(jobs))
    out = []
    for j, k in zip(jobs, picks):
        jt = table.job_types[int(k)]
        name, batch = parse_job_type(jt)
        model = get_model(name)
        per_worker = batch or model.default_batch
        out.append(j.with_(model=model.name, params=None, batch_size=per_worker * j.num_gpus,
                           extra={**(j.extra or {}), "job_type": jt}))
    return out
