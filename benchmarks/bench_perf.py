"""Pricing latency of ``PlacementPerfModel`` (targets: cached < 5 us, uncached < 1 ms).

Three paths, each on the Dally 16-rack cluster (1,024 A100s) for placements of
8 GPUs in one node, 8 GPUs one per node, and 64 GPUs over 4 racks:

- exact hit: the same GPU ids priced again (tuple of ids -> dict lookup);
- shape hit: other GPU ids with the same shape (shape key + dict lookup);
- uncached: both caches cleared before each call (shape, links, buckets,
  compute, collective costs).

    python benchmarks/bench_perf.py [--model resnet50] [--cluster dally-16racks] [--repeat 3]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.perf.placement.model import PlacementPerfModel
from dlsched.workload.job import JobSpec


def _best(fn, n: int, repeat: int) -> float:
    """Best of ``repeat`` runs of ``n`` calls, seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--cluster", default="dally-16racks")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    c = Cluster.load(args.cluster)
    pm = PlacementPerfModel(c)
    placements = {
        "8 GPUs, one node": (np.arange(8), np.arange(8, 16)),
        "8 GPUs, 8 nodes": (np.arange(0, 64, 8), np.arange(1, 65, 8)),
        "64 GPUs, 4 racks": (np.arange(0, 1024, 16)[:64], np.arange(1, 1024, 16)[:64]),
    }
    print(f"{c.describe()}\nmodel {args.model}; python {platform.python_version()} on {platform.machine()}; "
          f"best of {args.repeat}")
    print(f"{'placement':20s} {'exact hit':>11s} {'shape hit':>11s} {'uncached':>11s}")
    for label, (gpus, twin) in placements.items():
        n = len(gpus)
        job = JobSpec("b", 0.0, args.model, n, batch_size=32 * n, total_iterations=1)
        pm.price(job, gpus)
        exact = _best(lambda: pm.price(job, gpus), 100_000, args.repeat)
        twin_list = twin.tolist()

        def shape_hit():
            pm._exact.clear()
            pm.price(job, twin_list)

        shape = _best(shape_hit, 20_000, args.repeat)

        def uncached():
            pm._exact.clear()
            pm._by_shape.clear()
            pm.price(job, gpus)

        cold = _best(uncached, 500, args.repeat)
        print(f"{label:20s} {exact * 1e6:9.2f}us {shape * 1e6:9.2f}us {cold * 1e6:9.1f}us")


if __name__ == "__main__":
    main()
