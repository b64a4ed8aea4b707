"""Argument groups shared by the simulation commands, and the run specification they describe.

The flags are parsed here; what they mean is ``dlsched.run``'s: ``spec_from_args`` turns them
into a ``RunSpec``, from which the commands build every run.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from dlsched import defaults as D
from dlsched.commands._argtypes import (non_negative_float, non_negative_int, positive_float,
                                        positive_int)
from dlsched.perf.default import DEFAULT_PERF, PERF_MODELS

DEFAULT_CLUSTER, DEFAULT_JOBS, DEFAULT_DAYS, PLACEMENTS = D.CLUSTER, D.JOBS, D.DAYS, D.PLACEMENTS

if TYPE_CHECKING:
    from dlsched.run.spec import RunSpec


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
                        "16 GPUs) until it does; each change is listed in summary.json; a job that fits on "
                        "none is skipped, counted and listed, as the Crius authors' simulator leaves such "
                        "jobs out (default: such a request is an error, or skipped with --skip-bad-rows)")
    add_load_args(p)
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="random seed, 0 or more (synthetic trace and policies)")
    p.add_argument("--perf", default=DEFAULT_PERF, type=perf_name, metavar="NAME",
                   help=f"performance model pricing allocations: {', '.join(PERF_MODELS)}, an installed "
                        "plugin or file.py:factory (calibrated, the default: large models at their best "
                        "3D-parallel plan under parameters fitted to measured GPU runs, others by placement "
                        "with fitted packing figures; adaptive: the same under the analytic defaults; "
                        "docs/perf-model.md)")
    p.add_argument("--perf-params", default=None, metavar="FILE",
                   help="calibrated parameters from `dlsched perf calibrate --out FILE` for --perf "
                        "calibrated (default: the fit shipped with dlsched)")
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
    p.add_argument("--placement", default="packed", choices=list(PLACEMENTS),
                   help="packed: job policies place jobs on the fewest nodes and racks (default); "
                        "first-free: the first free GPUs in node order, as a topology-oblivious cluster "
                        "scheduler fragments a cluster (CRUX section 2; cluster/oblivious.py)")
    p.add_argument("--debug", action="store_true", help="check engine invariants at every event (slow)")
    p.add_argument("--max-time", type=positive_float, default=None, help="stop the simulation at this time (s)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_option_arg(p)
    add_engine_args(p)


def add_load_args(p: argparse.ArgumentParser) -> None:
    # what the flags mean is in workload/load.py and workload/named.py; here only their parsing
    from dlsched.workload.load import DEFAULT_LOAD

    p.add_argument("--jobs", type=positive_int, default=None,
                   help="synthetic: number of jobs (default: 13,000 x the cluster's GPUs / 1,280, at least "
                        "100; 1,000 of CRUX's mix on the CRUX fabrics); trace or --workload: keep the first N")
    p.add_argument("--load", type=positive_float, default=None, metavar="L",
                   help="offered load: GPU-hours the jobs ask for over the GPU-hours the cluster offers "
                        f"while they arrive; only arrival times move (synthetic default {DEFAULT_LOAD:g}; "
                        "a trace keeps its own unless given; docs/workloads.md)")
    p.add_argument("--time-scale", type=positive_float, default=None, metavar="F",
                   help="multiply the gaps between arrivals by F (0.5: twice as dense); sizes unchanged")
    p.add_argument("--days", type=positive_float, default=None,
                   help="synthetic: arrivals spread over this many days instead of --load (job sizes "
                        "never change)")
    p.add_argument("--workload", default=None, metavar="NAME",
                   help="a named workload instead of the default (Philly-shaped; CRUX's mix on crux-clos, "
                        "crux-double-sided and crux-lingjun): philly, benchmark, "
                        "dally-batch, dally-poisson, gandiva, crux, crius-sim, crius-helios, crius-testbed "
                        "(docs/workloads.md)")


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


def policy_options(option_pairs: list[str], names: list[str]) -> dict[str, dict]:
    """Typed ``--option`` values per policy name (``dlsched.run.options``; loaded on use)."""
    from dlsched.run.options import policy_options as typed

    return typed(option_pairs, names)


def spec_from_args(args, policy: str | None = None, options: dict | None = None) -> RunSpec:
    """The run the simulation flags describe (``policy`` and its typed ``options``: one of
    ``compare``'s policies; default ``--policy`` and the ``--option``s given for it)."""
    from dlsched.run.spec import (ClusterSpec, EngineSpec, NetworkSpec, PerfSpec, PolicySpec, RunSpec,
                                  WorkloadSpec)

    if policy is None:
        policy = args.policy
        options = policy_options(args.option, [policy])[policy]
    return RunSpec(
        workload=WorkloadSpec(trace=args.trace, format=args.format, jobs=args.jobs, days=args.days,
                              skip_bad_rows=args.skip_bad_rows, fit_requests=args.fit_requests,
                              name=args.workload, load=args.load, time_scale=args.time_scale),
        cluster=ClusterSpec(args.cluster, args.placement),
        policy=PolicySpec(policy, dict(options or {})),
        perf=PerfSpec(args.perf,
                      args.tier_profile, args.throughputs, args.perf_params),
        network=NetworkSpec(args.network, args.comm, args.comm_levels, args.comm_reserved,
                            args.charge_self_collisions),
        engine=EngineSpec(args.start_overhead, args.restore_base, args.restore_per_gb, args.checkpoint_interval,
                          args.max_time, args.debug),
        seed=args.seed)


def add_output_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out-format", default="csv", choices=["csv", "parquet"],
                   help="jobs and series tables as CSV (default) or Parquet (needs pyarrow); `dlsched report` "
                        "and dlsched.load_results read both")
    p.add_argument("--links", default="summary", choices=["summary", "full", "none"],
                   help="links.csv under the flow network: summary (default): one row per network link that "
                        "carried traffic (link, capacity_gbps, busy_s, bytes, utilisation over the run, "
                        "busy_utilisation while carrying); full: every change of a link's utilisation over "
                        "time (time, link, utilisation: the only form before; about 1.2 M rows per 1,000 "
                        "jobs on crux-lingjun, and about half such a run's time); none: no links.csv. "
                        "Results otherwise identical (docs/network.md)")


_IGNORED_WITH_SPEC = ("quiet", "synthetic")  # neither changes a run's results


def spec_given(args) -> RunSpec | None:
    """The spec ``--spec`` names, or None; a flag that shapes the run given beside it is an error
    rather than silently overridden."""
    if not getattr(args, "spec", None):
        return None
    from dlsched.errors import InputError
    from dlsched.run.params import read_spec

    probe = argparse.ArgumentParser(add_help=False)
    add_input_args(probe)
    probe.add_argument("--policy", default="fcfs")
    defaults = vars(probe.parse_args([]))
    given = [k for k, v in defaults.items() if k not in _IGNORED_WITH_SPEC and getattr(args, k, v) != v]
    if given:
        flags = ", ".join("--" + k.replace("_", "-") for k in given)
        raise InputError(f"--spec describes the whole run; drop {flags} (or drop --spec)", field="--spec")
    return read_spec(args.spec)


def progress_bar(quiet: bool, label: str):
    """A context manager yielding a callback ``(now, done, total)``; a no-op when quiet."""
    import contextlib

    if quiet:
        return contextlib.nullcontext(None)
    if not sys.stderr.isatty():  # a log or a pipe: a plain line now and then, never silence
        from dlsched.report.progress import plain_progress

        return plain_progress(label)
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
