"""The Cells ablation: crius-dp plans data-parallel only, and its jobs run data-parallel."""

from __future__ import annotations

from dlsched.cluster.placement import ideal_gpus
from dlsched.experiments.crius_ablation import DataParallelRun
from dlsched.perf.parallel.adaptive import shared_adaptive_model, shared_estimator
from dlsched.policies.base import Allocation, JobState
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model


def _spec(model="bert", params="1.3B", n=4, batch=256, jid="j"):
    return JobSpec(jid, 0.0, model, n, batch_size=batch, total_iterations=50, params=params)


def test_data_parallel_run_is_never_faster_than_the_optimum(testbed):
    base = shared_adaptive_model(testbed)
    dp = DataParallelRun(base)
    est = shared_estimator(testbed)
    spec = _spec()
    gpus = ideal_gpus(testbed, 4, 0)
    slow = est.dp_only(get_model("bert", "1.3B"), 256, testbed.gpu_types[0].name, 4).iter_time
    opt = est.optimum(get_model("bert", "1.3B"), 256, testbed.gpu_types[0].name, 4).iter_time
    assert dp.price(spec, gpus).total == base.price(spec, gpus).total * max(1.0, slow / opt)
    small = JobSpec("s", 0.0, "resnet50", 1, batch_size=32, total_iterations=10)
    assert dp.price(small, ideal_gpus(testbed, 1, 0)) == base.price(small, ideal_gpus(testbed, 1, 0))


def test_crius_dp_estimates_from_data_parallel_profiles(testbed):
    p = make_policy("crius-dp")
    job = JobState(_spec(), 50)
    thr, _, cells = p._estimate_cells(testbed, job)
    est = shared_estimator(testbed)
    for (t, n), v in thr.items():
        assert v == est.dp_only(get_model("bert", "1.3B"), 256, testbed.gpu_types[t].name, n).throughput
    assert cells == max(sum(1 for (t, _) in thr if t == k) for k in {t for t, _ in thr})
    # one plan, no search: re-planning costs nothing under derived costs, and the pruned constant
    # (the authors' cheapest) under theirs
    a4 = Allocation.of(range(4))
    assert make_policy("crius-dp", profile_cells=False).overhead(testbed, JobState(_spec(), 50), None, a4,
                                                                 "start") == 0.0
    assert make_policy("crius-dp", costs="authors").overhead(testbed, JobState(_spec(), 50), None, a4,
                                                             "start") == 40.0


def test_a_job_only_cells_fit_cannot_run_data_parallel(testbed):
    # a 6.7B model holds no data-parallel plan on the testbed's GPUs: crius runs it, crius-dp cannot
    big = [_spec("gpt", "6.7B", 16, 256, "big")]
    base = shared_adaptive_model(testbed)
    ran = Simulator(testbed, make_policy("crius"), big, perf=base, config=SimConfig(seed=0)).run()
    assert ran.records[0].finish is not None
    dp = Simulator(testbed, make_policy("crius-dp"), big, perf=DataParallelRun(base), config=SimConfig(seed=0)).run()
    assert dp.records[0].finish is None and dp.summary["dropped"] == 1
