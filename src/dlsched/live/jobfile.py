"""Job YAML for ``dlsched submit``: the schema, validation, and line-accurate errors.

A file holds one job (a mapping) or several (``jobs:`` followed by a list), e.g.::

    name: cnn-a                # job id; unique within a scheduler's state
    script: cnn_job.py         # a PyTorch script using dlsched.live.agent (relative to this file)
    model: tiny-cnn            # model-zoo name, for perf models and reports
    num_gpus: 2
    iterations: 200
    batch_size: 32             # global batch, split over the workers
    checkpoint_every: 50       # iterations between periodic checkpoints (0: only on suspend)
    delay_s: 0                 # arrive this long after submission (replaying a small trace)
    args: {step_time_s: 0.04}  # handed to the script as agent.args

Errors name the file, the line and the field (``dlsched.yamlinput``, shared
with cluster specs, so both inputs report problems the same way).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dlsched.cluster.gpus import gpu_type
from dlsched.errors import InputError, UnknownNameError
from dlsched.live.capacity import Capacity
from dlsched.yamlinput import line_of, load_yaml, read_yaml_file, validate
from dlsched.workload.job import JobSpec


class JobFileEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    script: str = Field(min_length=1)
    model: str
    num_gpus: int = Field(ge=1, le=64)
    iterations: int = Field(ge=1)
    batch_size: int = Field(32, ge=1)
    gpu_type: str | None = None
    elastic: bool = False
    priority: int = 0
    checkpoint_every: int = Field(0, ge=0)
    delay_s: float = Field(0.0, ge=0)
    args: dict = Field(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _known_model(cls, v: str) -> str:
        from dlsched.live.models import get_model

        try:
            return get_model(v).name
        except UnknownNameError as e:
            raise ValueError(e.reason) from None

    @field_validator("args")
    @classmethod
    def _plain_args(cls, v: dict) -> dict:
        # the args travel as JSON (the state database, then the worker): dates, bytes and
        # non-string keys would not survive the trip
        try:
            if json.loads(json.dumps(v)) != v:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError("args must be plain data (strings, finite numbers, booleans, lists, mappings with "
                             "string keys)") from None
        return v

    @field_validator("gpu_type")
    @classmethod
    def _known_gpu(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return gpu_type(v).name
        except UnknownNameError as e:
            raise ValueError(e.reason) from None


class JobFileList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    jobs: list[JobFileEntry] = Field(min_length=1)


@dataclass(frozen=True)
class LiveJob:
    """A submitted job: the scheduler's JobSpec plus what it takes to run it."""

    spec: JobSpec
    script: str  # absolute path on the machines that run it
    args: dict = field(default_factory=dict)
    checkpoint_every: int = 0
    delay_s: float = 0.0

    def to_json(self) -> str:
        s = self.spec
        return json.dumps({"job_id": s.job_id, "model": s.model, "num_gpus": s.num_gpus,
                           "batch_size": s.batch_size, "iterations": s.total_iterations,
                           "gpu_type": s.gpu_type, "elastic": s.elastic,
                           "priority": s.priority,
                           "script": self.script, "args": self.args,
                           "checkpoint_every": self.checkpoint_every, "delay_s": self.delay_s},
                          sort_keys=True)

    @staticmethod
    def from_json(text: str, submit_time: float) -> "LiveJob":
        d = json.loads(text)
        spec = JobSpec(d["job_id"], submit_time, d["model"], d["num_gpus"], batch_size=d["batch_size"],
                       total_iterations=d["iterations"], gpu_type=d["gpu_type"],
                       elastic=d["elastic"], priority=d["priority"])
        return LiveJob(spec, d["script"], d["args"], d["checkpoint_every"], d["delay_s"])


def _to_live(entry: JobFileEntry, base: Path) -> LiveJob:
    script = Path(entry.script)
    if not script.is_absolute():
        script = (base / script).resolve()
    spec = JobSpec(entry.name, 0.0, entry.model, entry.num_gpus, batch_size=entry.batch_size,
                   total_iterations=entry.iterations, gpu_type=entry.gpu_type,
                   elastic=entry.elastic, priority=entry.priority)
    return LiveJob(spec, str(script), dict(entry.args), entry.checkpoint_every, entry.delay_s)


SCRIPT_DIRS_ENV = "DLSCHED_SCRIPT_DIRS"  # more folders scripts may live in (os.pathsep-separated)


def script_dirs(given=()) -> tuple[Path, ...]:
    """Folders outside a job file's own where its scripts may be: ``--allow-scripts`` and the environment."""
    import os

    extra = [p for p in os.environ.get(SCRIPT_DIRS_ENV, "").split(os.pathsep) if p]
    return tuple(Path(p).resolve() for p in (*given, *extra))


def _outside(script: Path, base: Path, allowed: tuple[Path, ...]) -> bool:
    """A worker runs the script as the service's user: only code beside the job file (or in a folder
    the operator allowed) may be named, never ``../../etc/...`` or a path elsewhere on the machine."""
    real = script.resolve()
    return not any(real.is_relative_to(root) for root in (base.resolve(), *allowed))


def parse_jobs(text: str, source: str = "<string>", base: Path | None = None,
               capacity: Capacity | None = None, allowed: tuple[Path, ...] = ()) -> list[LiveJob]:
    """Parse and validate job YAML; errors name the file, line and field.

    With ``capacity`` (the cluster is known), a job that could never run on it is an error too.
    A script must lie in the job file's folder (``base``) or one of ``allowed`` (``script_dirs``).
    """
    root, data = load_yaml(text, source, "a job file must be a mapping (one job) or have a 'jobs' list")
    parsed = validate(JobFileList if "jobs" in data else JobFileEntry, data, root, source)
    entries = parsed.jobs if isinstance(parsed, JobFileList) else [parsed]
    names = [e.name for e in entries]
    for i, n in enumerate(names):
        if names.index(n) != i:
            raise InputError(f"duplicate job name '{n}'", file=source,
                             line=line_of(root, ("jobs", i, "name")), field=f"jobs.{i}.name")
    base = base or Path.cwd()
    jobs = []
    for i, entry in enumerate(entries):
        loc = ("jobs", i, "script") if isinstance(parsed, JobFileList) else ("script",)
        try:
            job = _to_live(entry, base)
            found = Path(job.script).is_file()
        except (OSError, ValueError) as e:  # a path too long or with a NUL byte: not a script either
            raise InputError(f"bad script path: {getattr(e, 'strerror', None) or e}", file=source,
                             line=line_of(root, loc), field=".".join(str(p) for p in loc)) from None
        if not found:
            raise InputError(f"no such script: {job.script}", file=source, line=line_of(root, loc),
                             field=".".join(str(p) for p in loc))
        if _outside(Path(job.script), base, allowed):
            raise InputError(f"script {job.script} lies outside the job file's folder {base.resolve()}; "
                             f"allow its folder with --allow-scripts DIR (or {SCRIPT_DIRS_ENV})", file=source,
                             line=line_of(root, loc), field=".".join(str(p) for p in loc))
        jobs.append(job)
    for i, job in enumerate(jobs):
        unfit = capacity.unfit(job.spec) if capacity is not None else None
        if unfit is not None:
            loc = (("jobs", i) if isinstance(parsed, JobFileList) else ()) + (unfit[0],)
            raise InputError(f"job '{job.spec.job_id}' can never run on this scheduler's cluster: {unfit[1]}",
                             file=source, line=line_of(root, loc), field=".".join(str(p) for p in loc))
    return jobs


def load_jobs(path: str | Path, capacity: Capacity | None = None, allow=()) -> list[LiveJob]:
    """Jobs of a job file; ``allow`` names more folders its scripts may be in (beside ``script_dirs``'s)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such file", file=str(p))
    # read_yaml_file: a non-UTF-8 file is an error naming the file and line, not a traceback
    return parse_jobs(read_yaml_file(p), str(p), base=p.resolve().parent, capacity=capacity,
                      allowed=script_dirs(allow))
