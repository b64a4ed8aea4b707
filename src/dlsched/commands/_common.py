"""Argument groups and loaders shared by the simulation commands."""

from __future__ import annotations

import argparse
import math
import sys

from typing import TYPE_CHECKING

from dlsched.errors import InputError
from dlsched.perf.default import PERF_MODELS

if TYPE_CHECKING:  # the engine, cluster and perf models load on use: start-up stays cheap
    from dlsched.cluster.topology import Cluster
    from dlsched.sim.engine import SimConfig

DEFAULT_CLUSTER = "crius-sim"
# the embedded default is the benchmark trace: 13,000 Philly-like jobs in two weeks
DEFAULT_JOBS = 13000
DEFAULT_DAYS = 14.0
SHOW_SKIPPED = 20  # skipped rows listed on the terminal; the results keep all of them


def positive_int(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


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
    p.add_argument("--jobs", type=positive_int, default=None,
                   help=f"synthetic: number of jobs (default {DEFAULT_JOBS}); trace: keep the first N")
    p.add_argument("--days", type=float, default=None,
                   help=f"synthetic: span of arrivals in days (default: {DEFAULT_DAYS:g} x jobs / {DEFAULT_JOBS}, "
                        "the benchmark trace's arrival rate)")
    p.add_argument("--seed", type=int, default=0, help="random seed (synthetic trace and policies)")
    p.add_argument("--perf", default="adaptive", choices=list(PERF_MODELS),
                   help="performance model pricing allocations: adaptive (large models at their best "
                        "3D-parallel plan, others by placement; default), placement, simple")
    p.add_argument("--tier-profile", default=None, metavar="NAME|CSV",
                   help="per-model communication overhead at the machine/rack/network tier, as a "
                        "percentage of compute (dally-table1: Dally's Table I, as ArtISt-sim prices "
                        "placements; or a CSV model,machine_pct,rack_pct,network_pct)")
    p.add_argument("--throughputs", default=None, metavar="PATH",
                   help="replay a peer's measured throughputs (Gavel's table, CSV or JSON): jobs run at "
                        "those speeds under every policy; --perf prices only what the table lacks, "
                        "counted in summary.json under params.replay (docs/replay.md)")
    p.add_argument("--debug", action="store_true", help="check engine invariants at every event (slow)")
    p.add_argument("--max-time", type=float, default=None, help="stop the simulation at this time (s)")
    p.add_argument("--checkpoint-interval", type=float, default=None,
                   help="seconds between checkpoints; preemption loses work since the last one "
                        "(default: checkpoint at preemption)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def load_cluster(name: str) -> Cluster:
    from dlsched.cluster.topology import Cluster

    return Cluster.load(name)


def load_jobs(args, cluster: Cluster) -> tuple[list, dict]:
    """Jobs from a trace or the generator, checked against the cluster; returns (jobs, info)."""
    from dlsched.workload.validate import check_jobs

    if args.trace:
        from dlsched.workload.readers import read_trace

        load = read_trace(args.trace, fmt=args.format, skip_bad_rows=args.skip_bad_rows)
        jobs, skipped, source = load.jobs, list(load.skipped), load.source
        if args.jobs is not None:
            jobs = jobs[:args.jobs]
        info = {"trace": args.trace, "format": args.format}
    else:
        from dlsched.workload.synthetic import philly_like

        n = args.jobs or DEFAULT_JOBS
        days = args.days if args.days is not None else DEFAULT_DAYS * n / DEFAULT_JOBS
        if not (days > 0 and math.isfinite(days)):
            raise InputError(f"--days must be positive (and finite), got {days}")
        jobs = philly_like(cluster, n_jobs=n, days=days, seed=args.seed)
        skipped, source = [], "synthetic"
        info = {"trace": "synthetic:philly_like", "synthetic_jobs": n, "synthetic_days": days}
    jobs, bad = check_jobs(jobs, cluster, skip_bad_rows=args.skip_bad_rows, source=source)
    skipped = sorted([*skipped, *bad], key=lambda r: r.line)
    if skipped:
        by_field: dict[str, int] = {}
        for s in skipped:
            by_field[s.field] = by_field.get(s.field, 0) + 1
        counts = ", ".join(f"{n} on field '{f}'" if f else f"{n} malformed"
                           for f, n in sorted(by_field.items(), key=lambda kv: (-kv[1], kv[0])))
        print(f"dlsched: skipped {len(skipped)} row{'s' if len(skipped) != 1 else ''} of {source} "
              f"({counts}):", file=sys.stderr)
        for s in skipped[:SHOW_SKIPPED]:
            where = f"line {s.line}, field '{s.field}'" if s.field else f"line {s.line}"
            print(f"  {where}: {s.reason}", file=sys.stderr)
        if len(skipped) > SHOW_SKIPPED:
            print(f"  ... and {len(skipped) - SHOW_SKIPPED} more (all listed in summary.json under "
                  "params.skipped)", file=sys.stderr)
        info["skipped_rows"] = len(skipped)
        info["skipped_by_field"] = by_field
        info["skipped"] = [{"line": s.line, "field": s.field, "reason": s.reason} for s in skipped]
    if not jobs:
        raise InputError("no jobs to simulate", file=source)
    return jobs, info


def sim_config(args) -> SimConfig:
    from dlsched.sim.engine import SimConfig

    return SimConfig(seed=args.seed, debug=args.debug, max_time=args.max_time,
                     checkpoint_interval_s=args.checkpoint_interval)


def perf_model(args, cluster: Cluster):
    from dlsched.perf.default import default_perf_model
    from dlsched.perf.replay import with_throughputs

    base = default_perf_model(cluster, args.perf, tier_profile=getattr(args, "tier_profile", None))
    return with_throughputs(base, getattr(args, "throughputs", None))


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
