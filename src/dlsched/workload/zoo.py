"""The model zoo: everyday training jobs, counted layer by layer from their architectures.

Conventions (see docs/model-zoo.md):

- FLOPs = 2 x multiply-accumulates, forward pass, per sample, at the reference
  input size.  Only convolutions, linear layers, recurrent gates and attention
  matmuls are counted; normalisation, activation, pooling and softmax are
  element-wise and left out (they are < 2 % of the total for these models).
- Parameters are trainable elements (what data-parallel training all-reduces),
  including batch-norm scale/shift and biases.
- ``activation_bytes`` is one layer's output per sample at the training
  precision (what a pipeline cut after that layer would send).
- ``bytes_per_param`` is 4 (fp32 gradients) except for BERT-large and GPT-2
  medium/large/XL, which are trained in mixed precision with fp16 gradient
  all-reduce (NVIDIA's BERT recipe, Megatron-LM's GPT-2); those use 2.

Totals are checked against the published figures in tests/workload/test_zoo.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dlsched.workload.models import Layer, ModelInfo, register_lazy

FP32, FP16 = 4, 2


# ----------------------------------------------------------------------------- counting helpers


@dataclass(frozen=True, slots=True)
class Op:
    """Parameters and forward FLOPs of one operator, plus its output elements per sample."""

    params: int
    flops: float
    out_elems: int = 0


def conv(cin: int, cout: int, k: int | tuple[int, int], hw_out: int | tuple[int, int], *,
         bias: bool = False, bn: bool = False, groups: int = 1) -> Op:
    """A 2-D convolution (optionally followed by batch norm) producing ``hw_out`` spatially."""
    kh, kw = (k, k) if isinstance(k, int) else k
    ho, wo = (hw_out, hw_out) if isinstance(hw_out, int) else hw_out
    weights = kh * kw * (cin // groups) * cout
    params = weights + (cout if bias else 0) + (2 * cout if bn else 0)
    return Op(params, 2.0 * weights * ho * wo, cout * ho * wo)


def conv_transpose(cin: int, cout: int, k: int, hw_in: int, stride: int, *, bias: bool = True) -> Op:
    """A transposed convolution: every input pixel scatters a k x k x cout patch."""
    weights = k * k * cin * cout
    return Op(weights + (cout if bias else 0), 2.0 * weights * hw_in * hw_in,
              cout * (hw_in * stride) ** 2)


def linear(fin: int, fout: int, *, tokens: int = 1, bias: bool = True) -> Op:
    """A dense layer applied to ``tokens`` positions of one sample."""
    return Op(fin * fout + (fout if bias else 0), 2.0 * fin * fout * tokens, fout * tokens)


def lstm(fin: int, hidden: int, steps: int, *, directions: int = 1, biases: int = 2) -> Op:
    """An LSTM layer: four gates of input and recurrent matmuls (cuDNN/PyTorch keep two biases)."""
    per_dir = 4 * (fin * hidden + hidden * hidden + biases * hidden)
    flops = 2.0 * 4 * (fin * hidden + hidden * hidden) * steps
    return Op(directions * per_dir, directions * flops, directions * hidden * steps)


def total(*ops: Op, repeat: float = 1.0) -> Op:
    """Ops fused into one layer; the output is the last op's (``repeat`` scales FLOPs only)."""
    return Op(sum(o.params for o in ops), repeat * sum(o.flops for o in ops), ops[-1].out_elems)


def layer(name: str, op: Op, bytes_per_elem: int = FP32) -> Layer:
    return Layer(name, op.params, op.flops, float(op.out_elems * bytes_per_elem))


def block(prefix: str, ops: list[tuple[str, Op]], out_elems: int | None = None,
          bytes_per_elem: int = FP32) -> list[Layer]:
    """One layer per weight tensor of a block (so the largest tensor and gradient buckets are
    right).  Only the block's last layer is a clean pipeline cut: its activation is the block
    output (``out_elems`` when the block concatenates branches); inner layers report their own
    output, which misses tensors kept alive across the block (residuals, other branches).
    """
    layers = [layer(f"{prefix}.{n}", op, bytes_per_elem) for n, op in ops]
    if out_elems is not None:
        last = layers[-1]
        layers[-1] = Layer(last.name, last.params, last.fwd_flops, float(out_elems * bytes_per_elem))
    return layers


def model(name: str, family: str, task: str, layers: list[Layer], *, batch: int,
          bytes_per_param: int = FP32) -> ModelInfo:
    return ModelInfo(name, family, task, tuple(layers), default_batch=batch, bytes_per_param=bytes_per_param)


# ----------------------------------------------------------------------------- CNNs (ImageNet, 224x224)


def _resnet(name: str, blocks: tuple[int, ...], bottleneck: bool) -> ModelInfo:
    """ResNet v1.5 (stride on the 3x3 convolution), as in torchvision; He et al., CVPR 2016."""
    layers = [layer("stem", conv(3, 64, 7, 112, bn=True))]  # 7x7/2, then 3x3/2 max pool to 56
    size, cin = 56, 64
    expansion = 4 if bottleneck else 1
    for stage, n in enumerate(blocks):
        width = 64 * 2 ** stage
        for j in range(n):
            stride = 2 if stage > 0 and j == 0 else 1
            out = size // stride
            if bottleneck:
                ops = [("conv1", conv(cin, width, 1, size, bn=True)), ("conv2", conv(width, width, 3, out, bn=True)),
                       ("conv3", conv(width, width * 4, 1, out, bn=True))]
            else:
                ops = [("conv1", conv(cin, width, 3, out, bn=True)), ("conv2", conv(width, width, 3, out, bn=True))]
            if stride != 1 or cin != width * expansion:  # projection shortcut
                ops.insert(0, ("downsample", conv(cin, width * expansion, 1, out, bn=True)))
            layers += block(f"layer{stage + 1}.{j}", ops)
            cin, size = width * expansion, out
    layers.append(layer("fc", linear(cin, 1000)))
    return model(name, "cnn", "image classification", layers, batch=32)


_VGG_CFG = {
    "vgg11": (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"),
    "vgg16": (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"),
}


def _vgg(name: str) -> ModelInfo:
    """VGG without batch norm (Simonyan & Zisserman, ICLR 2015, configs A and D)."""
    layers, size, cin, i = [], 224, 3, 1
    for v in _VGG_CFG[name]:
        if v == "M":
            size //= 2
            continue
        layers.append(layer(f"conv{i}", conv(cin, v, 3, size, bias=True)))
        cin, i = v, i + 1
    layers += [layer("fc6", linear(512 * 7 * 7, 4096)), layer("fc7", linear(4096, 4096)),
               layer("fc8", linear(4096, 1000))]
    # 4 GPUs x 64 in the paper's data-parallel setup (batch 256).
    return model(name, "cnn", "image classification", layers, batch=64)


def _alexnet() -> ModelInfo:
    """AlexNet as in torchvision (the single-tower 'one weird trick' variant, Krizhevsky 2014)."""
    layers = [layer("conv1", conv(3, 64, 11, 55, bias=True)),
              layer("conv2", conv(64, 192, 5, 27, bias=True)),
              layer("conv3", conv(192, 384, 3, 13, bias=True)),
              layer("conv4", conv(384, 256, 3, 13, bias=True)),
              layer("conv5", conv(256, 256, 3, 13, bias=True)),
              layer("fc6", linear(256 * 6 * 6, 4096)), layer("fc7", linear(4096, 4096)),
              layer("fc8", linear(4096, 1000))]
    return model("alexnet", "cnn", "image classification", layers, batch=128)


def _make_divisible(v: float, divisor: int = 8) -> int:
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


# (kernel, expanded, out, squeeze-excite, stride) per inverted-residual block; Howard et al. 2019, Table 1.
_MBV3_LARGE = ((3, 16, 16, False, 1), (3, 64, 24, False, 2), (3, 72, 24, False, 1),
               (5, 72, 40, True, 2), (5, 120, 40, True, 1), (5, 120, 40, True, 1),
               (3, 240, 80, False, 2), (3, 200, 80, False, 1), (3, 184, 80, False, 1),
               (3, 184, 80, False, 1), (3, 480, 112, True, 1), (3, 672, 112, True, 1),
               (5, 672, 160, True, 2), (5, 960, 160, True, 1), (5, 960, 160, True, 1))


def _mobilenet_v3() -> ModelInfo:
    layers = [layer("stem", conv(3, 16, 3, 112, bn=True))]
    size, cin = 112, 16
    for i, (k, exp, out, se, stride) in enumerate(_MBV3_LARGE):
        s_out = size // stride
        ops = []
        if exp != cin:
            ops.append(conv(cin, exp, 1, size, bn=True))
        ops.append(conv(exp, exp, k, s_out, bn=True, groups=exp))  # depthwise
        if se:
            sq = _make_divisible(exp // 4)
            ops += [linear(exp, sq), linear(sq, exp)]
        ops.append(conv(exp, out, 1, s_out, bn=True))
        layers.append(layer(f"block{i}", total(*ops)))
        cin, size = out, s_out
    layers += [layer("last_conv", conv(cin, 960, 1, size, bn=True)),
               layer("fc1", linear(960, 1280)), layer("fc2", linear(1280, 1000))]
    # 4096 images over a 4x4 TPU pod (32 cores) = 128 per core (Howard et al. 2019, section 6.1).
    return model("mobilenet_v3_large", "cnn", "image classification", layers, batch=128)


def _inception_v3() -> ModelInfo:
    """Inception-v3 at 299x299 with its auxiliary classifier (Szegedy et al., CVPR 2016; torchvision)."""
    def bc(cin, cout, k, hw):  # conv + batch norm, no bias
        return conv(cin, cout, k, hw, bn=True)

    def named(*ops: Op) -> list[tuple[str, Op]]:
        return [(f"conv{i}", op) for i, op in enumerate(ops)]

    layers = block("stem", named(bc(3, 32, 3, 149), bc(32, 32, 3, 147), bc(32, 64, 3, 147),
                                 bc(64, 80, 1, 73), bc(80, 192, 3, 71)), 192 * 35 * 35)
    cin = 192
    for name, pool in (("mixed_5b", 32), ("mixed_5c", 64), ("mixed_5d", 64)):
        hw = 35
        layers += block(name, named(bc(cin, 64, 1, hw), bc(cin, 48, 1, hw), bc(48, 64, 5, hw),
                                    bc(cin, 64, 1, hw), bc(64, 96, 3, hw), bc(96, 96, 3, hw),
                                    bc(cin, pool, 1, hw)), (224 + pool) * hw * hw)
        cin = 224 + pool
    layers += block("mixed_6a", named(bc(cin, 384, 3, 17), bc(cin, 64, 1, 35), bc(64, 96, 3, 35),
                                      bc(96, 96, 3, 17)), 768 * 17 * 17)
    cin = 768
    for name, c7 in (("mixed_6b", 128), ("mixed_6c", 160), ("mixed_6d", 160), ("mixed_6e", 192)):
        layers += block(name, named(bc(cin, 192, 1, 17),
                                    bc(cin, c7, 1, 17), bc(c7, c7, (1, 7), 17), bc(c7, 192, (7, 1), 17),
                                    bc(cin, c7, 1, 17), bc(c7, c7, (7, 1), 17), bc(c7, c7, (1, 7), 17),
                                    bc(c7, c7, (7, 1), 17), bc(c7, 192, (1, 7), 17),
                                    bc(cin, 192, 1, 17)), 768 * 17 * 17)
    # Auxiliary classifier on mixed_6e: 5x5/3 avg pool -> 1x1 conv at 5x5 -> 5x5 conv -> fc.
    layers += block("aux", [("conv0", bc(768, 128, 1, 5)), ("conv1", bc(128, 768, 5, 1)),
                            ("fc", linear(768, 1000))])
    layers += block("mixed_7a", named(bc(cin, 192, 1, 17), bc(192, 320, 3, 8), bc(cin, 192, 1, 17),
                                      bc(192, 192, (1, 7), 17), bc(192, 192, (7, 1), 17),
                                      bc(192, 192, 3, 8)), 1280 * 8 * 8)
    cin = 1280
    for name in ("mixed_7b", "mixed_7c"):
        layers += block(name, named(bc(cin, 320, 1, 8),
                                    bc(cin, 384, 1, 8), bc(384, 384, (1, 3), 8), bc(384, 384, (3, 1), 8),
                                    bc(cin, 448, 1, 8), bc(448, 384, 3, 8), bc(384, 384, (1, 3), 8),
                                    bc(384, 384, (3, 1), 8), bc(cin, 192, 1, 8)), 2048 * 8 * 8)
        cin = 2048
    layers.append(layer("fc", linear(2048, 1000)))
    # 50 replicas x 32 (Szegedy et al. 2016, section 8).
    return model("inception_v3", "cnn", "image classification", layers, batch=32)


# ----------------------------------------------------------------------------- Transformers


def _attention_block(h: int, ffn: int, seq: int, *, cross: bool = False, kv_seq: int | None = None) -> Op:
    """One Transformer layer: self-attention (+ cross-attention), FFN, layer norms.

    Attention score and context matmuls add 2 x 2 x seq x kv_seq x h FLOPs per attention.
    """
    kv = kv_seq or seq
    attn = total(linear(h, 3 * h, tokens=seq), linear(h, h, tokens=seq))
    ops = [attn, Op(0, 4.0 * seq * seq * h)]
    norms = 2
    if cross:
        ops += [linear(h, h, tokens=seq), linear(h, 2 * h, tokens=kv), linear(h, h, tokens=seq),
                Op(0, 4.0 * seq * kv * h)]
        norms = 3
    ops += [linear(h, ffn, tokens=seq), linear(ffn, h, tokens=seq), Op(2 * h * norms, 0, seq * h)]
    return total(*ops)


def _bert(name: str, h: int, n_layers: int, seq: int, batch: int, bpp: int) -> ModelInfo:
    """BERT (Devlin et al. 2019): WordPiece 30,522, 512 positions, 2 segments, pre-training heads."""
    vocab = 30522
    elem = bpp
    layers = [layer("embeddings", Op(vocab * h + 512 * h + 2 * h + 2 * h, 0, seq * h), elem)]
    for i in range(n_layers):
        layers.append(layer(f"encoder.{i}", _attention_block(h, 4 * h, seq), elem))
    layers.append(layer("pooler", linear(h, h), elem))
    # MLM head: transform + layer norm, decoder tied to the embeddings (bias only); NSP head.
    mlm = total(linear(h, h, tokens=seq), Op(2 * h, 0), Op(vocab, 2.0 * h * vocab * seq, vocab * seq))
    layers.append(layer("heads", total(mlm, linear(h, 2)), elem))
    return model(name, "transformer", "masked language model", layers, batch=batch, bytes_per_param=bpp)


def _gpt2(name: str, h: int, n_layers: int, bpp: int, batch: int) -> ModelInfo:
    """GPT-2 (Radford et al. 2019): BPE 50,257, context 1,024, pre-norm, tied LM head."""
    vocab, seq = 50257, 1024
    layers = [layer("wte+wpe", Op(vocab * h + seq * h, 0, seq * h), bpp)]
    for i in range(n_layers):
        layers.append(layer(f"h.{i}", _attention_block(h, 4 * h, seq), bpp))
    layers.append(layer("ln_f+lm_head", Op(2 * h, 2.0 * h * vocab * seq, vocab * seq), bpp))
    return model(name, "transformer", "causal language model", layers, batch=batch, bytes_per_param=bpp)


def _transformer_base() -> ModelInfo:
    """Transformer base for translation (Vaswani et al. 2017): d 512, 6+6 layers, shared 37k vocab.

    Reference: 32 source and 32 target tokens per sentence pair (a typical WMT/Multi30k length).
    """
    h, ffn, vocab, src, tgt = 512, 2048, 37000, 32, 32
    layers = [layer("embeddings", Op(vocab * h, 0, src * h))]  # shared by encoder, decoder and softmax
    for i in range(6):
        layers.append(layer(f"encoder.{i}", _attention_block(h, ffn, src)))
    for i in range(6):
        layers.append(layer(f"decoder.{i}", _attention_block(h, ffn, tgt, cross=True, kv_seq=src)))
    layers.append(layer("generator", Op(0, 2.0 * h * vocab * tgt, vocab * tgt)))
    # Gavel's Transformer jobs sweep batch 16-256; 64 is the middle of that range.
    return model("transformer", "transformer", "machine translation", layers, batch=64)


# ----------------------------------------------------------------------------- recurrent models


def _gnmt() -> ModelInfo:
    """GNMT v2 as in the MLPerf reference (Wu et al. 2016, reduced to 4+4 LSTM layers of 1,024).

    Encoder: bidirectional first layer, then three unidirectional with residuals.  Decoder: four
    layers fed with [output; attention context], normalised Bahdanau attention, 32,320-token
    shared BPE vocabulary (separate embedding tables), 50-token source and target sentences.
    """
    h, vocab, steps = 1024, 32320, 50
    layers = [layer("encoder.embedding", Op(vocab * h, 0, steps * h)),
              layer("encoder.0", lstm(h, h, steps, directions=2)),
              layer("encoder.1", lstm(2 * h, h, steps)),
              layer("encoder.2", lstm(h, h, steps)),
              layer("encoder.3", lstm(h, h, steps)),
              layer("decoder.embedding", Op(vocab * h, 0, steps * h)),
              layer("decoder.attention", total(linear(h, h, tokens=steps, bias=False),
                                               linear(h, h, tokens=steps, bias=False),
                                               Op(2 * h + 1, 4.0 * steps * steps * h, steps * h)))]
    layers.append(layer("decoder.0", lstm(h, h, steps)))
    for i in range(1, 4):
        layers.append(layer(f"decoder.{i}", lstm(2 * h, h, steps)))
    layers.append(layer("classifier", linear(h, vocab, tokens=steps)))
    return model("gnmt", "rnn", "machine translation (seq2seq)", layers, batch=128)


def _lstm_lm() -> ModelInfo:
    """Word-level LSTM LM, Zaremba et al. 2014 'large': 2 x 1,500 units, 10k vocab, 35 steps (66M)."""
    h, vocab, steps = 1500, 10000, 35
    layers = [layer("embedding", Op(vocab * h, 0, steps * h)),
              layer("lstm.0", lstm(h, h, steps)), layer("lstm.1", lstm(h, h, steps)),
              layer("decoder", linear(h, vocab, tokens=steps))]
    # Gavel's "LM" jobs (batch 5-80) are this PyTorch word_language_model shape.
    return model("lstm_lm", "rnn", "language model", layers, batch=20)


def _deepspeech2() -> ModelInfo:
    """DeepSpeech2 (Amodei et al., ICML 2016) as in deepspeech.pytorch: 2 conv + 5 bi-LSTM x 1,024.

    Input: 161 spectrogram bins x 1,000 frames (10 s at a 10 ms hop); directions are summed.
    """
    h, frames = 1024, 500  # conv1's stride 2 halves the frames
    layers = [layer("conv1", conv(1, 32, (41, 11), (81, frames), bias=True, bn=True)),
              layer("conv2", conv(32, 32, (21, 11), (41, frames), bias=True, bn=True)),
              layer("rnn.0", lstm(32 * 41, h, frames, directions=2))]
    for i in range(1, 5):
        layers.append(layer(f"rnn.{i}", total(Op(2 * h, 0), lstm(h, h, frames, directions=2))))
    layers.append(layer("fc", total(Op(2 * h, 0), linear(h, 29, tokens=frames, bias=False))))
    return model("deepspeech2", "speech", "speech recognition", layers, batch=32)


# ----------------------------------------------------------------------------- Gavel's other job types


def _recommendation() -> ModelInfo:
    """Autoencoder collaborative filtering (Kuchaiev & Ginsburg 2017, NVIDIA DeepRecommender).

    Gavel's "Recommendation" job on MovieLens-20M: 26,744 items -> 512 -> 512 -> 1024 and back.
    """
    items, dims = 26744, (512, 512, 1024)
    sizes = (items, *dims, *reversed(dims[:-1]), items)
    layers = [layer(f"fc{i}", linear(a, b)) for i, (a, b) in enumerate(zip(sizes, sizes[1:]))]
    return model("recommendation", "recsys", "recommendation (autoencoder)", layers, batch=512)


def _cyclegan() -> ModelInfo:
    """CycleGAN (Zhu et al., ICCV 2017): two 9-block ResNet generators, two 70x70 PatchGANs at 256x256.

    One training step per sample runs each generator three times (translate, reconstruct,
    identity) and each discriminator three times (real, fake for D, fake for G): FLOPs x 3.
    """
    def generator(tag: str) -> list[Layer]:
        ls = [layer(f"{tag}.c7s1-64", total(conv(3, 64, 7, 256, bias=True), repeat=3)),
              layer(f"{tag}.d128", total(conv(64, 128, 3, 128, bias=True), repeat=3)),
              layer(f"{tag}.d256", total(conv(128, 256, 3, 64, bias=True), repeat=3))]
        for i in range(9):
            ls += block(f"{tag}.res{i}", [(f"conv{k}", total(conv(256, 256, 3, 64, bias=True), repeat=3))
                                          for k in (1, 2)])
        ls += [layer(f"{tag}.u128", total(conv_transpose(256, 128, 3, 64, 2), repeat=3)),
               layer(f"{tag}.u64", total(conv_transpose(128, 64, 3, 128, 2), repeat=3)),
               layer(f"{tag}.c7s1-3", total(conv(64, 3, 7, 256, bias=True), repeat=3))]
        return ls

    def discriminator(tag: str) -> list[Layer]:
        return [layer(f"{tag}.c64", total(conv(3, 64, 4, 128, bias=True), repeat=3)),
                layer(f"{tag}.c128", total(conv(64, 128, 4, 64, bias=True), repeat=3)),
                layer(f"{tag}.c256", total(conv(128, 256, 4, 32, bias=True), repeat=3)),
                layer(f"{tag}.c512", total(conv(256, 512, 4, 31, bias=True), repeat=3)),
                layer(f"{tag}.out", total(conv(512, 1, 4, 30, bias=True), repeat=3))]

    layers = generator("G_AB") + generator("G_BA") + discriminator("D_A") + discriminator("D_B")
    return model("cyclegan", "cnn", "image-to-image translation", layers, batch=1)


def _a3c() -> ModelInfo:
    """A3C actor-critic for Atari (Mnih et al. 2016) in the ikostrikov/pytorch-a3c shape Gavel runs.

    Four 3x3/2 convolutions of 32 on a 42x42 frame, an LSTM cell of 256, policy (6) and value heads.
    A "sample" is one environment step; a batch is the 20-step rollout.
    """
    layers = [layer("conv1", conv(1, 32, 3, 21, bias=True)), layer("conv2", conv(32, 32, 3, 11, bias=True)),
              layer("conv3", conv(32, 32, 3, 6, bias=True)), layer("conv4", conv(32, 32, 3, 3, bias=True)),
              layer("lstm", lstm(32 * 3 * 3, 256, 1)),
              layer("heads", total(linear(256, 1), linear(256, 6)))]
    return model("a3c", "rl", "reinforcement learning (Atari)", layers, batch=20)


# ----------------------------------------------------------------------------- registration

# name, aliases, builder: names and aliases are registered at import, each model is built on its
# first lookup (building all of them costs about 0.01 CPU s of a run's start-up; issue 21)
_MODELS: tuple[tuple[str, tuple[str, ...], Callable[[], ModelInfo]], ...] = (
    ("resnet18", ("resnet-18", "resnet_18"), lambda: _resnet("resnet18", (2, 2, 2, 2), False)),
    # Blox's synthetic traces name only the task class; IMAGE jobs are ImageNet CNNs -> ResNet-50.
    ("resnet50", ("resnet-50", "resnet_50", "image"), lambda: _resnet("resnet50", (3, 4, 6, 3), True)),
    ("vgg11", ("vgg-11", "vgg_11"), lambda: _vgg("vgg11")),
    ("vgg16", ("vgg-16", "vgg_16"), lambda: _vgg("vgg16")),
    ("alexnet", ("alex-net",), _alexnet),
    ("mobilenet_v3_large", ("mobilenetv3", "mobilenet-v3", "mobilenetv3-large", "mobilenet_v3"), _mobilenet_v3),
    ("inception_v3", ("inception-v3", "inceptionv3", "inception3"), _inception_v3),
    # BERT: 256 sequences of 128 tokens over 16 TPU chips = 16 per chip (base); NVIDIA's large
    # recipe uses 64 per GPU at sequence 128 (phase 1), mixed precision.
    ("bert-base", ("bert_base", "bert-base-uncased"), lambda: _bert("bert-base", 768, 12, 128, 16, FP32)),
    ("bert-large", ("bert_large", "bert-large-uncased"), lambda: _bert("bert-large", 1024, 24, 128, 64, FP16)),
    # GPT-2: Megatron-LM's GPT-2 runs use 8 sequences of 1,024 per GPU.
    ("gpt2-small", ("gpt2", "gpt-2", "gpt2_small", "gpt-2-small"), lambda: _gpt2("gpt2-small", 768, 12, FP32, 8)),
    ("gpt2-medium", ("gpt2_medium", "gpt-2-medium"), lambda: _gpt2("gpt2-medium", 1024, 24, FP16, 8)),
    ("gpt2-large", ("gpt2_large", "gpt-2-large"), lambda: _gpt2("gpt2-large", 1280, 36, FP16, 8)),
    ("gpt2-xl", ("gpt2_xl", "gpt-2-xl"), lambda: _gpt2("gpt2-xl", 1600, 48, FP16, 8)),
    ("transformer", ("transformer-base", "transformer_base"), _transformer_base),
    ("gnmt", ("gnmt-v2", "gnmt_v2", "seq2seq", "translation"), _gnmt),
    ("lstm_lm", ("lstm-lm", "lstm", "lm", "language-model", "word_language_model"), _lstm_lm),
    ("deepspeech2", ("deepspeech", "deep-speech2", "ds2"), _deepspeech2),
    ("recommendation", ("recsys", "autoencoder", "deeprecommender"), _recommendation),
    ("cyclegan", ("cycle-gan", "cycle_gan"), _cyclegan),
    ("a3c", ("a3c-pong",), _a3c),
)
for _name, _aliases, _build in _MODELS:
    register_lazy(_name, _build, *_aliases)

from dlsched.workload import zoo_large  # noqa: E402,F401  (large scalable models)
