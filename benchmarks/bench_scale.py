"""Simulator scale: FCFS on a 1,000,000-job synthetic trace on the 1,280-GPU Crius cluster.

Target (issue 14): under 60 s wall and under 4 GiB peak memory on a 2-core
machine, trace generation included.  Prints generation and simulation wall
time, the process's CPU time (the fairer figure on a shared machine),
events/s and the process's peak resident memory.  The core's event log
is off by default here (``--events`` keeps it: one ``CoreEvent`` per change,
about 4 per job).  Run:

    python benchmarks/bench_scale.py [--jobs 1000000] [--policy fcfs] [--events] [--profile FILE]

The jobs are ``philly_like``'s benchmark trace, unchanged when the CLI's default workload moved
to an offered load (docs/workloads.md): its figures stay comparable with earlier passes.  From
the command line the same jobs are ``dlsched simulate --workload benchmark [--jobs N --days D]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import platform
import resource
import sys
import time

from dlsched.cluster import Cluster
from dlsched.perf.default import PERF_MODELS, default_perf_model
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import philly_like


def peak_rss_gib() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return kib / 2**30 if sys.platform == "darwin" else kib / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", default="crius-sim")
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--perf", default="adaptive", choices=list(PERF_MODELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--events", action="store_true", help="keep the core's event log")
    ap.add_argument("--no-series", action="store_true", help="do not record the time series")
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the whole run here")
    args = ap.parse_args()

    prof = cProfile.Profile() if args.profile else None
    if prof:
        prof.enable()
    w0, c0 = time.perf_counter(), time.process_time()
    cluster = Cluster.load(args.cluster)
    days = 14.0 * args.jobs / 13000  # the 13,000-job, two-week benchmark trace's arrival rate
    jobs = philly_like(cluster, n_jobs=args.jobs, days=days, seed=args.seed)
    gen_s = time.perf_counter() - w0
    perf = default_perf_model(cluster, args.perf)
    config = SimConfig(seed=args.seed, record_events=args.events, record_series=not args.no_series)
    s0 = time.perf_counter()
    res = Simulator(cluster, make_policy(args.policy), jobs, perf=perf, config=config).run()
    sim_s = time.perf_counter() - s0
    total_s = time.perf_counter() - w0
    cpu_s = time.process_time() - c0
    if prof:
        prof.disable()
        prof.dump_stats(args.profile)
    out = {
        "params": {"cluster": cluster.name, "gpus": cluster.num_gpus, "jobs": len(jobs), "days": round(days, 1),
                   "policy": args.policy, "perf": type(perf).__name__, "seed": args.seed,
                   "event_log": args.events, "series": not args.no_series,
                   "python": platform.python_version(), "machine": platform.machine()},
        "trace_generation_s": round(gen_s, 2),
        "simulation_s": round(sim_s, 2),
        "total_wall_s": round(total_s, 2),
        "total_cpu_s": round(cpu_s, 2),  # this process's CPU time: less sensitive to a busy machine
        "events": res.stats["events"],
        "events_per_s": round(res.stats["events"] / sim_s),
        "peak_rss_gib": round(peak_rss_gib(), 2),
        "finished": res.summary["finished"],
        "unfinished": res.summary["unfinished"],
        "series_rows": len(res.series.time),
        "event_log_rows": len(res.events),
        "avg_jct_h": round(res.summary["avg_jct"] / 3600, 3) if res.summary["avg_jct"] else None,
        "utilization": round(res.summary["utilization"], 4),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
