"""The network hook: the core reports placements and removals, and prices the jobs it names."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.core import Contention
from dlsched.perf.base import IterCost, PerfModel
from dlsched.policies.base import Allocation, Decision, JobPolicy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec


class FixedPerf(PerfModel):
    def price(self, job, gpus, plan=None):
        return IterCost(1.0, 0.8, 0.2)


class OneLink:
    """Every job shares one link: with k jobs placed, each iteration's communication takes k times longer."""

    def __init__(self):
        self.solo: dict[str, IterCost] = {}
        self.calls: list[tuple] = []

    def add(self, job_id, spec, allocation, cost):
        self.calls.append(("add", job_id, allocation.gpus, cost.total))
        self.solo[job_id] = cost
        return sorted(self.solo)

    def remove(self, job_id):
        self.calls.append(("remove", job_id))
        del self.solo[job_id]
        return sorted(self.solo)

    def iteration_time(self, job_id):
        c = self.solo[job_id]
        comm = c.comm * len(self.solo)
        return c.compute + comm, comm


class Both(JobPolicy):
    name = "both"

    def schedule(self, view, now):
        return Decision(allocate={j.job_id: Allocation.of([i]) for i, j in enumerate(view.queued())})


def test_contention_slows_jobs_that_share_the_link_and_releases_them():
    assert isinstance(OneLink(), Contention)
    cluster = Cluster.load("crius-testbed")
    jobs = [JobSpec("a", 0.0, "resnet50", 1, 32, total_iterations=100),
            JobSpec("b", 0.0, "resnet50", 1, 32, total_iterations=50)]
    link = OneLink()
    res = Simulator(cluster, Both(), jobs, perf=FixedPerf(cluster), config=SimConfig(debug=True),
                    contention=link).run()
    fin = {r.job_id: r.finish for r in res.records}
    # together each iteration takes 0.8 + 2 x 0.2 = 1.2 s: b ends at 60 s; a then runs alone at 1 s/it
    assert fin["b"] == pytest.approx(60.0)
    assert fin["a"] == pytest.approx(60.0 + (100 - 50))
    comm = {r.job_id: r.comm_time for r in res.records}
    assert comm["b"] == pytest.approx(50 * 0.4) and comm["a"] == pytest.approx(50 * 0.4 + 50 * 0.2)
    assert [c[:2] for c in link.calls] == [("add", "a"), ("add", "b"), ("remove", "b"), ("remove", "a")]


def test_without_contention_pricing_is_the_perf_models():
    cluster = Cluster.load("crius-testbed")
    jobs = [JobSpec("a", 0.0, "resnet50", 1, 32, total_iterations=100),
            JobSpec("b", 0.0, "resnet50", 1, 32, total_iterations=50)]
    res = Simulator(cluster, Both(), jobs, perf=FixedPerf(cluster)).run()
    assert {r.job_id: r.finish for r in res.records} == {"a": 100.0, "b": 50.0}
