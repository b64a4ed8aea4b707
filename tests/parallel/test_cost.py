"""Pipeline formula on hand-computed cases, memory and OOM rejection."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.perf.parallel import (
    CellEstimator,
    CostParams,
    Hardware,
    Plan,
    StagePlan,
    TierLinks,
    iteration_time,
    memory_per_gpu,
    pipeline_time,
)
from dlsched.perf.parallel.cost import StageCost
from dlsched.workload.models import Layer, ModelInfo, get_model

GB = 2**30


@pytest.fixture(scope="module")
def est():
    return CellEstimator(Cluster.load("crius-sim"))


def test_pipeline_formula_on_stage_costs():
    # T1 + T2 + (B - 1) x (slowest stage - its overlapped receive) + sync
    costs = [StageCost(micro=1.0, recv=0.0, sync=0.1, memory=0, compute=1.0),
             StageCost(micro=1.5, recv=0.25, sync=0.2, memory=0, compute=1.25)]
    assert pipeline_time(costs, 8) == pytest.approx(1.0 + 1.5 + 7 * 1.25 + 0.2)


def test_pipeline_formula_on_a_tiny_model():
    # Two identical operators, one per stage, one GPU each; ideal efficiency, no overheads.
    flops, params, act = 1e12, 1_000_000, 1e6
    model = ModelInfo("tiny", "transformer", "test",
                      (Layer("tfm.0", params, flops, act), Layer("tfm.1", params, flops, act)),
                      bytes_per_param=2)
    p = CostParams(efficiency=1.0, launch_s=0.0, reserved_bytes=0.0)
    links = TierLinks.uniform(gpus_per_node=4, intra_GBps=100, nic_Gbps=100)
    batch, B = 16, 8  # two stages -> B = 4 x 2 micro-batches of m = 2 samples
    plan = Plan((StagePlan(0, 1, 1, 1), StagePlan(1, 2, 1, 1)))
    peak, bw = 312e12, 1555e9  # A100 fp16 dense peak, HBM bandwidth
    compute = 4 * flops * 2 / peak
    stream = 3 * params * 2 / bw
    recv = 2 * (2e-6 + 2 * act / 100e9)  # activation forward + gradient backward, intra-node link
    t0, t1 = compute + stream, compute + stream + recv
    sync = params * 16 / bw  # optimizer update; no data parallelism, no all-reduce
    want = t0 + t1 + (B - 1) * max(t0, t1 - recv) + sync
    got = iteration_time(model, batch, "A100-40G", 4, 2, plan, links, params=p)
    assert got == pytest.approx(want, rel=1e-12)


def test_bert_6_7b_is_oom_on_one_a10_and_fits_with_tensor_and_pipeline(est):
    bert = get_model("bert", "6.7B")
    hw = est.hardware("A10")
    one = Plan((StagePlan(0, len(bert.layers), 1, 1),))
    assert max(memory_per_gpu(bert, 128, one, hw)) > 24 * GB
    assert iteration_time(bert, 128, "A10", 2, 1, one, hw.links) is None
    assert est.optimum(bert, 128, "A10", 1) is None
    assert est.dp_only(bert, 128, "A10", 16) is None  # replicas do not fit either
    best = est.optimum(bert, 128, "A10", 16)
    assert best is not None and best.n_stages > 1
    assert all(m <= 24 * GB for m in memory_per_gpu(bert, 128, best.plan, hw))
    # tensor parallelism alone (within a node) under an 8-stage pipeline also fits
    n = len(bert.layers)
    cuts = [round(i * n / 8) for i in range(9)]
    tp_pp = Plan(tuple(StagePlan(a, b, 1, 2) for a, b in zip(cuts[:-1], cuts[1:])))
    assert iteration_time(bert, 128, "A10", 2, 16, tp_pp, hw.links) is not None


def test_memory_shrinks_with_tensor_parallelism_and_expert_sharding(est):
    hw = est.hardware("A100-40G")
    bert = get_model("bert", "1.3B")
    n = len(bert.layers)
    dp = memory_per_gpu(bert, 256, Plan((StagePlan(0, n, 4, 1),)), hw)[0]
    tp = memory_per_gpu(bert, 256, Plan((StagePlan(0, n, 1, 4),)), hw)[0]
    assert tp < dp
    moe = get_model("moe", "2.4B")
    n = len(moe.layers)
    one = memory_per_gpu(moe, 256, Plan((StagePlan(0, n, 1, 1),)), hw)[0]
    four = memory_per_gpu(moe, 256, Plan((StagePlan(0, n, 4, 1),)), hw)[0]
    assert four < one / 2  # experts are sharded across the data-parallel group


def test_wide_resnet_2b_does_not_fit_two_a100s(est):
    # Crius Fig. 3: "OOM indicates that WRes-2B cannot be accommodated with 2xA100 GPUs".
    assert est.optimum(get_model("wide_resnet", "2B"), 512, "A100-40G", 2) is None
    assert est.optimum(get_model("wide_resnet", "2B"), 512, "A100-40G", 4) is not None


def test_iteration_time_checks_gpu_count():
    model = get_model("bert", "760M")
    links = TierLinks.uniform(4, 100, 100)
    plan = Plan((StagePlan(0, len(model.layers), 2, 1),))
    with pytest.raises(ValueError):
        iteration_time(model, 128, "A100-40G", 4, 4, plan, links)


def test_more_gpus_are_faster_for_a_fitting_model(est):
    m = get_model("bert", "760M")
    times = [est.optimum(m, 256, "A100-40G", n).iter_time for n in (2, 4, 8, 16)]
    assert times == sorted(times, reverse=True)


def test_hardware_from_cluster_uses_node_links():
    c = Cluster.load("crius-sim")
    v100 = TierLinks.from_cluster(c, "V100")
    a10 = TierLinks.from_cluster(c, "A10")
    assert v100.gpus_per_node == 16 and a10.gpus_per_node == 2
    assert v100.intra.bandwidth_Bps > a10.intra.bandwidth_Bps  # NVSwitch vs PCIe
    assert a10.rack.bandwidth_Bps == pytest.approx(200e9 / 8)  # ConnectX-6
    assert Hardware.of("a100", v100).gpu.name == "A100-40G"
