"""Pipeline, expert and tensor-parallel traffic as flows: where they go, what they carry, how they share."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.network import FlowContention, clos
from dlsched.network.plan_traffic import plan_demands
from dlsched.perf.parallel.adaptive import shared_adaptive_model
from dlsched.perf.base import IterCost
from dlsched.perf.placement.model import PlacementPerfModel
from dlsched.perf.parallel.plan import Plan, StagePlan
from dlsched.perf.parallel.profile import profile
from dlsched.policies.base import Allocation
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

NIC = 100e9 / 8


def hosts_of(fc, f) -> tuple[int, int]:
    nic_host = {nic: i for i, h in enumerate(fc.graph.hosts) for nic in h.nics}
    return nic_host[f.src_nic], nic_host[f.dst_nic]


def host_pairs(fc, job) -> set[tuple[int, int]]:
    return {hosts_of(fc, f) for f in fc.traffic(job).flows}


def pipeline(stages: int, gpus_per_stage: int, layers: int, dp: int = 1) -> Plan:
    cuts = [round(i * layers / stages) for i in range(stages + 1)]
    return Plan(tuple(StagePlan(a, b, dp, gpus_per_stage // dp) for a, b in zip(cuts, cuts[1:])))


def test_pipeline_flows_cross_exactly_the_stage_boundaries():
    # four stages, one per host, each stage tensor-parallel over its host's two GPUs: the only
    # network traffic is activations forward and gradients backward between consecutive hosts
    g = clos(4, 2, 1, nic_gbps=100, gpus_per_host=2, oversubscription=1)
    model = get_model("gpt-1.3b")
    plan = pipeline(4, 2, len(model.layers))
    placement = [(h, k) for h in range(4) for k in range(2)]
    fc = FlowContention(g)
    fc.add_demands("pp", plan_demands(placement, model, 64, plan), 1.0, 0.1)
    traffic = fc.traffic("pp")
    assert host_pairs(fc, "pp") == {(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)}
    assert {f.kind for f in traffic.flows} == {"pp"}
    # each direction carries the boundary activation of the whole batch (both ranks share the NIC)
    prof = profile(model)
    for f in traffic.flows:
        stage = max(hosts_of(fc, f))  # the later stage of the boundary
        cut = float(prof.act_out[plan.stages[stage].start - 1]) * 64
        assert f.nbytes == pytest.approx(cut)


def test_data_parallel_stages_ring_inside_each_stage_only():
    # two stages of two replicas, each replica on its own host: gradient rings stay within a
    # stage's hosts, activations cross between the stages' hosts
    g = clos(4, 4, 1, nic_gbps=100, gpus_per_host=1, oversubscription=1)
    model = get_model("gpt-760m")
    plan = pipeline(2, 2, len(model.layers), dp=2)
    fc = FlowContention(g)
    fc.add_demands("j", plan_demands([(h, 0) for h in range(4)], model, 64, plan), 1.0, 0.1)
    kinds = {}
    for f in fc.traffic("j").flows:
        kinds.setdefault(f.kind, set()).add(hosts_of(fc, f))
    assert kinds == {"dp": {(0, 1), (1, 0), (2, 3), (3, 2)}, "pp": {(0, 2), (2, 0), (1, 3), (3, 1)}}


def test_moe_alltoall_gives_all_pairs_flows():
    g = clos(3, 3, 1, nic_gbps=100, gpus_per_host=1, oversubscription=1)
    # GPU i is host i's only GPU; no plan source: a MoE job is data-parallel, every GPU an expert rank
    fc = FlowContention(g, gpu_host=lambda gid: (gid, 0))
    spec = JobSpec("moe", 0.0, "moe-690m", 3, batch_size=48, total_iterations=1)
    fc.add("moe", spec, Allocation.of(range(3)), IterCost(1.0, 0.8, 0.2))
    assert host_pairs(fc, "moe") == {(a, b) for a in range(3) for b in range(3) if a != b}
    assert all("ep" in f.kind for f in fc.traffic("moe").flows)


def test_two_pipelines_sharing_an_uplink_slow_down_as_maxmin_predicts():
    # 2 ToRs x 2 hosts, 2:1 oversubscribed: a ToR uplink carries one NIC's worth.  Two two-stage
    # pipelines, each across the ToRs, send their activations up the same uplink
    g = clos(4, 2, 1, nic_gbps=100, gpus_per_host=1, oversubscription=2)
    model = get_model("gpt-760m")
    plan = pipeline(2, 1, len(model.layers))
    fc = FlowContention(g)
    total, comm = 2.0, 0.1
    fc.add_demands("a", plan_demands([(0, 0), (2, 0)], model, 64, plan), total, comm)
    assert fc.iteration_time("a") == (total, comm)
    fc.add_demands("b", plan_demands([(1, 0), (3, 0)], model, 64, plan), total, comm)
    # by hand: each pipeline sends S = cut bytes each way; alone at NIC speed that is D = S / NIC,
    # ending with the iteration.  Together they start at once and halve the uplink: 2D, so the
    # iteration grows by D
    cut = fc.traffic("a").flows[0].nbytes
    assert cut == pytest.approx(float(profile(model).act_out[plan.stages[1].start - 1]) * 64)
    D = cut / NIC
    assert D < total
    for job in ("a", "b"):
        t, c = fc.iteration_time(job)
        assert t == pytest.approx(total + D, rel=1e-9)
        assert c == pytest.approx(comm + D, rel=1e-9)


def test_large_model_alone_gets_exactly_the_adaptive_price():
    cluster = Cluster.load("crux-testbed")
    perf = shared_adaptive_model(cluster, fallback=PlacementPerfModel(cluster))
    fc = FlowContention.for_cluster(cluster)
    spec = JobSpec("big", 0.0, "gpt-6.7b", 16, batch_size=256, total_iterations=1)
    alloc = Allocation.of(range(16))
    cost = perf.price(spec, alloc.gpus)
    assert list(fc.add("big", spec, alloc, cost)) == ["big"]
    kinds = {k for f in fc.traffic("big").flows for k in f.kind.split("+")}
    assert kinds and kinds <= {"dp", "pp", "tp", "ep"}
    assert fc.iteration_time("big") == (cost.total, cost.comm)


def test_plan_must_cover_the_placement():
    model = get_model("gpt-760m")
    with pytest.raises(ValueError, match="needs 4 GPUs"):
        plan_demands([(0, 0), (1, 0)], model, 64, pipeline(2, 2, len(model.layers)))
