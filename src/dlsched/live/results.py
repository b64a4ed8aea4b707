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

from dlsched.live.jobfile import LiveJob
from dlsched.live.store import ENDED, Store
from dlsched.report.io import write_results
from dlsched.report.records import JobRecord, TimeSeries
from dlsched.report.summary import summarize


def job_records(store: Store, now: float | None = None) -> list[JobRecord]:
    """One record per job the service took in; active jobs are 'unfinished' as of ``now``."""
    now = store.now() if now is None else now
    out = []
    for row in store.jobs():
        if row["arrival"] is None:
            continue
        job = LiveJob.from_json(row["body"], row["arrival"])
        s = job.spec
        status = row["status"]
        queued = row["queued_time"]
        run_time, gpu_s = row["run_time"], row["gpu_seconds"]
        if status in ("pending", "suspended"):
            queued += now - row["queued_since"]
        if status == "running" and row["held_since"] is not None:
            held = now - row["held_since"]
            run_time += held
            gpu_s += held * (len(json.loads(row["allocation"])) if row["allocation"] else s.num_gpus)
        # the report format knows finished / dropped / unfinished: a failed or unschedulable job is
        # one that will not run again, so 'dropped', with the store's reason (which says which)
        rec_status = ("finished" if status == "finished" else
                      "dropped" if status in ENDED else "unfinished")
        out.append(JobRecord(
            s.job_id, s.model, s.num_gpus, s.gpu_type or "", s.submit_time, row["first_start"],
            row["finish_time"], rec_status, s.total_iterations, round(float(row["done_iterations"]), 6),
            queued, run_time, gpu_s, 0.0, row["restarts"], row["migrations"], row["resizes"], None,
            row["reason"] if rec_status != "finished" else ""))
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
    return write_results(out_dir, records, series, summary, {**params, "engine": "live",
                                                            "num_gpus": num_gpus})
