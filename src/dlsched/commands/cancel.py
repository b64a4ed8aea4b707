"""``dlsched cancel``: stop and drop a job of the live scheduler."""

from __future__ import annotations

from dlsched.commands._live import add_state_arg


def add_parser(sub) -> None:
    p = sub.add_parser("cancel", help="cancel live jobs",
                       description="Ask the scheduler to stop and drop jobs (recorded as dropped).")
    p.add_argument("job_ids", nargs="+")
    add_state_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.commands._live import open_store

    store = open_store(args.state, must_exist=True)
    for jid in args.job_ids:
        print(f"{jid}: {store.request_cancel(jid)}")
    return 0
