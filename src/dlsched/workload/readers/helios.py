"""SenseTime Helios ``cluster_log.csv`` (Hu et al., SC'21; S-Lab-System-Group/HeliosData).

Columns: ``job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,
end_time,duration,queue``.  ``submit_time`` is 'YYYY-MM-DD HH:MM:SS' (numbers are read as
seconds too); ``duration`` is the run time in seconds.  CPU-only jobs (``gpu_num`` 0) are not
training jobs for a GPU scheduler: they are reported in ``skipped`` (field gpu_num), never
dropped silently.  No model names: ``default_model`` or the GPU-count rule.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import NotAJob, Row, RowLoop, TraceLoad, csv_rows, extra, model_for_gpus


def read_helios(path: str | Path, *, skip_bad_rows: bool = False, default_model: str | None = None) -> TraceLoad:
    source = str(path)

    def parse(row: Row) -> JobSpec:
        job_id = row.str("job_id")
        gpus = row.int("gpu_num")
        submit = row.time("submit_time")
        duration = row.duration("duration")
        if gpus == 0:
            raise NotAJob("gpu_num", "CPU-only job (gpu_num 0)")
        model = row.model("model", model_for_gpus(gpus, default_model))
        return JobSpec(job_id, submit, model, gpus, batch_size=get_model(model).default_batch * gpus,
                       duration_s=duration,
                       extra=extra(row, "user", "vc", "jobname", "state", "node_num", "cpu_num"))

    loop = RowLoop(source, skip_bad_rows)
    required = ("job_id", "gpu_num", "submit_time", "duration")
    return loop.result(loop.run(csv_rows(Path(path), source, required=required), parse))
