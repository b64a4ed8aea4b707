"""``dlsched net``: placed jobs on a topology, each alone and under contention, with bottleneck links."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("net", help="iteration times of placed jobs sharing a network",
                       description="Read a topology and placed jobs (YAML, or CSV with --topology); print "
                                   "each job's iteration time alone and under flow-level contention "
                                   "(strict priority, max-min sharing), and its bottleneck link. "
                                   "See docs/network.md and examples/net_contention.yaml.")
    p.add_argument("jobs", help="YAML (topology + jobs) or CSV (jobs) file")
    p.add_argument("--topology", default=None,
                   help="overrides the file's: a cluster spec name or path, lingjun[:PATH], "
                        "clos:hosts=N,hosts_per_tor=N,aggs=N[,nic_gbps=..,oversubscription=..], "
                        "double-sided:hosts=N[,tors=..,aggs=..,cores=..]")
    p.add_argument("--seed", type=int, default=0, help="ECMP hash seed (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.commands.perf import _print_table
    from dlsched.network.jobfile import read_net_input
    from dlsched.network.standalone import evaluate, parse_topology_arg

    net, lines = read_net_input(args.jobs)
    if args.topology:
        net = net.model_copy(update={"topology": parse_topology_arg(args.topology)})
    rows, graph = evaluate(net, lines, args.jobs, seed=args.seed)
    header = ("job", "hosts", "GPUs", "alone ms", "shared ms", "slowdown", "exposed comm ms (alone / shared)",
              "network MB/iter", "bottleneck link", "offered load")
    cells = [(r.job_id, str(r.hosts), str(r.gpus), f"{r.alone_s * 1e3:.2f}", f"{r.contended_s * 1e3:.2f}",
              f"{r.slowdown:.3f}x", f"{r.comm_alone_s * 1e3:.2f} / {r.comm_contended_s * 1e3:.2f}",
              f"{r.network_mb:.1f}", r.bottleneck or "-", f"{r.load:.2f}" if r.bottleneck else "-")
             for r in rows]
    _print_table(f"{graph.describe()}; ECMP seed {args.seed}", header, cells)
    return 0
