"""Strict FCFS's own loop (sim/fcfs_loop.py) against the general one: same records, series, summary, bytes."""

import pytest

from dlsched.cluster import Cluster
from dlsched.perf.default import default_perf_model
from dlsched.policies.registry import make_policy
from dlsched.report.io import write_results
from dlsched.sim import SimConfig, Simulator
from dlsched.sim import fcfs_loop
from dlsched.workload.job import JobSpec
from dlsched.workload.synthetic import philly_at_load


def _run(monkeypatch, cluster, jobs, fast: bool, policy="fcfs", **cfg):
    monkeypatch.setenv("DLSCHED_FCFS_LOOP", "1" if fast else "0")
    sim = Simulator(cluster, make_policy(policy), jobs, perf=default_perf_model(cluster),
                    config=SimConfig(record_events=False, **cfg))
    used = fcfs_loop.applies(sim)
    return sim.run(), used, sim


def _same(a, b, tmp_path):
    assert a.records == b.records
    assert a.series == b.series
    assert a.summary == b.summary
    assert a.stats["events"] == b.stats["events"] and a.stats["schedule_calls"] == b.stats["schedule_calls"]
    for name, r in (("a", a), ("b", b)):
        write_results(tmp_path / name, r.records, r.series, r.summary, {})
    for f in ("jobs.csv", "series.csv", "summary.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


@pytest.mark.parametrize("cluster_name,n,days,pin", [("crius-sim", 1500, 0.02, False),
                                                     ("crius-testbed", 600, 0.5, True)])
def test_fcfs_loop_matches_the_general_loop(monkeypatch, tmp_path, cluster_name, n, days, pin):
    c = Cluster.load(cluster_name)
    jobs = philly_at_load(c, n, seed=3, load=None, days=days, pin_gpu_types=pin)  # a queue builds up
    fast, used, _ = _run(monkeypatch, c, jobs, True)
    ref, ref_used, _ = _run(monkeypatch, c, jobs, False)
    assert used and not ref_used
    assert fast.summary["finished"] == n and fast.summary["avg_queue"] > 0  # jobs queued: decisions mattered
    _same(fast, ref, tmp_path)


def test_fcfs_loop_edge_cases_match(monkeypatch, tmp_path):
    # no start overhead (progress from the start, no ready event), simultaneous arrivals and ends,
    # pinned types, and a request no node set can hold: left queued, recorded unfinished
    c = Cluster.load("crius-testbed")
    jobs = [JobSpec("a", 0.0, "resnet50", 40, 32, total_iterations=100),
            JobSpec("b", 0.0, "resnet50", 8, 32, total_iterations=100, gpu_type="A10"),
            JobSpec("c", 5.0, "vgg16", 2, 64, total_iterations=50, gpu_type="A40"),
            JobSpec("d", 5.0, "resnet50", 1, 32, total_iterations=10),
            JobSpec("e", 7.0, "resnet50", 33, 32, total_iterations=10, gpu_type="A40"),
            JobSpec("f", 8.0, "resnet50", 1, 32, total_iterations=10)]
    for overhead in (0.0, 30.0):
        fast, used, _ = _run(monkeypatch, c, jobs, True, start_overhead_s=overhead)
        ref, _, _ = _run(monkeypatch, c, jobs, False, start_overhead_s=overhead)
        assert used
        by = {r.job_id: r for r in fast.records}
        assert by["e"].status == "unfinished" and by["f"].status == "unfinished"  # strict: f waits behind e
        _same(fast, ref, tmp_path / str(overhead))


def test_fcfs_loop_only_where_it_gives_the_same_results(monkeypatch):
    c = Cluster.load("crius-testbed")
    jobs = philly_at_load(c, 20, seed=1, load=1.0)
    assert _run(monkeypatch, c, jobs, True)[1]
    assert not _run(monkeypatch, c, jobs, True, policy="fcfs-backfill")[1]
    assert not _run(monkeypatch, c, jobs, True, debug=True)[1]
    assert not _run(monkeypatch, c, jobs, True, max_time=100.0)[1]
    monkeypatch.setenv("DLSCHED_FCFS_LOOP", "1")
    sim = Simulator(c, make_policy("fcfs"), jobs, perf=default_perf_model(c))  # keeps the event log
    assert not fcfs_loop.applies(sim)
