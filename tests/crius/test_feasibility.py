"""A job any policy can run, every policy can run: policies judge feasibility as the engine does.

CycleGAN at batch 1 has no pipeline plan (GPipe's 4 micro-batches per stage need 4 samples),
so Crius's Cell estimator found no Cell for it and Crius dropped it as out of memory, while
the engine runs it data-parallel on one GPU and FCFS finishes it.
"""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.core.feasible import iteration_runs, shape_runs
from dlsched.perf.parallel.adaptive import shared_adaptive_model
from dlsched.policies.registry import make_policy, policy_names
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

# (model, params, GPUs, batch): small CNNs (one at batch 1), RL, NLP and a large model
MIX = [("cyclegan", None, 1, None), ("a3c", None, 1, None), ("resnet50", None, 2, 64),
       ("transformer", None, 1, 128), ("bert", "1.3B", 4, 256), ("resnet18", None, 1, 16)]


def _jobs(n=12) -> list[JobSpec]:
    out = []
    for i in range(n):
        m, p, g, b = MIX[i % len(MIX)]
        b = b or get_model(m, p).default_batch
        out.append(JobSpec(f"j{i}", 60.0 * i, m, g, batch_size=b, total_iterations=200,
                           **({"params": p} if p else {})))
    return out


@pytest.fixture(scope="module")
def setting():
    cluster = Cluster.load("gavel-900")  # three GPU types, as on the Gavel trace
    perf = shared_adaptive_model(cluster)
    jobs = _jobs()
    ref = Simulator(cluster, make_policy("fcfs"), jobs, perf=perf, config=SimConfig(seed=0)).run()
    ran = {r.job_id for r in ref.records if r.finish is not None}
    assert len(ran) == len(jobs)
    return cluster, perf, jobs, ran


@pytest.mark.parametrize("name", policy_names())
def test_no_policy_refuses_a_job_fcfs_runs(setting, name):
    cluster, perf, jobs, ran = setting
    res = Simulator(cluster, make_policy(name), jobs, perf=perf,
                    config=SimConfig(seed=0, max_time=60 * 86400)).run()
    refused = {r.job_id: r.reason for r in res.records if r.finish is None and r.job_id in ran}
    assert not refused, f"{name} did not run jobs FCFS runs: {refused}"


def test_the_predicate_is_the_engines(setting):
    cluster, perf, jobs, _ = setting
    cyclegan = jobs[0]
    assert cyclegan.model == "cyclegan" and cyclegan.batch_size == 1
    assert shape_runs(perf, cluster, cyclegan, 0, 1)
    assert not iteration_runs(float("inf")) and not iteration_runs(0.0) and iteration_runs(1.0)
    assert not shape_runs(perf, cluster, cyclegan, 0, int(cluster.type_gpus[0]) + 1)  # more GPUs than the type has


class _RefusesFirstType:
    """The engine's prices, except that ResNet-50 cannot run on the first GPU type (V100).

    Every policy's own estimate (data-parallel profiles, Cells) still fits it there, as when
    the engine runs measured times and a measured run was out of memory."""

    def __init__(self, base):
        self._base = base

    def __getattr__(self, name):
        return getattr(self._base, name)

    def price(self, job, gpus, plan=None):
        cost = self._base.price(job, gpus, plan)
        if job.model == "resnet50" and int(self._base.cluster.gpu_type_idx[int(gpus[0])]) == 0:
            return type(cost)(float("inf"), float("inf"), 0.0)
        return cost

    def iteration_time(self, job, gpus, plan=None):
        return self.price(job, gpus, plan).total


@pytest.mark.parametrize("name", policy_names())
def test_no_policy_places_a_job_where_the_engine_cannot_run_it(setting, name):
    cluster, base, jobs, _ = setting
    perf = _RefusesFirstType(base)
    # ResNet-50 asks for the second type: a policy that moves jobs between types by its own
    # estimate (where V100 is the fastest) must not move it to the first
    jobs = [j.with_(gpu_type=cluster.gpu_types[1].name) if j.model == "resnet50" else j for j in jobs]
    res = Simulator(cluster, make_policy(name), jobs, perf=perf,
                    config=SimConfig(seed=0, max_time=60 * 86400)).run()  # an InvariantError if one did
    moved = [r for r in res.records if r.job_id.startswith("j") and r.finish is None]
    assert not moved, f"{name} did not run: {[(r.job_id, r.reason) for r in moved]}"
