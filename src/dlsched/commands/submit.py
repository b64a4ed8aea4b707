"""``dlsched submit``: queue jobs for a live scheduler (works while it is down, too)."""

from __future__ import annotations

from dlsched.commands._live import add_state_arg


def add_parser(sub) -> None:
    p = sub.add_parser("submit", help="submit job YAML files to the live scheduler",
                       description="Validate job files and add them to the scheduler's state; "
                                   "`dlsched serve` picks them up. Once a service has started on the "
                                   "state, a job that could never run on its cluster is refused here.")
    p.add_argument("files", nargs="+", help="job YAML files (one job, or a 'jobs:' list)")
    p.add_argument("--allow-scripts", action="append", default=[], metavar="DIR",
                   help="a folder job scripts may be in besides each job file's own (repeatable; also "
                        "DLSCHED_SCRIPT_DIRS); any other script path is refused")
    add_state_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.commands._live import known_capacity, open_store
    from dlsched.live.jobfile import load_jobs

    capacity = known_capacity(args.state)
    # validate everything before adding anything (or creating a state directory)
    jobs = [j for f in args.files for j in load_jobs(f, capacity, args.allow_scripts)]
    store = open_store(args.state)
    store.submit(jobs, source=", ".join(args.files))
    for j in jobs:
        delay = f" (arrives in {j.delay_s:g} s)" if j.delay_s else ""
        print(f"submitted {j.spec.job_id}: {j.spec.model} on {j.spec.num_gpus} GPU(s), "
              f"{j.spec.total_iterations} iterations{delay}")
    return 0
