"""Gradient synchronisation of one data-parallel iteration: buckets, and overlap with backward.

Gradients appear in reverse layer order during the backward pass.  As in
PyTorch DDP, they are grouped into buckets of about ``bucket_mb`` (25 MB by
default, DDP's ``bucket_cap_mb``); a bucket is all-reduced as soon as its last
gradient is ready, one bucket at a time on one communication stream.  The
next forward pass waits for the last bucket, so what counts is the
communication still running when backward ends (the *exposed* part).

A model described by a single layer (a zoo entry without per-layer figures)
is spread evenly over the backward pass in bucket-sized pieces: better than
assuming its whole gradient is ready only at the very end.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from dlsched.workload.models import ModelInfo

BACKWARD_SHARE = 2.0 / 3.0  # backward is ~2x forward: 2/3 of the compute kernels
MB = 1 << 20


@dataclass(frozen=True, slots=True)
class Bucket:
    """A gradient bucket and when the backward pass has it ready."""

    nbytes: float
    ready: float  # fraction of the backward pass elapsed when the bucket's gradients are all ready


def is_expert(layer_name: str) -> bool:
    """Expert FFNs (the zoo names them ``expert.<i>``): sharded by expert parallelism."""
    return layer_name.startswith("expert.")


@lru_cache(maxsize=4096)
def buckets(model: ModelInfo, bucket_mb: float, expert_parallel: bool = False) -> tuple[Bucket, ...]:
    """The model's gradient buckets in the order they are sent (last layer first).

    ``bucket_mb`` <= 0 means one collective per layer (no bucketing, as a
    per-layer simulator such as ASTRA-sim issues them).  With
    ``expert_parallel`` the experts are spread over the ranks (GShard), each
    rank owning its experts' gradients: they take no part in the all-reduce
    (their time still counts in the backward pass).
    """
    bpp = model.bytes_per_param
    layers = [(0 if expert_parallel and is_expert(l.name) else l.params * bpp, l.fwd_flops)
              for l in model.layers]
    if all(b == 0 for b, _ in layers):
        return ()
    if len(model.layers) == 1:
        total = layers[0][0]
        piece = bucket_mb * MB if bucket_mb > 0 else total / 16
        k = max(1, int(round(total / piece)))
        layers = [(total / k, 1.0)] * k
    flops_total = sum(f for _, f in layers) or 1.0
    # walk backward: layer i's gradient is ready once every later layer and itself are done
    out: list[Bucket] = []
    done = 0.0
    cur = 0.0
    cap = bucket_mb * MB
    uniform = all(f == 0 for _, f in layers)
    for nbytes, flops in reversed(layers):
        done += (1.0 / len(layers)) if uniform else flops / flops_total
        cur += nbytes
        if cur > 0 and (cap <= 0 or cur >= cap):
            out.append(Bucket(cur, min(1.0, done)))
            cur = 0.0
    if cur > 0:
        out.append(Bucket(cur, 1.0))
    return tuple(out)


def exposed_comm(bks: tuple[Bucket, ...], backward_s: float, cost: Callable[[float], float],
                 overlap: bool = True) -> tuple[float, float]:
    """(exposed seconds after backward ends, total communication seconds) for one iteration."""
    total = 0.0
    end = 0.0
    for b in bks:
        c = cost(b.nbytes)
        total += c
        start = max(end, b.ready * backward_s) if overlap else max(end, backward_s)
        end = start + c
    return max(0.0, end - backward_s), total
