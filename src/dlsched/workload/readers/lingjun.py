"""Alibaba Lingjun GPU cluster dataset 2023 (Cao et al., SIGCOMM'24 CRUX): job.csv + worker.csv.

The repository's README describes the files but not their exact column names, so the reader
takes the names below with a few spellings each (``_COLUMNS``); docs/trace-formats.md lists them.

- ``job.csv``: job id, name, type (PyTorch/TensorFlow...), start time, end time, optional
  submit time and GPU count.
- ``worker.csv`` (optional; found beside job.csv by name when not given): one row per worker
  with its job id and GPUs; a job's GPU demand
  is the sum over its workers.  Without it, job.csv must carry a GPU count.

submit = submit time if given, else start time; duration = end - start.  The jobs' models
are unknown (the dataset's README says so): ``default_model`` or the GPU-count rule.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.errors import InputError
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import (NotAJob, Row, RowLoop, TraceLoad, csv_header, csv_rows,
                                              model_for_gpus)

_COLUMNS = {
    "job_id": ("job_id", "jobid", "JobId", "job_name"),
    "gpus": ("gpu_num", "num_gpus", "gpus", "gpu", "GPU"),
    "start": ("start_time", "StartTime", "gmt_job_running"),
    "end": ("end_time", "EndTime", "gmt_job_finished"),
    "submit": ("submit_time", "SubmitTime", "gmt_job_submitted"),
}


def _col(header: list[str], key: str) -> str | None:
    return next((c for c in _COLUMNS[key] if c in header), None)


def read_lingjun(path: str | Path, *, worker_table: str | Path | None = None, skip_bad_rows: bool = False,
                 default_model: str | None = None) -> TraceLoad:
    source = str(path)
    if worker_table is None:  # job.csv -> worker.csv beside it, as the dataset lays them out
        sibling = Path(path).with_name(Path(path).name.replace("job", "worker"))
        worker_table = sibling if sibling != Path(path) and sibling.is_file() else None
    header = csv_header(Path(path), source)
    loop = RowLoop(source, skip_bad_rows)
    id_col = _col(header, "job_id")
    if id_col is None:
        raise InputError("no job id column", file=source, line=1, field="job_id")
    gpus_by_job: dict[str, int] | None = None
    bad_workers: set[str] = set()
    if worker_table is not None:
        wsrc = str(worker_table)
        wheader = csv_header(Path(worker_table), wsrc)
        wid, wg = _col(wheader, "job_id"), _col(wheader, "gpus")
        if wid is None or wg is None:
            raise InputError("worker table needs job id and GPU columns", file=wsrc, line=1,
                             field="job_id" if wid is None else "gpu_num")
        gpus_by_job = {}
        for w in csv_rows(Path(worker_table), wsrc):
            try:
                w.check()
                jid, n = w.str(wid), w.int(wg)
            except InputError as e:  # the job's GPU count would be wrong: skip the job too
                loop.record(e, w)
                bad_workers.add(str(w.data.get(wid, "")).strip())
                continue
            gpus_by_job[jid] = gpus_by_job.get(jid, 0) + n
    gpu_col, start_col, end_col, submit_col = (_col(header, k) for k in ("gpus", "start", "end", "submit"))
    if gpus_by_job is None and gpu_col is None:
        raise InputError("no GPU column and no worker table", file=source, line=1, field="gpu_num")
    for key, col in (("start", start_col), ("end", end_col)):
        if col is None:
            raise InputError(f"no {key} time column (one of {', '.join(_COLUMNS[key])})", file=source, line=1,
                             field=_COLUMNS[key][0])

    def parse(row: Row) -> JobSpec:
        jid = row.str(id_col)
        if gpus_by_job is not None and jid in bad_workers:
            raise row.error("a worker row of this job is bad (see the worker table's skipped rows)", id_col)
        gpus = gpus_by_job.get(jid, 0) if gpus_by_job is not None else row.int(gpu_col)
        start = row.time(start_col)
        end = row.time(end_col)
        duration = row.positive_span(start, end, end_col)
        submit = row.time(submit_col) if submit_col and row.has(submit_col) else start
        if gpus == 0:
            raise NotAJob("gpu_num", "job without GPUs")
        model = row.model("model", model_for_gpus(gpus, default_model))
        return JobSpec(jid, submit, model, gpus, batch_size=get_model(model).default_batch * gpus,
                       duration_s=duration,
                       extra={k: row.data[k] for k in ("job_name", "job_type", "status") if row.has(k)})

    return loop.result(loop.run(csv_rows(Path(path), source), parse))
