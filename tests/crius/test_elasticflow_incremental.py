"""ElasticFlow's incremental rounds decide exactly as its full rounds (policies/elasticflow/incremental.py)."""

from __future__ import annotations

import dataclasses

import pytest
from crius_helpers import small_trace

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.policies.elasticflow.ls import ElasticFlowLS
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator


def _run(testbed, perf, name, jobs, full: bool, monkeypatch=None):
    p = make_policy(name)
    used = []
    if full:
        monkeypatch.setattr(ElasticFlowLS, "_incremental_ok", lambda self, view: False)
    else:
        inner = type(p)._incremental_round

        def counted(self, view):
            used.append(view.now)
            return inner(self, view)

        monkeypatch.setattr(ElasticFlowLS, "_incremental_round", counted)
    res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    monkeypatch.undo()
    return [r.row() for r in res.records], res.series, used


def _congested(testbed, deadlines: str):
    """Jobs arriving faster than they finish (a queue forms, spare GPUs come and go); ``deadlines``:
    "none", "all" (a mix of generous and impossible ones) or "some" (every third job)."""
    jobs = small_trace(n=60, gap_s=20, iters=(300, 3000), deadline_slack=None if deadlines == "none" else 4.0)
    if deadlines == "some":
        jobs = [j if i % 3 == 0 else dataclasses.replace(j, deadline=None) for i, j in enumerate(jobs)]
    jobs, removed = fit_requests(jobs, testbed, shared_estimator(testbed))
    assert not removed
    return jobs


@pytest.mark.parametrize("name", ["elasticflow", "elasticflow-ls"])
@pytest.mark.parametrize("deadlines", ["none", "some", "all"])
def test_incremental_rounds_decide_as_the_full_rounds(testbed, perf, monkeypatch, name, deadlines):
    jobs = _congested(testbed, deadlines)
    rows, series, used = _run(testbed, perf, name, jobs, False, monkeypatch)
    ref_rows, ref_series, _ = _run(testbed, perf, name, jobs, True, monkeypatch)
    assert rows == ref_rows
    assert series.time == ref_series.time and series.busy_gpus == ref_series.busy_gpus
    assert series.throughput == ref_series.throughput
    if deadlines != "all" or name == "elasticflow-ls":  # LS ignores deadlines
        assert used  # the incremental path ran (with "some", between full rounds)


def test_allocation_watch_reports_every_job_whose_allocation_changed():
    from dlsched.policies.base import Allocation, JobState
    from dlsched.policies.elasticflow.incremental import AllocationWatch
    from dlsched.workload.job import JobSpec

    jobs = [JobState(JobSpec(f"j{i}", 0.0, "bert", 1, batch_size=8, total_iterations=10), 10) for i in range(4)]
    for i, j in enumerate(jobs):
        j.allocation = Allocation.of([i])
    w = AllocationWatch()
    assert w.changed(jobs) == {"j0", "j1", "j2", "j3"}
    assert w.changed(jobs) == set()
    jobs[1].allocation = Allocation.of([1])  # equal, but a new allocation: the engine placed it again
    assert w.changed(jobs) == {"j1"}
    assert w.changed(jobs[:2] + jobs[3:]) == {"j2"}  # j2 left its GPUs
    assert w.changed(jobs[:2] + jobs[3:]) == set()
