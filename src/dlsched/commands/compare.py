"""``dlsched compare``: several policies on the same input, one table."""

from __future__ import annotations

import json
from pathlib import Path

from dlsched.commands import _common as c


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="run several policies on the same input and compare",
                       description="Run each policy on the same cluster and jobs; print one table. "
                                   "Each policy's results go to OUT/<policy>/.")
    c.add_input_args(p)
    p.add_argument("--policies", default="fcfs,fcfs-backfill",
                   help="comma-separated policy names (default fcfs,fcfs-backfill)")
    p.add_argument("--out", default="runs/compare", help="results root (default runs/compare)")
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.policies.registry import make_policy
    from dlsched.report.io import write_results
    from dlsched.report.tables import print_summaries
    from dlsched.sim.engine import Simulator

    names = list(dict.fromkeys(n.strip() for n in args.policies.split(",") if n.strip()))
    policies = [make_policy(n) for n in names]  # fail on a bad name before any work
    cluster = c.load_cluster(args.cluster)
    jobs, info = c.load_jobs(args, cluster)
    perf = c.perf_model(args, cluster)
    summaries = {}
    for name, policy in zip(names, policies):
        with c.progress_bar(args.quiet, f"{name} on {cluster.name}") as cb:
            result = Simulator(cluster, policy, jobs, perf=perf, config=c.sim_config(args),
                               contention=c.contention_model(args, cluster)).run(progress=cb)
        out = write_results(f"{args.out}/{name}", result.records, result.series, result.summary,
                            {**result.params, **info}, timings=result.stats)
        c.write_links(out, result.links)
        summaries[name] = result.summary
    print(cluster.describe())
    print(f"{len(jobs)} jobs from {info['trace']}; seed {args.seed}")
    print_summaries(summaries)
    (Path(args.out) / "compare.json").write_text(
        json.dumps({"params": {"cluster": cluster.name, "jobs": len(jobs), "seed": args.seed, **info},
                    "summaries": summaries}, indent=2, sort_keys=True) + "\n")
    return 0
