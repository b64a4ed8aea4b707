"""``dlsched simulate``: one policy on one trace and cluster."""

from __future__ import annotations

from dlsched.commands import _common as c


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate one policy on a trace (the default command)",
                       description="Simulate one scheduling policy on a trace or a synthetic workload. "
                                   "Writes jobs.csv, series.csv and summary.json to --out.")
    c.add_input_args(p)
    p.add_argument("--policy", default="fcfs", help="scheduling policy (see `dlsched simulate --list`)")
    p.add_argument("--out", default="runs/latest", help="results directory (default runs/latest)")
    p.add_argument("--list", action="store_true", help="list policies and shipped clusters, then exit")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.list:  # before the heavy imports: listing stays cheap (benchmarks/bench_startup.py)
        from dlsched.cluster.shipped import shipped_specs
        from dlsched.policies.names import declared_policy_names

        print("policies:", ", ".join(declared_policy_names()))
        print("clusters:", ", ".join(shipped_specs()))
        return 0
    from dlsched.policies.registry import make_policy
    from dlsched.report.io import write_results
    from dlsched.report.tables import print_summaries
    from dlsched.sim.engine import Simulator

    cluster = c.load_cluster(args.cluster)
    policy = make_policy(args.policy)
    jobs, info = c.load_jobs(args, cluster)
    sim = Simulator(cluster, policy, jobs, perf=c.perf_model(args, cluster), config=c.sim_config(args))
    with c.progress_bar(args.quiet, f"{policy.name} on {cluster.name}") as cb:
        result = sim.run(progress=cb)
    params = {**result.params, **info}
    out = write_results(args.out, result.records, result.series, result.summary, params,
                        timings=result.stats)
    print(cluster.describe())
    print(f"{len(jobs)} jobs from {info['trace']}; seed {args.seed}")
    print_summaries({policy.name: result.summary})
    st = result.stats
    print(f"simulated {st['events']} events in {st['wall_s']:.2f} s ({st['events_per_s']:.0f} events/s); "
          f"results in {out}/")
    return 0
