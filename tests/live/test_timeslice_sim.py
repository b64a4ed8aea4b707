"""The timeslice policy under the simulator: suspends, resumes and migrates, deterministically."""

from __future__ import annotations

from dlsched.cluster.spec import ClusterSpec
from dlsched.cluster.topology import Cluster
from dlsched.live.calibrated import MeasuredPerfModel
from dlsched.live.jobfile import load_jobs
from dlsched.policies.registry import make_policy
from dlsched.sim.engine import SimConfig, Simulator
from live_helpers import EXAMPLES


def _setup():
    cluster = Cluster(ClusterSpec.model_validate(
        {"name": "3x2", "node_groups": [{"name": "g", "gpu": "A40", "nodes": 3, "gpus_per_node": 2}]}))
    perf = MeasuredPerfModel(cluster)
    for model in ("tiny-cnn", "tiny-transformer"):
        perf.observe(model, 1, 0.1, 100)
        perf.observe(model, 2, 0.05, 100)
    jobs = [j.spec.with_(submit_time=j.delay_s) for j in load_jobs(EXAMPLES / "trace6.yaml")]
    return cluster, perf, jobs


def _run(policy):
    cluster, perf, jobs = _setup()
    cfg = SimConfig(start_overhead_s=0.2, restore_base_s=0.5, restore_s_per_gb=0.0, debug=True)
    return Simulator(cluster, policy, jobs, perf=perf, config=cfg).run()


def test_timeslice_suspends_resumes_and_migrates():
    res = _run(make_policy("timeslice", quantum_s=4.0))
    recs = {r.job_id: r for r in res.records}
    assert all(r.status == "finished" and r.done_iterations == r.total_iterations for r in recs.values())
    assert recs["j1"].restarts == 1 and recs["j1"].migrations == 1  # suspended for j6, later consolidated
    assert recs["j6"].first_start == 4.0  # the first round, not when j2/j4 end (as under FCFS)
    again = _run(make_policy("timeslice", quantum_s=4.0))
    assert [r.row() for r in again.records] == [r.row() for r in res.records]


def test_timeslice_without_contention_is_fcfs():
    cluster, perf, jobs = _setup()
    light = [j for j in jobs if j.job_id != "j6"]
    cfg = SimConfig(start_overhead_s=0.0)
    a = Simulator(cluster, make_policy("timeslice", quantum_s=1.0), light, perf=perf, config=cfg).run()
    b = Simulator(cluster, make_policy("fcfs"), light, perf=perf, config=cfg).run()
    assert [r.finish for r in a.records] == [r.finish for r in b.records]
    assert a.summary["migrations"] == 0 and a.summary["restarts_per_job"] == 0
