"""Alibaba PAI GPU trace 2020 (Weng et al., NSDI'22; alibaba/clusterdata cluster-trace-gpu-v2020).

Headerless CSVs with documented columns:

- ``pai_task_table``: job_name, task_name, inst_num, status, start_time, end_time, plan_cpu,
  plan_mem, plan_gpu, gpu_type.  ``plan_gpu`` is per instance in percent (100 = one GPU).
- ``pai_job_table`` (optional; found beside the task table by name when not given): job_name,
  inst_id, user, status, start_time, end_time.

A job is the group of its task rows: GPUs = sum over tasks of ceil(inst_num x plan_gpu / 100);
submit = the job table's start_time if given, else the earliest task start; duration = latest
task end - earliest task start.  ``gpu_type`` MISC (PAI's "other") means any type.  Jobs with
no GPU are reported in ``skipped`` (field plan_gpu).  A job's line is its first task row's.
"""

from __future__ import annotations

import math
from pathlib import Path

from dlsched.errors import InputError
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import NotAJob, Row, RowLoop, TraceLoad, csv_rows, model_for_gpus

TASK_COLUMNS = ["job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                "plan_mem", "plan_gpu", "gpu_type"]
JOB_COLUMNS = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
_ANY_TYPE = {"misc", ""}


def read_pai(path: str | Path, *, job_table: str | Path | None = None, skip_bad_rows: bool = False,
             default_model: str | None = None) -> TraceLoad:
    """Read a ``pai_task_table`` (``path``) and optionally its ``pai_job_table``."""
    source = str(path)
    loop = RowLoop(source, skip_bad_rows)
    jobs_meta: dict[str, Row] = {}
    if job_table is None:  # pai_task_table* -> pai_job_table* beside it
        sibling = Path(path).with_name(Path(path).name.replace("task_table", "job_table"))
        job_table = sibling if sibling != Path(path) and sibling.is_file() else None
    if job_table is not None:
        for r in csv_rows(Path(job_table), str(job_table), header=JOB_COLUMNS):
            try:
                r.check()
            except InputError as e:
                loop.record(e, r)
                continue
            jobs_meta.setdefault(r.str("job_name", ""), r)
    groups: dict[str, list[Row]] = {}
    for r in csv_rows(Path(path), source, header=TASK_COLUMNS):
        try:
            r.check()
            name = r.str("job_name")
        except InputError as e:
            loop.record(e, r)
            continue
        groups.setdefault(name, []).append(r)

    def parse(first: Row) -> JobSpec:
        tasks = groups[first.data["job_name"].strip()]
        gpus, starts, ends, types = 0, [], [], set()
        for t in tasks:
            plan = t.float("plan_gpu", default=0.0)
            gpus += math.ceil(t.int("inst_num", minimum=1) * plan / 100.0 - 1e-9)
            starts.append(t.time("start_time"))
            ends.append(t.time("end_time"))
            if plan > 0 and t.str("gpu_type", "").lower() not in _ANY_TYPE:
                types.add(t.gpu_type("gpu_type"))
        if gpus == 0:
            raise NotAJob("plan_gpu", "CPU-only job (no plan_gpu)")
        duration = first.positive_span(min(starts), max(ends), "end_time")
        meta = jobs_meta.get(first.data["job_name"].strip())
        submit = meta.time("start_time") if meta is not None else min(starts)
        model = first.model("model", model_for_gpus(gpus, default_model))
        gpu = types.pop() if len(types) == 1 else None
        return JobSpec(first.str("job_name"), submit, model, gpus,
                       batch_size=get_model(model).default_batch * gpus,
                       duration_s=duration, gpu_type=gpu,
                       extra={"status": first.data.get("status"), "tasks": len(tasks),
                              "user": meta.str("user", "") if meta is not None else ""})

    return loop.result(loop.run((ts[0] for ts in groups.values()), parse))

