"""Zoo entries for the two example jobs, so the simulator can size and price them.

The figures are counted from the example scripts' layer shapes (examples/cnn_job.py,
examples/transformer_job.py) at their default sizes; forward FLOPs are
multiply-adds x 2 per sample.  They only matter where a model-based perf model
prices these jobs; the fidelity check uses measured iteration times instead.
"""

from __future__ import annotations

from dlsched.workload.models import Layer, ModelInfo, get_model, model_names, register

TINY_CNN = "tiny-cnn"
TINY_TRANSFORMER = "tiny-transformer"


def _cnn() -> ModelInfo:
    # conv 3->16 k3 on 32x32, conv 16->32 k3 on 16x16, linear 32*8*8 -> 10
    c1 = 3 * 16 * 9 + 16
    c2 = 16 * 32 * 9 + 32
    fc = 32 * 8 * 8 * 10 + 10
    return ModelInfo(TINY_CNN, "cnn", "image classification (synthetic)",
                     (Layer("conv1", c1, 2.0 * 3 * 16 * 9 * 32 * 32),
                      Layer("conv2", c2, 2.0 * 16 * 32 * 9 * 16 * 16),
                      Layer("fc", fc, 2.0 * 32 * 8 * 8 * 10)), default_batch=32)


def _transformer() -> ModelInfo:
    # vocab 256, d_model 64, 2 layers, 4 heads, ffn 128, sequence 32
    d, ffn, seq, vocab, layers = 64, 128, 32, 256, 2
    emb = vocab * d
    per_layer = 4 * (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + 4 * d
    layer_flops = 2.0 * seq * (4 * d * d + 2 * d * ffn) + 2.0 * 2 * seq * seq * d
    head = d * vocab + vocab
    return ModelInfo(TINY_TRANSFORMER, "transformer", "language modelling (synthetic)",
                     (Layer("embedding", emb, 0.0),
                      *(Layer(f"block{i}", per_layer, layer_flops) for i in range(layers)),
                      Layer("head", head, 2.0 * seq * d * vocab)), default_batch=32)


def ensure_registered() -> None:
    """Add the example models to the zoo once (idempotent)."""
    if TINY_CNN not in model_names():
        register(_cnn(), "tinycnn")
    if TINY_TRANSFORMER not in model_names():
        register(_transformer(), "tinytransformer")


ensure_registered()

__all__ = ["TINY_CNN", "TINY_TRANSFORMER", "ensure_registered", "get_model"]
