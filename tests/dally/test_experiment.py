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
