"""Crius's grid: every headline row of the paper gets a value from a grid point's runs."""

from __future__ import annotations

import pytest

from dlsched.experiments import crius_grid as cg
from dlsched.experiments.grid import GridSpec, scale_arrivals


def _row(jct, thr=100.0, finished=10, ddl=0.5):
    return {"avg_jct_h": jct, "avg_queue_h": jct / 2, "avg_thr": thr, "peak_thr": 2 * thr, "finished": finished,
            "jobs": 10, "ddl_ratio": ddl, "_jct": {f"j{i}": jct for i in range(finished)},
            "h_padded_jct_h": jct, "h_finished": finished, "h_avg_thr": thr, "h_ddl_ratio": ddl,
            cg.DDL_PADDED: jct}


@pytest.mark.parametrize("scenario,quick", [("testbed", True), ("testbed", False), ("sim", False),
                                            ("sim-4x", False)])
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
    if scenario != "testbed":
        # every per-baseline row of Fig. 17 and the ablations of section 8.6 appear, with the paper's figures
        paper = {h.name: h.paper for h in heads if not h.ours_label}
        assert paper["JCT lower than FCFS"] == 81.3 and paper["JCT lower than Gavel"] == 66.4
        assert paper["NA: JCT vs Crius"] == 2.54 and paper["NH: finished jobs vs Crius"] == 0.832
        assert paper["DDL: deadline ratio vs ElasticFlow"] == 1.69
        assert paper["DDL: JCT lower than ElasticFlow, authors' metric"] == 33.1


def test_the_simulation_is_centred_on_the_authors_arrival_rate(monkeypatch):
    from dlsched.experiments import crius_scenarios
    from dlsched.workload.job import JobSpec

    trace = [JobSpec(f"j{i}", 1000.0 * i, "resnet50", 1, batch_size=32, total_iterations=10) for i in range(5)]
    seen = []

    def sim(compress, ddl_scale):
        seen.append(compress)
        return None, crius_scenarios._rescale(trace, factor=1.0 / compress), []
    monkeypatch.setattr(crius_scenarios, "sim", sim)
    # the default grid's load x1 is the trace's own arrivals; sim-4x's is the trace compressed 4x
    _, jobs = cg.point_workload("sim", cg.GridPoint(0, 1.0, "derived"))
    assert [j.submit_time for j in jobs] == [j.submit_time for j in trace]
    _, jobs = cg.point_workload("sim-4x", cg.GridPoint(0, 1.0, "derived"))
    assert jobs[-1].submit_time == 1000.0
    assert cg.scenario_names(False) == ["testbed", "sim"] and cg.scenario_names(False, "sim-4x")[1] == "sim-4x"
    with pytest.raises(ValueError, match="unknown Crius scenario"):
        cg.grid_spec("sim-3x", False)


def test_grids_are_at_least_three_seeds_by_three_loads():
    for scen, quick in (("testbed", True), ("testbed", False), ("sim", False), ("sim-4x", False)):
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


class _Rec:
    def __init__(self, submit, finish):
        self.submit, self.finish = submit, finish


def test_horizon_figures_are_the_run_cut_at_the_horizon():
    import numpy as np

    from dlsched.experiments.crius import horizon_metrics

    recs = [_Rec(0.0, 3600.0), _Rec(0.0, 7200.0), _Rec(1800.0, 20000.0), _Rec(30000.0, None)]
    t = np.array([0.0, 3600.0, 7200.0, 9000.0])
    thr = np.array([200.0, 50.0, 300.0, 0.0])
    m = horizon_metrics(recs, t, thr, 0.0, horizon_s=10000.0)
    assert m["h_finished"] == 2 and m["h_arrived"] == 3
    assert m["h_avg_jct_h"] == pytest.approx(1.5)
    # rounds at or below 100 samples/s are left out of the average, as the authors' plotter does
    assert m["h_avg_thr"] == pytest.approx((200 * 3600 + 300 * 1800) / 5400)
    assert m["h_peak_thr"] == 300.0


def test_authors_jct_pads_missing_completions_at_the_largest_finished_jct():
    from dlsched.experiments.crius import padded_jct

    rows = {"crius": {"_h_jct": [1.0, 2.0, 3.0, 4.0]}, "fcfs": {"_h_jct": [1.0, 10.0]},
            "gavel": {"_h_jct": [1.0, 1.0, 1.0, 1.0, 1.0]}, "other": {"_h_jct": [50.0]}}
    padded_jct(rows, skip=("other",))
    assert rows["crius"]["h_padded_jct_h"] == pytest.approx(2.5)
    assert rows["fcfs"]["h_padded_jct_h"] == pytest.approx((1 + 10 + 2 * 10) / 4)  # two short, at 10 h each
    assert rows["gavel"]["h_padded_jct_h"] == pytest.approx(1.0)  # more finished than Crius: its own mean
    assert "h_padded_jct_h" not in rows["other"]


def test_the_ddl_comparison_pads_elasticflow_up_to_crius_ddl():
    # the authors' plotter (only_ddl): Crius-DDL is the reference, ElasticFlow's missing completions
    # count at the largest finished JCT of any policy
    from dlsched.experiments.crius import padded_jct

    rows = {"crius": {"_h_jct": [1.0, 2.0, 3.0, 4.0, 5.0]}, "crius-ddl": {"_h_jct": [1.0, 1.0, 1.0, 1.0]},
            "elasticflow": {"_h_jct": [0.5, 0.5]}, "fcfs": {"_h_jct": [20.0]}}
    padded_jct(rows, ref="crius-ddl", key=cg.DDL_PADDED, only=("crius-ddl", "elasticflow"))
    assert rows["crius-ddl"][cg.DDL_PADDED] == pytest.approx(1.0)
    assert rows["elasticflow"][cg.DDL_PADDED] == pytest.approx((0.5 + 0.5 + 2 * 20.0) / 4)
    assert cg.DDL_PADDED not in rows["crius"] and cg.DDL_PADDED not in rows["fcfs"]


def test_horizon_deadline_ratio_counts_jobs_ended_by_their_deadline_within_the_run():
    import numpy as np

    from dlsched.experiments.crius import horizon_metrics

    class R(_Rec):
        def __init__(self, submit, finish, deadline):
            super().__init__(submit, finish)
            self.deadline = deadline
    recs = [R(0.0, 100.0, 200.0), R(0.0, 300.0, 200.0), R(0.0, 900.0, 2000.0), R(0.0, None, 50.0)]
    m = horizon_metrics(recs, np.array([0.0]), np.array([0.0]), 0.0, horizon_s=500.0)
    assert m["h_ddl_ratio"] == pytest.approx(1 / 4)  # late, after the horizon, unfinished: not met


def test_collect_reads_only_the_points_run():
    heads = cg.grid_headlines("sim", False)
    pols = cg.policies("sim", False)

    def point(seed, load, setting, fcfs_jct):
        rows = {p: _row(2.0) for p in pols}
        rows["crius"] = _row(1.0)
        rows["fcfs"] = _row(fcfs_jct)
        rows[cg.DP_JOBS_CRIUS] = _row(1.0)
        return {"seed": seed, "load": load, "setting": setting,
                "rows": {k: {m: v for m, v in r.items() if not m.startswith("_")} for k, r in rows.items()}}

    res = cg.collect("sim", False, [point(0, 1.0, "derived", 4.0), point(1, 2.0, "derived", 0.5)])
    by = {r.headline.name: r for r in res}
    assert len(res) == len(heads)
    fcfs = by["JCT lower than FCFS"]
    assert sorted(v for v in fcfs.values.values()) == [-100.0, 75.0]
    assert fcfs.verdict == "mixed" and len(fcfs.values) == 2
    # a point run without Gandiva gives its rows no value there (not a tie that would count against them)
    partial = point(2, 1.0, "derived", 4.0)
    del partial["rows"]["gandiva"]
    res = {r.headline.name: r for r in cg.collect("sim", False, [point(0, 1.0, "derived", 4.0), partial])}
    assert len(res["JCT lower than Gandiva"].values) == 1 and res["JCT lower than Gandiva"].verdict == "reproduced"
    assert len(res["JCT lower than FCFS"].values) == 2
    with pytest.raises(ValueError, match="outside"):
        cg.collect("sim", False, [point(7, 1.0, "derived", 1.0)])


def test_elasticflow_as_its_own_paper_defines_it_is_a_labelled_row_of_its_own():
    from dlsched.experiments import crius
    from dlsched.policies.elasticflow.deadline import ElasticFlow

    # the Crius authors' ElasticFlow waits; the labelled row runs the same policy with its paper's drop
    assert crius._options("elasticflow")["reject"] == "wait"
    assert crius.row_policy("elasticflow-drop") == "elasticflow"
    assert crius._options("elasticflow-drop", "authors") == {"costs": "authors", "reject": "drop"}
    p = crius._policy("elasticflow-drop")
    assert isinstance(p, ElasticFlow) and p.reject == "drop"
    assert "elasticflow-drop" in cg.policies("sim", False) and "elasticflow-drop" not in cg.policies("testbed", False)
    # every Fig. 20 row appears twice, the own-paper one labelled, with the same paper figure
    names = {h.name: h for h in cg.grid_headlines("sim", False)}
    ddl = [n for n in names if n.startswith("DDL:") and "(own paper: drop)" not in n]
    assert len(ddl) == 7
    for n in ddl:
        other = names[n.replace("ElasticFlow", "ElasticFlow (own paper: drop)")]
        assert other.paper == names[n].paper and "reject=drop" in other.note
    rows = {"crius-ddl": _row(1.0, thr=150.0), "elasticflow": _row(2.0), "elasticflow-drop": _row(4.0, ddl=0.25),
            "crius": _row(1.0)}
    vals = cg.point_values("sim", rows)
    assert vals["DDL: JCT lower than ElasticFlow"] == pytest.approx(50.0)
    assert vals["DDL: JCT lower than ElasticFlow (own paper: drop)"] == pytest.approx(75.0)
    assert vals["DDL: deadline ratio vs ElasticFlow (own paper: drop)"] == pytest.approx(2.0)


def test_the_own_paper_row_leaves_the_authors_padding_of_every_other_row_as_it_was():
    base = {"crius": [1.0, 2.0, 3.0, 4.0], "crius-ddl": [1.0, 1.0, 1.0, 1.0], "elasticflow": [0.5, 0.5],
            "fcfs": [6.0]}
    jct = {k: {"_h_jct": v} for k, v in base.items()}
    p = cg.GridPoint(0, 1.0, "derived")
    rows = {k: {**_row(1.0), **v} for k, v in jct.items()}
    before, _ = cg.point_from_rows("sim", p, rows)
    rows = {k: {**_row(1.0), **v} for k, v in jct.items()}
    drop = {k: v for k, v in _row(1.0).items() if k not in ("h_padded_jct_h", cg.DDL_PADDED)}
    rows["elasticflow-drop"] = {**drop, "_h_jct": [30.0]}  # the largest JCT: theirs must not move by it
    after, _ = cg.point_from_rows("sim", p, rows)
    for k in base:
        assert after["rows"][k] == before["rows"][k], k
    assert before["rows"]["elasticflow"][cg.DDL_PADDED] == pytest.approx((1.0 + 2 * 6.0) / 4)
    # padded as if the authors had run it in place of their ElasticFlow: the largest JCT over their
    # policies with this row instead of theirs
    assert after["rows"]["elasticflow-drop"][cg.DDL_PADDED] == pytest.approx((30.0 + 3 * 30.0) / 4)
    assert "h_padded_jct_h" not in after["rows"]["elasticflow-drop"]  # not a policy of the authors' Fig. 17a
