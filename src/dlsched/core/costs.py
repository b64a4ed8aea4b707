"""How a change to a job's allocation is classified, and what it costs by default."""

from __future__ import annotations

from dataclasses import dataclass

from dlsched import defaults as D
from dlsched.policies.base import Allocation, JobStatus
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model


@dataclass(frozen=True)
class EngineCosts:
    """Default overheads (a policy's ``overhead`` may replace them per change)."""

    # defaults and their sources in dlsched/defaults.py
    start_overhead_s: float = D.START_OVERHEAD_S
    restore_base_s: float = D.RESTORE_BASE_S
    restore_s_per_gb: float = D.RESTORE_S_PER_GB
    checkpoint_interval_s: float | None = D.CHECKPOINT_INTERVAL_S
    slice_switch_s: float = D.SLICE_SWITCH_S
    slice_quantum_s: float = D.SLICE_QUANTUM_S
    # a switch grows with the state a job keeps resident (Gandiva: ~0.1 s small jobs, ~1 s large
    # translation models): slice_switch_s + this per GB of model state, at most slice_switch_max_s
    slice_switch_s_per_gb: float = 0.0
    slice_switch_max_s: float | None = None  # None: no cap


def state_gb(spec: JobSpec) -> float:
    """GB of a job's model state: weights + optimizer (Adam keeps two moments: 3x the weights in all)."""
    model = get_model(spec.model, spec.params)
    return 3 * model.params * model.bytes_per_param / 1e9


def restore_cost(spec: JobSpec, costs: EngineCosts) -> float:
    """Seconds to bring a job's state back from a checkpoint: grows with the model."""
    return costs.restore_base_s + costs.restore_s_per_gb * state_gb(spec)


def slice_switch_cost(spec: JobSpec, costs: EngineCosts) -> float:
    """Seconds a time-sliced job loses per quantum to one suspend + resume."""
    if not costs.slice_switch_s_per_gb:
        return costs.slice_switch_s
    cost = costs.slice_switch_s + costs.slice_switch_s_per_gb * state_gb(spec)
    return cost if costs.slice_switch_max_s is None else min(costs.slice_switch_max_s, cost)


def classify(status: JobStatus, old: Allocation | None, new: Allocation) -> str | None:
    """The kind of change from ``old`` to ``new``; None when nothing changes."""
    if old is None:
        return "start" if status == JobStatus.PENDING else "resume"
    if old.gpus != new.gpus:
        return "migrate" if len(old.gpus) == len(new.gpus) else "resize"
    if old.plan != new.plan:
        return "replan"
    if old.mode == new.mode:
        return None
    if new.mode == "packed":
        return "pack"
    if new.mode == "sliced":
        return "slice-in"
    return "unpack" if old.mode == "packed" else "slice-out"


def default_cost(kind: str, spec: JobSpec, costs: EngineCosts) -> float:
    if kind == "start":
        return costs.start_overhead_s
    if kind in ("pack", "unpack", "slice-in", "slice-out"):
        return 0.0  # the job stays on its GPUs; a shared mode's price is in its speed factor
    return restore_cost(spec, costs)
