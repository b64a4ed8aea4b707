"""Every registered policy on a slice of every shipped trace a reader accepts, from the CLI.

Issue 14 item 5: each run goes through ``dlsched simulate`` exactly as a user types it
(``--fit-requests --debug``), must exit cleanly (the engine's debug invariants hold at every
event, and no request is discovered infeasible mid-run), and must account for every job of
the slice in jobs.csv: finished, or unfinished/dropped with a stated reason.
"""

from __future__ import annotations

import csv
import json

import pytest

from dlsched.cli import main
from dlsched.errors import InputError
from dlsched.policies.registry import policy_names
from dlsched.workload.readers import detect_format, read_trace

pytestmark = pytest.mark.shared

# trace -> (cluster that fits it, jobs in the slice, extra flags).  Gavel's MSR trace runs
# jobs for months of simulated time (5-minute rounds throughout), so its slice is short and
# stops one day after the last arrival: its jobs are then unfinished, with that reason.
SLICES = {
    "anchors/traces/arena-helios.csv": ("crius-sim", 60, ()),
    "anchors/traces/arena-philly.csv": ("crius-sim", 50, ()),
    "anchors/traces/blox-synthetic-load3-n100.csv": ("crius-testbed", 60, ()),
    "anchors/traces/blox-synthetic-load6-n100.csv": ("crius-testbed", 60, ()),
    "anchors/traces/gavel-msr-seed_0_6214e9.csv": ("gavel-900", 12, ("--max-time", str(1_494_845 + 86_400))),
    "traces/philly/philly_jobs_subset_dev.json": ("crius-sim", 30, ()),  # long jobs: many rounds
    "traces/philly/philly_jobs_subset_validation.json": ("crius-sim", 60, ()),
}
STATUSES = {"finished", "unfinished", "dropped"}


def _readable(path) -> bool:
    try:
        detect_format(path)
    except InputError:
        return False
    return True


def test_every_readable_trace_has_a_slice(shared_dir):
    """A trace added to ../shared that a reader accepts must join SLICES (with a cluster that fits it)."""
    found = {str(p.relative_to(shared_dir)) for folder in ("anchors/traces", "traces")
             for p in sorted((shared_dir / folder).rglob("*")) if p.is_file() and _readable(p)}
    assert found == set(SLICES)


@pytest.mark.parametrize("trace", sorted(SLICES))
def test_every_policy_accounts_for_every_job(trace, shared_dir, tmp_path, capsys):
    cluster, n, extra = SLICES[trace]
    path = shared_dir / trace
    sliced = read_trace(path).jobs[:n]
    for policy in policy_names():
        out = tmp_path / policy
        rc = main(["simulate", "--trace", str(path), "--cluster", cluster, "--policy", policy, "--jobs", str(n),
                   "--fit-requests", "--debug", "--quiet", "--out", str(out), *extra])
        err = capsys.readouterr().err
        assert rc == 0, f"{policy} on {trace}: {err[-500:]}"
        with open(out / "jobs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert sorted(r["job_id"] for r in rows) == sorted(j.job_id for j in sliced), (policy, trace)
        assert {r["status"] for r in rows} <= STATUSES
        unexplained = [r["job_id"] for r in rows if r["status"] != "finished" and not r["reason"].strip()]
        assert not unexplained, (policy, trace, unexplained)
        summary = json.loads((out / "summary.json").read_text())["summary"]
        assert summary["jobs"] == n
        assert summary["finished"] + summary["unfinished"] + summary["dropped"] == n
