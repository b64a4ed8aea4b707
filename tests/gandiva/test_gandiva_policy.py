"""Gandiva's mechanisms on one or two small servers, each checked against what the paper says."""

from __future__ import annotations

import pytest

from dlsched.cluster.spec import parse_spec
from dlsched.cluster.topology import Cluster, Tier
from dlsched.experiments import gandiva as exp
from dlsched.policies.base import Allocation, JobState
from dlsched.policies.gandiva.plan import best_in_node
from dlsched.policies.registry import make_policy, policy_options
from dlsched.perf.default import default_perf_model
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec

TWO_SERVERS = """name: two
node_groups:
  - {name: s, gpu: P100, nodes: 2, gpus_per_node: 4, nic_gbps: 80,
     intra: {kind: pcie, sockets: 2, gpus_per_switch: 2, cross_socket_GBps: 2.0}}
network: {topology: tiered}
"""


def two() -> Cluster:
    return Cluster(parse_spec(TWO_SERVERS))


def run(cluster, jobs, perf=None, **opts):
    p = make_policy("gandiva", **opts)
    res = Simulator(cluster, p, jobs, perf=perf, config=SimConfig(debug=True, **exp.COSTS)).run()
    return res, p


def first_gpus(res, job_id):
    return next(e.gpus for e in res.events if e.job_id == job_id and e.kind == "start")


def test_options_declared_and_registered():
    names = {o.name for o in policy_options("gandiva")}
    assert {"packing", "migration", "grow_shrink", "quantum_s"} <= names
    assert make_policy("gandiva", packing=False).packing is False


def test_same_demand_jobs_share_a_server_and_others_go_elsewhere():
    """Affinity (Fig. 7): 1-GPU jobs gather on one server, a 2-GPU job takes an empty one."""
    c = two()
    jobs = [JobSpec("a", 0.0, "resnet50", 1, duration_s=3600), JobSpec("b", 10.0, "resnet50", 2, duration_s=3600),
            JobSpec("c", 20.0, "resnet50", 1, duration_s=3600)]
    res, _ = run(c, jobs, migration=False, packing=False)
    node = {j: {int(c.gpu_node[g]) for g in first_gpus(res, j)} for j in "abc"}
    assert node["a"] == node["c"] != node["b"]


def test_locality_inside_a_server():
    """A 2-GPU job gets two GPUs under one PCIe switch, not across sockets."""
    c = two()
    assert c.tier(best_in_node(c, [0, 2, 3], 2)) == Tier.PCIE_SWITCH
    res, _ = run(c, [JobSpec("a", 0.0, "vgg16", 2, duration_s=600)])
    assert c.tier(first_gpus(res, "a")) == Tier.PCIE_SWITCH


def test_oversubscription_starts_every_job_and_balances_servers():
    """Twelve 1-GPU jobs on eight GPUs all start at once, six per server (Fig. 7)."""
    c = two()
    jobs = [JobSpec(f"j{i:02d}", 0.0, "resnet50", 1, duration_s=3600) for i in range(12)]
    res, p = run(c, jobs, migration=False, packing=False)
    starts = {e.job_id: e for e in res.events if e.kind == "start"}
    assert len(starts) == 12 and all(e.time == 0.0 for e in starts.values())
    per_node = [sum(1 for e in starts.values() if int(c.gpu_node[e.gpus[0]]) == n) for n in (0, 1)]
    assert per_node == [6, 6]
    assert p.mechanism_counts()["slice"] == 4


def test_time_slicing_micro_benchmark_matches_fig9():
    r = exp.timeslice()
    assert r.long_share == pytest.approx(4 / 6, abs=0.03)
    assert r.short_share == pytest.approx(4 / 6, abs=0.03)
    assert 0.0 < r.aggregate_drop < 0.02


def test_grow_shrink_follows_fig11():
    """Grows as the short jobs leave (25, 45 min), shrinks at once when a job needs its GPUs
    (90 min).  On four GPUs across two sockets our perf model makes ResNet-50 slower than on
    two (the cross-socket link is fitted to Gandiva's Fig. 1), so introspection measures that
    and goes back to two a quantum later: the paper's job stayed at four until 75 min."""
    timeline = [(round(t), g) for t, g in exp.growshrink()]
    assert timeline[:6] == [(0, 1), (25, 2), (45, 4), (46, 2), (90, 1), (105, 2)]


def test_non_elastic_jobs_never_grow():
    c = exp.one_server("P100")
    res, p = run(c, [JobSpec("a", 0.0, "resnet50", 1, duration_s=3600)], grow_idle_s=0.0)
    assert p.mechanism_counts()["resize"] == 0 and res.records[0].resizes == 0


def test_high_priority_job_is_never_sliced_with_a_lower_one():
    c = exp.one_server("P100")
    jobs = [JobSpec(f"hi{i}", 0.0, "resnet50", 1, duration_s=3600, priority=5) for i in range(4)]
    jobs.append(JobSpec("lo", 10.0, "resnet50", 1, duration_s=600, priority=0))
    res, _ = run(c, jobs)
    lo = next(r for r in res.records if r.job_id == "lo")
    assert lo.first_start >= min(r.finish for r in res.records if r.job_id.startswith("hi"))  # it waited
    # the other way round a newcomer of higher priority is time-sliced in at once
    jobs = [JobSpec(f"lo{i}", 0.0, "resnet50", 1, duration_s=3600) for i in range(4)]
    jobs.append(JobSpec("hi", 10.0, "resnet50", 1, duration_s=600, priority=5))
    res, _ = run(c, jobs)
    assert next(r for r in res.records if r.job_id == "hi").first_start == 10.0


def _packing_pair(model):
    # The packing trials are judged on Gandiva's own measurements (Table 1, P40s), which the
    # placement model's interference figures hold; the default calibrated model prices packing
    # from Gavel's V100 table instead, where busy ResNet-50 pairs do not lose.
    c = exp.one_server("P40")
    jobs = [JobSpec(f"{model}{i}", 0.0, model, 1, duration_s=3 * 3600) for i in range(5)]
    return run(c, jobs, perf=default_perf_model(c, "placement"), migration=False)


def test_packing_kept_when_measured_throughput_beats_time_slicing():
    """Small, low-utilisation jobs gain from packing (Table 1: up to +412%): it stays."""
    _, p = _packing_pair("mobilenet_v3_large")
    n = p.mechanism_counts()
    assert n["pack"] >= 2 and n["unpack"] == 0


def test_packing_undone_when_it_loses_to_time_slicing():
    """Busy ResNet-50s lose 11-13% packed (Table 1): the trial is undone and not retried."""
    _, p = _packing_pair("resnet50")
    n = p.mechanism_counts()
    assert n["pack"] == 2 and n["unpack"] == 2


def test_sliced_job_migrates_to_freed_gpus():
    c = two()
    jobs = [JobSpec(f"a{i}", 0.0, "resnet50", 1, duration_s=7200) for i in range(4)]
    jobs += [JobSpec("b", 0.0, "resnet50", 4, duration_s=600), JobSpec("c", 5.0, "resnet50", 1, duration_s=7200)]
    res, p = run(c, jobs, packing=False)
    assert p.mechanism_counts()["slice"] == 1 and p.mechanism_counts()["migrate"] >= 1
    c_rec = next(r for r in res.records if r.job_id == "c")
    assert c_rec.finish < 5.0 + 7200 * 1.2  # it did not stay time-sliced for its whole run


def test_no_migration_ablation_keeps_sliced_jobs_in_place():
    c = two()
    jobs = [JobSpec(f"a{i}", 0.0, "resnet50", 1, duration_s=7200) for i in range(4)]
    jobs += [JobSpec("b", 0.0, "resnet50", 4, duration_s=600), JobSpec("c", 5.0, "resnet50", 1, duration_s=7200)]
    _, p = run(c, jobs, packing=False, migration=False)
    assert p.mechanism_counts()["migrate"] == 0


def test_mechanism_costs_follow_the_paper():
    c = two()
    p = make_policy("gandiva")
    small = JobState(JobSpec("s", 0.0, "resnet18", 1, total_iterations=10), 10)
    big = JobState(JobSpec("b", 0.0, "gpt2-xl", 1, total_iterations=10), 10)
    assert 0.1 <= p.overhead(c, small, None, Allocation.of([0]), "resume") < 0.2
    assert p.overhead(c, big, None, Allocation.of([0]), "resume") == pytest.approx(1.0)
    intra = p.overhead(c, small, Allocation.of([0]), Allocation.of([1]), "migrate")
    inter = p.overhead(c, small, Allocation.of([0]), Allocation.of([4]), "migrate")
    assert 1.0 <= intra < inter <= 3.5
    assert p.overhead(c, big, Allocation.of([0]), Allocation.of([4]), "migrate") == pytest.approx(3.5)
    # a start pays the one cost rule every policy pays: no plan search for a data-parallel model
    assert p.overhead(c, small, None, Allocation.of([0]), "start") == 0.0


def test_deterministic():
    c = two()
    jobs = [JobSpec(f"j{i:02d}", 30.0 * i, "resnet50" if i % 2 else "mobilenet_v3_large", 1 + (i % 3 == 0),
                    duration_s=900 + 100 * i, elastic=i % 4 == 0) for i in range(16)]
    a, _ = run(c, jobs)
    b, _ = run(c, jobs)
    assert [(r.job_id, r.finish) for r in a.records] == [(r.job_id, r.finish) for r in b.records]
    assert all(r.status == "finished" for r in a.records)


def test_packing_decision_survives_a_sliced_window_without_progress():
    """A time-sliced window that saw no progress (every turn in a move's downtime) measured 0:
    deciding the packing trial must not divide by it; packed progress then counts as a gain."""
    from types import SimpleNamespace

    from dlsched.policies.gandiva.introspect import pack_groups

    def plan_with(packed_rate):
        job = lambda: SimpleNamespace(spec=SimpleNamespace(model="resnet50", params=None, batch_size=32),  # noqa: E731
                                      policy_data={"measured": {"packed": packed_rate, "sliced": 0.0}})
        calls = []
        plan = SimpleNamespace(holders={0: ["a", "b"]}, shared={0}, gpus={"a": (0,), "b": (0,)}, packed={"a", "b"},
                               jobs={"a": job(), "b": job()}, set_packed=lambda hold, on: calls.append(on),
                               derived_from_holders=lambda name, build: build(plan))
        return plan, calls

    plan, calls = plan_with(5.0)
    rejected: set = set()
    pack_groups(None, plan, rejected, 0.1)
    assert calls == [] and not rejected  # kept packed
    assert all("packed" not in j.policy_data["measured"] for j in plan.jobs.values())  # decided
    plan, calls = plan_with(0.0)
    pack_groups(None, plan, rejected, 0.1)
    assert calls == [False] and len(rejected) == 1  # no progress either way: back to time-slicing
