"""Gavel's generated "msr" traces: ``job_id,submit_time_s,num_gpus,total_steps,job_type``.

``job_type`` is "ResNet-50 (batch size 64)" or a bare name ("A3C", "CycleGAN").  The name
maps to a zoo model through aliases; the batch in brackets is per worker (Gavel scales
data-parallel jobs by adding workers), so the global batch is batch x num_gpus.

Step semantics.  Gavel counts *worker* steps: its trace generator sets
``total_steps = duration x throughput[v100][(job_type, scale_factor)]`` and its simulator
advances a job by ``throughput x time`` until ``total_steps`` is reached, where the measured
throughput of an n-worker job is the sum over its workers (the shipped table has LM batch 10
at 81.7 steps/s on one V100 and 163.1 on two; Gavel's ``scheduler/utils.py``
``generate_job`` and the OSDI'20 paper, section 7).  One dlsched iteration is one synchronous
step of the whole job at the global batch, i.e. n worker steps, so
``total_iterations = ceil(total_steps / num_gpus)`` (rounding up adds less than one
iteration).  The trace's own figures are kept in ``extra`` (``total_steps``,
``scale_factor``) for the throughput replay (``dlsched.perf.measured.replay``).
"""

from __future__ import annotations

import re
from pathlib import Path

from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import Row, RowLoop, TraceLoad, csv_rows

_JOB_TYPE = re.compile(r"^\s*(?P<name>.*?)\s*(?:\(\s*batch size\s+(?P<batch>\d+)\s*\))?\s*$")


def parse_job_type(raw: str) -> tuple[str, int | None]:
    """'ResNet-50 (batch size 64)' -> ('ResNet-50', 64); 'A3C' -> ('A3C', None)."""
    m = _JOB_TYPE.match(raw)
    return m.group("name"), (int(m.group("batch")) if m.group("batch") else None)


def job_iterations(total_steps: int, num_gpus: int) -> int:
    """Whole-job iterations for Gavel's worker-step count (each iteration is num_gpus worker steps)."""
    return -(-total_steps // num_gpus)


def read_gavel(path: str | Path, *, skip_bad_rows: bool = False) -> TraceLoad:
    source = str(path)

    def parse(row: Row) -> JobSpec:
        name, batch = parse_job_type(row.str("job_type"))
        model = row.model("job_type", name)
        gpus = row.int("num_gpus", minimum=1)
        steps = row.int("total_steps", minimum=1)
        per_worker = batch or get_model(model).default_batch
        return JobSpec(row.str("job_id"), row.float("submit_time_s"), model, gpus,
                       batch_size=per_worker * gpus, total_iterations=job_iterations(steps, gpus),
                       extra={"job_type": row.str("job_type"), "total_steps": steps, "scale_factor": gpus})

    loop = RowLoop(source, skip_bad_rows)
    required = ("job_id", "submit_time_s", "num_gpus", "total_steps", "job_type")
    return loop.result(loop.run(csv_rows(Path(path), source, required=required), parse))
