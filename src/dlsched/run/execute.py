"""Running a spec's simulation and writing its results folder, as ``dlsched simulate`` does.

Shared by the command line, the Python API and the reproductions, so a run started any of these
ways leaves the same files: ``jobs.csv``, ``series.csv``, ``summary.json`` (with the spec under
``params.spec``), ``timing.json`` and, with a network model, ``links.csv`` (``LINKS``: one row per
network link by default, every change over time with ``links="full"``, none with ``"none"``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dlsched.run.build import Prepared, build_policy, data_dir, prepare
from dlsched.run.params import run_params
from dlsched.run.spec import RunSpec

FORMATS = ("csv", "parquet")
# links.csv under the flow model: summary (default): a row per network link (capacity, busy seconds, bytes,
# mean utilisation); full: every change of a link's utilisation over time (the flow model then re-sums a
# link whenever a job on it changes speed: about half of a large run's time); none: no file
LINKS = ("summary", "full", "none")
SUMMARY_COLUMNS = ["link", "capacity_gbps", "busy_s", "bytes", "utilisation", "busy_utilisation"]


@dataclass
class Executed:
    spec: RunSpec
    prepared: Prepared
    result: object  # the engine's SimResult
    params: dict  # summary.json's params
    out: Path | None  # the results folder, when one was written


def execute(spec: RunSpec, out: str | Path | None = None, *, prepared: Prepared | None = None,
            policy_options: dict | None = None, out_format: str = "csv",
            progress: Callable | None = None, record_events: bool = False, policy=None,
            links: str = "summary") -> Executed:
    """Simulate ``spec`` (on ``prepared``'s cluster and jobs when given, as ``compare`` shares them) and,
    with ``out``, write its results folder.  ``policy_options``: what summary.json lists as the
    policy's options (default: every option with the value the run used); ``record_events``: keep
    the event log in ``result.events`` (for a timeline); ``policy``: the spec's policy already
    built, for a caller that keeps the instance (its counters, a probe wrapped around it); ``links``:
    what ``links.csv`` holds under the flow model (``LINKS``)."""
    if links not in LINKS:
        from dlsched.errors import InputError

        raise InputError(f"links must be one of {', '.join(LINKS)}, not {links!r}", field="links")
    if out_format not in FORMATS:
        from dlsched.errors import InputError

        raise InputError(f"results format must be one of {', '.join(FORMATS)}, not {out_format!r}",
                         field="out_format")
    if policy is None:
        policy = build_policy(spec.policy)  # a bad name or option fails before any job is read
    prep = prepared or prepare(spec)
    with data_dir(spec):
        sim = prep.simulator(spec.policy, policy=policy, record_events=record_events,
                             links="full" if links == "full" else "summary")
        result = sim.run(progress=progress)
    if policy_options is None:
        from dlsched.policies.registry import used_options

        policy_options = used_options(spec.policy.name, spec.policy.options)
    params = run_params(result.params, prep.info, spec, policy_options)
    # what the workload offered, beside the utilisation and queueing it achieved
    result.summary["offered_load"] = prep.info.get("offered_load")
    folder = None
    if out is not None:
        from dlsched.report.io import write_results

        folder = write_results(out, result.records, result.series, result.summary, params, timings=result.stats)
        if links == "full":
            write_links(folder, result.links)
        elif links == "summary" and hasattr(sim.contention, "link_summary"):
            write_link_summary(folder, sim.contention.link_summary(sim.now))
        if out_format != "csv":  # written as CSV first: that writer is the reference
            from dlsched.report.frames import csv_to_parquet

            csv_to_parquet(folder)
    return Executed(spec, prep, result, params, folder)


def write_compare(root: str | Path, prepared: Prepared, policies: list[str], options: dict[str, dict],
                  summaries: dict[str, dict]) -> None:
    """``compare.json`` at a comparison's root: the shared input, the policies as given, each one's
    options (by name) and summary (by label: a plugin's own short name, as its folder)."""
    from dlsched.report.io import strict_json

    params = {"cluster": prepared.cluster.name, "jobs": len(prepared.jobs), "seed": prepared.spec.seed,
              **prepared.info, "policies": list(policies), "policy_options": options}
    (Path(root) / "compare.json").write_text(strict_json({"params": params, "summaries": summaries}))


def write_link_summary(out_dir, rows) -> None:
    """``links.csv`` as one row per network link that carried traffic (``SUMMARY_COLUMNS``), when any did."""
    if not rows:
        return
    import csv

    with open(Path(out_dir) / "links.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(SUMMARY_COLUMNS)
        w.writerows([name, *(repr(round(v, 6)) for v in values)] for name, *values in rows)


def write_links(out_dir, rows) -> None:
    """``links.csv`` (time, link, utilisation) beside a run's results, when the run has one."""
    if not rows:
        return
    import csv

    with open(Path(out_dir) / "links.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["time", "link", "utilisation"])
        for t, link, u in rows:
            w.writerow([repr(round(t, 6)), link, repr(round(u, 6))])
