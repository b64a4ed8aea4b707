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
    p.add_argument("--spec", default=None, metavar="JSON",
                   help="rerun the run a spec describes: a results folder, its summary.json (params.spec) "
                        "or a spec file; it replaces every flag that shapes the run (output flags still apply)")
    c.add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if args.list:  # before the heavy imports: listing stays cheap (benchmarks/bench_startup.py)
        from dlsched.cluster.shipped import cluster_names
        from dlsched.policies.registry import POLICIES

        print("policies:", ", ".join(POLICIES.names()))  # built-ins read from source, then plugins
        print("clusters:", ", ".join(cluster_names()))
        return 0
    from dlsched.run.preflight import check_out_dir
    from dlsched.report.tables import print_summaries
    from dlsched.run.build import build_policy
    from dlsched.run.execute import execute

    # everything the user typed is checked before the (possibly long) run
    check_out_dir(args.out)
    spec = c.spec_given(args) or c.spec_from_args(args)
    label = f"{build_policy(spec.policy).name} on {spec.cluster.name}"  # a bad policy fails before any job is read
    with c.progress_bar(args.quiet, label) as cb:
        run = execute(spec, args.out, out_format=args.out_format, progress=cb, record_events=bool(args.timeline),
                      links=args.links)
    result, out = run.result, run.out
    cluster, jobs, info = run.prepared.cluster, run.prepared.jobs, run.prepared.info
    from dlsched.report.provenance import args_config, write_provenance

    write_provenance(out, args_config(args), spec.seed, getattr(args, "argv", None))
    if args.timeline:
        from dlsched.report.timeline import write_timeline

        write_timeline(args.timeline, result.events, title=f"{result.params['policy']} on {cluster.name}")
        print(f"timeline in {args.timeline} (open in ui.perfetto.dev)")
    print(cluster.describe())
    from dlsched.report.warnings import describe_load

    print(f"{len(jobs)} jobs from {info['trace']}; seed {spec.seed}; {describe_load(info)}")
    print_summaries({result.params['policy']: result.summary})
    _warn(result)
    st = result.stats
    print(f"simulated {st['events']} events in {st['wall_s']:.2f} s ({st['events_per_s']:.0f} events/s); "
          f"results in {out}/")
    # the run's objects live as long as ``args``: the process entry then exits without freeing them
    # one by one (cli.FAST_EXIT_COMMANDS); an in-process caller frees them with its ``args``
    args.finished_run = run
    return 0


def _warn(result) -> None:
    import sys

    from dlsched.report.warnings import network_lines, nothing_could_differ

    lines = nothing_could_differ({result.params.get("policy", "run"): result.summary}) + network_lines(result.stats)
    for line in lines:
        print(f"dlsched: {line}", file=sys.stderr)
