"""Synthetic generator: determinism and calibration to philly-stats.md."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.cluster import Cluster
from dlsched.workload import synthetic as S


@pytest.fixture(scope="module")
def sample():
    return S.generate(20000, seed=7)


def test_deterministic_for_a_seed():
    a, b = S.generate(500, seed=3), S.generate(500, seed=3)
    assert a == b and [j.extra for j in a] == [j.extra for j in b]
    assert S.generate(500, seed=4) != a


def test_quantile_function_hits_published_points():
    for p, q in S.DURATION_QUANTILES:
        assert S.duration_quantile(p) == pytest.approx(q)
    assert S.duration_cdf(1186.0) == pytest.approx(0.5)


def test_median_duration_and_gpu_mix(sample):
    d = np.array([j.duration_s for j in sample])
    g = np.array([j.num_gpus for j in sample])
    assert np.median(d) == pytest.approx(S.MEDIAN_DURATION_S, rel=0.08)  # philly-stats.md section 1
    for n, share in S.GPU_MIX.items():
        assert (g == n).mean() == pytest.approx(share, abs=0.01)
    # Section 3: multi-GPU jobs run longer than 1-GPU jobs.
    assert np.median(d[g >= 4]) > 4 * np.median(d[g == 1])
    assert d.max() <= S.MAX_DURATION_S


def test_poisson_rate_and_window():
    jobs = S.generate(duration_s=10 * 86400, rate_per_hour=36.0, seed=1)
    assert len(jobs) == pytest.approx(36 * 240, rel=0.05)
    assert max(j.submit_time for j in jobs) < 10 * 86400
    times = [j.submit_time for j in jobs]
    assert times == sorted(times) and times[0] == 0.0


def test_batch_arrivals():
    assert {j.submit_time for j in S.generate(50, arrival="batch")} == {0.0}


def test_cluster_caps_and_pins():
    c = Cluster.load("crius-testbed")  # 32 A40 + 32 A10
    jobs = S.generate(3000, cluster=c, pin_gpu_types=True, gpu_mix={1: 0.5, 32: 0.3, 64: 0.2}, seed=2)
    assert {j.num_gpus for j in jobs} == {1, 32}  # 64 exceeds any single type
    types = [j.gpu_type for j in jobs]
    assert set(types) == {"A40", "A10"} and 0.4 < types.count("A40") / len(types) < 0.6
    assert max(j.num_gpus for j in S.generate(200, gpu_mix={1: 1, 8: 1}, max_gpus=4)) == 1


def test_models_and_batches():
    jobs = S.generate(200, models={"vgg16": 1.0}, seed=5)
    assert {j.model for j in jobs} == {"vgg16"} and all(j.batch_size == 64 * j.num_gpus for j in jobs)


def test_bad_arguments():
    with pytest.raises(ValueError):
        S.generate()
    with pytest.raises(ValueError):
        S.generate(10, gpu_mix={1: 0})


def test_philly_like_offers_about_full_load():
    c = Cluster.load("crius-sim")
    jobs = S.philly_like(c, n_jobs=13000, days=14, seed=0)
    assert len(jobs) == 13000 and max(j.submit_time for j in jobs) < 14 * 86400
    load = S.offered_load(jobs, c.num_gpus, 14 * 86400)
    assert 0.8 <= load <= 1.2
    assert max(j.duration_s for j in jobs) <= 14 * 86400


@pytest.mark.parametrize("kwargs,field", [
    ({"n_jobs": 0}, "n_jobs"), ({"n_jobs": 2.5}, "n_jobs"), ({"n_jobs": 5, "rate_per_hour": float("nan")}, "rate_per_hour"),
    ({"duration_s": float("inf")}, "duration_s"), ({"n_jobs": 5, "duration_scale": -1.0}, "duration_scale"),
])
def test_generate_rejects_bad_arguments(kwargs, field):
    from dlsched.errors import InputError
    with pytest.raises(InputError) as err:
        S.generate(**kwargs)
    assert err.value.field == field


@pytest.mark.parametrize("kwargs,field", [
    ({"n_jobs": 0}, "n_jobs"), ({"days": 0.0}, "days"), ({"days": float("nan")}, "days"),
    ({"n_jobs": 5, "load": float("nan")}, "load"),
])
def test_philly_like_rejects_bad_arguments(kwargs, field):
    from dlsched.errors import InputError
    with pytest.raises(InputError) as err:
        S.philly_like(Cluster.load("crius-testbed"), **kwargs)
    assert err.value.field == field


def test_generated_specs_are_ordinary_validated_specs():
    """``generate`` builds its specs without ``__init__``; each must equal, hash like and behave as
    the spec ``JobSpec(...)`` would build from the same values (frozen, with its own ``extra``)."""
    import dataclasses

    from dlsched.workload.job import JobSpec

    jobs = S.generate(40, seed=3, cluster=Cluster.load("crius-sim"), pin_gpu_types=True)
    for j in jobs:
        ref = JobSpec(**{f.name: getattr(j, f.name) for f in dataclasses.fields(JobSpec)})
        assert j == ref and hash(j) == hash(ref) and repr(j) == repr(ref)
        assert j.total_iterations is None and j.duration_s > 0 and j.extra == {"source": "synthetic"}
        with pytest.raises(dataclasses.FrozenInstanceError):
            j.num_gpus = 3
    assert jobs[0].extra is not jobs[1].extra
    assert dataclasses.replace(jobs[0], num_gpus=2).num_gpus == 2


def test_unchecked_spec_equals_a_checked_one_field_by_field():
    # the generator's fast constructor sets the slots one by one; a field added or reordered in
    # JobSpec must not shift a value into the wrong slot
    from dataclasses import fields

    from dlsched.workload.job import JobSpec, unchecked_spec

    fast = unchecked_spec("j7", 12.5, "resnet50", 4, 128, 3600.0, "v100", {"source": "synthetic"})
    slow = JobSpec("j7", 12.5, "resnet50", 4, 128, duration_s=3600.0, gpu_type="v100",
                   extra={"source": "synthetic"})
    for f in fields(JobSpec):
        assert getattr(fast, f.name) == getattr(slow, f.name), f.name
    assert fast == slow and hash(fast) == hash(slow)
