"""Gavel's measured co-location throughputs: two jobs packed on the same GPUs (space sharing).

``gavel-colocated-throughputs.csv`` (``gpu,job_type,scale_factor,other_job_type,
other_scale_factor,steps_per_s,other_steps_per_s``), from Gavel's
``scheduler/simulation_throughputs.json``: each job's worker steps per second while it shares
its GPUs with the other.  Beside the isolated table (``replay.ThroughputTable``) this gives
measured packing interference: a packed job keeps ``packed / isolated`` of its solo speed.
Detected from its header (``COLUMNS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dlsched.errors import InputError

COLUMNS = ("gpu", "job_type", "scale_factor", "other_job_type", "other_scale_factor", "steps_per_s",
           "other_steps_per_s")

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


def is_colocated(header: list[str]) -> bool:
    return set(COLUMNS) <= set(header)


def read_colocated(path: str | Path) -> ColocatedTable:
    from dlsched.workload.readers._common import csv_rows

    source = str(path)
    out: dict[PairKey, tuple[float, float]] = {}
    for row in csv_rows(Path(path), source, required=COLUMNS):
        row.check()
        key = (row.str("gpu").lower(), row.str("job_type"), row.int("scale_factor", minimum=1),
               row.str("other_job_type"), row.int("other_scale_factor", minimum=1))
        if key in out:
            raise row.error("duplicate entry for this pair on this GPU type", "other_job_type")
        out[key] = (row.float("steps_per_s", minimum=0.0), row.float("other_steps_per_s", minimum=0.0))
    if not out:
        raise InputError("no rows in the co-location table", file=source, line=1)
    return ColocatedTable(source, out)
