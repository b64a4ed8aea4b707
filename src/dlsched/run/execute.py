"""Running a spec's simulation and writing its results folder, as ``dlsched simulate`` does.

Shared by the command line, the Python API and the reproductions, so a run started any of these
ways leaves the same files: ``jobs.csv``, ``series.csv``, ``summary.json`` (with the spec under
``params.spec``), ``timing.json`` and, with a network model, ``links.csv``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dlsched.run.build import Prepared, build_policy, data_dir, prepare
from dlsched.run.params import run_params
from dlsched.run.spec import RunSpec

FORMATS = ("csv", "parquet")


@dataclass
class Executed:
    spec: RunSpec
    prepared: Prepared
    result: object  # the engine's SimResult
    params: dict  # summary.json's params
    out: Path | None  # the results folder, when one was written


def execute(spec: RunSpec, out: str | Path | None = None, *, prepared: Prepared | None = None,
            policy_options: dict | None = None, out_format: str = "csv",
            progress: Callable | None = None, record_events: bool = False, policy=None) -> Executed:
    """Simulate ``spec`` (on ``prepared``'s cluster and jobs when given, as ``compare`` shares them) and,
    with ``out``, write its results folder.  ``policy_options``: what summary.json lists as the
    policy's options (default: every option with the value the run used); ``record_events``: keep
    the event log in ``result.events`` (for a timeline); ``policy``: the spec's policy already
    built, for a caller that keeps the instance (its counters, a probe wrapped around it)."""
    if out_format not in FORMATS:
        from dlsched.errors import InputError

        raise InputError(f"results format must be one of {', '.join(FORMATS)}, not {out_format!r}",
                         field="out_format")
    if policy is None:
        policy = build_policy(spec.policy)  # a bad name or option fails before any job is read
    prep = prepared or prepare(spec)
    with data_dir(spec):
        result = prep.simulator(spec.policy, policy=policy, record_events=record_events).run(progress=progress)
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
        write_links(folder, result.links)
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
