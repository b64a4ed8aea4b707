"""Offered load: measured as the GPU-hours asked over the GPU-hours offered while jobs arrive;
scaling to a load moves arrivals only; the default workload realises its load exactly."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.workload import synthetic as S
from dlsched.workload.job import JobSpec
from dlsched.workload.load import apply, measure, rescale_arrivals
from dlsched.workload.named import WORKLOADS, Request, build, default_jobs


@pytest.fixture(scope="module")
def testbed():
    return Cluster.load("crius-testbed")  # 64 GPUs


def _jobs():
    return [JobSpec("a", 0.0, "resnet50", 4, duration_s=3600.0),
            JobSpec("b", 1800.0, "resnet50", 2, duration_s=7200.0, deadline=9000.0),
            JobSpec("c", 3600.0, "resnet50", 8, duration_s=1800.0)]


def test_measure_divides_gpu_hours_asked_by_gpu_hours_offered(testbed):
    info = measure(_jobs(), testbed)
    # 4 x 1 h + 2 x 2 h + 8 x 0.5 h = 12 GPU-hours over a 1-hour window of 64 GPUs
    assert info.gpu_hours == pytest.approx(12.0) and info.window_h == pytest.approx(1.0)
    assert info.offered_load == pytest.approx(12.0 / 64)


def test_a_batch_has_no_window_and_refuses_a_load(testbed):
    batch = [j.with_(submit_time=0.0) for j in _jobs()]
    assert measure(batch, testbed).offered_load is None
    with pytest.raises(InputError, match="batch"):
        apply(batch, testbed, load=1.0)


def test_scaling_to_a_load_moves_arrivals_only(testbed):
    jobs, info = apply(_jobs(), testbed, load=0.75)
    assert info.offered_load == pytest.approx(0.75, rel=1e-3)
    # the window shrinks by 0.1875 / 0.75: gaps x 0.25; sizes, requests and deadline slack kept
    assert [j.submit_time for j in jobs] == [0.0, 450.0, 900.0]
    assert [(j.num_gpus, j.duration_s) for j in jobs] == [(j.num_gpus, j.duration_s) for j in _jobs()]
    assert jobs[1].deadline - jobs[1].submit_time == pytest.approx(9000.0 - 1800.0)


def test_time_scale_and_load_are_one_or_the_other(testbed):
    with pytest.raises(InputError):
        apply(_jobs(), testbed, load=1.0, time_scale=0.5)
    assert [j.submit_time for j in rescale_arrivals(_jobs(), 2.0)] == [0.0, 3600.0, 7200.0]


def test_iteration_sized_jobs_are_priced_by_the_perf_model(testbed):
    class Perf:  # 2 s per iteration on any request
        def reference_time(self, job):
            return 2.0
    jobs = [JobSpec("a", 0.0, "resnet50", 4, total_iterations=900), JobSpec("b", 3600.0, "resnet50", 1,
                                                                          total_iterations=1800)]
    # 4 x 1,800 s + 1 x 3,600 s = 3 GPU-hours
    assert measure(jobs, testbed, Perf()).gpu_hours == pytest.approx(3.0)


@pytest.mark.parametrize("load", [0.5, 1.0, 2.5])
def test_default_workload_realises_its_load_and_keeps_its_sizes(testbed, load):
    jobs = S.philly_at_load(testbed, 200, seed=4, load=load)
    assert measure(jobs, testbed).offered_load == pytest.approx(load, rel=1e-3)
    base = S.philly_at_load(testbed, 200, seed=4, load=1.0)
    assert [(j.num_gpus, j.duration_s, j.model) for j in jobs] == [(j.num_gpus, j.duration_s, j.model) for j in base]
    # arrivals scale with 1 / load; each is rounded to the millisecond, so base / load is off by
    # at most 0.5 ms / load and the scaled time by 0.5 ms
    assert [j.submit_time for j in jobs] == pytest.approx([j.submit_time / load for j in base],
                                                          abs=0.5e-3 + 0.5e-3 / load)
    assert max(j.duration_s for j in jobs) <= S.DEFAULT_MAX_DURATION_S


def test_days_spread_arrivals_without_touching_durations(testbed):
    short = S.philly_at_load(testbed, 100, seed=1, load=None, days=0.5)
    long = S.philly_at_load(testbed, 100, seed=1, load=None, days=20.0)
    assert [j.duration_s for j in short] == [j.duration_s for j in long]
    assert max(j.submit_time for j in long) == pytest.approx(20 * 86400.0)
    with pytest.raises(InputError):
        S.philly_at_load(testbed, 100, load=1.0, days=1.0)


def test_default_count_follows_the_cluster(testbed):
    assert default_jobs(Cluster.load("crius-sim")) == 13000 and default_jobs(testbed) == 650
    built = build("philly", testbed, Request(None, 0, None, None))
    assert len(built.jobs) == 650 and measure(built.jobs, testbed).offered_load == pytest.approx(1.0, rel=1e-3)


def test_benchmark_workload_is_the_benchmark_trace():
    c = Cluster.load("crius-sim")
    built = build("benchmark", c, Request(500, 0, None, None))
    assert built.jobs == S.philly_like(c, n_jobs=500, days=14 * 500 / 13000, seed=0)


def test_unknown_workload_suggests_the_closest(testbed):
    with pytest.raises(InputError, match=r"did you mean 'dally-poisson'"):
        build("dally-poison", testbed, Request(None, 0, None, None))


@pytest.mark.parametrize("name", [n for n, w in WORKLOADS.items() if not w.needs_shared and n != "benchmark"])
def test_each_named_workload_builds_deterministically(name):
    w = WORKLOADS[name]
    c = Cluster.load(w.cluster or "crius-testbed")
    a = build(name, c, Request(20, 0, None, None)).jobs
    assert len(a) == 20 and a == build(name, c, Request(20, 0, None, None)).jobs
