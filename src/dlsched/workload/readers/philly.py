"""Microsoft Philly job logs (Jeon et al., ATC'19; msr-fiddle/philly-traces).

Two JSON shapes, both a top-level list of job objects:

- native ``cluster_job_log``: ``{"status", "vc", "jobid", "submitted_time", "user",
  "attempts": [{"start_time", "end_time", "detail": [{"ip", "gpus": [...]}]}]}``.
  GPUs = GPUs of the first attempt summed over its machines; duration = the time the job
  held GPUs, i.e. the sum of its attempts' (end - start).  Attempts with a null end (job
  still running at trace end) make the row bad (field ``attempts``).
- marwage's filtered subset (``philly_jobs_subset_*.json``): ``{"id", "num_gpus",
  "runtime" (minutes), "attempts": [{start_time, end_time}], "submitted_time"}``.
  Duration = ``runtime`` x 60 (first start to last end, gaps included, as the file defines it).

Times are 'YYYY-MM-DD HH:MM:SS' without a zone; only differences are used.  Philly names no
models: ``default_model`` or the GPU-count rule (``model_for_gpus``) picks one.
"""

from __future__ import annotations

from pathlib import Path

from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import (Row, RowLoop, TraceLoad, json_records, model_for_gpus,
                                              parse_datetime)


def _attempt_times(row: Row) -> list[tuple[float, float, dict]]:
    attempts = row.data.get("attempts")
    if not isinstance(attempts, list) or not attempts:
        raise row.error("missing value (no attempts)", "attempts")
    out = []
    for i, a in enumerate(attempts):
        if not isinstance(a, dict):
            raise row.error(f"attempt {i} is not an object", "attempts")
        start = parse_datetime(str(a.get("start_time") or ""))
        end = parse_datetime(str(a.get("end_time") or ""))
        if start is None or end is None:
            raise row.error(f"attempt {i} has no valid start_time/end_time", "attempts")
        if end < start:
            raise row.error(f"attempt {i} ends before it starts", "attempts")
        out.append((start, end, a))
    return out


def _job(row: Row, job_id: str, gpus: int, duration: float, default_model: str | None, **extra) -> JobSpec:
    submit = row.time("submitted_time")
    model = row.model("model", model_for_gpus(gpus, default_model))
    return JobSpec(job_id, submit, model, gpus, batch_size=get_model(model).default_batch * gpus,
                   duration_s=duration, extra={"user": str(row.data.get("user") or ""), **extra})


def read_philly(path: str | Path, *, skip_bad_rows: bool = False, default_model: str | None = None) -> TraceLoad:
    """Native ``cluster_job_log`` JSON."""
    source = str(path)

    def parse(row: Row) -> JobSpec:
        job_id = row.str("jobid")
        attempts = _attempt_times(row)
        detail = attempts[0][2].get("detail") or []
        if not isinstance(detail, list) or not all(isinstance(d, dict) and isinstance(d.get("gpus") or [], list)
                                                   for d in detail):
            raise row.error("attempt 0's detail must be a list of {ip, gpus: [...]} objects", "attempts")
        gpus = sum(len(d.get("gpus") or []) for d in detail)
        if gpus < 1:
            raise row.error("first attempt holds no GPUs", "attempts")
        duration = sum(end - start for start, end, _ in attempts)
        if duration <= 0:
            raise row.error("every attempt ends when it starts: duration 0 (a job of no length)", "attempts")
        return _job(row, job_id, gpus, duration, default_model, status=row.data.get("status"),
                    vc=row.data.get("vc"), attempts=len(attempts))

    loop = RowLoop(source, skip_bad_rows)
    return loop.result(loop.run(json_records(Path(path), source), parse))


def read_philly_subset(path: str | Path, *, skip_bad_rows: bool = False,
                       default_model: str | None = None) -> TraceLoad:
    """marwage's filtered Philly subset JSON (``runtime`` in minutes)."""
    source = str(path)

    def parse(row: Row) -> JobSpec:
        attempts = _attempt_times(row)
        return _job(row, row.str("id"), row.int("num_gpus", minimum=1), row.duration("runtime") * 60.0,
                    default_model, attempts=len(attempts))

    loop = RowLoop(source, skip_bad_rows)
    return loop.result(loop.run(json_records(Path(path), source), parse))
