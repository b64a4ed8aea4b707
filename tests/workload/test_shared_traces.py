"""The real traces in ../shared (skipped when that folder is absent)."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.workload.models import get_model
from dlsched.workload.readers import read_trace
from dlsched.workload.validate import check_jobs

ANCHORS = [("arena-philly.csv", "arena", 1938), ("arena-helios.csv", "arena", 438),
           ("gavel-msr-seed_0_6214e9.csv", "gavel", 1985), ("blox-synthetic-load3-n100.csv", "blox", 766),
           ("blox-synthetic-load6-n100.csv", "blox", 1524)]


def need(path):
    if not path.exists():
        pytest.skip(f"shared trace not found: {path}")
    return path


@pytest.mark.parametrize("name,fmt,rows", ANCHORS)
def test_anchor_traces_read_whole(shared_dir, name, fmt, rows):
    load = read_trace(need(shared_dir / "anchors" / "traces" / name))
    assert len(load.jobs) == rows and load.skipped == []
    assert load.jobs[0].submit_time == 0.0
    for j in load.jobs:
        get_model(j.model, j.params)


def test_arena_philly_fits_crius_sim(shared_dir):
    load = read_trace(need(shared_dir / "anchors" / "traces" / "arena-philly.csv"))
    ok, skipped = check_jobs(load.jobs, Cluster.load("crius-sim"))
    assert len(ok) == len(load.jobs) and not skipped
    assert all(j.deadline is None or j.deadline >= j.submit_time for j in load.jobs)


def test_gavel_types_all_map(shared_dir):
    load = read_trace(need(shared_dir / "anchors" / "traces" / "gavel-msr-seed_0_6214e9.csv"))
    assert {j.model for j in load.jobs} == {"resnet18", "resnet50", "transformer", "lstm_lm",
                                            "recommendation", "cyclegan", "a3c"}


@pytest.mark.parametrize("name,rows", [("philly_jobs_subset_dev.json", 1500),
                                       ("philly_jobs_subset_validation.json", 1534)])
def test_philly_subset(shared_dir, name, rows):
    load = read_trace(need(shared_dir / "traces" / "philly" / name))
    assert len(load.jobs) == rows and not load.skipped
    assert min(j.num_gpus for j in load.jobs) >= 4  # the subset's filter
    durations = sorted(j.duration_s for j in load.jobs)
    if name.endswith("dev.json"):  # README: p50 1,208 min
        assert durations[len(durations) // 2] / 60 == pytest.approx(1208, rel=0.02)
