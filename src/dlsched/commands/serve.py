"""``dlsched serve``: run a policy against a Ray cluster, driving real training jobs."""

from __future__ import annotations

from dlsched.commands._argtypes import positive_float
from dlsched.commands._live import add_state_arg


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="run the live scheduler on a Ray cluster",
                       description="Run a scheduling policy against a Ray cluster: take jobs from "
                                   "`dlsched submit`, start/suspend/resume/migrate/resize them through "
                                   "the job agent, keep state in SQLite. With no --address, starts a "
                                   "local Ray cluster that emulates several nodes with fake GPUs.")
    p.add_argument("--policy", default="fcfs", help="scheduling policy (default fcfs)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, e.g. quantum_s=30 for timeslice (repeatable; `dlsched policies`)")
    p.add_argument("--address", default=None, help="Ray cluster address ('auto' for a local one)")
    p.add_argument("--emulate", default="3x2:A40",
                   help="without --address: emulated nodes, NODESxGPUS[:TYPE][@RACK],... (default 3x2:A40)")
    add_state_arg(p)
    p.add_argument("--allow-scripts", action="append", default=[], metavar="DIR",
                   help="a folder job scripts may be in besides each job file's own (repeatable; also "
                        "DLSCHED_SCRIPT_DIRS); any other script path is refused")
    p.add_argument("--submit", action="append", default=[], metavar="JOB_YAML",
                   help="submit these job files first (repeatable)")
    p.add_argument("--time-scale", type=positive_float, default=None, metavar="F",
                   help="multiply the submitted jobs' delay_s (their arrivals) by F, as on a simulated trace")
    p.add_argument("--load", type=positive_float, default=None, metavar="L",
                   help="move the submitted jobs' arrivals (delay_s) to an offered load L: GPU-hours they ask "
                        "for, priced by the service's perf model, over the GPU-hours the cluster offers while "
                        "they arrive, as simulate's --load; a live job's real speed may differ from the "
                        "model's, so the load it then puts on the cluster may too")
    p.add_argument("--out", default=None, help="write jobs.csv / series.csv / summary.json here "
                                               "(as `dlsched simulate` does) for `dlsched report`")
    p.add_argument("--tick", type=float, default=0.2, help="seconds between scheduler rounds (default 0.2)")
    p.add_argument("--exit-when-done", action="store_true",
                   help="leave once every submitted job has finished (and free the workers)")
    p.add_argument("--namespace", default=None,
                   help="Ray namespace of the worker actors (default: one per state directory)")
    p.add_argument("--keep-workers", action="store_true",
                   help="with --exit-when-done: leave the worker actors up for the next service")
    p.add_argument("--max-time", type=float, default=None,
                   help="leave after this many seconds of this run (jobs left unfinished)")
    p.add_argument("--max-restarts", type=int, default=3,
                   help="a job failing this many restarts in a row without a new checkpoint is marked "
                        "failed (default 3)")
    p.add_argument("--restart-backoff", type=float, default=2.0, metavar="SECONDS",
                   help="wait before a failed job's n-th restart in a row: this x 2^(n-1), at most 60 s "
                        "(default 2)")
    p.add_argument("--stall-timeout", type=float, default=None, metavar="SECONDS",
                   help="a running job that counts no iteration for this long is stalled: its GPUs are "
                        "freed and it is retried within --max-restarts (default: 20x its measured "
                        "iteration time, at least 60 s)")
    p.add_argument("--slice-quantum", type=float, default=None, metavar="SECONDS",
                   help="time-sliced jobs take turns on their GPUs by this quantum, each switch a real "
                        "suspend and resume (default: half the policy's quantum_s, else 60)")
    p.add_argument("--quiet", action="store_true",
                   help="do not print job starts, finishes, preemptions and faults as they happen")
    p.add_argument("--status-port", type=int, default=8470,
                   help="read-only HTML status page on http://127.0.0.1:PORT/ (default 8470; 0 picks a free port)")
    p.add_argument("--no-status-page", action="store_true", help="do not serve the status page")
    p.add_argument("--timeline", default=None, metavar="PATH",
                   help="on leaving, write the per-job timeline as Chrome-trace JSON (ui.perfetto.dev)")
    from dlsched.commands._common import add_comm_args

    add_comm_args(p, live=True)
    p.set_defaults(func=run)


def scaled_arrivals(jobs: list, factor: float | None) -> list:
    """Live jobs with their arrival delays multiplied by ``factor`` (None: as submitted)."""
    if factor is None:
        return jobs
    from dataclasses import replace

    return [replace(j, delay_s=j.delay_s * factor) for j in jobs]


def at_load(jobs: list, cluster, perf, load: float) -> tuple[list, object]:
    """Live jobs with their arrival delays scaled so they offer ``load`` (``workload.load``: GPU-hours
    asked, priced by ``perf`` at the requested allocations, over the GPU-hours ``cluster`` offers
    between the first and the last arrival); returns (jobs, what they then offer)."""
    from dlsched.workload.load import apply

    specs = [j.spec.with_(submit_time=float(j.delay_s)) for j in jobs]
    _, before = apply(specs, cluster, perf)  # --load's own errors: a batch has no window to scale
    scaled, after = apply(specs, cluster, perf, load=load)
    factor = after.time_scale
    return scaled_arrivals(jobs, factor) if factor != 1.0 else jobs, after


def load_line(offered) -> str:
    """What ``--load`` did, in the units a live run has (seconds, not hours)."""
    load = "none (every job at once)" if offered.offered_load is None else f"{offered.offered_load:.4g}"
    return (f"arrivals x{offered.time_scale:.3g}: offered load {load} ({offered.gpu_hours * 3600.0:.3g} "
            f"GPU-seconds over a {offered.window_h * 3600.0:.3g}-s arrival window on {offered.cluster_gpus} GPUs, "
            "as the perf model prices the jobs; a live job's real speed may differ, and the load it puts on "
            "the cluster with it)")


def _known_jobs(state: str) -> set[str]:
    """Job names the state already holds (none if there is no state yet; nothing is created)."""
    from pathlib import Path

    from dlsched.commands._live import open_store

    if not (Path(state) / "state.sqlite").exists():
        return set()
    store = open_store(state)
    try:
        return {r["job_id"] for r in store.jobs()}
    finally:
        store.close()


def _check_numbers(args) -> None:
    from dlsched.errors import InputError

    for flag, value, low in (("--max-time", args.max_time, 0.0), ("--tick", args.tick, 0.0),
                             ("--restart-backoff", args.restart_backoff, -1e-12),
                             ("--slice-quantum", args.slice_quantum, 0.0),
                             ("--stall-timeout", args.stall_timeout, 0.0)):
        if value is not None and not value > low:  # also catches nan
            raise InputError(f"must be {'positive' if low == 0 else 'zero or more'}, got {value}", field=flag)
    if args.load is not None and args.time_scale is not None:
        raise InputError("give --load or --time-scale, not both", field="--load")
    if (args.load is not None or args.time_scale is not None) and not args.submit:
        raise InputError("moves the arrivals of the jobs given with --submit; none were given",
                         field="--load" if args.load is not None else "--time-scale")
    if not 0 <= args.status_port <= 65535:
        raise InputError(f"must be a port number from 0 to 65535, got {args.status_port}", field="--status-port")
    if args.max_restarts < 0:
        raise InputError(f"must be zero or more, got {args.max_restarts}", field="--max-restarts")


def run(args) -> int:
    from dlsched.commands._live import known_capacity, open_store
    from dlsched.live.feedback import EventPrinter
    from dlsched.errors import InputError
    from dlsched.live.jobfile import load_jobs
    from dlsched.live.raycluster import EmulatedCluster, parse_emulation
    from dlsched.live.service import LiveService, ServiceConfig, connect
    from dlsched.run.build import build_policy
    from dlsched.run.options import policy_options
    from dlsched.run.spec import PolicySpec

    policy = build_policy(PolicySpec(args.policy, policy_options(args.option, [args.policy])[args.policy]))
    _check_numbers(args)
    if args.comm:  # a bad level count fails here, before Ray starts
        from dlsched.comm import make_comm_policy

        try:
            make_comm_policy(args.comm, args.comm_levels, args.comm_reserved)
        except ValueError as e:
            raise InputError(f"--comm {args.comm} --comm-levels {args.comm_levels} --comm-reserved "
                             f"{args.comm_reserved}: {e}") from None
    import ray  # without the live extra, fail here: before any state is written

    # fail on a bad file before starting Ray (against the cluster a previous run recorded, if any)
    jobs = scaled_arrivals([j for path in args.submit
                            for j in load_jobs(path, known_capacity(args.state), args.allow_scripts)], args.time_scale)
    emulators = parse_emulation(args.emulate) if args.address is None else None
    again = sorted(j.spec.job_id for j in jobs if j.spec.job_id in _known_jobs(args.state))
    if again:  # before Ray starts, not after
        raise InputError(f"job(s) {', '.join(again)} already submitted to the scheduler state in {args.state}; "
                         "serve it without --submit, or use another --state for a fresh run", field="--submit")
    emulated = store = page = None
    try:
        if emulators is not None:
            emulated = EmulatedCluster(emulators)
            connect(emulated.address)
            emulated.wait()
        else:
            connect(args.address)
        # a new state's clock starts now, once Ray is up: event times and records then start
        # near 0, not after however long Ray took to start
        store = open_store(args.state)
        page = None if args.no_status_page else _status_page(store, args.status_port)
        if not args.quiet:
            store.listener = EventPrinter()
        cfg = ServiceConfig(tick_s=args.tick, exit_when_done=args.exit_when_done, out_dir=args.out,
                            max_time_s=args.max_time, namespace=args.namespace,
                            stop_workers_on_exit=not args.keep_workers, max_restarts=args.max_restarts,
                            restart_backoff_s=args.restart_backoff, slice_quantum_s=args.slice_quantum,
                            stall_timeout_s=args.stall_timeout,
                            comm=args.comm, comm_levels=args.comm_levels, comm_reserved=args.comm_reserved)
        service = LiveService(store, policy, cfg)
        import signal

        def _term(signum, frame):  # leave like Ctrl-C: running jobs go on; a restart adopts them
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, _term)
        try:
            if jobs:  # after the workers are up, so arrival times do not include Ray's start-up
                # again, against the cluster now known: a job that could never run here is refused
                jobs = scaled_arrivals([j for path in args.submit
                                        for j in load_jobs(path, service.capacity, args.allow_scripts)], args.time_scale)
                if args.load is not None:  # priced now: the cluster and its perf model are known
                    jobs, offered = at_load(jobs, service.cluster, service.perf, args.load)
                    print(f"dlsched serve: {load_line(offered)}", flush=True)
                store.submit(jobs, source=", ".join(args.submit))
        except BaseException:
            service.close()
            raise
        print(f"dlsched serve: {service.cluster.describe()}; policy {policy.name}; state {store.path}",
              flush=True)
        service.run()
    finally:  # also when Ray or the service fails to start: never leave an emulated cluster behind
        if emulated is not None:
            ray.shutdown()
            emulated.shutdown()
        if page is not None:
            page.close()
        if store is not None:
            if args.timeline:
                _write_timeline(store, args.timeline, policy.name)
            store.close()
    if args.out:
        from dlsched.report.provenance import args_config, write_provenance

        write_provenance(args.out, args_config(args), None, getattr(args, "argv", None))
        print(f"results in {args.out}/", flush=True)
    return 0


def _status_page(store, port: int):
    """Start the status page; a port already taken is a warning, not a reason to stop scheduling."""
    import sys

    from dlsched.live.statuspage import StatusPage

    try:
        page = StatusPage(store.path, port)
    except OSError as e:
        print(f"dlsched serve: status page not started (127.0.0.1:{port}: {e.strerror}); "
              "use --status-port 0 for a free port", file=sys.stderr, flush=True)
        return None
    print(f"dlsched serve: status page at {page.url} (this machine only)", flush=True)
    return page


def _write_timeline(store, path: str, policy: str) -> None:
    from dlsched.report.event_sources import store_events
    from dlsched.report.timeline import write_timeline

    write_timeline(path, store_events(store.events()), end=store.now(), title=f"live: {policy}")
    print(f"timeline in {path} (open in ui.perfetto.dev)", flush=True)
