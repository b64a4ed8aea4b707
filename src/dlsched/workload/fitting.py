"""Requests a model cannot run on, found when the trace is loaded, never mid-run.

Traces draw GPU counts independently of models (the arena trace, Crius section 8.1, pairs
MoE-10B with 4 A100-40G), and some readers pick a model by GPU count; so a few requests
cannot hold their model in GPU memory at any parallelism plan.  A policy that starts such a
job as asked would fail the run.  ``fit_requests`` splits a job list three ways:

- jobs that run as requested, unchanged;
- with ``grow=True`` (``--fit-requests``), jobs whose GPU count doubles until the model runs,
  up to ``cap`` GPUs, each change recorded as a ``RequestChange`` (a user would have asked
  for more; the global batch is kept, and a trace duration is read on the new count);
- jobs that cannot run within the cap: a ``BadRequest`` naming file, line and field.

Whether a job "runs" on n GPUs is a predicate ``runs(spec, n) -> bool`` the caller builds
from its perf model (workload sits below perf), so the check agrees with what the engine
will price.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from dlsched.workload.job import JobSpec

# The Crius authors' simulator caps a job at 16 GPUs; growing a request stops there.
DEFAULT_CAP = 16


@dataclass(frozen=True, slots=True)
class RequestChange:
    """One request grown so that its model fits (listed in summary.json)."""

    job_id: str
    line: int
    model: str
    old_gpus: int
    new_gpus: int

    def as_dict(self) -> dict:
        return {"job_id": self.job_id, "line": self.line, "model": self.model, "field": "num_gpus",
                "old": self.old_gpus, "new": self.new_gpus}


@dataclass(frozen=True, slots=True)
class BadRequest:
    """A job whose model runs on no GPU count the rules allow."""

    job: JobSpec
    reason: str

    @property
    def line(self) -> int:
        return int(self.job.extra.get("line") or 0)


@dataclass(frozen=True, slots=True)
class FitResult:
    """What ``fit_requests`` returns: the jobs, the requests it grew, the jobs it left out."""

    jobs: list[JobSpec]
    changes: list[RequestChange]
    bad: list[BadRequest]


def fit_requests(jobs: Iterable[JobSpec], runs: Callable[[JobSpec, int], bool], *, grow: bool,
                 cap: int = DEFAULT_CAP, where: Callable[[JobSpec], str] = lambda j: "",
                 why: Callable[[JobSpec], str | None] | None = None) -> FitResult:
    """Keep the jobs that run as asked; grow (or report) the others.

    ``where(job)`` describes the GPUs a job was checked on (for the message), e.g.
    "4 A100-40G GPUs".
    """
    kept: list[JobSpec] = []
    changes: list[RequestChange] = []
    bad: list[BadRequest] = []
    for spec in jobs:
        n = spec.num_gpus
        if runs(spec, n):
            kept.append(spec)
            continue
        name = spec.model if not spec.params else f"{spec.model} {spec.params}"
        if not grow:
            # a perf model that refuses for another reason than memory (a replayed table) says which
            reason = (why(spec) if why is not None else None) or \
                "it does not fit in GPU memory under any parallelism plan"
            bad.append(BadRequest(spec, f"model {name} (global batch {spec.batch_size}) cannot run on "
                                        f"{where(spec)}: {reason} (--fit-requests grows such requests; "
                                        "--skip-bad-rows leaves them out)"))
            continue
        while n < max(cap, spec.num_gpus) and not runs(spec, n):
            n *= 2
        if n > max(cap, spec.num_gpus) or not runs(spec, n):
            bad.append(BadRequest(spec, f"model {name} (global batch {spec.batch_size}) runs on no GPU "
                                        f"count from {spec.num_gpus} doubling up to {cap} of the "
                                        f"requested type ({where(spec)})"))
            continue
        kept.append(spec.with_(num_gpus=n))
        changes.append(RequestChange(spec.job_id, int(spec.extra.get("line") or 0), name, spec.num_gpus, n))
    return FitResult(kept, changes, bad)
