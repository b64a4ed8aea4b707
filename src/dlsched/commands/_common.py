"""Argument groups and loaders shared by the simulation commands."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from dlsched import defaults as D
from dlsched.commands._argtypes import (non_negative_float, non_negative_int, positive_float,
                                        positive_int)
from dlsched.commands._jobs import DEFAULT_DAYS, DEFAULT_JOBS
from dlsched.perf.default import PERF_MODELS

if TYPE_CHECKING:  # the engine, cluster and perf models load on use: start-up stays cheap
    from dlsched.cluster.topology import Cluster
    from dlsched.sim.engine import SimConfig

DEFAULT_CLUSTER = "crius-sim"


def add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", default=DEFAULT_CLUSTER,
                   help=f"shipped spec name or YAML path (default {DEFAULT_CLUSTER})")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--trace", help="trace file (format detected from its header)")
    src.add_argument("--synthetic", action="store_true",
                     help="generate a Philly-like synthetic trace (the default when no --trace)")
    p.add_argument("--format", default="auto", help="trace format (default: detect)")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="skip malformed or infeasible rows, reporting how many and why")
    p.add_argument("--fit-requests", action="store_true",
                   help="a request whose model does not fit in GPU memory on its GPUs is doubled (up to "
                        "16 GPUs) until it does; each change is listed in summary.json (default: such "
                        "a request is an error, or skipped with --skip-bad-rows)")
    p.add_argument("--jobs", type=positive_int, default=None,
                   help=f"synthetic: number of jobs (default {DEFAULT_JOBS}); trace: keep the first N")
    p.add_argument("--days", type=positive_float, default=None,
                   help=f"synthetic: span of arrivals in days (default: {DEFAULT_DAYS:g} x jobs / {DEFAULT_JOBS}, "
                        "the benchmark trace's arrival rate)")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="random seed, 0 or more (synthetic trace and policies)")
    p.add_argument("--perf", default="adaptive", type=perf_name, metavar="NAME",
                   help=f"performance model pricing allocations: {', '.join(PERF_MODELS)}, an installed "
                        "plugin or file.py:factory (adaptive: large models at their best 3D-parallel plan, "
                        "others by placement; default)")
    p.add_argument("--tier-profile", default=None, metavar="NAME|CSV",
                   help="per-model communication overhead at the machine/rack/network tier, as a "
                        "percentage of compute (dally-table1: Dally's Table I, as ArtISt-sim prices "
                        "placements; or a CSV model,machine_pct,rack_pct,network_pct)")
    p.add_argument("--network", default="off", choices=["off", "flow"],
                   help="flow: jobs that share network links slow each other (flow-level max-min "
                        "contention on the spec's link graph, docs/network.md); off: each job is "
                        "priced alone (default)")
    p.add_argument("--throughputs", default=None, metavar="PATH", action="append",
                   help="replay a peer's measured speeds, detected from the header: Gavel's throughput "
                        "table (CSV or JSON; add its co-located table for packed jobs), or the Crius "
                        "authors' iteration-time table (add their DP-memory table for their memory "
                        "check); repeatable.  Jobs run at those speeds under every policy; --perf prices "
                        "only what the tables lack, counted in summary.json under params.replay "
                        "(docs/replay.md)")
    add_comm_args(p)
    p.add_argument("--placement", default="packed", choices=["packed", "first-free"],
                   help="packed: job policies place jobs on the fewest nodes and racks (default); "
                        "first-free: the first free GPUs in node order, as a topology-oblivious cluster "
                        "scheduler fragments a cluster (CRUX section 2; cluster/oblivious.py)")
    p.add_argument("--debug", action="store_true", help="check engine invariants at every event (slow)")
    p.add_argument("--max-time", type=positive_float, default=None, help="stop the simulation at this time (s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_option_arg(p)
    add_engine_args(p)


def perf_name(text: str) -> str:
    """argparse type for ``--perf``: a built-in model, an installed plugin or a reference."""
    if text in PERF_MODELS:
        return text
    from dlsched.errors import InputError
    from dlsched.perf.default import PERF

    try:
        PERF.get(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.reason) from None
    return text


def comm_name(text: str) -> str:
    """argparse type for ``--comm``: runs only when the flag is given, so start-up imports no policy."""
    from dlsched.comm.registry import COMM
    from dlsched.errors import InputError

    try:  # a built-in, an installed plugin, or a file.py:Factory / module:Factory reference
        COMM.get(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.reason) from None
    return text


def add_comm_args(p: argparse.ArgumentParser, live: bool = False) -> None:
    what = ("recorded, not programmed: each assignment goes to the state's events and comm.csv under --out"
            if live else "implies --network flow")
    p.add_argument("--comm", default=None, type=comm_name, metavar="NAME",
                   help="communication policy choosing each job's paths and priority levels (docs/crux.md; "
                        f"`dlsched policies` lists them); {what} (default: none, i.e. ECMP "
                        "with no priorities)")
    p.add_argument("--comm-levels", type=positive_int, default=8, metavar="K",
                   help="hardware priority levels of the fabric (default 8)")
    p.add_argument("--comm-reserved", type=non_negative_int, default=2, metavar="N",
                   help="levels reserved for other traffic, not given to training jobs (default 2)")
    if not live:
        p.add_argument("--charge-self-collisions", action="store_true",
                       help="flow model: a job whose own flows are hashed onto one switch port runs slower "
                            "than its price alone; implies --network flow (default: not charged; docs/network.md)")


def add_option_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, repeatable (see `dlsched policies` for each policy's options)")


def add_engine_args(p: argparse.ArgumentParser) -> None:
    """The engine's costs (``SimConfig``); every value is written to summary.json under params.sim."""
    g = p.add_argument_group("engine costs")
    g.add_argument("--start-overhead", type=non_negative_float, default=D.START_OVERHEAD_S, metavar="S",
                   help=f"seconds before a job first makes progress (default {D.START_OVERHEAD_S:g})")
    g.add_argument("--restore-base", type=non_negative_float, default=D.RESTORE_BASE_S, metavar="S",
                   help=f"resume, migrate or resize: fixed seconds (default {D.RESTORE_BASE_S:g})")
    g.add_argument("--restore-per-gb", type=non_negative_float, default=D.RESTORE_S_PER_GB, metavar="S",
                   help=f"... plus seconds per GB of model state (default {D.RESTORE_S_PER_GB:g})")
    g.add_argument("--checkpoint-interval", type=positive_float, default=D.CHECKPOINT_INTERVAL_S, metavar="S",
                   help="seconds between checkpoints; preemption loses work since the last one "
                        "(default: checkpoint at preemption)")


def load_cluster(name: str, placement: str = "packed") -> Cluster:
    from dlsched.cluster.topology import Cluster

    cluster = Cluster.load(name)
    if placement != "packed":
        from dlsched.cluster.oblivious import set_placement

        set_placement(cluster, placement)
    return cluster


def sim_config(args) -> SimConfig:
    from dlsched.sim.engine import SimConfig

    return SimConfig(seed=args.seed, debug=args.debug, max_time=args.max_time,
                     checkpoint_interval_s=args.checkpoint_interval, start_overhead_s=args.start_overhead,
                     restore_base_s=args.restore_base, restore_s_per_gb=args.restore_per_gb)


def policy_options(option_pairs: list[str], names: list[str]) -> dict[str, dict]:
    """Typed ``--option`` values per policy name (InputError on an unknown key or a bad value)."""
    from dlsched.policies.options import assign_options, split_pairs
    from dlsched.policies.registry import policy_options as declared

    return assign_options(split_pairs(option_pairs), {n: declared(n) for n in names})


def contention_model(args, cluster: Cluster):
    """A fresh flow-contention model for one run (``--network flow``), or None."""
    comm = getattr(args, "comm", None)
    if getattr(args, "network", "off") != "flow" and comm is None and not getattr(args, "charge_self_collisions", False):
        return None
    from dlsched.comm.fabric import contention_for

    # CRUX's double-sided and Lingjun graphs included
    flow = contention_for(cluster, seed=args.seed,
                          charge_self_collisions=getattr(args, "charge_self_collisions", False))
    if comm is None:
        return flow
    from dlsched.comm import ScheduledContention, make_comm_policy

    from dlsched.errors import InputError

    try:
        policy = make_comm_policy(comm, args.comm_levels, args.comm_reserved, args.seed)
    except ValueError as e:
        raise InputError(f"--comm {comm} --comm-levels {args.comm_levels} --comm-reserved "
                         f"{args.comm_reserved}: {e}") from None
    return ScheduledContention(flow, policy)


def write_links(out_dir, rows) -> None:
    """``links.csv`` (time, link, utilisation) beside a run's results, when the run has one."""
    if not rows:
        return
    import csv
    from pathlib import Path

    with open(Path(out_dir) / "links.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", "link", "utilisation"])
        for t, link, u in rows:
            w.writerow([repr(round(t, 6)), link, repr(round(u, 6))])


def perf_model(args, cluster: Cluster):
    from dlsched.perf.default import default_perf_model
    from dlsched.perf.measured.replay import with_throughputs

    base = default_perf_model(cluster, args.perf, tier_profile=getattr(args, "tier_profile", None))
    return with_throughputs(base, getattr(args, "throughputs", None), policy=getattr(args, "policy", None))


def progress_bar(quiet: bool, label: str):
    """A context manager yielding a callback ``(now, done, total)``; a no-op when quiet."""
    import contextlib

    if quiet or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    @contextlib.contextmanager
    def bar():
        with Progress(TextColumn(label), BarColumn(), TextColumn("{task.completed}/{task.total} jobs"),
                      TextColumn("sim t={task.fields[t]:.0f}s"), TimeElapsedColumn(),
                      transient=True) as prog:
            task = prog.add_task(label, total=1, t=0.0)

            def cb(now, done, total):
                prog.update(task, completed=done, total=total, t=now)
            yield cb
    return bar()
