"""Plain result data: one record per job, and cluster time series."""

from __future__ import annotations

from dataclasses import dataclass, field, fields


# Not frozen: one is built per job (a million in the scale benchmark), and a frozen
# dataclass's __init__ costs about 5x a plain one's (one object.__setattr__ per field).
# Nothing changes a record once built.
@dataclass(slots=True)
class JobRecord:
    """One job's outcome, as jobs.csv writes it."""

    job_id: str
    model: str
    num_gpus: int  # as requested
    gpu_type: str  # as requested ("" = any)
    submit: float
    first_start: float | None
    finish: float | None
    status: str  # finished | dropped | unfinished
    total_iterations: int
    done_iterations: float
    queueing_delay: float  # total time waiting in the queue (first wait + waits after preemption)
    run_time: float  # wall time holding GPUs
    gpu_seconds: float
    comm_time: float  # exposed communication time
    restarts: int
    migrations: int
    resizes: int
    deadline: float | None = None
    reason: str = ""  # why dropped / unfinished

    @property
    def jct(self) -> float | None:
        return None if self.finish is None else self.finish - self.submit

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in fields(cls)] + ["jct"]

    def row(self) -> list:
        return [getattr(self, f.name) for f in fields(self)] + [self.jct]


@dataclass(slots=True)
class TimeSeries:
    """Step functions sampled at every change: value holds from its time to the next.

    A row equal to the one before is not stored (long quiet stretches cost
    nothing); ``close()`` keeps the time of the last sample, so the series
    still ends where the run did.
    """

    time: list[float] = field(default_factory=list)
    busy_gpus: list[int] = field(default_factory=list)
    running_jobs: list[int] = field(default_factory=list)
    queued_jobs: list[int] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)  # samples/s over all running jobs
    _tail: float | None = None  # time of the last sample left out as a repeat

    def add(self, t: float, busy: int, running: int, queued: int, thr: float) -> None:
        if self.time:
            if self.time[-1] == t:
                self.busy_gpus[-1], self.running_jobs[-1] = busy, running
                self.queued_jobs[-1], self.throughput[-1] = queued, thr
                return
            if (self.busy_gpus[-1] == busy and self.running_jobs[-1] == running
                    and self.queued_jobs[-1] == queued and self.throughput[-1] == thr):
                self._tail = t
                return
        self._tail = None
        self.time.append(t)
        self.busy_gpus.append(busy)
        self.running_jobs.append(running)
        self.queued_jobs.append(queued)
        self.throughput.append(thr)

    def close(self) -> None:
        """Store the last repeat, if any, so the series spans the whole run."""
        if self._tail is not None:
            t, self._tail = self._tail, None
            self.time.append(t)
            self.busy_gpus.append(self.busy_gpus[-1])
            self.running_jobs.append(self.running_jobs[-1])
            self.queued_jobs.append(self.queued_jobs[-1])
            self.throughput.append(self.throughput[-1])

    def columns(self) -> dict[str, list]:
        return {"time": self.time, "busy_gpus": self.busy_gpus, "running_jobs": self.running_jobs,
                "queued_jobs": self.queued_jobs, "throughput": self.throughput}
