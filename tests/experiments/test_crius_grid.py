"""Crius's grid: every headline row of the paper gets a value from a grid point's runs."""

from __future__ import annotations

import pytest

from dlsched.experiments import crius_grid as cg
from dlsched.experiments.grid import GridSpec, scale_arrivals


def _row(jct, thr=100.0, finished=10, ddl=0.5):
    return {"avg_jct_h": jct, "avg_queue_h": jct / 2, "avg_thr": thr, "peak_thr": 2 * thr, "finished": finished,
            "jobs": 10, "ddl_ratio": ddl, "_jct": {f"j{i}": jct for i in range(finished)}}


@pytest.mark.parametrize("scenario,quick", [("testbed", True), ("testbed", False), ("sim", False)])
def test_every_headline_has_a_value(scenario, quick):
    pols = cg.policies(scenario, quick)
    rows = {p: _row(2.0) for p in pols}
    rows["crius"] = _row(1.0, thr=150.0)
    rows[cg.DP_JOBS_CRIUS] = _row(1.0)
    vals = cg.point_values(scenario, rows)
    heads = cg.grid_headlines(scenario, quick)
    assert len({h.name for h in heads}) == len(heads)
    for h in heads:
        assert vals.get(h.name) is not None, h.name
    assert vals["JCT lower than FCFS"] == pytest.approx(50.0)
    if scenario == "sim":
        # every per-baseline row of Fig. 17 and the ablations of section 8.6 appear, with the paper's figures
        paper = {h.name: h.paper for h in heads if not h.ours_label}
        assert paper["JCT lower than FCFS"] == 81.3 and paper["JCT lower than Gavel"] == 66.4
        assert paper["NA: JCT vs Crius"] == 2.54 and paper["NH: finished jobs vs Crius"] == 0.832
        assert paper["DDL: deadline ratio vs ElasticFlow"] == 1.69


def test_grids_are_at_least_three_seeds_by_three_loads():
    for scen, quick in (("testbed", True), ("testbed", False), ("sim", False)):
        spec = cg.grid_spec(scen, quick)
        assert len(spec.seeds) >= 3 and set(spec.loads) >= {0.5, 1.0, 2.0}
    assert set(cg.grid_spec("testbed", True).settings) == {"div100/derived", "div30/derived"}
    assert len(cg.grid_spec("testbed", False).settings) == 4


def test_jitter_is_seeded_and_seed_zero_is_the_trace():
    from dlsched.workload.job import JobSpec

    jobs = [JobSpec(f"j{i}", 100.0 * i, "resnet50", 1, batch_size=32, total_iterations=10) for i in range(20)]
    assert cg.jitter_arrivals(jobs, 0) == jobs
    a, b = cg.jitter_arrivals(jobs, 1), cg.jitter_arrivals(jobs, 1)
    assert a == b and a != jobs
    assert all(abs(x.submit_time - y.submit_time) <= 50.0 for x, y in
               zip(sorted(a, key=lambda j: j.job_id), sorted(jobs, key=lambda j: j.job_id)))
    assert scale_arrivals(jobs, 2.0)[-1].submit_time == 950.0
