"""The model zoo: parameter counts, FLOPs and per-layer gradient sizes.

Figures are per sample (forward pass) at the model's reference input size.
Per-layer parameter counts are what gradient synchronisation sends, in
backward order reversed (first layer first); bucketing and overlap are the
perf model's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dlsched.errors import UnknownNameError


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer (operator) of a model, per sample."""

    name: str
    params: int  # trainable parameters (gradient elements)
    fwd_flops: float  # forward FLOPs per sample
    activation_bytes: float = 0.0  # output activation per sample (fp16/fp32 as trained), for pipeline cuts


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model of the zoo: its layers and how it trains."""

    name: str  # canonical zoo name, e.g. "resnet50"
    family: str  # "cnn" | "transformer" | "moe" | "rnn" | "speech" | "rl" | "recsys"
    task: str
    layers: tuple[Layer, ...]
    default_batch: int = 32  # per-GPU batch used in the papers' measurements
    bytes_per_param: int = 4  # gradient element size (fp32 training unless noted)
    variant: str | None = None  # size label for scaled families, e.g. "1.3B"

    @property
    def params(self) -> int:
        return sum(layer.params for layer in self.layers)

    @property
    def fwd_flops(self) -> float:
        return sum(layer.fwd_flops for layer in self.layers)

    @property
    def train_flops_per_sample(self) -> float:
        """Forward + backward: the usual 3x forward FLOPs."""
        return 3.0 * self.fwd_flops

    @property
    def gradient_bytes(self) -> float:
        return self.params * self.bytes_per_param

    @property
    def largest_tensor_fraction(self) -> float:
        """Tiresias's "skew": largest layer's share of the model's parameters."""
        return max(layer.params for layer in self.layers) / max(1, self.params)


_ZOO: dict[str, ModelInfo] = {}
_ALIASES: dict[str, str] = {}
_LAZY: dict[str, Callable[[], ModelInfo]] = {}  # registered, not yet built: name -> builder


def register(model: ModelInfo, *aliases: str) -> ModelInfo:
    _ZOO[model.name] = model
    for a in aliases:
        _ALIASES[a.lower()] = model.name
    return model


def register_lazy(name: str, build: Callable[[], ModelInfo], *aliases: str) -> None:
    """Register ``name`` and its aliases now and build the model on its first lookup."""
    _LAZY[name] = build
    for a in aliases:
        _ALIASES[a.lower()] = name


def _built(key: str) -> ModelInfo | None:
    """The model registered as ``key`` (built now if it was registered lazily), or None."""
    found = _ZOO.get(key)
    if found is None and key in _LAZY:
        found = _ZOO[key] = _LAZY.pop(key)()
    return found


def model_names() -> list[str]:
    _load()
    return sorted({*_ZOO, *_LAZY})


def get_model(name: str, variant: str | None = None, **where) -> ModelInfo:
    """Look a model up by name (case-insensitive, with aliases), optionally at a size variant."""
    _load()
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if variant:
        scaled = f"{key}-{variant.strip().lower()}"
        scaled = _ALIASES.get(scaled, scaled)
        found = _built(scaled)
        if found is not None:
            return found
    found = _built(key)
    if found is not None:
        if variant and found.variant is None and key in _SCALABLE:
            return _SCALABLE[key](variant)
        return found
    raise UnknownNameError("model", name, model_names(), **where)


# Families whose size is a parameter (Crius's Table 2): name -> builder(variant) -> ModelInfo
_SCALABLE: dict[str, callable] = {}
_loaded = False


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from dlsched.workload import zoo  # noqa: F401  (registers the models)
