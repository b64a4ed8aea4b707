"""The one place a job's result row is built, for both engines."""

from __future__ import annotations

from dlsched.policies.base import JobState, JobStatus
from dlsched.report.records import JobRecord


_WAITING = frozenset((JobStatus.PENDING, JobStatus.SUSPENDED))


def model_label(spec) -> str:
    """The model as ``jobs.csv`` names it: with its size where the trace gave one (``job_record``
    spells this out inline: it runs once per job)."""
    return spec.model if not spec.params else f"{spec.model}-{spec.params}"


def job_record(job: JobState, status: str, reason: str, now: float) -> JobRecord:
    """``job``'s row as of ``now`` (a job still queued has waited until ``now``)."""
    s = job.spec
    queued = job.queued_time + (now - job.queued_since if job.status in _WAITING else 0.0)
    return JobRecord(
        s.job_id, s.model if not s.params else f"{s.model}-{s.params}", s.num_gpus, s.gpu_type or "", s.submit_time, job.first_start,
        job.finish_time, status, job.total_iterations, round(job.done_iterations, 6), queued, job.run_time,
        job.gpu_seconds, job.comm_time, job.restarts, job.migrations, job.resizes, s.deadline, reason)
