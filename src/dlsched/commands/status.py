"""``dlsched status``: the live scheduler's jobs, from its state."""

from __future__ import annotations

from dlsched.commands._live import add_state_arg


def add_parser(sub) -> None:
    p = sub.add_parser("status", help="show the live scheduler's jobs",
                       description="List jobs with status, progress, GPUs and restarts.")
    add_state_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args) -> int:
    import json

    from dlsched.commands._live import open_store

    store = open_store(args.state, must_exist=True)
    rows = store.jobs()
    out = [{"job_id": r["job_id"], "status": r["status"], "done": round(r["done_iterations"], 1),
            "total": r["total_iterations"], "gpus": json.loads(r["allocation"]) if r["allocation"] else [],
            "restarts": r["restarts"], "migrations": r["migrations"], "resizes": r["resizes"],
            "reason": r["reason"]} for r in rows]
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    if not out:
        print("no jobs")
        return 0
    print(f"{'job':<16} {'status':<10} {'progress':>13} {'gpus':<12} {'restarts':>8} {'moves':>5}")
    for r in out:
        prog = f"{r['done']:.0f}/{r['total']}"
        gpus = ",".join(map(str, r["gpus"])) or "-"
        print(f"{r['job_id']:<16} {r['status']:<10} {prog:>13} {gpus:<12} {r['restarts']:>8} "
              f"{r['migrations'] + r['resizes']:>5}" + (f"  {r['reason']}" if r["reason"] else ""))
    return 0
