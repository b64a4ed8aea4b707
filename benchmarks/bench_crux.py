"""CRUX speed (issue 20): priority compression of 5,000 jobs into 8 levels (target under 1 s), and the
~2,000-GPU Clos (``crux-clos``) two-week trace of ``experiments.crux.write_trace`` with ``--comm crux``
(target under 5 minutes).

    PYTHONPATH=src python benchmarks/bench_crux.py [--jobs 5000] [--trace] [--trace-jobs 2000]
        [--trace-days 14] [--trace-cluster crux-clos|crux-double-sided|crux-lingjun] [--placement first-free]

``--trace-cluster crux-double-sided --trace-jobs 300 --trace-days 1 --placement first-free`` times path
choice over the double-sided fabric's 116-port bundles (docs/crux.md, "Speed of path choice").

The compression input is a contention DAG as a cluster yields one: jobs in
racks of 16 hosts, each job meeting a few others on shared links (random,
seeded), edges from the higher to the lower priority weighted by intensity.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dlsched.comm.compression import compress, cut_weight


def contention_dag(n: int, seed: int = 0, group: int = 16, degree: int = 3) -> dict[tuple[int, int], float]:
    rng = np.random.default_rng(seed)
    prio = rng.permutation(n)  # rank 0 highest
    edges = {}
    for u in range(n):
        base = (u // group) * group
        for v in rng.integers(base, min(base + group, n), size=degree).tolist():
            if v != u:
                a, b = (u, v) if prio[u] < prio[v] else (v, u)
                edges[(a, b)] = float(rng.uniform(0.1, 10.0))
    return edges


def bench_compression(n: int, K: int) -> None:
    edges = contention_dag(n)
    t, c = time.perf_counter(), time.process_time()
    levels = compress(n, edges, K, m=10, seed=0)
    dt, cpu = time.perf_counter() - t, time.process_time() - c
    total = sum(edges.values())
    print(f"compression: {n} jobs, {len(edges)} contention edges, {K} levels, m=10: {cpu:.3f} CPU s, {dt:.3f} s wall "
          f"(target < 1 s); cut {cut_weight(levels, edges) / total:.3f} of the edge weight")


def bench_trace(jobs: int, days: float = 14.0, cluster: str = "crux-clos", placement: str = "packed") -> None:
    from dlsched.cli import main
    from dlsched.experiments.crux import TOPOLOGIES, write_trace

    gpus, largest = TOPOLOGIES[cluster]
    with tempfile.TemporaryDirectory(prefix="crux-bench-") as d:
        trace = write_trace(Path(d) / "trace.csv", jobs, days, gpus_total=gpus, max_gpus=largest)
        t, c = time.perf_counter(), time.process_time()
        rc = main(["simulate", "--cluster", cluster, "--trace", str(trace), "--policy", "fcfs", "--comm", "crux",
                   "--out", str(Path(d) / "out"), "--quiet", "--fit-requests", "--placement", placement])
        dt, cpu = time.perf_counter() - t, time.process_time() - c
    target = " (target < 300 s)" if (cluster, jobs, days) == ("crux-clos", 2000, 14.0) else ""
    print(f"trace: {jobs} jobs over {days:g} days on {cluster} ({gpus:,} GPUs, {placement}) with --comm crux: "
          f"{cpu:.1f} CPU s, {dt:.1f} s wall{target}, rc {rc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--trace", action="store_true", help="also time the two-week trace")
    ap.add_argument("--trace-jobs", type=int, default=2000)
    ap.add_argument("--trace-days", type=float, default=14.0)
    ap.add_argument("--trace-cluster", default="crux-clos", help="crux-clos (the issue's target), "
                    "crux-double-sided or crux-lingjun (path choice over wide port bundles)")
    ap.add_argument("--placement", default="packed", choices=["packed", "first-free"])
    a = ap.parse_args()
    bench_compression(a.jobs, a.levels)
    if a.trace:
        bench_trace(a.trace_jobs, a.trace_days, a.trace_cluster, a.placement)
    return 0


if __name__ == "__main__":
    sys.exit(main())
