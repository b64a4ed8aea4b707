"""The measured tables in ../shared/anchors/profiles (skipped when that folder is absent).

Kept to a few seconds: reading every table, and scoring the shipped fit on the rows it was
fitted on (the held-out figures come from ``dlsched perf validate``, docs/perf-model.md).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from dlsched.cluster.topology import Cluster
from dlsched.perf.calibration import fit as F
from dlsched.perf.calibration.params import shipped
from dlsched.perf.parallel.cost import DEFAULT_PARAMS
from dlsched.workload.readers.profiles import read_profile

TABLES = {"arena-profiled-iteration-times.csv": ("iterations", 329),
          "arena-estimated-plans.csv": ("plans", 2228),
          "arena-dp-replica-memory.csv": ("dp-memory", 180),
          "gavel-colocated-throughputs.csv": ("colocated", 5277),
          "gavel-unconsolidated-throughputs.csv": ("unconsolidated", 243)}


def _need(path: Path) -> Path:
    if not path.is_file():
        pytest.skip(f"measured profile table not found: {path}")
    return path


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_table_reads_whole(shared_dir, name):
    t = read_profile(_need(shared_dir / "anchors" / "profiles" / name))
    assert (t.kind, len(t)) == TABLES[name]


def test_shipped_fit_comes_from_these_tables(shared_dir):
    prov = shipped().provenance
    by_name = {s["file"]: s["sha256"] for s in prov["sources"]}
    for name in TABLES:
        path = _need(shared_dir / "anchors" / "profiles" / name)
        assert by_name[name] == hashlib.sha256(path.read_bytes()).hexdigest(), f"{name} changed since the fit"


def test_shipped_fit_prices_the_measured_runs(shared_dir):
    rows = read_profile(_need(shared_dir / "anchors" / "profiles" / "arena-profiled-iteration-times.csv")).rows
    runs, skipped = F.resolve_runs(rows, Cluster.load("crius-sim"))
    assert [s.line for s in skipped] == [37, 38]  # bert 15B: not in the zoo (both rows measured OOM)
    params = shipped().cost_params()
    ok = [r for r in runs if not r.row.oom]
    priced = [(r, F.price_run(r, params)) for r in ok]
    assert sum(t is None for _, t in priced) == 0  # no measured run priced out of memory
    err = np.array([abs(t / r.row.iter_time_s - 1) for r, t in priced])
    # in-sample, so a loose bound: the analytic defaults score 0.29 median here (x1.41 as a ratio)
    assert np.median(err) < 0.12 and np.percentile(err, 90) < 0.35
    default = np.array([abs(t / r.row.iter_time_s - 1) for r in ok if (t := F.price_run(r, DEFAULT_PARAMS))])
    assert np.median(default) > 0.25
