"""``dlsched perf``: what a model costs on GPUs; ``perf calibrate`` / ``perf validate`` fit and score the model.

``dlsched perf MODEL N`` prints the data-parallel price at each network tier and, for the
large models the parallelism model plans, the best plan the simulator prices them at, with
its compute / communication split (``--gpu-type``, ``--nodes``, ``--gpus-per-node`` pick the
placement).  ``dlsched perf calibrate PROFILE... --out FILE`` and ``dlsched perf validate
PROFILE... [--holdout size|gpu|job|none]`` are the commands ``perf-calibrate`` and
``perf-validate`` (the CLI maps the two-word forms onto them).
"""

from __future__ import annotations

from dlsched.commands._argtypes import non_negative_float
from dlsched.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser("perf", help="price a model on a GPU count at each network tier",
                       description="Iteration time, compute and communication of a data-parallel job "
                                   "placed on one machine, one rack, or across racks of a cluster.")
    p.add_argument("model", help="model name in the zoo (e.g. resnet50, gpt-1.3b); or calibrate / validate")
    p.add_argument("gpus", type=int, nargs="?", default=None,
                   help="number of GPUs (default: --nodes x --gpus-per-node)")
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
    g = p.add_argument_group("best plan (large models: what the simulator prices)")
    g.add_argument("--nodes", type=int, default=None, help="nodes the job spans (default: as few as fit)")
    g.add_argument("--gpus-per-node", type=int, default=None,
                   help="GPUs used on each node (default: the cluster's node size, or fewer GPUs)")
    g.add_argument("--perf", default="calibrated", choices=["adaptive", "calibrated"],
                   help="plan cost parameters: calibrated (fitted to measured runs, the shipped fit or "
                        "--perf-params; default) or adaptive (analytic defaults)")
    g.add_argument("--perf-params", default=None, metavar="FILE", help="a `perf calibrate --out` file")
    p.set_defaults(func=run)

    c = sub.add_parser("perf-calibrate", help="fit the perf model to measured tables (also: perf calibrate)",
                       description="Fit the perf model's parameters to measured profile tables "
                                   "(docs/perf-model.md, Calibration and validation).")
    c.add_argument("profiles", nargs="+", metavar="PROFILE", help="profile tables (kind detected from the header)")
    c.add_argument("--out", required=True, metavar="FILE", help="where to write the fitted parameters (JSON)")
    c.add_argument("--cluster", default="crius-sim", help="whose link figures the fit scales (default crius-sim)")
    c.set_defaults(func=run_calibrate)

    v = sub.add_parser("perf-validate", help="score the calibration on held-out rows (also: perf validate)",
                       description="Fit on every group of rows but one and score the rows left out.")
    v.add_argument("profiles", nargs="+", metavar="PROFILE", help="profile tables (kind detected from the header)")
    v.add_argument("--holdout", default="size", choices=["size", "gpu", "job", "none"],
                   help="what a fold leaves out: a model size, a GPU type, a job type / family, or nothing "
                        "(in-sample only); default size")
    v.add_argument("--cluster", default="crius-sim", help="whose link figures the fit scales (default crius-sim)")
    v.add_argument("--rows", default=None, metavar="CSV",
                   help="also write every scored run: measured, held-out and in-sample prices")
    v.set_defaults(func=run_validate)


SUBCOMMANDS = ("calibrate", "validate")


def run_calibrate(args) -> int:
    from dlsched.perf.calibration.calibrate import calibrate

    fitted = calibrate(args.profiles, args.cluster)
    prm = fitted.params
    prm.save(args.out)
    t = fitted.time
    print(f"fitted on: {', '.join(s['file'] + ' (' + s['kind'] + ')' for s in prm.provenance['sources'])}")
    if t is not None:
        print(f"iteration rows fitted {t.rows} (left out, priced out of memory: {t.out_of_memory})")
        header = ("GPU type", "family", "efficiency", "small-batch k", "intra bw x", "inter bw x")
        cells = [(g, f, f"{prm.efficiency[(g, f)]:.3f}", f"{prm.batch_overhead[(g, f)]:.1f}",
                  f"{prm.links[(g, f)][0]:.2f}", f"{prm.links[(g, f)][1]:.2f}") for g, f in sorted(prm.efficiency)]
        _print_table("time parameters", header, cells)
    if prm.memory:
        print("memory (state x, activation x): " + ", ".join(f"{f} {s:.2f} / {a:.2f}" for f, (s, a) in
                                                             sorted(prm.memory.items()))
              + f"; reserve {prm.reserved_bytes / 2**30:.2f} GiB")
    if prm.contention:
        print("packing (contention, utilisation x): " + ", ".join(
            f"{f} {prm.contention[f]:.2f} / {prm.utilisation[f]:.2f}" for f in sorted(prm.contention)))
    if prm.spread_keep is not None:
        print(f"spread: {prm.spread_keep:.3f} of throughput kept per halving of GPUs per node")
    for s in fitted.skipped:
        print(f"not used: line {s.line}: {s.reason}")
    print(f"wrote {args.out}")
    return 0


def run_validate(args) -> int:
    import sys

    from dlsched.perf.calibration.validate import lines, validate, write_rows

    rep = validate(args.profiles, args.holdout, args.cluster,
                   progress=lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    if args.rows:
        print(f"wrote {write_rows(rep, args.rows)} rows to {args.rows}")
    for line in lines(rep):
        print(line)
    return 0


def run(args) -> int:
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.placement.model import PlacementPerfModel, tier_placements
    from dlsched.workload.job import JobSpec
    from dlsched.workload.models import get_model

    if args.model in SUBCOMMANDS:  # reached only with an unusual argv order; the CLI maps the usual one
        raise InputError(f"use `dlsched perf {args.model} PROFILE...`", field="model")
    for name in ("nodes", "gpus_per_node"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise InputError("must be at least 1", field="--" + name.replace("_", "-"))
    if args.gpus is None:
        if args.nodes is None or args.gpus_per_node is None:
            raise InputError("give the number of GPUs, or --nodes and --gpus-per-node", field="gpus")
        args.gpus = args.nodes * args.gpus_per_node
    if args.gpus < 1:
        raise InputError("needs at least one GPU", field="gpus")
    if args.perf_params is not None and args.perf != "calibrated":
        raise InputError(f"--perf-params applies to the calibrated model, not {args.perf!r}", field="--perf-params")
    if args.perf_params is not None:  # a bad file is reported before any table is printed
        from dlsched.perf.calibration.params import CalibratedParams

        CalibratedParams.load(args.perf_params)
    if args.batch is not None and args.batch < 1:
        raise InputError("batch must be positive", field="--batch")
    cluster = Cluster.load(args.cluster)
    model = get_model(args.model, args.params)  # UnknownNameError lists the zoo
    if args.gpu_type:
        cluster.type_id(args.gpu_type)  # UnknownNameError if the cluster has no such GPU
    from dlsched.workload.zoo_large import layer_traits

    large = layer_traits(model) is not None
    placed = args.nodes is not None or args.gpus_per_node is not None
    if placed and not large:
        raise InputError(f"{model.name} is priced data-parallel by placement; --nodes / --gpus-per-node apply "
                         "to the large models the parallelism model plans (bert, gpt, moe, wide_resnet)",
                         field="--nodes")
    if placed:  # the placement asked for: only the plan the simulator prices there
        from dlsched.commands._perf_plan import print_best_plan

        return print_best_plan(args, cluster, model)
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
    if large:
        from dlsched.commands._perf_plan import print_best_plan

        print()
        return print_best_plan(args, cluster, model)
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
