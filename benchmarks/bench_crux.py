"""CRUX speed (issue 20): priority compression of 5,000 jobs into 8 levels (target under 1 s), and the
~2,000-GPU Clos (``crux-clos``) two-week trace of ``experiments.crux.write_trace`` with ``--comm crux``
(target under 5 minutes).

    PYTHONPATH=src python benchmarks/bench_crux.py [--jobs 5000] [--trace] [--trace-jobs 2000]

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


def bench_trace(jobs: int) -> None:
    from dlsched.cli import main
    from dlsched.experiments.crux import write_trace

    with tempfile.TemporaryDirectory(prefix="crux-bench-") as d:
        trace = write_trace(Path(d) / "trace.csv", jobs, 14.0)
        t, c = time.perf_counter(), time.process_time()
        rc = main(["simulate", "--cluster", "crux-clos", "--trace", str(trace), "--policy", "fcfs", "--comm", "crux",
                   "--out", str(Path(d) / "out"), "--quiet", "--fit-requests"])
        dt, cpu = time.perf_counter() - t, time.process_time() - c
    print(f"trace: {jobs} jobs over 14 days on crux-clos (2,768 GPUs) with --comm crux: {cpu:.1f} CPU s, "
          f"{dt:.1f} s wall (target < 300 s), rc {rc}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--trace", action="store_true", help="also time the two-week trace")
    ap.add_argument("--trace-jobs", type=int, default=2000)
    a = ap.parse_args()
    bench_compression(a.jobs, a.levels)
    if a.trace:
        bench_trace(a.trace_jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
