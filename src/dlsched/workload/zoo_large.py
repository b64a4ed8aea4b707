"""Large models at the Crius sizes (Crius paper, Table 2), operator by operator.

Crius evaluates the three models of Alpa (Zheng et al., OSDI'22): Wide-ResNet,
BERT and GShard MoE, at the sizes in Table 2.  The architecture numbers below
are the published Alpa benchmark configurations (alpa-projects/alpa,
``benchmark/alpa/suite_*`` and ``alpa/model/*.py``), which reproduce those
sizes; parameter totals are *computed* from the layer shapes, never typed in
(``tests/parallel/test_zoo_large.py`` checks each total against its label).

- BERT / GPT: Alpa's ``gpt_specs`` (sequence 1,024, vocabulary 51,200);
  Crius's BERT sizes 0.76/1.3/2.6/6.7B are exactly these rows.  Transformer
  layer = 12 H^2 parameters, forward 24 S H^2 + 4 S^2 H FLOPs per sample
  (Narayanan et al., SC'21, eq. 2); embedding tied with the LM head.
- GShard MoE: Alpa's ``moe_specs`` (sequence 1,024, vocabulary 32,000, FFN
  width 8 H, expert group 2,048); every other layer is an MoE layer whose FFN
  is E experts with top-2 gating (Lepikhin et al., GShard, 2020), the rest are
  dense Transformer layers.
- Wide-ResNet: Alpa's ``wresnet_specs``: ResNet-50 bottleneck stages
  (3, 4, 6, 3) at 224x224, base width C, the 3x3 convolution widened by W
  (Zagoruyko & Komodakis 2016; Alpa's ``BottleneckResNetBlock``); 1,000 classes.

Operators are what pipeline stages are cut between: an embedding, one entry
per Transformer layer (MoE layers split into ``attn.i`` and ``expert.i`` so an
expert FFN is its own operator), one per residual block, and the head.  The
name prefix before the dot is the operator kind; ``expert.`` marks the layers
whose tokens travel by all-to-all.  ``layer_traits`` gives the extra per-
operator figures the parallelism model needs (tensor-parallel traffic,
all-to-all traffic, recomputation working set).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from dlsched.errors import UnknownNameError
from dlsched.workload import models
from dlsched.workload.models import Layer, ModelInfo

FP16, FP32 = 2, 4


@dataclass(frozen=True, slots=True)
class LayerTraits:
    """Per-operator figures beyond ``Layer``, all per sample, in bytes.

    tp_bytes: activation bytes all-reduced across a tensor-parallel group per
        training step of one sample (forward + backward).
    a2a_bytes: bytes each sample sends by all-to-all (forward + backward) when
        the operator's experts are sharded across the data-parallel group.
    tp_collectives: number of collectives behind ``tp_bytes`` (latency terms).
    a2a_collectives: number of all-to-alls behind ``a2a_bytes``.
    workset_bytes: activations alive while one operator is recomputed and
        back-propagated (rematerialisation keeps only operator outputs).
    """

    kind: str
    tp_bytes: float
    a2a_bytes: float
    tp_collectives: int
    a2a_collectives: int
    workset_bytes: float


# ----------------------------------------------------------------------------- configurations


@dataclass(frozen=True, slots=True)
class TransformerSpec:
    """Shape of a GPT/BERT-style Transformer (Crius Table 2)."""

    hidden: int
    layers: int
    heads: int
    vocab: int
    seq: int = 1024


@dataclass(frozen=True, slots=True)
class MoESpec:
    """Shape of a GShard-style mixture-of-experts Transformer (Crius Table 2)."""

    hidden: int
    layers: int
    heads: int
    experts: int
    vocab: int = 32000
    seq: int = 1024
    ffn_mult: int = 8  # Alpa's MoE benchmark: intermediate size = 8 x hidden


@dataclass(frozen=True, slots=True)
class WResNetSpec:
    """Shape of a wide ResNet (Crius Table 2)."""

    channels: int  # base number of filters C
    width: int  # widening factor W of the 3x3 convolution
    blocks: tuple[int, ...] = (3, 4, 6, 3)  # ResNet-50
    image: int = 224
    classes: int = 1000


# Alpa gpt_specs (S, H, L, heads, V); the keys are the size labels used by the
# Crius trace (arena-philly.csv writes 0.76B as "760M").
TRANSFORMER_SPECS: dict[str, TransformerSpec] = {
    "760M": TransformerSpec(1536, 24, 16, 51200),
    "1.3B": TransformerSpec(2048, 24, 32, 51200),
    "2.6B": TransformerSpec(2560, 32, 32, 51200),
    "6.7B": TransformerSpec(4096, 32, 32, 51200),
}

# Alpa moe_specs (S, H, L, heads, V, E, S_).
MOE_SPECS: dict[str, MoESpec] = {
    "690M": MoESpec(768, 8, 16, 16),
    "1.3B": MoESpec(768, 16, 16, 16),
    "2.4B": MoESpec(1024, 16, 16, 16),
    "10B": MoESpec(1536, 16, 16, 32),
    "27B": MoESpec(2048, 16, 16, 48),
}

# Alpa wresnet_specs (I, L, C, W).
WRESNET_SPECS: dict[str, WResNetSpec] = {
    "500M": WResNetSpec(224, 2),
    "1B": WResNetSpec(320, 2),
    "2B": WResNetSpec(448, 2),
    "4B": WResNetSpec(640, 2),
    "6.8B": WResNetSpec(320, 16),
}

# ----------------------------------------------------------------------------- builders
#
# Activation working sets (remat): per Transformer layer and sample, a layer
# keeps about 34 S H + 5 a S^2 bytes of fp16 activations for its backward pass
# (Korthikanti et al., "Reducing Activation Recomputation", 2022, eq. 1).
# Tensor parallelism all-reduces the S x H activation twice forward and twice
# backward per layer (Megatron-LM, Shoeybi et al. 2019, Fig. 4).


def _tfm_layers(spec: TransformerSpec, name_prefix: str = "tfm") -> list[tuple[Layer, LayerTraits]]:
    s, h, a, v = spec.seq, spec.hidden, spec.heads, spec.vocab
    act = s * h * FP16
    ws = 34 * s * h + 5 * a * s * s
    out: list[tuple[Layer, LayerTraits]] = []
    # Token + position embedding; the LM head reuses the token table (tied).
    out.append((Layer("embed.0", v * h + s * h, 2.0 * s * h, act),
                LayerTraits("embed", 2 * act, 0.0, 2, 0, 2 * act)))
    for i in range(spec.layers):
        params = 12 * h * h + 13 * h  # QKV, projection, 4H MLP, biases, 2 layer norms
        flops = 24.0 * s * h * h + 4.0 * s * s * h
        out.append((Layer(f"{name_prefix}.{i}", params, flops, act),
                    LayerTraits("tfm", 4 * act, 0.0, 4, 0, ws)))
    # Vocabulary projection (tied weights: no new parameters), logits in fp16.
    out.append((Layer("head.0", h, 2.0 * s * h * v, s * v * FP16),
                LayerTraits("head", 2 * act, 0.0, 2, 0, 2 * s * v * FP16)))
    return out


def _moe_layers(spec: MoESpec) -> list[tuple[Layer, LayerTraits]]:
    s, h, a, v, e = spec.seq, spec.hidden, spec.heads, spec.vocab, spec.experts
    f = spec.ffn_mult * h
    act = s * h * FP16
    attn_ws = 10 * s * h + 5 * a * s * s  # QKV, scores, softmax, dropout, context
    out: list[tuple[Layer, LayerTraits]] = []
    out.append((Layer("embed.0", v * h + s * h, 2.0 * s * h, act),
                LayerTraits("embed", 2 * act, 0.0, 2, 0, 2 * act)))
    for i in range(spec.layers):
        attn_params = 4 * h * h + 4 * h + 2 * h
        attn_flops = 8.0 * s * h * h + 4.0 * s * s * h
        if i % 2 == 0:  # GShard: every other layer's FFN is a mixture of experts
            out.append((Layer(f"attn.{i}", attn_params, attn_flops, act),
                        LayerTraits("attn", 2 * act, 0.0, 2, 0, attn_ws)))
            # E experts, each h -> f -> h; top-2 gating sends every token to 2
            # experts, so FLOPs are twice a dense FFN's whatever E is.
            expert_params = e * (2 * h * f + f + h) + h * e + 2 * h
            expert_flops = 2 * (4.0 * s * h * f) + 2.0 * s * h * e
            dispatched = 2 * s * h * FP16  # top-2 copies of every token
            out.append((Layer(f"expert.{i}", expert_params, expert_flops, act),
                        LayerTraits("expert", 2 * act, 4 * dispatched, 2, 4,
                                    2 * dispatched + 2 * s * f * FP16)))
        else:
            params = 4 * h * h + 2 * h * f + 9 * h + f
            flops = 8.0 * s * h * h + 4.0 * s * h * f + 4.0 * s * s * h
            out.append((Layer(f"tfm.{i}", params, flops, act),
                        LayerTraits("tfm", 4 * act, 0.0, 4, 0,
                                    attn_ws + 2 * s * f * FP16 + 4 * act)))
    out.append((Layer("head.0", v, 2.0 * s * h * v, s * v * FP16),
                LayerTraits("head", 2 * act, 0.0, 2, 0, 2 * s * v * FP16)))
    return out


def _conv(cin: int, cout: int, k: int, hw_out: int) -> tuple[int, float]:
    """Parameters and forward FLOPs (2 per multiply-add) of a bias-free k x k convolution."""
    params = k * k * cin * cout
    return params, 2.0 * params * hw_out * hw_out


def _wresnet_layers(spec: WResNetSpec) -> list[tuple[Layer, LayerTraits]]:
    out: list[tuple[Layer, LayerTraits]] = []
    c = spec.channels
    size = spec.image // 2  # 7x7 stride-2 stem
    p, fl = _conv(3, c, 7, size)
    stem_act = c * size * size * FP32
    size //= 2  # 3x3 stride-2 max pool
    pooled = c * size * size * FP32
    out.append((Layer("stem.0", p + 2 * c, fl, pooled),
                LayerTraits("conv", 2 * pooled, 0.0, 2, 0, 3 * stem_act)))
    cin = c
    idx = 0
    for stage, n_blocks in enumerate(spec.blocks):
        f = c * 2**stage
        for j in range(n_blocks):
            stride = 2 if stage > 0 and j == 0 else 1
            s_in, s_out = size, size // stride
            p1, f1 = _conv(cin, f, 1, s_in)
            p2, f2 = _conv(f, f * spec.width, 3, s_out)
            p3, f3 = _conv(f * spec.width, 4 * f, 1, s_out)
            params, flops = p1 + p2 + p3, f1 + f2 + f3
            if cin != 4 * f or stride > 1:  # projection shortcut
                pp, fp = _conv(cin, 4 * f, 1, s_out)
                params, flops = params + pp, flops + fp
            params += 2 * (f + f * spec.width + 4 * f)  # batch-norm scale and shift
            a1 = f * s_in * s_in * FP32
            a2 = f * spec.width * s_out * s_out * FP32
            a3 = 4 * f * s_out * s_out * FP32
            # Channel-sharded convolutions exchange the block's intermediate and
            # output maps once forward and once backward.
            tp = 2 * (a2 + a3)
            # conv, norm and activation outputs of the three convolutions
            ws = 3 * (a1 + a2 + a3)
            out.append((Layer(f"block.{idx}", params, flops, a3),
                        LayerTraits("conv", tp, 0.0, 4, 0, ws)))
            cin, size, idx = 4 * f, s_out, idx + 1
    params = cin * spec.classes + spec.classes
    out.append((Layer("head.0", params, 2.0 * cin * spec.classes, spec.classes * FP32),
                LayerTraits("head", 2 * spec.classes * FP32, 0.0, 2, 0, 2 * cin * FP32)))
    return out


# ----------------------------------------------------------------------------- registry

_TRAITS: dict[str, tuple[LayerTraits, ...]] = {}


def _size_of(label: str) -> float | None:
    """'760M' -> 0.76, '1.3B' -> 1.3, '1.0b' -> 1.0 (billions); None if not a size."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([mMbB])\s*", label)
    if not m:
        return None
    x = float(m.group(1))
    return x / 1000 if m.group(2) in "mM" else x


def _canonical(table: dict, variant: str) -> str | None:
    want = _size_of(variant)
    if want is None:
        return None
    for key in table:
        if abs(_size_of(key) - want) <= 0.005 * max(1.0, want):
            return key
    return None


@dataclass(frozen=True, slots=True)
class _Family:
    """A sized family of the large zoo: its sizes and how to build each."""

    name: str
    family: str
    task: str
    table: dict
    build: Callable
    bytes_per_param: int
    aliases: tuple[str, ...]


_FAMILIES = (
    _Family("bert", "transformer", "masked language model", TRANSFORMER_SPECS,
            lambda sp: _tfm_layers(sp), FP16, ()),
    _Family("gpt", "transformer", "causal language model", TRANSFORMER_SPECS,
            lambda sp: _tfm_layers(sp), FP16, ("gpt3",)),
    _Family("moe", "moe", "GShard mixture-of-experts language model", MOE_SPECS,
            _moe_layers, FP16, ("gshard_moe", "gshard-moe")),
    _Family("wide_resnet", "cnn", "image classification", WRESNET_SPECS,
            _wresnet_layers, FP32, ("wresnet", "wide-resnet", "wideresnet", "wrn")),
)


def _names(fam: _Family, key: str) -> tuple[str, list[str]]:
    """The zoo name of a listed size and its other spellings: 0.76B / 760M, 1B / 1.0B, 0.5B / 500M."""
    name = f"{fam.name}-{key.lower()}"
    size = _size_of(key)
    spellings = {f"{size:g}b", f"{size:.1f}b"} | ({f"{size * 1000:g}m"} if size < 1 else set())
    aliases = [f"{a}-{s}" for a in (fam.name, *fam.aliases) for s in spellings]
    aliases += [f"{a}-{key.lower()}" for a in fam.aliases]
    return name, sorted(a for a in set(aliases) if a != name)


def _make(fam: _Family, key: str) -> ModelInfo:
    name, _ = _names(fam, key)
    pairs = fam.build(fam.table[key])
    _TRAITS[name] = tuple(p[1] for p in pairs)
    return ModelInfo(name, fam.family, fam.task, tuple(p[0] for p in pairs),
                     default_batch=1, bytes_per_param=fam.bytes_per_param, variant=key)


def _build(fam: _Family, variant: str) -> ModelInfo:
    key = _canonical(fam.table, variant)
    if key is None:
        raise UnknownNameError(f"{fam.name} size", variant, fam.table)
    return models._built(_names(fam, key)[0])


def layer_traits(model: ModelInfo) -> tuple[LayerTraits, ...] | None:
    """Extra per-operator figures of a large model, or None for models built elsewhere."""
    return _TRAITS.get(model.name)


def large_models() -> list[ModelInfo]:
    """Every Table 2 model (plus GPT at the BERT sizes), smallest first within a family."""
    return [_build(f, k) for f in _FAMILIES for k in f.table]


def table2_models() -> list[ModelInfo]:
    """The models of Crius's Table 2: Wide-ResNet, BERT and MoE at every listed size."""
    return [m for m in large_models() if not m.name.startswith("gpt")]


def _register_all() -> None:
    for fam in _FAMILIES:
        for key in fam.table:  # built on first lookup: most runs use a few of them
            name, aliases = _names(fam, key)
            models.register_lazy(name, lambda _f=fam, _k=key: _make(_f, _k), *aliases)
        # get_model(family, size) looks up "<family>-<size>" first; the builder
        # also accepts any spelling of a listed size.
        models._SCALABLE[fam.name] = (lambda v, _f=fam: _build(_f, v))
        for a in fam.aliases:
            models._ALIASES.setdefault(a, fam.name)


_register_all()
