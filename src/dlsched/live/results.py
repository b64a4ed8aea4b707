"""A live run's results in the simulator's format, so ``dlsched report`` reads either.

Records come from the store's job rows (the service keeps the same
accounting the simulator does: queueing delay, run time, GPU-seconds,
restarts, migrations, resizes), the series from its series table, whose
throughput is measured (``throughput.py``).  A ``failed`` or
``unschedulable`` job is recorded as ``dropped`` with a reason that begins
with what happened ("failed ...", "unschedulable ...").
"""

from __future__ import annotations

import json
from pathlib import Path

from dlsched.core.records import job_record
from dlsched.core.state import add_holder, gpu_share
from dlsched.live.jobfile import LiveJob
from dlsched.live.store import ENDED, Store
from dlsched.report.io import write_results
from dlsched.report.records import JobRecord, TimeSeries
from dlsched.policies.base import Allocation, JobState, JobStatus
from dlsched.report.summary import summarize


_STATUS = {"pending": JobStatus.PENDING, "running": JobStatus.RUNNING, "suspended": JobStatus.SUSPENDED,
           "finished": JobStatus.FINISHED, "dropped": JobStatus.DROPPED, "failed": JobStatus.DROPPED,
           "unschedulable": JobStatus.DROPPED}


def job_state(live: LiveJob, row) -> JobState:
    """A job as the store last saw it; a running job's time is accounted up to ``held_since``."""
    status = _STATUS[row["status"]]
    running = status == JobStatus.RUNNING
    return JobState(live.spec, row["total_iterations"], done_iterations=row["done_iterations"], status=status,
                    allocation=Allocation.of(json.loads(row["allocation"]), mode=row["mode"]) if running else None,
                    updated_at=row["held_since"] if running else row["queued_since"],
                    first_start=row["first_start"], finish_time=row["finish_time"],
                    queued_since=row["queued_since"], queued_time=row["queued_time"], run_time=row["run_time"],
                    gpu_seconds=row["gpu_seconds"], restarts=row["restarts"], migrations=row["migrations"],
                    resizes=row["resizes"])


def job_records(store: Store, now: float | None = None) -> list[JobRecord]:
    """One record per job the service took in; active jobs are 'unfinished' as of ``now``.

    Built by ``core.records.job_record``, the simulator's builder.  ``comm_time``
    stays 0: live runs measure whole iterations, not their communication.
    """
    now = store.now() if now is None else now
    jobs = [(row, job_state(LiveJob.from_json(row["body"], row["arrival"]), row))
            for row in store.jobs() if row["arrival"] is not None]
    holders: dict[int, set[str]] = {}  # a shared GPU's time is split between its holders, as the core does
    for _, job in jobs:
        if job.status == JobStatus.RUNNING:
            add_holder(holders, job.job_id, job.allocation)
    out = []
    for row, job in jobs:
        if job.status == JobStatus.RUNNING and job.updated_at is not None:
            held = now - job.updated_at
            job.run_time += held
            job.gpu_seconds += held * gpu_share(job.allocation, holders)
        # the report format knows finished / dropped / unfinished: a failed or unschedulable job is
        # one that will not run again, so 'dropped', with the store's reason (which says which)
        status = "finished" if row["status"] == "finished" else "dropped" if row["status"] in ENDED else "unfinished"
        out.append(job_record(job, status, row["reason"] if status != "finished" else "", now))
    out.sort(key=lambda r: (r.submit, r.job_id))
    return out


def time_series(store: Store) -> TimeSeries:
    ts = TimeSeries()
    for t, busy, running, queued, thr in store.series():
        ts.add(t, busy, running, queued, thr)
    return ts


def write_live_results(store: Store, out_dir: str | Path, params: dict, num_gpus: int) -> Path:
    records = job_records(store)
    series = time_series(store)
    summary = summarize(records, series, num_gpus)
    written = write_results(out_dir, records, series, summary, {**params, "engine": "live",
                                                               "num_gpus": num_gpus})
    # the measured iteration times in the profile format, so `dlsched perf calibrate` reads a live run
    from dlsched.live.profile_export import FILE, export

    export(store, Path(written) / FILE)
    return written
