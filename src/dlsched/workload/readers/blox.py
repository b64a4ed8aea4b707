"""Blox's synthetic traces: ``job_id,submit_time_s,num_gpus,duration_s,job_type``.

``job_type`` is a task class ("IMAGE"); classes map to zoo models by alias (IMAGE ->
ResNet-50), or every job gets ``default_model`` when given.  Sizes are durations.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import Row, RowLoop, TraceLoad, csv_rows


def read_blox(path: str | Path, *, skip_bad_rows: bool = False, default_model: str | None = None) -> TraceLoad:
    source = str(path)

    def parse(row: Row) -> JobSpec:
        if default_model:
            model = row.model("job_type", default_model)
        else:
            model = row.model("job_type", row.str("job_type"))
        gpus = row.int("num_gpus", minimum=1)
        return JobSpec(row.str("job_id"), row.float("submit_time_s"), model, gpus,
                       batch_size=get_model(model).default_batch * gpus,
                       duration_s=row.duration("duration_s"), extra={"job_type": row.str("job_type", "")})

    loop = RowLoop(source, skip_bad_rows)
    required = ("job_id", "submit_time_s", "num_gpus", "duration_s") + (("job_type",) if not default_model else ())
    return loop.result(loop.run(csv_rows(Path(path), source, required=required), parse))
