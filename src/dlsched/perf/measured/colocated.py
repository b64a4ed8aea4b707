"""Gavel's measured co-location throughputs: two jobs packed on the same GPUs (space sharing).

``gavel-colocated-throughputs.csv`` (``gpu,job_type,scale_factor,other_job_type,
other_scale_factor,steps_per_s,other_steps_per_s``), from Gavel's
``scheduler/simulation_throughputs.json``: each job's worker steps per second while it shares
its GPUs with the other.  Beside the isolated table (``replay.ThroughputTable``) this gives
measured packing interference: a packed job keeps ``packed / isolated`` of its solo speed.
Read by the one profile-table reader (``dlsched.workload.readers.profiles``), detected from
its header.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dlsched.errors import InputError

PairKey = tuple[str, str, int, str, int]  # gpu (lower case), job type, n, other job type, other n


@dataclass(frozen=True)
class ColocatedTable:
    """Worker steps/s of each of two packed jobs, by (GPU type, job, n, other job, other n)."""

    source: str
    steps_per_s: dict[PairKey, tuple[float, float]]

    def __len__(self) -> int:
        return len(self.steps_per_s)

    def pair(self, gpu: str, a: tuple[str, int], b: tuple[str, int]) -> tuple[float, float] | None:
        """(a's steps/s, b's steps/s) packed together on ``gpu``, either order of the row; None if absent."""
        hit = self.steps_per_s.get((gpu, a[0], a[1], b[0], b[1]))
        if hit is not None:
            return hit
        hit = self.steps_per_s.get((gpu, b[0], b[1], a[0], a[1]))
        return None if hit is None else (hit[1], hit[0])


def read_colocated(path: str | Path) -> ColocatedTable:
    """The look-up table of Gavel's co-located throughputs (rows from the one profile-table
    reader, ``workload.readers.profiles``, kind ``colocated``)."""
    from dlsched.workload.readers.profiles import read_profile

    table = read_profile(path, "colocated")
    out: dict[PairKey, tuple[float, float]] = {}
    for r in table.rows:
        key = (r.gpu_type.lower(), r.job_type, r.scale_factor, r.other_job_type, r.other_scale_factor)
        if key in out:
            raise InputError("duplicate entry for this pair on this GPU type", file=table.source, line=r.line,
                             field="other_job_type")
        out[key] = (r.steps_per_s, r.other_steps_per_s)
    return ColocatedTable(table.source, out)
