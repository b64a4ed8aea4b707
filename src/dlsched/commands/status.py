"""``dlsched status``: the live scheduler's jobs, from its state, and whether its service is up."""

from __future__ import annotations

from dlsched.commands._live import add_state_arg

# a heartbeat older than this means the service is gone even where its process cannot be checked
# (another machine); the service beats every second but can block on Ray for up to ~30 s
STALE_S = 60.0


def add_parser(sub) -> None:
    p = sub.add_parser("status", help="show the live scheduler's jobs",
                       description="Whether the service is up (its heartbeat), then the jobs with status, "
                                   "progress, GPUs, restarts and reason. With the service down, job states "
                                   "are the last it recorded.")
    add_state_arg(p)
    p.add_argument("--json", action="store_true", help="print JSON ({service, jobs}) instead of a table")
    p.set_defaults(func=run)


def service_state(hb: dict | None) -> dict:
    """up / down / never, with the heartbeat's age and why it is judged so."""
    import os
    import socket

    if hb is None:
        return {"state": "never", "detail": "no service has run on this state yet"}
    age = hb["age_s"]
    base = {"pid": hb["pid"], "host": hb.get("host"), "heartbeat_age_s": round(age, 1)}
    if hb.get("stopped"):
        return {**base, "state": "down", "detail": f"stopped {age:.0f} s ago"}
    if hb.get("host") == socket.gethostname():
        try:
            os.kill(hb["pid"], 0)
            alive = True
        except ProcessLookupError:
            alive = False
        except PermissionError:  # someone else's process by that id: ours is gone
            alive = False
        if not alive:
            return {**base, "state": "down",
                    "detail": f"killed or crashed: its process {hb['pid']} is gone; last heartbeat {age:.0f} s ago"}
    if age > STALE_S:
        return {**base, "state": "down", "detail": f"no heartbeat for {age:.0f} s"}
    return {**base, "state": "up", "detail": f"pid {hb['pid']}, heartbeat {age:.1f} s ago"}


def run(args) -> int:
    import json

    from dlsched.commands._live import open_store

    store = open_store(args.state, must_exist=True)
    service = service_state(store.heartbeat())
    rows = store.jobs()
    out = [{"job_id": r["job_id"], "status": r["status"], "done": round(r["done_iterations"], 1),
            "total": r["total_iterations"], "gpus": json.loads(r["allocation"]) if r["allocation"] else [],
            "restarts": r["restarts"], "migrations": r["migrations"], "resizes": r["resizes"],
            "reason": r["reason"]} for r in rows]
    if args.json:
        print(json.dumps({"service": service, "jobs": out}, indent=2))
        return 0
    if service["state"] == "up":
        print(f"service: up ({service['detail']})")
    elif service["state"] == "down":
        print(f"service: DOWN ({service['detail']}); job states below are the last it recorded")
    else:
        print(f"service: not started ({service['detail']})")
    if not out:
        print("no jobs")
        return 0
    head = "last known" if service["state"] == "down" else "status"
    print(f"{'job':<16} {head:<13} {'progress':>13} {'gpus':<12} {'restarts':>8} {'moves':>5}")
    for r in out:
        prog = f"{r['done']:.0f}/{r['total']}"
        gpus = ",".join(map(str, r["gpus"])) or "-"
        print(f"{r['job_id']:<16} {r['status']:<13} {prog:>13} {gpus:<12} {r['restarts']:>8} "
              f"{r['migrations'] + r['resizes']:>5}" + (f"  {r['reason']}" if r["reason"] else ""))
    return 0
