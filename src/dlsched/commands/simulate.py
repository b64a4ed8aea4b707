"""``dlsched simulate``: one policy on one trace and cluster."""

from __future__ import annotations

from dlsched.commands import _common as c


def add_parser(sub) -> None:
    p = sub.add_parser("simulate", help="simulate one policy on a trace (the default command)",
                       description="Simulate one scheduling policy on a trace or a synthetic workload. "
                                   "Writes jobs.csv, series.csv and summary.json to --out.")
    c.add_input_args(p)
    p.add_argument("--policy", default="fcfs", help="scheduling policy (see `dlsched policies`)")
    p.add_argument("--out", default="runs/latest", help="results directory (default runs/latest)")
    p.add_argument("--timeline", default=None, metavar="PATH",
                   help="also write the per-job timeline as Chrome-trace JSON (ui.perfetto.dev, chrome://tracing)")
    p.add_argument("--list", action="store_true", help="list policies and shipped clusters, then exit")
    p.set_defaults(func=run)


def run(args) -> int:
    if args.list:  # before the heavy imports: listing stays cheap (benchmarks/bench_startup.py)
        from dlsched.cluster.shipped import cluster_names
        from dlsched.policies.registry import POLICIES

        print("policies:", ", ".join(POLICIES.names()))  # built-ins read from source, then plugins
        print("clusters:", ", ".join(cluster_names()))
        return 0
    from dlsched.commands._jobs import load_jobs
    from dlsched.commands._preflight import check_out_dir
    from dlsched.policies.registry import make_policy, used_options
    from dlsched.report.io import write_results
    from dlsched.report.tables import print_summaries
    from dlsched.sim.engine import Simulator

    # everything the user typed is checked before the (possibly long) run
    check_out_dir(args.out)
    options = c.policy_options(args.option, [args.policy])[args.policy]
    policy = make_policy(args.policy, **options)
    cluster = c.load_cluster(args.cluster, args.placement)
    perf = c.perf_model(args, cluster)
    jobs, info = load_jobs(args, cluster, perf)
    sim = Simulator(cluster, policy, jobs, perf=perf, config=c.sim_config(args),
                    contention=c.contention_model(args, cluster))
    with c.progress_bar(args.quiet, f"{policy.name} on {cluster.name}") as cb:
        result = sim.run(progress=cb)
    params = {**result.params, **info, "policy_options": used_options(args.policy, options)}
    if args.placement != "packed":  # default runs keep their summary.json byte for byte
        params["placement"] = args.placement
    out = write_results(args.out, result.records, result.series, result.summary, params,
                        timings=result.stats)
    from dlsched.report.provenance import args_config, write_provenance

    write_provenance(out, args_config(args), args.seed, getattr(args, "argv", None))
    if args.timeline:
        from dlsched.report.timeline import write_timeline

        write_timeline(args.timeline, result.events, title=f"{policy.name} on {cluster.name}")
        print(f"timeline in {args.timeline} (open in ui.perfetto.dev)")
    c.write_links(out, result.links)
    print(cluster.describe())
    print(f"{len(jobs)} jobs from {info['trace']}; seed {args.seed}")
    print_summaries({policy.name: result.summary})
    st = result.stats
    print(f"simulated {st['events']} events in {st['wall_s']:.2f} s ({st['events_per_s']:.0f} events/s); "
          f"results in {out}/")
    return 0
