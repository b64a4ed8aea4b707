"""JobSpec: what a user submits, as plain immutable data."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One training job as submitted.

    Exactly one of ``total_iterations`` and ``duration_s`` is the job's size.
    A duration (as traces give it) means "this long on the requested GPUs,
    consolidated"; the simulator turns it into iterations with the perf model
    when the job arrives (``dlsched.sim.sizing``), so every policy sees
    iterations.
    """

    job_id: str
    submit_time: float  # seconds from the start of the trace
    model: str  # a name in the model zoo (dlsched.workload.models)
    num_gpus: int  # GPU demand as requested
    batch_size: int = 32  # global batch size
    total_iterations: int | None = None
    duration_s: float | None = None
    gpu_type: str | None = None  # requested / pinned GPU type; None = any
    deadline: float | None = None  # absolute, seconds from trace start
    params: str | None = None  # model size variant, e.g. "1.3B" (Crius models)
    # the job accepts more or fewer GPUs than it asked for while it runs (Gandiva's grow-shrink
    # applies only to jobs that say so: their users scale learning rate and batch with the GPUs)
    elastic: bool = False
    priority: int = 0  # higher is more important (Gandiva never suspends a job for a lower one)
    # Format-specific leftovers, kept so nothing a trace gives is lost: e.g. "user" (plain,
    # Helios, PAI, Philly).  No policy reads those yet.
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        if (self.total_iterations is None) == (self.duration_s is None):
            raise ValueError(f"job {self.job_id}: give exactly one of total_iterations and duration_s")

    def with_(self, **changes) -> "JobSpec":
        return replace(self, **changes)


_FIELDS = tuple(f.name for f in fields(JobSpec))
# the slots' own setters, one per field in declaration order: calling a member descriptor's
# ``__set__`` skips the attribute lookup by name that ``object.__setattr__`` does per field
(_job_id, _submit_time, _model, _num_gpus, _batch_size, _total_iterations, _duration_s, _gpu_type, _deadline,
 _params, _elastic, _priority, _extra) = (getattr(JobSpec, name).__set__ for name in _FIELDS)


def unchecked_spec(job_id: str, submit_time: float, model: str, num_gpus: int, batch_size: int,
                   duration_s: float, gpu_type: str | None, extra: dict) -> JobSpec:
    """A duration-sized ``JobSpec`` built without ``__init__``: for a generator that makes a million
    of them from values that pass ``__post_init__``'s check by construction (a duration, no
    iteration count).  The frozen dataclass's ``__init__`` sets 13 fields through
    ``object.__setattr__`` and then validates; the slots' setters called one by one cost under a
    third of that per job.  The result is an ordinary, equal ``JobSpec``
    (``tests/workload/test_synthetic.py`` checks every field against ``JobSpec(...)``)."""
    spec = object.__new__(JobSpec)
    _job_id(spec, job_id)
    _submit_time(spec, submit_time)
    _model(spec, model)
    _num_gpus(spec, num_gpus)
    _batch_size(spec, batch_size)
    _total_iterations(spec, None)
    _duration_s(spec, duration_s)
    _gpu_type(spec, gpu_type)
    _deadline(spec, None)
    _params(spec, None)
    _elastic(spec, False)
    _priority(spec, 0)
    _extra(spec, extra)
    return spec
