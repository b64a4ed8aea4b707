"""CRUX speed (issue 20): priority compression of 5,000 jobs into 8 levels (target under 1 s), and the
~2,000-GPU Clos (``crux-clos``) two-week trace of ``experiments.crux.write_trace`` with ``--comm crux``
(target under 5 minutes).

    PYTHONPATH=src python benchmarks/bench_crux.py [--jobs 5000] [--trace] [--trace-jobs 2000]
        [--trace-days 14] [--trace-cluster crux-clos|crux-double-sided|crux-lingjun] [--placement first-free]
    PYTHONPATH=src python benchmarks/bench_crux.py --lingjun [--lingjun-jobs 5000] [--lingjun-days 14]
        [--comm ecmp,crux,...|all] [--links summary|full|none] [--timeout 1800]

``--lingjun``: every communication policy (ecmp, crux, crux-ps, crux-ps-pa, sincronia, varys, taccl, cassini)
on ``crux-lingjun`` with 5,000 jobs over 14 days, fragmented (first-free) placement, each in its own process,
CPU s per policy (target < 120 CPU s); the parameters are printed first.  ``--comm all``: every built-in,
the per-flow variants (ours) included.  ``--links``: the form of links.csv the runs write (the command's
default, summary; ``full`` times the per-link table over time, as the command wrote by default before).

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


LINGJUN_COMMS = ["ecmp", "crux-ps", "crux-ps-pa", "crux", "sincronia", "varys", "taccl", "cassini"]


def _one_lingjun(trace: str, comm: str, out: str, placement: str, links: str) -> None:
    from dlsched.cli import main

    rc = main(["simulate", "--cluster", "crux-lingjun", "--trace", trace, "--policy", "fcfs", "--comm", comm,
               "--out", out, "--quiet", "--fit-requests", "--placement", placement, "--links", links])
    sys.exit(rc)


def bench_lingjun(jobs: int, days: float, comms: list[str], placement: str, timeout: float,
                  links: str = "summary") -> None:
    """Every communication policy on ``crux-lingjun`` (6,776 GPUs), each in its own process: CPU s (user +
    system) of the whole process, with the command's own output writing, as a user runs it."""
    import multiprocessing as mp
    import resource

    from dlsched.experiments.crux import TOPOLOGIES, write_trace

    gpus, _ = TOPOLOGIES["crux-lingjun"]
    print(f"parameters: cluster crux-lingjun ({gpus:,} GPUs, 847 hosts, 48 ToRs), {jobs} jobs over {days:g} days, "
          f"trace experiments.crux.write_trace(seed 0, load 0.6, host batch), job policy fcfs, "
          f"--placement {placement} ({'fragmented: first free GPUs in node order' if placement == 'first-free' else placement}), "
          f"--fit-requests, comm levels 8 (2 reserved), outputs written (jobs.csv, series.csv, links.csv as "
          f"--links {links}); "
          f"CPU s = user + system of the whole child process; target < 120 CPU s per policy")
    print(f"comm policies: {', '.join(comms)}")
    ctx = mp.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="crux-lingjun-") as d:
        trace = str(write_trace(Path(d) / "trace.csv", jobs, days, gpus_total=gpus))
        for comm in comms:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            p = ctx.Process(target=_one_lingjun, args=(trace, comm, str(Path(d) / comm), placement, links))
            p.start()
            p.join(timeout)
            over = p.is_alive()
            if over:
                p.kill()
                p.join()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            state = f"killed at {timeout:g} s wall" if over else f"rc {p.exitcode}"
            print(f"{comm:<11} {cpu:8.1f} CPU s {time.perf_counter() - t:8.1f} s wall  {state}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--levels", type=int, default=8)
    ap.add_argument("--trace", action="store_true", help="also time the two-week trace")
    ap.add_argument("--trace-jobs", type=int, default=2000)
    ap.add_argument("--trace-days", type=float, default=14.0)
    ap.add_argument("--trace-cluster", default="crux-clos", help="crux-clos (the issue's target), "
                    "crux-double-sided or crux-lingjun (path choice over wide port bundles)")
    ap.add_argument("--placement", default=None, choices=["packed", "first-free"],
                    help="default: packed for --trace, first-free for --lingjun")
    ap.add_argument("--lingjun", action="store_true", help="only the crux-lingjun matrix: every --comm "
                    "policy on --lingjun-jobs over --lingjun-days, each in its own process")
    ap.add_argument("--lingjun-jobs", type=int, default=5000)
    ap.add_argument("--lingjun-days", type=float, default=14.0)
    ap.add_argument("--comm", default=",".join(LINGJUN_COMMS), help="comma-separated, or all (every built-in)")
    ap.add_argument("--links", default="summary", choices=["summary", "full", "none"])
    ap.add_argument("--timeout", type=float, default=1800.0, help="wall seconds before a run is killed")
    a = ap.parse_args()
    if a.lingjun:
        if a.comm == "all":
            from dlsched.comm.registry import COMM_POLICIES

            comms = LINGJUN_COMMS + [c for c in COMM_POLICIES if c not in LINGJUN_COMMS]
        else:
            comms = a.comm.split(",")
        bench_lingjun(a.lingjun_jobs, a.lingjun_days, comms, a.placement or "first-free", a.timeout, a.links)
        return 0
    a.placement = a.placement or "packed"
    bench_compression(a.jobs, a.levels)
    if a.trace:
        bench_trace(a.trace_jobs, a.trace_days, a.trace_cluster, a.placement)
    return 0


if __name__ == "__main__":
    sys.exit(main())
