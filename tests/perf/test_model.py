"""PlacementPerfModel: ordering over tiers, caching, robustness on every zoo model and shipped cluster."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.cluster.spec import shipped_specs
from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError, UnknownNameError
from dlsched.perf.base import IterCost
from dlsched.perf.compute import ProfileTable, compute_time
from dlsched.perf.default import default_perf_model
from dlsched.perf.comm.gradsync import buckets, exposed_comm
from dlsched.perf.placement.model import (TIERS, PlacementPerfModel, network_sensitivity, placement_tier,
                                tier_placements)
from dlsched.perf.papers.reference import paper_model
from dlsched.workload.job import JobSpec
from dlsched.workload.models import Layer, ModelInfo, get_model, model_names


def job(model: str, n: int, batch: int | None = None, params: str | None = None) -> JobSpec:
    m = get_model(model, params)
    return JobSpec("j", 0.0, model, n, batch_size=batch or m.default_batch * n, total_iterations=1, params=params)


@pytest.fixture(scope="module")
def dally():
    return Cluster.load("dally-2racks")


@pytest.fixture(scope="module")
def perf(dally):
    return PlacementPerfModel(dally)


def test_default_perf_model_is_calibrated_over_placement(dally):
    from dlsched.perf.calibration.model import CalibratedPerfModel
    from dlsched.perf.calibration.params import shipped
    from dlsched.perf.parallel.adaptive import AdaptivePerfModel

    m = default_perf_model(dally)
    assert isinstance(m, CalibratedPerfModel) and isinstance(m.fallback, PlacementPerfModel)
    assert m.estimator.params == shipped().cost_params()  # the shipped fit, not the analytic defaults
    # the analytic model stays available by name
    a = default_perf_model(dally, "adaptive")
    assert type(a) is AdaptivePerfModel and a.estimator.params != m.estimator.params
    # a data-parallel zoo model is priced exactly as the placement model prices it
    job = JobSpec("j", 0.0, "resnet50", 8, total_iterations=10, batch_size=64)
    assert m.price(job, np.arange(8)).total == PlacementPerfModel(dally).price(job, np.arange(8)).total
    assert isinstance(default_perf_model(dally, "placement"), PlacementPerfModel)
    with pytest.raises(ValueError, match="unknown perf model"):
        default_perf_model(dally, "nope")


@pytest.mark.parametrize("name", model_names())
def test_tier_ordering_every_zoo_model(dally, perf, name):
    m = get_model(name)
    places = tier_placements(dally, 8)
    j = job(name, 8)
    t = [perf.price(j, places[tier]).total for tier in TIERS]
    assert t[0] <= t[1] <= t[2], (name, t)
    assert all(np.isfinite(t)) and t[0] > 0
    assert perf.price(j, places["machine"]).comm >= 0 and m is not None


@pytest.mark.parametrize("spec", shipped_specs())
def test_every_shipped_cluster_prices_every_model(spec):
    c = Cluster.load(spec)
    pm = PlacementPerfModel(c)
    for name in model_names():
        for n in (1, 2, 8):
            if n > c.num_gpus:
                continue
            j = job(name, n)
            cost = pm.price(j, pm.reference_gpus(j))
            assert isinstance(cost, IterCost) and np.isfinite(cost.total) and cost.total >= cost.compute > 0


def test_cache_hit_is_same_object_and_shape_shared(perf):
    j = job("resnet50", 8)
    a = perf.price(j, np.arange(8))
    assert perf.price(j, list(range(8))) is a
    # another node, same shape: priced from the shape cache
    assert perf.price(j, list(range(8, 16))) is a


def test_pure_and_deterministic(dally):
    j = job("bert-large", 16)
    g = list(range(0, 128, 8))[:16]
    assert PlacementPerfModel(dally).price(j, g) == PlacementPerfModel(dally).price(j, g)


def test_single_gpu_has_no_comm(perf):
    c = perf.price(job("vgg16", 1), [5])
    assert c.comm == 0.0 and c.total == c.compute


def test_overlap_hides_communication(dally):
    j = job("vgg16", 8)
    g = [0, 8, 16, 24, 64, 72, 80, 88]
    on = PlacementPerfModel(dally, overlap=True).price(j, g)
    off = PlacementPerfModel(dally, overlap=False).price(j, g)
    assert on.comm < off.comm and on.compute == off.compute


def test_buckets_and_exposed_comm():
    m = ModelInfo("toy", "cnn", "t", (Layer("a", 10 << 20, 1.0), Layer("b", 10 << 20, 1.0),
                                      Layer("c", 10 << 20, 2.0)))
    bks = buckets(m, 25.0)
    assert sum(b.nbytes for b in bks) == m.gradient_bytes
    assert [b.ready for b in bks] == sorted(b.ready for b in bks)
    per_layer = buckets(m, 0.0)
    assert len(per_layer) == 3 and per_layer[0].ready == pytest.approx(0.5)
    # one second of comm per bucket, backward 1 s: without overlap all 3 s are exposed
    assert exposed_comm(per_layer, 1.0, lambda b: 1.0, overlap=False) == (3.0, 3.0)
    exp, total = exposed_comm(per_layer, 1.0, lambda b: 1.0, overlap=True)
    assert total == 3.0 and exp == pytest.approx(2.5)


def test_bucket_size_changes_latency_share(dally):
    j = job("bert-large", 16)
    g = list(range(0, 128, 8))
    many = PlacementPerfModel(dally, bucket_mb=0, overlap=False).price(j, g)
    few = PlacementPerfModel(dally, bucket_mb=25, overlap=False).price(j, g)
    assert many.comm >= few.comm * 0.99


def test_algorithm_option(dally):
    j = job("resnet50", 16)
    g = list(range(16))
    costs = {a: PlacementPerfModel(dally, algorithm=a, overlap=False).price(j, g).comm
             for a in ("ring", "tree", "hierarchical", "auto")}
    assert costs["auto"] <= min(costs["ring"], costs["tree"], costs["hierarchical"]) + 1e-12
    with pytest.raises(ValueError):
        PlacementPerfModel(dally, algorithm="butterfly")


def test_unknown_model_is_a_clear_error(perf):
    with pytest.raises(UnknownNameError):
        perf.price(JobSpec("x", 0, "no-such-model", 1, total_iterations=1), [0])


def test_profile_table_overrides(tmp_path, dally):
    csv = tmp_path / "prof.csv"
    csv.write_text("model,gpu,batch,iter_time_s\nResNet-50,A100-80G,32,0.5\n")
    pm = PlacementPerfModel(dally, profile=csv)
    assert pm.price(job("resnet50", 1, 32), [0]).compute == pytest.approx(0.5)
    # a model the table does not know falls back to the FLOPs model
    assert pm.price(job("vgg16", 1, 32), [0]).compute == PlacementPerfModel(dally).price(job("vgg16", 1, 32), [0]).compute


def test_profile_table_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("model,gpu,batch\nresnet50,A100,32\n")
    with pytest.raises(InputError, match="columns"):
        ProfileTable.load(bad)
    bad.write_text("model,gpu,batch,iter_time_s\nresnet50,Z99,32,0.1\n")
    with pytest.raises(InputError, match="line 2"):
        ProfileTable.load(bad)
    with pytest.raises(InputError, match="no such"):
        ProfileTable.load(tmp_path / "missing.csv")


def test_measured_table_used_for_p100():
    from dlsched.cluster.gpus import gpu_type
    t = compute_time(get_model("resnet50"), gpu_type("P100"), 64, ProfileTable.from_measured())
    assert t == pytest.approx(64 / 219.0)


def test_placement_tier(dally):
    assert placement_tier(dally, range(8)) == "machine"
    assert placement_tier(dally, [0, 8]) == "rack"
    assert placement_tier(dally, [0, 64]) == "network"


def test_network_sensitivity_shape(dally):
    s = network_sensitivity("resnet50", 8, dally)
    assert list(s) == ["machine", "rack", "network"] and s["machine"] == 1.0
    assert 1.0 <= s["rack"] <= s["network"]
    assert network_sensitivity(paper_model("vgg11"), 1, dally) == {"machine": 1.0}


def test_mixed_gpu_types_run_at_slowest():
    c = Cluster.load("gandiva-100")
    pm = PlacementPerfModel(c)
    p100 = pm.price(job("resnet50", 2, 64), [0, 1])
    mixed = pm.price(job("resnet50", 2, 64), [0, c.num_gpus - 1])  # one P100, one P40
    assert mixed.compute >= p100.compute


def test_fp32_a100_over_v100_is_about_measured_ratio():
    """fp32 ResNet-50: A100 (TF32) ~2.2x a V100 (fp32), as measured; not the 10x of the peaks."""
    from dlsched.cluster.gpus import gpu_type
    m = get_model("resnet50")
    r = compute_time(m, gpu_type("V100"), 256) / compute_time(m, gpu_type("A100-40G"), 256)
    assert 1.8 <= r <= 2.8, r


def test_reference_times_are_memoised_only_where_prices_depend_on_the_spec_alone(dally):
    # the simulator sizes every arriving job by its reference time: memoised per (model, variant,
    # batch, GPU count, type) for models that declare spec_keyed, never for one keyed on more
    from dlsched.perf.base import PerfModel

    class ById(PerfModel):  # like a replayed table, looked up by job id
        def price(self, job, gpus, plan=None):
            t = 1.0 + len(job.job_id)
            return IterCost(t, t, 0.0)

    a = JobSpec("a", 0.0, "resnet50", 2, total_iterations=1, batch_size=64)
    b = a.with_(job_id="bbbb")
    by_id = ById(dally)
    assert not by_id.spec_keyed and (by_id.reference_time(a), by_id.reference_time(b)) == (2.0, 5.0)
    adaptive = default_perf_model(dally)
    assert adaptive.spec_keyed and adaptive.fallback.spec_keyed
    want = adaptive.fallback.price(a, adaptive.reference_gpus(a)).total
    assert adaptive.reference_time(a) == adaptive.reference_time(b) == want
    assert list(adaptive._reference) == [("resnet50", None, 64, 2, None)]
    # a base keyed on more makes the adaptive model keyed on more
    from dlsched.perf.parallel.adaptive import AdaptivePerfModel

    assert not AdaptivePerfModel(dally, fallback=ById(dally)).spec_keyed
