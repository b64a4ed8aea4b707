"""Simulator speed: FCFS on a 13,000-job, two-week synthetic trace on the 1,280-GPU Crius cluster.

Target (foundation issue): under 10 s wall on a 2-core machine.  Prints wall
time, events/s and the parameters that produced them.  Run:

    python benchmarks/bench_sim.py [--jobs 13000] [--days 14] [--policy fcfs] [--repeat 3]

The jobs are ``philly_like``'s benchmark trace, unchanged when the CLI's default workload moved
to an offered load (docs/workloads.md): its figures stay comparable with earlier passes.  From
the command line the same jobs are ``dlsched simulate --workload benchmark [--jobs N --days D]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

from dlsched.cluster import Cluster
from dlsched.perf.default import PERF_MODELS, default_perf_model
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import philly_like


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", default="crius-sim")
    ap.add_argument("--jobs", type=int, default=13000)
    ap.add_argument("--days", type=float, default=14.0)
    ap.add_argument("--policy", default="fcfs")
    ap.add_argument("--perf", default="adaptive", choices=list(PERF_MODELS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    cluster = Cluster.load(args.cluster)
    t0 = time.perf_counter()
    jobs = philly_like(cluster, n_jobs=args.jobs, days=args.days, seed=args.seed)
    gen_s = time.perf_counter() - t0
    walls, cpus = [], []
    for _ in range(args.repeat):
        perf = default_perf_model(cluster, args.perf)  # fresh caches: nothing carried between repeats
        sim = Simulator(cluster, make_policy(args.policy), jobs, perf=perf, config=SimConfig(seed=args.seed))
        c0, w0 = time.process_time(), time.perf_counter()
        res = sim.run()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    best = min(range(len(walls)), key=walls.__getitem__)
    out = {
        "params": {"cluster": cluster.name, "gpus": cluster.num_gpus, "jobs": len(jobs), "days": args.days,
                   "policy": args.policy, "perf": type(perf).__name__, "seed": args.seed,
                   "python": platform.python_version(), "machine": platform.machine()},
        "trace_generation_s": round(gen_s, 3),
        "wall_s": round(walls[best], 3), "cpu_s": round(cpus[best], 3),
        "wall_s_all": [round(w, 3) for w in walls],
        "events": res.stats["events"], "events_per_s": round(res.stats["events"] / walls[best]),
        "schedule_calls": res.stats["schedule_calls"],
        "finished": res.summary["finished"], "avg_jct_h": round(res.summary["avg_jct"] / 3600, 3),
        "utilization": round(res.summary["utilization"], 4),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
