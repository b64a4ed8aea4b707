"""The papers' figures the perf model is checked against, and stand-in models for them.

The stand-ins are built here from the published architectures (layer shapes
of the original papers; a multiply-add counts 2 FLOPs, as in the zoo) so the fidelity checks run before, and independently of, the full
model zoo.  ``paper_model(name)`` returns the zoo's model when the zoo has
one, the stand-in otherwise.
"""

from __future__ import annotations

from dlsched.errors import UnknownNameError
from dlsched.workload.models import Layer, ModelInfo, get_model

# Dally (003), Table I: communication time as a % of compute for 8 GPUs on one
# machine / one rack / across racks (ASTRA-sim on the Dally cluster).
DALLY_TABLE1: dict[str, tuple[float, float, float]] = {
    "vgg11": (1, 6, 7),
    "alexnet": (2, 13, 100),
    "mobilenet_v3": (42, 940, 19592),
    "resnet18": (7, 116, 2749),
    "resnet50": (12, 12, 38),
    "bert_large": (8, 23, 715),
}
# Dally (003), Table I's skew column: the class Dally's runs gave each model (Tiresias consolidates "High").
DALLY_TABLE1_SKEW: dict[str, str] = {"vgg11": "high", "alexnet": "high", "mobilenet_v3": "high",
                                     "resnet18": "low", "resnet50": "low", "bert_large": "low"}
# Gandiva (001), Fig. 1: throughput with two GPUs across sockets over that under one PCIe switch.
GANDIVA_FIG1 = {"vgg16": 0.60, "resnet50": 1.0}
# Gandiva (001), Table 1 (packing gain over time-slicing) and Fig. 3 (two LMs under one switch).
GANDIVA_PACKING = {"small_max_gain": 4.12, "mid_range": (-0.16, 0.46), "busy_range": (-0.13, -0.11),
                   "lm_shared_switch_slowdown": 0.19}


def _conv(name: str, k: int, cin: int, cout: int, hw: int, groups: int = 1) -> Layer:
    params = k * k * cin // groups * cout + 2 * cout  # weights + batch-norm scale/shift
    return Layer(name, params, 2.0 * k * k * cin // groups * cout * hw * hw)


def _fc(name: str, cin: int, cout: int, reps: int = 1) -> Layer:
    return Layer(name, cin * cout + cout, 2.0 * cin * cout * reps)


def vgg(depth: int) -> ModelInfo:
    cfg = {11: [1, 1, 2, 2, 2], 16: [2, 2, 3, 3, 3]}[depth]
    layers, cin, hw = [], 3, 224
    for stage, reps in enumerate(cfg):
        cout = min(64 << stage, 512)
        for r in range(reps):
            layers.append(_conv(f"conv{stage + 1}_{r + 1}", 3, cin, cout, hw))
            cin = cout
        hw //= 2
    layers += [_fc("fc6", 512 * 7 * 7, 4096), _fc("fc7", 4096, 4096), _fc("fc8", 4096, 1000)]
    return ModelInfo(f"vgg{depth}", "cnn", "image classification", tuple(layers), default_batch=32)


def alexnet() -> ModelInfo:
    layers = (_conv("conv1", 11, 3, 64, 55), _conv("conv2", 5, 64, 192, 27), _conv("conv3", 3, 192, 384, 13),
              _conv("conv4", 3, 384, 256, 13), _conv("conv5", 3, 256, 256, 13),
              _fc("fc6", 256 * 6 * 6, 4096), _fc("fc7", 4096, 4096), _fc("fc8", 4096, 1000))
    return ModelInfo("alexnet", "cnn", "image classification", layers, default_batch=32)


def resnet(depth: int) -> ModelInfo:
    blocks = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[depth]
    bottleneck = depth >= 50
    layers = [_conv("conv1", 7, 3, 64, 112)]
    cin, hw = 64, 56
    for s, reps in enumerate(blocks):
        width = 64 << s
        cout = width * 4 if bottleneck else width
        for b in range(reps):
            out_hw = hw // 2 if (b == 0 and s > 0) else hw
            p = f"layer{s + 1}.{b}"
            if bottleneck:
                layers += [_conv(p + ".a", 1, cin, width, hw), _conv(p + ".b", 3, width, width, out_hw),
                           _conv(p + ".c", 1, width, cout, out_hw)]
            else:
                layers += [_conv(p + ".a", 3, cin, width, out_hw), _conv(p + ".b", 3, width, width, out_hw)]
            if b == 0 and cin != cout:
                layers.append(_conv(p + ".down", 1, cin, cout, out_hw))
            cin, hw = cout, out_hw
    layers.append(_fc("fc", cin, 1000))
    return ModelInfo(f"resnet{depth}", "cnn", "image classification", tuple(layers), default_batch=32)


# MobileNetV3-Large bottlenecks (Howard et al. 2019, Table 1): kernel, expansion, out, SE, stride
_MBV3 = [(3, 16, 16, 0, 1), (3, 64, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2), (5, 120, 40, 1, 1),
         (5, 120, 40, 1, 1), (3, 240, 80, 0, 2), (3, 200, 80, 0, 1), (3, 184, 80, 0, 1), (3, 184, 80, 0, 1),
         (3, 480, 112, 1, 1), (3, 672, 112, 1, 1), (5, 672, 160, 1, 2), (5, 960, 160, 1, 1), (5, 960, 160, 1, 1)]


def mobilenet_v3() -> ModelInfo:
    layers = [_conv("stem", 3, 3, 16, 112)]
    cin, hw = 16, 112
    for i, (k, exp, out, se, stride) in enumerate(_MBV3):
        if exp != cin:
            layers.append(_conv(f"b{i}.expand", 1, cin, exp, hw))
        hw //= stride
        layers.append(_conv(f"b{i}.dw", k, exp, exp, hw, groups=exp))
        if se:
            layers += [_fc(f"b{i}.se1", exp, exp // 4), _fc(f"b{i}.se2", exp // 4, exp)]
        layers.append(_conv(f"b{i}.project", 1, exp, out, hw))
        cin = out
    layers += [_conv("head", 1, 160, 960, 7), _fc("fc1", 960, 1280), _fc("fc2", 1280, 1000)]
    return ModelInfo("mobilenet_v3", "cnn", "image classification", tuple(layers), default_batch=32)


def bert_large(seq: int = 128) -> ModelInfo:
    h, ffn, vocab = 1024, 4096, 30522
    layers = [Layer("embeddings", (vocab + 512 + 2) * h + 2 * h, 0.0)]
    for i in range(24):
        attn = 4 * h * h + 4 * h
        layers.append(Layer(f"l{i}.attn", attn + 2 * h, 2.0 * (4 * h * h * seq + 2 * seq * seq * h)))
        layers.append(Layer(f"l{i}.ffn", 2 * h * ffn + ffn + h + 2 * h, 2.0 * (2 * h * ffn * seq)))
    layers.append(Layer("mlm_head", h * h + 3 * h + vocab, 2.0 * (h * h + h * vocab) * seq))
    return ModelInfo("bert_large", "transformer", "language modelling", tuple(layers), default_batch=8,
                     bytes_per_param=2)


STAND_INS = {"vgg11": lambda: vgg(11), "vgg16": lambda: vgg(16), "alexnet": alexnet,
             "resnet18": lambda: resnet(18), "resnet50": lambda: resnet(50),
             "mobilenet_v3": mobilenet_v3, "bert_large": bert_large}
_ZOO_NAMES = {"mobilenet_v3": ("mobilenet_v3_large", "mobilenet_v3"), "bert_large": ("bert-large", "bert_large")}


def paper_model(name: str, prefer_zoo: bool = True) -> ModelInfo:
    """The zoo's model of that name when it has per-layer figures, else the stand-in."""
    if prefer_zoo:
        for cand in _ZOO_NAMES.get(name, (name,)):
            try:
                m = get_model(cand)
            except UnknownNameError:
                continue
            if len(m.layers) > 1:
                return m
    return STAND_INS[name]()
