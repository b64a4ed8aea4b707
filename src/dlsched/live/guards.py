"""What keeps one bad job or a dead service from misleading or stalling the live runtime.

A mixin of ``LiveService`` (kept apart from the scheduling loop so each part
stays small):

- **Unschedulable jobs:** a job that could never run on the cluster (a GPU
  type it lacks, more GPUs than it has) is taken in as ``unschedulable`` with
  the reason instead of waiting forever; it is looked at again when a service
  starts on a different cluster.
- **Restart limits:** a job whose runs fail (its script raised, its worker
  process died, it never reached a first iteration) waits out a backoff
  before it may run again: ``restart_backoff_s`` x 2^(n-1) for the n-th
  failure in a row, at most 60 s.  The job is out of the policy's view while
  it waits.  After ``max_restarts`` restarts in a row without a new
  checkpoint it is ``failed``, with the error's last lines as its reason.
  Node losses, refused launches and a scheduler restart are not the job's
  doing and do not count.
- **Watchdog:** a running segment whose rank 0 counts no iteration for
  ``stall_timeout_s`` (by default 20 times the job's measured iteration time,
  at least 60 s) is stalled: a job fault like a crash, so its GPUs are freed
  and it is retried within the same restart limit.
- **Heartbeat:** the service writes one to the store every ``heartbeat_s``,
  and a last one when it leaves, so ``status`` can tell a dead service from a
  live one.
- **Throughput:** measured iterations over measured time (``throughput.py``).
"""

from __future__ import annotations

import json
import math
import os

from dlsched.live.capacity import Capacity
from dlsched.live.jobfile import LiveJob
from dlsched.live.throughput import ThroughputMeter
from dlsched.policies.base import JobState, JobStatus

_BACKOFF_CAP_S = 60.0
# fault reasons that are the job's own doing (the rest, node loss and the like, are the cluster's)
_JOB_FAULTS = ("worker failed", "worker process or node lost", "segment stopped unexpectedly",
               "no first iteration within the launch timeout", "stalled")


class GuardsMixin:
    def _init_guards(self) -> None:
        st = self.store
        self.capacity = Capacity.of_layout(self.layout)
        self._held: dict[str, tuple[JobState, float]] = {}  # job -> (state, may run again at)
        self._failures: dict[str, tuple[int, float]] = {}  # job -> (failures in a row, resumed from)
        self._started_at = st.now()  # segments launched before this were adopted
        self._run_start: float | None = None
        self._last_beat = -math.inf
        self.meter = ThroughputMeter(self.cfg.sample_s)
        st.beat(os.getpid())
        for row in st.jobs("unschedulable"):  # a new cluster may fit what the old one could not
            if self.capacity.unfit(LiveJob.from_json(row["body"], 0.0).spec) is None:
                st.update_job(row["job_id"], status="submitted", arrival=None, reason="")
        for row in st.jobs("pending", "suspended"):  # and a queued job may not fit a new cluster
            unfit = self.capacity.unfit(LiveJob.from_json(row["body"], 0.0).spec)
            if unfit is not None:
                with st.tx():
                    st.update_job(row["job_id"], status="unschedulable", reason=f"unschedulable ({unfit[0]}): "
                                                                                f"{unfit[1]}")
                    st.event(st.now(), row["job_id"], "unschedulable", field=unfit[0], reason=unfit[1])

    # ------------------------------------------------------------------ heartbeat

    def _heartbeat(self, now: float) -> None:
        if now - self._last_beat >= self.cfg.heartbeat_s:
            self._last_beat = now
            self.store.beat(os.getpid())

    # ------------------------------------------------------------------ unschedulable jobs

    def _hold_unschedulable(self, live: LiveJob, arrival: float, now: float) -> bool:
        unfit = self.capacity.unfit(live.spec)
        if unfit is None:
            return False
        field, why = unfit
        reason = f"unschedulable ({field}): {why}"
        with self.store.tx():
            self.store.update_job(live.spec.job_id, status="unschedulable", arrival=arrival,
                                  queued_since=arrival, reason=reason)
            self.store.event(now, live.spec.job_id, "unschedulable", field=field, reason=why)
        return True

    # ------------------------------------------------------------------ restart limits

    def _after_fault(self, job: JobState, now: float, reason: str) -> None:
        """Called once a fault has sent the job back to the queue: count it, hold it or fail it."""
        if not reason.startswith(_JOB_FAULTS) or job.job_id not in self.jobs:
            return
        count, resumed = self._failures.get(job.job_id, (0, -1.0))
        if job.done_iterations > resumed:
            count = 0  # it checkpointed further since the last failure: a fresh start of the count
        count += 1
        self._failures[job.job_id] = (count, job.done_iterations)
        error = self._last_error(job.job_id)
        if count > self.cfg.max_restarts:
            # the error's last lines on one line, so status tables and jobs.csv rows stay rows
            tail = " | ".join(x.strip() for x in (error or reason).strip().splitlines()[-5:])
            self._fail(job, now, f"failed {count} times in a row without a new checkpoint; last error: {tail}",
                       error)
            return
        wait = min(_BACKOFF_CAP_S, self.cfg.restart_backoff_s * 2 ** (count - 1))
        self.core.withdraw(job)
        self.policy.on_finish(job, now)  # out of the policy's view until the backoff is over
        self._held[job.job_id] = (job, now + wait)
        last = (error or reason).strip().splitlines()[-1] if (error or reason).strip() else reason
        with self.store.tx():
            self.store.update_job(job.job_id, reason=f"restart {count}/{self.cfg.max_restarts} in {wait:g} s "
                                                     f"after: {last}")
            self.store.event(now, job.job_id, "backoff", attempt=count, wait_s=wait, error=last)

    def _release_held(self, now: float) -> None:
        for jid in [j for j, (_, until) in self._held.items() if now >= until]:
            self._unhold(jid, now)

    def _unhold(self, jid: str, now: float) -> None:
        job, _ = self._held.pop(jid)
        self.core.adopt(job)
        self.policy.on_submit(job, now)
        self.store.update_job(jid, reason="")
        self._dirty = True

    def _fail(self, job: JobState, now: float, reason: str, error: str = "") -> None:
        """The job will not run again: out of the queue, ``failed`` with the error in the store."""
        job.status = JobStatus.DROPPED  # the policies know no 'failed'; to them it is gone like a drop
        with self.store.tx():
            self._persist(job, now, status="failed", allocation=None, held_since=None, reason=reason)
            self.store.event(now, job.job_id, "failed", reason=reason, error=error)
        self.core.withdraw(job)
        self._failures.pop(job.job_id, None)
        self.policy.on_finish(job, now)
        self._dirty = True
        if self.cfg.out_dir:
            self.write_results(self.cfg.out_dir)

    def _last_error(self, job_id: str) -> str:
        row = self.store.db.execute("SELECT detail FROM events WHERE job_id=? AND kind='worker-error' "
                                    "ORDER BY id DESC LIMIT 1", (job_id,)).fetchone()
        return json.loads(row[0]).get("error", "") if row else ""

    # ------------------------------------------------------------------ throughput

    def _count_progress(self, seg, reply: dict) -> None:
        """Rank 0 of a segment reported: add the iterations it did since its last report."""
        live = self.live.get(seg.job_id)
        if live is None or reply.get("iterations") is None:
            return  # an orphan, or no report yet
        launched_here = seg.launched_at is not None and seg.launched_at >= self._started_at
        self.meter.count((seg.job_id, seg.number), float(reply["iterations"]), live.spec.batch_size,
                         float(seg.iter_start) if launched_here else None)

    def _series_state(self) -> tuple[int, int, int]:
        running = [j for j in self.jobs.values() if j.status == JobStatus.RUNNING]
        busy = {g for j in running for g in j.allocation.gpus}  # a shared GPU is busy once
        return (len(busy), len(running),
                len(self.jobs) + len(self._held) - len(running))

    def _flush_series(self, now: float) -> None:
        for row in self.meter.flush(now, self._series_state()):
            self.store.series_sample(*row)
