"""The grid helper: verdicts from the paper's direction over every grid point, ranges, arrival scaling."""

from __future__ import annotations

import pytest

from dlsched.experiments.grid import (MIXED, NOT_REPRODUCED, PCT_POSITIVE, RATIO_ABOVE_ONE, REPRODUCED, Direction,
                                      GridHeadline, GridPoint, GridSpec, grid_row, grid_table, markdown, run_grid,
                                      run_headline, scale_arrivals, to_headline, verdict)
from dlsched.workload.job import JobSpec


def test_verdict_counts_every_point():
    assert verdict([5.0, 1.0, 0.1], PCT_POSITIVE) == REPRODUCED
    assert verdict([5.0, -1.0, 0.1], PCT_POSITIVE) == MIXED
    assert verdict([-5.0, -1.0], PCT_POSITIVE) == NOT_REPRODUCED
    assert verdict([0.0], PCT_POSITIVE) == NOT_REPRODUCED  # a tie does not agree
    assert verdict([1.2, 0.9], RATIO_ABOVE_ONE) == MIXED
    assert verdict([0.8, 0.9], Direction("lower", 1.0)) == REPRODUCED


def test_missing_values_never_agree():
    assert verdict([5.0, None], PCT_POSITIVE) == MIXED
    assert verdict([None, None], PCT_POSITIVE) == NOT_REPRODUCED
    assert verdict([], PCT_POSITIVE) == NOT_REPRODUCED
    assert verdict([float("nan"), 2.0], PCT_POSITIVE) == MIXED


def test_bad_direction_rejected():
    with pytest.raises(ValueError):
        Direction("up", 0.0)


def test_grid_spec_default_is_three_seeds_by_three_loads():
    spec = GridSpec(settings=("a", "b"))
    assert spec.size == 18 and len(spec.points()) == 18
    assert {p.load for p in spec.points()} == {0.5, 1.0, 2.0}
    assert len({p.seed for p in spec.points()}) >= 3


def _head(name="JCT lower than X", ours=False):
    return GridHeadline("sim", name, 81.3, "%", "average JCT", PCT_POSITIVE, source="Fig. 16", ours_label=ours)


def test_run_grid_range_and_per_setting_verdicts():
    spec = GridSpec(seeds=(0, 1, 2), loads=(0.5, 1.0, 2.0), settings=("div100", "div30"))

    # the claim holds under div100 everywhere, under div30 only at low load
    def point(p: GridPoint):
        v = 10.0 + p.seed if p.setting == "div100" else (5.0 if p.load < 1 else -20.0 - p.seed)
        return {"JCT lower than X": v, "other": 1.0}

    calls = []
    (r,) = run_grid([_head()], point, spec, progress=lambda i, n, p: calls.append((i, n)))
    assert calls[-1] == (18, 18)
    assert r.verdict == MIXED and r.held == 3 + 9
    assert r.lo == -22.0 and r.hi == 12.0
    per = r.by_setting()
    assert per["div100"] == (10.0, 12.0, REPRODUCED)
    assert per["div30"] == (-22.0, 5.0, MIXED)
    row = grid_row(r)
    assert row[3].startswith("+81.3%") and "-22.0% .. +12.0%" in row[4]
    assert row[-1] == "mixed (12/18)"
    d = r.as_dict()
    assert d["verdict"] == MIXED and len(d["values"]) == 18


def test_headline_missing_from_a_point_counts_as_no_value():
    spec = GridSpec(seeds=(0,), loads=(1.0, 2.0))
    (r,) = run_grid([_head()], lambda p: {"JCT lower than X": 3.0} if p.load == 1.0 else {}, spec)
    assert r.verdict == MIXED and r.lo == r.hi == 3.0


def test_ours_rows_labelled_and_after_paper_rows():
    spec = GridSpec(seeds=(0,), loads=(1.0,))
    a = run_headline(_head("ablation", ours=True), lambda p: 1.0, spec)
    b = run_headline(_head("paper row"), lambda p: -1.0, spec)
    header, rows = grid_table([a, b])
    assert rows[0][1] == "paper row" and rows[0][-1].startswith(NOT_REPRODUCED)
    assert rows[1][1] == "[ours] ablation" and rows[1][3] == "not in the paper (ours)"
    assert markdown([a, b]).count("\n") == 4
    h = to_headline(b)
    assert h.verdict.startswith(NOT_REPRODUCED) and h.lo == h.hi == h.ours == -1.0


def test_scale_arrivals_compresses_offsets_and_keeps_deadline_slack():
    jobs = [JobSpec("a", 100.0, "resnet50", 1, batch_size=32, total_iterations=10),
            JobSpec("b", 300.0, "resnet50", 1, batch_size=32, total_iterations=10, deadline=500.0)]
    two = scale_arrivals(jobs, 2.0)
    assert [j.submit_time for j in two] == [100.0, 200.0]
    assert two[1].deadline == 400.0  # slack 200 s kept
    half = scale_arrivals(jobs, 0.5)
    assert [j.submit_time for j in half] == [100.0, 500.0]
    assert scale_arrivals(jobs, 1.0) == jobs
    with pytest.raises(ValueError):
        scale_arrivals(jobs, 0.0)
