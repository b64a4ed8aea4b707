"""Feasibility of jobs on a cluster: can each job ever run there?

A job is infeasible when it asks for more GPUs than the cluster has (of its pinned type when
pinned), pins a GPU type the cluster lacks, or names a model the zoo does not know.  Errors
name the trace file and line from ``JobSpec.extra`` ("source", "line") when the job came
from a trace.
"""

from __future__ import annotations

from typing import Iterable

from dlsched.cluster.topology import Cluster
from dlsched.errors import InfeasibleJobError, InputError
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model
from dlsched.workload.readers._common import SkippedRow


def check_job(job: JobSpec, cluster: Cluster, source: str | None = None) -> None:
    """Raise ``InputError`` (``UnknownNameError``/``InfeasibleJobError``) if the job can never run."""
    where = {"file": job.extra.get("source", source), "line": job.extra.get("line")}
    get_model(job.model, job.params, field="model", **where)
    if job.num_gpus < 1:
        raise InfeasibleJobError(f"job {job.job_id} asks for {job.num_gpus} GPUs", field="num_gpus", **where)
    if job.gpu_type is not None:
        t = cluster.type_id(job.gpu_type, field="gpu_type", **where)
        have = int(cluster.type_gpus[t])
        if job.num_gpus > have:
            raise InfeasibleJobError(f"job {job.job_id} asks for {job.num_gpus} {job.gpu_type} GPUs; "
                                     f"cluster '{cluster.name}' has {have}", field="num_gpus", **where)
    elif job.num_gpus > cluster.num_gpus:
        raise InfeasibleJobError(f"job {job.job_id} asks for {job.num_gpus} GPUs; cluster "
                                 f"'{cluster.name}' has {cluster.num_gpus}", field="num_gpus", **where)


def check_jobs(jobs: Iterable[JobSpec], cluster: Cluster, skip_bad_rows: bool = False,
               source: str | None = None) -> tuple[list[JobSpec], list[SkippedRow]]:
    """Split jobs into those that can run on ``cluster`` and those that cannot.

    Without ``skip_bad_rows`` the first infeasible job raises; with it, each one becomes a
    ``SkippedRow`` whose reason is the error message without its location (so reasons group).
    """
    ok, skipped = [], []
    passed: set[tuple] = set()  # what the checks read: a million jobs share a few hundred of these
    for job in jobs:
        key = (job.model, job.params, job.num_gpus, job.gpu_type)
        if key in passed:
            ok.append(job)
            continue
        try:
            check_job(job, cluster, source)
            passed.add(key)
        except InputError as e:
            if not skip_bad_rows:
                raise
            skipped.append(SkippedRow(int(job.extra.get("line") or 0), e.field or "", _generic(e, job)))
            continue
        ok.append(job)
    return ok, skipped


def _generic(e: InputError, job: JobSpec) -> str:
    # "job X asks for 999 GPUs; ..." -> drop the job id so equal reasons count together.
    return e.reason.replace(f"job {job.job_id} ", "", 1)
