"""GPU types: memory, peak throughput and memory bandwidth.

Figures are the vendors' data-sheet peaks, dense (no sparsity), per GPU:
- K80: NVIDIA Tesla K80 data sheet (per GPU = half the dual-GPU board, boost clock).
- P100: NVIDIA Tesla P100 PCIe 16 GB data sheet.
- P40: NVIDIA Tesla P40 data sheet (FP16 is 1/64 rate on GP102, so fp16 = fp32 here).
- V100: NVIDIA Tesla V100 SXM2 32 GB data sheet (tensor-core FP16 125 TFLOPS).
- T4: NVIDIA T4 data sheet (FP16 tensor 65 TFLOPS).
- A10: NVIDIA A10 data sheet (FP16 tensor 125 TFLOPS dense).
- A40: NVIDIA A40 data sheet (FP16 tensor 149.7 TFLOPS dense).
- A100-40G / A100-80G: NVIDIA A100 data sheet, SXM (FP16 tensor 312 TFLOPS dense).
- H100: NVIDIA H100 SXM5 data sheet (FP16 tensor 989 TFLOPS dense).
- L20: NVIDIA L20 data sheet (48 GB GDDR6, 864 GB/s; FP16/BF16 tensor 119.5 TFLOPS dense,
  FP32 59.8; PCIe Gen4 x16).  Ada Lovelace; in the Crius authors' revision testbed.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.errors import UnknownNameError


@dataclass(frozen=True, slots=True)
class GPUType:
    """A GPU model's memory, peak FLOP/s and memory bandwidth."""

    name: str
    memory_gib: float
    fp32_tflops: float
    fp16_tflops: float  # tensor-core peak where the GPU has tensor cores
    mem_bw_gbs: float  # HBM/GDDR bandwidth, GB/s
    arch: str

    @property
    def memory_bytes(self) -> float:
        return self.memory_gib * 2**30


GPU_TYPES: dict[str, GPUType] = {
    g.name: g
    for g in (
        GPUType("K80", 12, 4.37, 4.37, 240, "Kepler"),
        GPUType("P100", 16, 9.3, 18.7, 732, "Pascal"),
        GPUType("P40", 24, 11.76, 11.76, 346, "Pascal"),
        GPUType("V100", 32, 15.7, 125.0, 900, "Volta"),
        GPUType("T4", 16, 8.1, 65.0, 320, "Turing"),
        GPUType("A10", 24, 31.2, 125.0, 600, "Ampere"),
        GPUType("A40", 48, 37.4, 149.7, 696, "Ampere"),
        GPUType("A100-40G", 40, 19.5, 312.0, 1555, "Ampere"),
        GPUType("A100-80G", 80, 19.5, 312.0, 2039, "Ampere"),
        GPUType("H100", 80, 67.0, 989.0, 3350, "Hopper"),
        GPUType("L20", 48, 59.8, 119.5, 864, "Ada"),
    )
}

# Names seen in traces and other tools mapped to the catalogue (lower-case keys).
_ALIASES = {
    "a100": "A100-40G",
    "a100-40gb": "A100-40G",
    "a100_40g": "A100-40G",
    "a100-80gb": "A100-80G",
    "a100_80g": "A100-80G",
    "v100m32": "V100",
    "v100-32g": "V100",
    "h100-80g": "H100",
}


def gpu_type(name: str, **where) -> GPUType:
    """Look up a GPU type by name, case-insensitively, with common aliases."""
    key = name.strip()
    for cand in (key, key.upper()):
        if cand in GPU_TYPES:
            return GPU_TYPES[cand]
    alias = _ALIASES.get(key.lower())
    if alias is not None:
        return GPU_TYPES[alias]
    raise UnknownNameError("GPU type", name, GPU_TYPES, **where)
