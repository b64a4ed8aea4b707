"""The Dally experiment's workloads, pricing modes and registration."""

from __future__ import annotations


import numpy as np
import pytest

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.experiments import dally as exp
from dlsched.experiments.registry import get_experiment
from dlsched.report.summary import summarize


def test_workloads_are_deterministic_and_sized_as_the_paper():
    c = Cluster.load("dally-2racks")
    batch = exp.workload("batch", c)
    assert len(batch) == 500 and all(j.submit_time == 0.0 for j in batch)
    poisson = exp.workload("poisson", c)
    assert len(poisson) == 400 and poisson == exp.workload("poisson", c)
    assert [j.submit_time for j in poisson] == sorted(j.submit_time for j in poisson)
    assert {j.model for j in batch} == {"vgg11", "alexnet", "mobilenet_v3_large", "resnet18", "resnet50",
                                        "bert-large"}
    with pytest.raises(InputError, match="arrival"):
        exp.workload("burst", c)


def test_flow_pricing_uses_the_network_layer():
    perf, contention = exp.engine_parts(Cluster.load("dally-2racks"), "flow")
    assert contention is not None and contention.describe()["model"] == "flow"
    with pytest.raises(InputError, match="pricing must be one of"):
        exp.engine_parts(Cluster.load("dally-2racks"), "congested")


def test_registered_and_scheduler_list_builds():
    assert get_experiment("dally").name == "dally"
    from dlsched.policies.registry import make_policy
    for name in exp.SCHEDULERS:
        make_policy(name)


def test_summary_reports_the_papers_metrics():
    from tests.dally.test_dally import _blocked_scene, _run
    from dlsched.policies.registry import make_policy

    _, res = _run(make_policy("dally-manual", preempt=False), _blocked_scene())
    s = res.summary
    for key in ("makespan", "avg_jct", "median_jct", "p95_jct", "p99_jct", "avg_queue", "p95_queue", "p99_queue",
                "avg_comm_s", "utilization"):
        assert s[key] is not None, key
    waits = [r.queueing_delay for r in res.records]
    assert max(waits) == pytest.approx(12 * 3600.0, abs=1.0)  # the 8-GPU job waited its machine timer
    assert s["p99_queue"] == pytest.approx(float(np.percentile(waits, 99)))
    assert summarize(res.records, res.series, 128) == summarize(res.records, res.series, 128)


def test_headlines_take_the_best_run_and_name_its_results_folder():
    def m(mk, jct, comm):
        return {"makespan_h": mk, "avg_jct_h": jct, "comm_latency_h": comm}
    grid = {("batch", 2): {"dally": m(50, 10, 1), "tiresias": m(100, 10, 4)},
            ("poisson", 8): {"dally": m(30, 6, 2), "tiresias": m(100, 12, 4)}}
    heads = {h.metric.split()[0]: h for h in exp.headlines(grid)}
    assert heads["makespan"].ours == pytest.approx(70.0) and heads["makespan"].scenario == "poisson-8racks"
    assert heads["avg_jct"].ours == pytest.approx(50.0)
    assert heads["comm_latency"].ours == pytest.approx(75.0) and heads["comm_latency"].scenario == "batch-2racks"
    assert "mean over 2 runs +62%" in heads["comm_latency"].note


def test_load_scales_poisson_arrivals_and_batch_size():
    c = Cluster.load("dally-2racks")
    base = exp.workload("poisson", c, seed=1, n_jobs=20)
    fast = exp.workload("poisson", c, seed=1, n_jobs=20, load=2.0)
    assert [j.submit_time for j in fast] == pytest.approx([j.submit_time / 2 for j in base], abs=1e-2)
    assert len(exp.workload("batch", c, n_jobs=20, load=0.5)) == 10
    assert exp.workload("batch", c, seed=2, n_jobs=20) != exp.workload("batch", c, seed=1, n_jobs=20)


def test_claims_compare_the_papers_metric_and_keep_ours_apart():
    from dlsched.experiments import dally_grid as dg

    rows = {"dally": {"makespan_h": 50.0, "avg_jct_h": 9.0}, "tiresias": {"makespan_h": 100.0, "avg_jct_h": 10.0},
            "gandiva": {"makespan_h": 40.0, "avg_jct_h": 10.0}}
    by = {(c.arrival, c.name): c for c in dg.CLAIMS}
    assert dg.claim_value(by["batch", "makespan better than Tiresias"], rows) == pytest.approx(50.0)
    assert dg.claim_value(by["batch", "makespan better than Gandiva"], rows) == pytest.approx(-25.0)
    assert dg.claim_value(by["batch", "dally-noreoffer makespan better than Tiresias"], rows) is None
    # our ablation never in a paper row
    assert all(c.ours == ("dally-noreoffer" in (c.scheduler, c.baseline)) for c in dg.CLAIMS)
    assert {c.baseline for c in dg.CLAIMS if not c.ours} >= {"tiresias", "gandiva", "dally-manual"}
    for s in dg.GRID_SCHEDULERS:
        from dlsched.policies.registry import make_policy
        make_policy(s)


def test_quick_grid_point_gives_every_claim_a_verdict(tmp_path):
    from dlsched.experiments import dally_grid as dg

    results, runs = dg.run_arrival("poisson", (2,), (0,), (1.0,), 12)
    # a claim the paper states for other rack counts only is left out on 2 racks
    assert {r.headline.name for r in results} == {c.name for c in dg.CLAIMS if c.arrival == "poisson"
                                                  and (c.racks is None or 2 in c.racks)}
    assert all(r.verdict in ("reproduced", "mixed", "not reproduced") for r in results)
    assert set(next(iter(runs.values()))) == set(dg.GRID_SCHEDULERS)
    assert set(dg.tuner_fallbacks(runs)) == {"machine", "rack"}


def test_gandiva_runs_network_agnostic_as_dally_ran_it(tmp_path):
    import json

    c = Cluster.load("dally-2racks")
    jobs = exp.workload("batch", c, n_jobs=12)
    exp.run_one("batch", 2, "gandiva", out=tmp_path / "g", jobs=jobs)
    params = json.loads((tmp_path / "g" / "summary.json").read_text())["params"]
    assert '"racks": false' in json.dumps(params)
    exp.run_one("batch", 2, "gandiva", options={"racks": True}, out=tmp_path / "r", jobs=jobs)
    assert '"racks": false' not in json.dumps(json.loads((tmp_path / "r" / "summary.json").read_text())["params"])


def test_claims_stated_for_some_racks_are_judged_there_only():
    from dlsched.experiments import dally_grid as dg

    results, _ = dg.run_arrival("batch", (2,), (0,), (1.0,), 10)
    names = {r.headline.name for r in results}
    assert "avg JCT worse than Gandiva (2 racks)" in names
    assert "avg JCT better than Gandiva (4-16 racks)" not in names
    worse = next(r for r in results if r.headline.name == "avg JCT worse than Gandiva (2 racks)")
    assert worse.headline.direction.holds(-5.0) and not worse.headline.direction.holds(5.0)
    assert all(p.setting == "2 racks" for r in results for p in r.values)


def test_timer_sweep_table_counts_points_against_the_12_h_timers():
    from dlsched.experiments.dally_grid import sweep_label, sweep_table

    rows = {"auto-tuned (dally)": [10.0, 30.0], sweep_label(12.0): [20.0, 20.0],
            sweep_label(float("inf")): [10.0, 20.0]}
    lines = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[2:6]]
             for ln in sweep_table(("batch", 2), rows).splitlines() if ln.startswith("| ") and "timers" not in ln}
    # mean ratio to 12 h, points better, points worse, points within 0.1% of the best
    assert lines["auto-tuned (dally)"] == ["1.000", "1", "1", "1"]
    assert lines["fixed 12 h"] == ["1.000", "0", "0", "1"]
    assert lines["fullyConsolidated (inf)"] == ["0.750", "1", "0", "2"]
