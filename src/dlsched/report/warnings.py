"""Saying when a comparison cannot show anything: no job waited, runs identical, no link shared.

A scheduler decides who runs when there is not room for everyone; when no job ever waits, every
policy that does not re-shape running jobs gives the same schedule, and a table of identical
rows reads as "the schedulers do nothing".  These checks turn that into a stated warning.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# figures that identify a schedule (timings and wall-clock figures are left out)
_SCHEDULE_KEYS = ("finished", "unfinished", "dropped", "avg_jct", "median_jct", "p95_jct", "p99_jct",
                  "makespan", "avg_queue", "p95_queue", "utilization", "avg_throughput", "restarts_per_job",
                  "migrations", "resizes", "gpu_hours")


def describe_load(info: dict) -> str:
    """One line on what the workload offered the cluster, from a run's params."""
    load = info.get("offered_load")
    hours = info.get("offered_gpu_hours")
    window = info.get("arrival_window_h")
    if hours is None:
        return "offered load not recorded"
    scale = info.get("time_scale", 1.0)
    scaled = f", arrivals x{scale:.3g}" if scale not in (None, 1.0) else ""
    if load is None:
        return f"offered {hours:,.1f} GPU-hours at once (batch arrivals{scaled})"
    return f"offered load {load:.2f} ({hours:,.1f} GPU-hours asked over a {window:,.2f}-hour arrival window{scaled})"


def never_waited(summary: dict) -> bool:
    q = summary.get("avg_queue")
    return q is not None and q <= 0.0 and summary.get("jobs", 1) > 0


def _fingerprint(summary: dict, run_dir: str | None) -> str:
    """The run's schedule: its jobs.csv when there is one (byte-identical for identical schedules),
    else its schedule figures."""
    if run_dir is not None:
        p = Path(run_dir) / "jobs.csv"
        if p.exists():
            return hashlib.sha256(p.read_bytes()).hexdigest()
    return repr([summary.get(k) for k in _SCHEDULE_KEYS])


def identical_groups(summaries: dict[str, dict], dirs: dict[str, str] | None = None) -> list[list[str]]:
    """Names of runs with the same schedule, in groups of two or more (in the given order)."""
    groups: dict[str, list[str]] = {}
    for name, s in summaries.items():
        groups.setdefault(_fingerprint(s, (dirs or {}).get(name)), []).append(name)
    return [g for g in groups.values() if len(g) > 1]


def nothing_could_differ(summaries: dict[str, dict], dirs: dict[str, str] | None = None) -> list[str]:
    """Warnings for a comparison whose policies could not, or did not, differ."""
    out = []
    if len(summaries) > 1:
        idle = [n for n, s in summaries.items() if never_waited(s)]
        if len(idle) == len(summaries):
            out.append("no job waited under any policy: policies cannot differ; raise --load "
                       "(or --time-scale below 1 on a trace)")
        elif idle:
            out.append(f"no job waited under {', '.join(idle)}")
        for g in identical_groups(summaries, dirs):
            out.append(f"{', '.join(g)} gave identical schedules")
    elif summaries and never_waited(next(iter(summaries.values()))):
        out.append("no job waited: another policy could not do better; raise --load to compare policies")
    return out


def read_timing(run_dir) -> dict:
    """A results directory's ``timing.json`` (its network stats among them), or {} when absent or unreadable."""
    import json

    try:
        return json.loads((Path(run_dir) / "timing.json").read_text())
    except (OSError, ValueError):
        return {}


def network_lines(stats: dict) -> list[str]:
    """What the flow network model did in a run (its ``timing.json`` network stats): a note, and a
    warning when no two jobs ever shared a link (then the network model changed nothing)."""
    net = stats.get("network") if stats else None
    if not net:
        return []
    shared = net.get("jobs_sharing_links")
    solves = net.get("solves", 0)
    line = (f"network: {shared if shared is not None else '?'} jobs shared a link; {solves} contention "
            f"groups solved (largest {net.get('largest_group', 0)} jobs)")
    if solves == 0 or shared == 0:
        return [line, "warning: no two jobs shared a link, so the network model changed nothing; use "
                      "--placement first-free or a higher --load"]
    return [line]
