"""Per-model prefix sums, so any stage's totals cost O(1).

A stage is a contiguous operator range ``[a, b)``; every additive quantity
(FLOPs, parameters, tensor-parallel and all-to-all traffic, checkpointed
activations, operator counts) is a difference of two prefix sums.  The one
non-additive figure, the largest recomputation working set in a range, comes
from an L x L table (L <= ~70 operators, so a few thousand floats).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dlsched.workload.models import ModelInfo
from dlsched.workload.zoo_large import LayerTraits, layer_traits


def _generic_traits(model: ModelInfo) -> tuple[LayerTraits, ...]:
    """Traits for a model the large zoo did not build: Transformer-like defaults.

    Two all-reduces of the output forward and two backward under tensor
    parallelism, a working set of 8 outputs; ``expert.`` operators all-to-all
    their output twice each way.
    """
    out = []
    for layer in model.layers:
        kind = layer.name.split(".", 1)[0]
        a = layer.activation_bytes
        a2a = 4 * a if kind == "expert" else 0.0
        out.append(LayerTraits(kind, 4 * a, a2a, 4, 4 if a2a else 0, 8 * a))
    return tuple(out)


def _prefix(values) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(np.asarray(values, dtype=np.float64))))


@dataclass(frozen=True, slots=True)
class PrefixLists:
    """``ModelProfile``'s sums as Python lists, for the plan search's inner loop.

    A stage choice reads a few entries; indexing a list and subtracting floats costs a fraction
    of numpy's scalar indexing, and gives the same doubles (``tolist`` converts exactly).
    """

    flops: list[float]
    dense_params: list[float]
    expert_params: list[float]
    ckpt: list[float]
    tp_bytes: list[float]
    tp_count: list[float]
    a2a_bytes: list[float]
    a2a_count: list[float]
    act_out: list[float]
    workset_max: list[list[float]]  # [a][b-1], as the array
    workset: list[float]


@dataclass(frozen=True, eq=False)
class ModelProfile:
    """Prefix sums over a model's operators (index i = sum over operators < i)."""

    name: str
    family: str  # the zoo's family (transformer, moe, cnn): picks the compute efficiency
    n_layers: int
    bytes_per_param: int
    flops: np.ndarray  # forward FLOPs per sample
    dense_params: np.ndarray
    expert_params: np.ndarray
    ckpt: np.ndarray  # operator outputs kept for backward (remat), bytes per sample
    tp_bytes: np.ndarray
    tp_count: np.ndarray
    a2a_bytes: np.ndarray
    a2a_count: np.ndarray
    act_out: np.ndarray  # per operator (not a prefix): output bytes per sample
    workset_max: np.ndarray  # [a, b-1]: largest working set in [a, b)
    workset: np.ndarray  # prefix sums of the operators' working sets, bytes per sample
    max_experts_shard: int  # experts per MoE layer (bounds expert parallelism); 0 if none
    max_tp: int  # widest useful tensor-parallel degree (attention heads, channels)
    lists: PrefixLists  # the arrays above as lists (what ``stage_costs`` reads)

    def total(self, arr: np.ndarray, a: int, b: int) -> float:
        return float(arr[b] - arr[a])

    @property
    def total_flops(self) -> float:
        return float(self.flops[-1])


def _experts_of(model: ModelInfo) -> int:
    from dlsched.workload.zoo_large import MOE_SPECS

    spec = MOE_SPECS.get(model.variant or "") if model.family == "moe" else None
    return spec.experts if spec else 0


def _max_tp(model: ModelInfo) -> int:
    from dlsched.workload.zoo_large import TRANSFORMER_SPECS, MOE_SPECS

    if model.family == "moe" and model.variant in MOE_SPECS:
        return MOE_SPECS[model.variant].heads
    if model.family == "transformer" and model.variant in TRANSFORMER_SPECS:
        return TRANSFORMER_SPECS[model.variant].heads
    return 1 << 20  # convolution channels are far wider than any stage


@lru_cache(maxsize=256)
def _build(model: ModelInfo) -> ModelProfile:
    traits = layer_traits(model) or _generic_traits(model)
    layers = model.layers
    expert = [t.kind == "expert" for t in traits]
    ws = np.asarray([t.workset_bytes for t in traits], dtype=np.float64)
    n = len(layers)
    table = np.zeros((n, n))
    for a in range(n):
        table[a, a:] = np.maximum.accumulate(ws[a:])
    arrays = dict(
        flops=_prefix([lyr.fwd_flops for lyr in layers]),
        dense_params=_prefix([0 if e else lyr.params for lyr, e in zip(layers, expert)]),
        expert_params=_prefix([lyr.params if e else 0 for lyr, e in zip(layers, expert)]),
        ckpt=_prefix([lyr.activation_bytes for lyr in layers]),
        tp_bytes=_prefix([t.tp_bytes for t in traits]),
        tp_count=_prefix([t.tp_collectives for t in traits]),
        a2a_bytes=_prefix([t.a2a_bytes for t in traits]),
        a2a_count=_prefix([t.a2a_collectives for t in traits]),
        act_out=np.asarray([lyr.activation_bytes for lyr in layers], dtype=np.float64),
        workset_max=table,
        workset=_prefix(ws.tolist()),
    )
    return ModelProfile(
        name=model.name,
        family=model.family,
        n_layers=n,
        bytes_per_param=model.bytes_per_param,
        max_experts_shard=_experts_of(model),
        max_tp=_max_tp(model),
        lists=PrefixLists(**{k: v.tolist() for k, v in arrays.items()}),
        **arrays,
    )


# id(model) -> (model, profile): hashing a ModelInfo walks every layer, and the plan search asks
# for the same model's profile thousands of times; the model is kept so its id cannot be reused
_BY_ID: dict[int, tuple[ModelInfo, ModelProfile]] = {}
_BY_ID_MAX = 1024


def profile(model: ModelInfo) -> ModelProfile:
    """The (cached) prefix-sum profile of a model."""
    hit = _BY_ID.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    prof = _build(model)
    if len(_BY_ID) >= _BY_ID_MAX:
        _BY_ID.clear()
    _BY_ID[id(model)] = (model, prof)
    return prof
