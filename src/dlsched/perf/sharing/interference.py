"""Packing interference: how fast each of several jobs runs when they share one GPU.

Model (defaults fitted to Gandiva, section 3 / Table 1 and Fig. 3):

- alone, a job keeps the GPU busy a fraction ``u`` of each iteration (its
  utilisation: kernels over kernels plus host-side time: input, launches,
  optimizer bookkeeping);
- packed, its host-side time ``1 - u`` is unchanged, but its kernels now run
  beside the others' for the share of time they are busy, and each such
  overlap costs ``1 + p`` of the kernel time (sharing the SMs, plus ``p`` of
  cache and memory-bandwidth contention).  To first order, with ``U`` the
  other jobs' summed utilisation, one iteration takes
  ``(1 - u) + u (1 + (1 + p) U)`` of its solo time and the job keeps the
  inverse of that as its speed factor.
- ``p`` by model family (``CONTENTION``): image CNNs 0.28, so two busy image
  jobs each run at 1 / 2.28 = 0.44 of solo, -12% aggregate (Gandiva: -11..-13%
  for ResNet-50 / ResNeXt-50 on CIFAR-10); memory-bound language models
  0.9, so mid-utilisation pairs land between about -16% (u = 0.85 LMs) and
  +44% (u = 0.55 CNNs), Gandiva's -16%..+46%; five small jobs (u = 0.2)
  reach 4.2x one job's throughput (Gandiva: gains up to 412%).
- memory is a hard limit: if the jobs' footprints sum to more than the GPU's
  memory the packing is infeasible (``PackingResult.feasible`` False;
  ``PlacementPerfModel.packing_factors`` raises ``PackingInfeasibleError``).

Gandiva's other interference figure (Fig. 3), two LMs under one PCIe switch on
*separate* GPUs slowing 19% each, is contention for the switch's host link
(input and parameter traffic), not for a GPU; ``shared_switch_factors`` gives
it to callers that place jobs side by side under one switch: LM-like jobs
(``rnn``) lose 19% each when another such job shares the switch, a
translation job (GNMT, also ``rnn``) the same, image CNNs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from dlsched.cluster.gpus import GPUType
from dlsched.errors import InputError
from dlsched.perf import compute as cmp
from dlsched.workload.job import JobSpec
from dlsched.workload.models import ModelInfo, get_model

CONTENTION: dict[str, float] = {"cnn": 0.28, "transformer": 0.9, "rnn": 0.9, "moe": 0.9,
                                "speech": 0.5, "rl": 0.2, "recsys": 0.5}
DEFAULT_CONTENTION = 0.5
SHARED_SWITCH_SLOWDOWN = {"rnn": 0.19}  # Gandiva Fig. 3: two LMs under one PCIe switch, 19% each

# Training memory per parameter: weights, gradients and Adam's two moments, in the
# training precision, plus an fp32 master copy for fp16 training (mixed precision).
_STATE_BYTES = {4: 16.0, 2: 16.0}
# The zoo's ``activation_bytes`` are layer *outputs*; training also keeps each layer's
# internal tensors (normalisation, nonlinearity, attention scores) for backward: ~4x the outputs
# (ResNet-50: 44 MB of outputs per sample -> ~180 MB, i.e. ~6 GB at batch 32, as it runs in fp32).
ACTIVATION_OUTPUT_FACTOR = 4.0
ACTIVATION_BYTES_PER_FLOP = 1.0 / 50  # when the zoo gives no activation sizes (same ResNet-50 anchor)
CONTEXT_BYTES = 0.5 * 2**30  # CUDA context and framework workspace per process


class PackingInfeasibleError(InputError):
    """The jobs' memory does not fit on one GPU together."""


@dataclass(frozen=True, slots=True)
class PackedJob:
    """What packing needs to know of a job: its solo utilisation, memory and family."""

    utilisation: float
    memory_bytes: float
    family: str = "cnn"


@dataclass(frozen=True, slots=True)
class PackingResult:
    """Whether jobs fit on one GPU together, and how fast each then runs."""

    feasible: bool
    factors: tuple[float, ...]  # fraction of solo speed each job keeps (0.0 when infeasible)
    memory_bytes: float
    capacity_bytes: float

    @property
    def aggregate(self) -> float:
        """Sum of the factors: packed throughput over one job's solo throughput (Gandiva's gain + 1)."""
        return sum(self.factors)


def memory_footprint(model: ModelInfo, batch: float) -> float:
    """Bytes one data-parallel replica needs: model state + activations + context."""
    act = ACTIVATION_OUTPUT_FACTOR * sum(l.activation_bytes for l in model.layers)
    if act <= 0:
        act = model.fwd_flops * ACTIVATION_BYTES_PER_FLOP
    return model.params * _STATE_BYTES.get(model.bytes_per_param, 16.0) + act * batch + CONTEXT_BYTES


def packed_job(job: JobSpec, gpu: GPUType, table=None) -> PackedJob:
    """A job's solo utilisation and memory on one GPU (``job.extra['gpu_util']`` overrides).

    ``table`` is a compute profile (``PlacementPerfModel.table``); None uses the built-in one.
    """
    model = get_model(job.model, job.params)
    batch = job.batch_size / max(1, job.num_gpus)
    util = job.extra.get("gpu_util") if job.extra else None
    if util is None:
        util = cmp.utilisation(model, gpu, batch, table)
    elif util > 1.0:  # traces give percent
        util = util / 100.0
    return PackedJob(float(util), memory_footprint(model, batch), model.family)


def pack(jobs: Sequence[PackedJob], gpu: GPUType, contention: Mapping[str, float] | None = None,
         utilisation: Mapping[str, float] | None = None) -> PackingResult:
    """Speed factors of ``jobs`` sharing one GPU of type ``gpu`` (see the module notes).

    ``contention`` and ``utilisation`` (per family: ``p`` and a scale on each job's solo
    utilisation) replace the defaults where given; ``dlsched.perf.calibration`` fits them
    to Gavel's measured co-located throughputs.
    """
    mem = sum(j.memory_bytes for j in jobs)
    cap = gpu.memory_bytes
    if mem > cap:
        return PackingResult(False, (0.0,) * len(jobs), mem, cap)
    if len(jobs) <= 1:
        return PackingResult(True, (1.0,) * len(jobs), mem, cap)
    scale = utilisation or {}
    u = [min(1.0, max(0.01, j.utilisation * scale.get(j.family, 1.0))) for j in jobs]
    total = sum(u)
    out = []
    for i, j in enumerate(jobs):
        p = contention[j.family] if contention and j.family in contention else CONTENTION.get(j.family,
                                                                                             DEFAULT_CONTENTION)
        t = (1.0 - u[i]) + u[i] * (1.0 + (1.0 + p) * (total - u[i]))
        out.append(1.0 / t)
    return PackingResult(True, tuple(out), mem, cap)


def shared_switch_factors(families: Sequence[str]) -> list[float]:
    """Speed factor of each job (one per GPU) of jobs placed side by side under one PCIe switch.

    A switch-heavy job slows by its family's ``SHARED_SWITCH_SLOWDOWN`` when at
    least one *other* switch-heavy job shares the switch; other jobs keep full speed.
    """
    heavy = [f in SHARED_SWITCH_SLOWDOWN for f in families]
    n_heavy = sum(heavy)
    return [1.0 - SHARED_SWITCH_SLOWDOWN[f] if h and n_heavy >= 2 else 1.0 for f, h in zip(families, heavy)]
