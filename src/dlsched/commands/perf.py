"""``dlsched perf``: iteration time and communication share of a model at each network tier."""

from __future__ import annotations

from dlsched.commands._argtypes import non_negative_float
from dlsched.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("perf", help="price a model on a GPU count at each network tier",
                       description="Iteration time, compute and communication of a data-parallel job "
                                   "placed on one machine, one rack, or across racks of a cluster.")
    p.add_argument("model", help="model name in the zoo (e.g. resnet50, gpt-1.3b)")
    p.add_argument("gpus", type=int, help="number of GPUs")
    p.add_argument("--cluster", default="dally-2racks", help="shipped spec name or YAML path (default dally-2racks)")
    p.add_argument("--params", default=None, help="model size variant, e.g. 1.3B")
    p.add_argument("--batch", type=int, default=None,
                   help="global batch (default: the model's per-GPU default x GPUs)")
    p.add_argument("--gpu-type", default=None, help="GPU type to place on (default: the cluster's first)")
    p.add_argument("--bucket-mb", type=non_negative_float, default=25.0,
                   help="gradient bucket size in MB; 0 = per layer")
    p.add_argument("--no-overlap", action="store_true", help="communication does not overlap backward")
    p.add_argument("--algorithm", default="auto", choices=["auto", "ring", "tree", "hierarchical"])
    p.add_argument("--profile", default=None, help="CSV of measured iteration times (model,gpu,batch,iter_time_s)")
    p.add_argument("--tier-profile", default=None, metavar="NAME|CSV",
                   help="communication as a percentage of compute per tier instead of the link model "
                        "(dlsched simulate --help)")
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.placement.model import PlacementPerfModel, tier_placements
    from dlsched.workload.job import JobSpec
    from dlsched.workload.models import get_model

    if args.gpus < 1:
        raise InputError("needs at least one GPU", field="gpus")
    if args.batch is not None and args.batch < 1:
        raise InputError("batch must be positive", field="--batch")
    cluster = Cluster.load(args.cluster)
    model = get_model(args.model, args.params)  # UnknownNameError lists the zoo
    if args.gpu_type:
        cluster.type_id(args.gpu_type)  # UnknownNameError if the cluster has no such GPU
    perf = PlacementPerfModel(cluster, bucket_mb=args.bucket_mb, overlap=not args.no_overlap,
                              profile=args.profile, algorithm=args.algorithm)
    if args.tier_profile:
        from dlsched.perf.comm.tier_profile import TierProfiledPerfModel

        perf = TierProfiledPerfModel(perf, args.tier_profile)
    batch = args.batch or model.default_batch * args.gpus
    job = JobSpec("perf", 0.0, args.model, args.gpus, batch_size=batch, total_iterations=1, params=args.params)
    places = tier_placements(cluster, args.gpus, args.gpu_type)
    if not places:
        raise InputError(f"cluster {cluster.name} cannot place {args.gpus} GPUs of one type at any tier",
                         field="gpus")
    rows = []
    ref = None
    for tier, gpus in places.items():
        b = perf.comm_breakdown(job, gpus)
        ref = ref or b["iteration_s"]
        rows.append((tier, b, b["iteration_s"] / ref))
    title = (f"{model.name} on {args.gpus} GPUs of {cluster.name}, "
             f"global batch {batch}, bucket {args.bucket_mb:g} MB, overlap {'off' if args.no_overlap else 'on'}, "
             f"algorithm {args.algorithm}"
             + (f", tier profile {args.tier_profile}" if args.tier_profile else ""))
    header = ("tier", "iter ms", "compute ms", "comm ms (all)", "comm ms (exposed)", "comm share", "slowdown")
    cells = [(t, f"{b['iteration_s'] * 1e3:.2f}", f"{b['compute_s'] * 1e3:.2f}", f"{b['comm_total_s'] * 1e3:.2f}",
              f"{b['comm_exposed_s'] * 1e3:.2f}", f"{100 * b['comm_exposed_s'] / b['iteration_s']:.1f}%",
              f"{s:.3f}x") for t, b, s in rows]
    _print_table(title, header, cells)
    return 0


def _print_table(title: str, header: tuple, cells: list[tuple]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text when rich is absent
        print(title)
        widths = [max(len(str(r[i])) for r in [header, *cells]) for i in range(len(header))]
        for r in [header, *cells]:
            print("  ".join(str(v).rjust(w) for v, w in zip(r, widths)))
        return
    table = Table(title=title)
    for i, h in enumerate(header):
        table.add_column(h, justify="left" if i == 0 else "right")
    for r in cells:
        table.add_row(*r)
    Console(width=140).print(table)
