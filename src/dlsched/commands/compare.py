"""``dlsched compare``: several policies on the same input, one table."""

from __future__ import annotations

import sys

from dlsched.commands import _common as c
from dlsched.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("compare", help="run several policies on the same input and compare",
                       description="Run each policy on the same cluster and jobs; print one table. "
                                   "Each policy's results go to OUT/<policy>/. An --option KEY=VALUE "
                                   "goes to every policy that has KEY; POLICY.KEY=VALUE to one.")
    c.add_input_args(p)
    p.add_argument("--policies", default="fcfs,fcfs-backfill",
                   help="comma-separated policy names (default fcfs,fcfs-backfill)")
    p.add_argument("--out", default="runs/compare", help="results root (default runs/compare)")
    c.add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.policies.registry import policy_entry, used_options
    from dlsched.report.tables import print_summaries
    from dlsched.report.warnings import describe_load, network_lines, nothing_could_differ
    from dlsched.run.build import build_policy, prepare
    from dlsched.run.execute import execute, write_compare
    from dlsched.run.preflight import check_out_dir

    names = list(dict.fromkeys(n.strip() for n in args.policies.split(",") if n.strip()))
    if not names:
        raise InputError(f"no policy names in {args.policies!r}; give e.g. fcfs,crius "
                         "(`dlsched policies` lists them)", field="--policies")
    options = c.policy_options(args.option, names)
    specs = [c.spec_from_args(args, n, options[n]) for n in names]
    for s in specs:  # fail on a bad name before any work
        build_policy(s.policy)
    # a plugin given as path/file.py:Class is labelled by its own short name in tables and directories
    labels = {n: policy_entry(n).label for n in names}
    if len(set(labels.values())) < len(labels):
        raise InputError(f"two policies share a label ({', '.join(f'{n} -> {l}' for n, l in labels.items())}); "
                         "give each a different name", field="--policies")
    check_out_dir(args.out)
    for name in names:
        check_out_dir(f"{args.out}/{labels[name]}")
    prep = prepare(specs[0])  # one cluster, perf model and job list for every policy
    cluster, jobs, info = prep.cluster, prep.jobs, prep.info
    summaries, net_lines = {}, {}
    for name, spec in zip(names, specs):
        with c.progress_bar(args.quiet, f"{labels[name]} on {cluster.name}") as cb:
            run = execute(spec, f"{args.out}/{labels[name]}", prepared=prep, out_format=args.out_format,
                          progress=cb, links=args.links)
        summaries[labels[name]] = run.result.summary
        net_lines[labels[name]] = network_lines(run.result.stats)
    write_compare(args.out, prep, names, {n: used_options(n, options[n]) for n in names}, summaries)
    print(cluster.describe())
    print(f"{len(jobs)} jobs from {info['trace']}; seed {args.seed}; {describe_load(info)}")
    print_summaries(summaries)
    for line in nothing_could_differ(summaries, {labels[n]: f"{args.out}/{labels[n]}" for n in names}):
        print(f"dlsched: warning: {line}", file=sys.stderr)
    for name, lines in net_lines.items():
        for line in lines:
            print(f"dlsched: {name}: {line}", file=sys.stderr)
    from dlsched.report.provenance import args_config, write_provenance

    write_provenance(args.out, args_config(args), args.seed, getattr(args, "argv", None))
    return 0
