"""Packing interference: Gandiva Table 1 ranges, memory infeasibility."""

from __future__ import annotations

import pytest

from dlsched.cluster.gpus import gpu_type
from dlsched.cluster.topology import Cluster
from dlsched.perf.sharing.interference import PackedJob, PackingInfeasibleError, pack
from dlsched.perf.placement.model import PlacementPerfModel
from dlsched.workload.job import JobSpec

P100 = gpu_type("P100")
GB = 2**30


def test_small_jobs_gain_up_to_4x():
    res = pack([PackedJob(0.2, 2 * GB, "cnn")] * 5, P100)
    assert 3.5 <= res.aggregate <= 4.6


@pytest.mark.parametrize("u,family", [(0.55, "cnn"), (0.6, "transformer"), (0.7, "cnn"), (0.85, "rnn"), (0.85, "transformer")])
def test_mid_jobs_between_minus16_and_plus46(u, family):
    gain = pack([PackedJob(u, 4 * GB, family)] * 2, P100).aggregate - 1
    assert -0.18 <= gain <= 0.50, gain


def test_busy_image_jobs_lose_11_to_13_percent():
    gain = pack([PackedJob(0.99, 4 * GB, "cnn")] * 2, P100).aggregate - 1
    assert -0.13 <= gain <= -0.11


def test_memory_over_capacity_is_infeasible():
    res = pack([PackedJob(0.3, 9 * GB, "cnn")] * 2, P100)
    assert not res.feasible and res.factors == (0.0, 0.0)


def test_single_job_keeps_full_speed():
    assert pack([PackedJob(0.9, GB)], P100).factors == (1.0,)


def test_packing_factors_through_model():
    pm = PlacementPerfModel(Cluster.load("gandiva-100"))
    small = [JobSpec(f"s{i}", 0, "resnet50", 1, batch_size=4, total_iterations=1, extra={"gpu_util": 20})
             for i in range(4)]
    f = pm.packing_factors(small, "P100")
    assert len(f) == 4 and all(0.8 < x <= 1.0 for x in f)
    big = [JobSpec(f"b{i}", 0, "vgg16", 1, batch_size=256, total_iterations=1) for i in range(2)]
    assert not pm.packing(big, "P100").feasible
    with pytest.raises(PackingInfeasibleError, match="GiB"):
        pm.packing_factors(big, "P100")


def test_two_lms_under_one_switch_slow_19_percent():
    from dlsched.perf.sharing.interference import shared_switch_factors

    assert shared_switch_factors(["rnn", "rnn"]) == pytest.approx([0.81, 0.81])
    assert shared_switch_factors(["cnn", "rnn"]) == [1.0, 1.0]  # ResNet-50 beside an LM: unaffected
