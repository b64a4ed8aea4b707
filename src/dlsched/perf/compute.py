"""Compute time of one iteration on one GPU: measured figures first, FLOPs x efficiency otherwise.

Order of precedence for (model, GPU type, per-GPU batch):
1. a user's profile table (CSV, ``ProfileTable.load``), which overrides everything;
2. the public measurements in ``MEASURED`` (cited below);
3. ``train FLOPs x batch / (peak x efficiency)`` plus a fixed per-iteration
   host overhead, with the efficiency from ``EFFICIENCY`` by (GPU
   architecture, model family).

Measured rows are scaled to another batch linearly above the fixed overhead
(per-sample work dominates for the batches of these tables).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from dlsched.cluster.gpus import GPUType, gpu_type
from dlsched.errors import InputError, UnknownNameError
from dlsched.workload.models import ModelInfo

# Achieved fraction of the data-sheet peak.  FLOPs count a multiply-add as 2 (the zoo's
# convention: ResNet-50 = 8.2 GFLOPs forward).  fp32-trained models (4-byte gradients) are
# keyed by architecture alone and measured against the fp32 peak, except on Ampere and
# Hopper where fp32 training runs on TF32 tensor cores at half the fp16 rate (A100 data
# sheet: 156 vs 312 TFLOPS; H100 SXM: 495 vs 989).  fp16 models use the tensor-core peak and
# are keyed by (architecture, family).  Anchors:
# - TensorFlow benchmarks (2017): ResNet-50 219 img/s on P100 = 3 x 8.2e9 x 219 = 5.4 TFLOPS
#   of 9.3 (0.58); 52 img/s on a K80 GPU = 1.3 of 4.37 (0.29).
# - NVIDIA DeepLearningExamples ResNet-50: V100 ~390 img/s fp32 (9.6 of 15.7: 0.6) and
#   ~1,300 img/s mixed (32 of 125: 0.25); A100 ~800 img/s TF32 (20 of 156: 0.13) and
#   ~1,400 mixed (34 of 312: 0.11): CNNs on recent GPUs are memory-bound.  So an fp32 model
#   runs ~2.2x faster on an A100 than on a V100, as measured, not the 10x of the peaks.
# - Transformers in mixed precision reach 35-50% of tensor peak (Megatron-LM reports ~52%
#   on A100 at scale; smaller models less); MoE gating and small expert GEMMs cost more.
EFFICIENCY_FP32: dict[str, float] = {"Kepler": 0.29, "Pascal": 0.55, "Volta": 0.60, "Turing": 0.45,
                                     "Ampere": 0.13, "Hopper": 0.10}
EFFICIENCY: dict[tuple[str, str], float] = {
    ("Kepler", "*"): 0.29,
    ("Pascal", "*"): 0.40,
    ("Volta", "cnn"): 0.25, ("Volta", "*"): 0.35,
    ("Turing", "cnn"): 0.20, ("Turing", "*"): 0.30,
    ("Ampere", "cnn"): 0.11, ("Ampere", "moe"): 0.30, ("Ampere", "*"): 0.40,
    ("Hopper", "cnn"): 0.075, ("Hopper", "moe"): 0.25, ("Hopper", "*"): 0.35,
}
DEFAULT_EFFICIENCY = 0.30

# Framework time per iteration that does not scale with batch: kernel launches (about three per
# layer, forward, backward and optimizer, ~10 us each in eager PyTorch) and a fixed step cost.
LAUNCH_S_PER_LAYER = 3 * 10e-6
STEP_OVERHEAD_S = 1e-3

# Public single-GPU training throughputs: (model, GPU) -> ((per-GPU batch, samples/s), ...).
# TensorFlow performance benchmarks (tensorflow.org/performance/benchmarks, May 2017; fp32,
# synthetic ImageNet, one GPU, cuDNN 5.1): NVIDIA DGX-1 (P100 SXM2, ~12% above the PCIe
# P100's clock, used as is) and Google Compute Engine K80.  VGG16 and AlexNet beat their
# nominal FLOP count on the fp32 peak: cuDNN's Winograd/FFT convolutions do fewer multiplies,
# which is exactly why measured rows beat the FLOPs model for them.
MEASURED: dict[tuple[str, str], tuple[tuple[int, float], ...]] = {
    ("resnet50", "P100"): ((32, 195.0), (64, 219.0)),
    ("inception_v3", "P100"): ((32, 128.0), (64, 142.0)),
    ("vgg16", "P100"): ((32, 144.0), (64, 154.0)),
    ("alexnet", "P100"): ((512, 2987.0),),
    ("resnet50", "K80"): ((32, 49.5), (64, 51.9)),
    ("inception_v3", "K80"): ((32, 29.3), (64, 30.5)),
    ("vgg16", "K80"): ((32, 35.4),),
    ("alexnet", "K80"): ((512, 656.0),),
}


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "").replace("_", "")


@dataclass(frozen=True, slots=True)
class ProfileRow:
    """A measured iteration time at one per-GPU batch."""

    batch: int
    iter_time_s: float


class ProfileTable:
    """Measured per-iteration times, keyed by (model, GPU type); overrides the FLOPs model.

    CSV columns: ``model,gpu,batch,iter_time_s`` (or ``samples_per_s`` instead of
    ``iter_time_s``).  ``batch`` is the per-GPU batch.  Model names match the zoo's
    canonical names or aliases, ignoring case, '-' and '_'.
    """

    def __init__(self, rows: dict[tuple[str, str], tuple[ProfileRow, ...]] | None = None):
        self.rows = rows or {}

    @classmethod
    def from_measured(cls) -> "ProfileTable":
        return cls({(_norm(m), g): tuple(ProfileRow(b, b / sps) for b, sps in rows)
                    for (m, g), rows in MEASURED.items()})

    @classmethod
    def load(cls, path: str | Path) -> "ProfileTable":
        path = Path(path)
        if not path.exists():
            raise InputError("no such profile table", file=str(path))
        rows: dict[tuple[str, str], list[ProfileRow]] = {}
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            cols = set(reader.fieldnames or ())
            if not {"model", "gpu", "batch"} <= cols or not cols & {"iter_time_s", "samples_per_s"}:
                raise InputError("profile table needs columns model,gpu,batch and iter_time_s or "
                                 "samples_per_s", file=str(path), line=1)
            for i, r in enumerate(reader, start=2):
                try:
                    b = int(r["batch"])
                    t = (float(r["iter_time_s"]) if r.get("iter_time_s") not in (None, "")
                         else b / float(r["samples_per_s"]))
                    if b <= 0 or t <= 0:
                        raise ValueError
                except (TypeError, ValueError, ZeroDivisionError):
                    raise InputError("batch and time must be positive numbers", file=str(path), line=i) from None
                try:
                    g = gpu_type(r["gpu"]).name
                except UnknownNameError as e:
                    raise InputError(e.reason, file=str(path), line=i, field="gpu") from None
                rows.setdefault((_norm(r["model"]), g), []).append(ProfileRow(b, t))
        return cls({k: tuple(sorted(v, key=lambda x: x.batch)) for k, v in rows.items()})

    def merged_over(self, base: "ProfileTable") -> "ProfileTable":
        return ProfileTable({**base.rows, **self.rows})

    def lookup(self, model: ModelInfo, gpu: GPUType, batch: float) -> float | None:
        """Iteration time at ``batch`` from the nearest measured batch, or None if unmeasured."""
        rows = self.rows.get((_norm(model.name), gpu.name))
        if not rows:
            return None
        row = min(rows, key=lambda r: (abs(r.batch - batch), r.batch))
        fixed = overhead_s(model)
        per_sample = max(0.0, row.iter_time_s - fixed) / row.batch
        return fixed + per_sample * batch


def efficiency(gpu: GPUType, family: str, bytes_per_param: int = 2) -> float:
    if bytes_per_param != 2:
        return EFFICIENCY_FP32.get(gpu.arch, DEFAULT_EFFICIENCY)
    return EFFICIENCY.get((gpu.arch, family)) or EFFICIENCY.get((gpu.arch, "*"), DEFAULT_EFFICIENCY)


def overhead_s(model: ModelInfo) -> float:
    """Per-iteration time that does not shrink with batch (what leaves a small job's GPU idle)."""
    return STEP_OVERHEAD_S + LAUNCH_S_PER_LAYER * max(1, len(model.layers))


_TF32_ARCHS = ("Ampere", "Hopper")


def peak_flops_at(gpu: GPUType, bytes_per_param: int) -> float:
    """Dense peak FLOP/s for training in fp16 (2 bytes per parameter) or fp32 (4).

    Ampere and later run fp32 matrix maths on TF32 tensor cores at half the dense fp16
    rate (NVIDIA A100 / A10 / A40 data sheets: 156 / 62.5 / 74.8 TFLOPS); Volta and
    older run fp32 on CUDA cores (see ``EFFICIENCY`` for the TF32 rule).
    """
    if bytes_per_param <= 2:
        return gpu.fp16_tflops * 1e12
    if gpu.arch in _TF32_ARCHS:
        return max(gpu.fp32_tflops, gpu.fp16_tflops / 2) * 1e12
    return gpu.fp32_tflops * 1e12


def peak_flops(gpu: GPUType, model: ModelInfo) -> float:
    """Peak FLOP/s the model's precision can use."""
    return peak_flops_at(gpu, model.bytes_per_param)


def busy_time(model: ModelInfo, gpu: GPUType, batch: float) -> float:
    """Seconds the GPU computes (forward + backward) for ``batch`` samples, from FLOPs."""
    return model.train_flops_per_sample * batch / (peak_flops(gpu, model) * efficiency(gpu, model.family, model.bytes_per_param))


def compute_time(model: ModelInfo, gpu: GPUType, batch: float, table: ProfileTable | None = None) -> float:
    """One iteration's compute on one GPU at a per-GPU ``batch`` (may be fractional)."""
    if table is not None:
        got = table.lookup(model, gpu, batch)
        if got is not None:
            return got
    return busy_time(model, gpu, batch) + overhead_s(model)


def utilisation(model: ModelInfo, gpu: GPUType, batch: float, table: ProfileTable | None = None) -> float:
    """Fraction of an iteration the GPU is busy: kernels over kernels + host overhead."""
    total = compute_time(model, gpu, batch, table)
    return max(0.0, min(1.0, (total - overhead_s(model)) / total)) if total > 0 else 0.0
