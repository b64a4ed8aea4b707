"""``dlsched compare``: several policies on the same input, one table."""

from __future__ import annotations

from pathlib import Path

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
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.commands._jobs import load_jobs
    from dlsched.commands._preflight import check_out_dir
    from dlsched.policies.registry import make_policy, policy_entry, used_options
    from dlsched.report.io import strict_json, write_results
    from dlsched.report.tables import print_summaries
    from dlsched.sim.engine import Simulator

    names = list(dict.fromkeys(n.strip() for n in args.policies.split(",") if n.strip()))
    if not names:
        raise InputError(f"no policy names in {args.policies!r}; give e.g. fcfs,crius "
                         "(`dlsched policies` lists them)", field="--policies")
    options = c.policy_options(args.option, names)
    policies = [make_policy(n, **options[n]) for n in names]  # fail on a bad name before any work
    # a plugin given as path/file.py:Class is labelled by its own short name in tables and directories
    labels = {n: policy_entry(n).label for n in names}
    if len(set(labels.values())) < len(labels):
        raise InputError(f"two policies share a label ({', '.join(f'{n} -> {l}' for n, l in labels.items())}); "
                         "give each a different name", field="--policies")
    check_out_dir(args.out)
    for name in names:
        check_out_dir(f"{args.out}/{labels[name]}")
    cluster = c.load_cluster(args.cluster, args.placement)
    perf = c.perf_model(args, cluster)
    jobs, info = load_jobs(args, cluster, perf)
    summaries = {}
    for name, policy in zip(names, policies):
        if hasattr(perf, "for_policy"):  # a replay whose rules depend on the policy (arena_replay.py)
            perf.for_policy(name)
        with c.progress_bar(args.quiet, f"{labels[name]} on {cluster.name}") as cb:
            result = Simulator(cluster, policy, jobs, perf=perf, config=c.sim_config(args),
                               contention=c.contention_model(args, cluster)).run(progress=cb)
        out = write_results(f"{args.out}/{labels[name]}", result.records, result.series, result.summary,
                            {**result.params, **info, "policy_options": used_options(name, options[name])},
                            timings=result.stats)
        c.write_links(out, result.links)
        summaries[labels[name]] = result.summary
    (Path(args.out) / "compare.json").write_text(strict_json(
        {"params": {"cluster": cluster.name, "jobs": len(jobs), "seed": args.seed, **info, "policies": names,
                    "policy_options": {n: used_options(n, options[n]) for n in names}},
         "summaries": summaries}))
    print(cluster.describe())
    print(f"{len(jobs)} jobs from {info['trace']}; seed {args.seed}")
    print_summaries(summaries)
    from dlsched.report.provenance import args_config, write_provenance

    write_provenance(args.out, args_config(args), args.seed, getattr(args, "argv", None))
    return 0
