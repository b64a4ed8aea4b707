"""EASY backfilling's sorted ends (``EndIndex``) against sorting every running job's end afresh."""

from __future__ import annotations

from types import SimpleNamespace

from dlsched.policies.fcfs import EndIndex


class _View:
    def __init__(self, prices_alone: bool = False):
        self.now = 0.0
        self.prices_alone = prices_alone

    def remaining_time(self, job):
        return job.left / job.rate if job.rate > 0 else float("inf")


def _job(jid, n, rate, left):
    return SimpleNamespace(job_id=jid, rate=rate, ready_at=0.0, left=left, policy_data={},
                           allocation=SimpleNamespace(gpus=tuple(range(n))), spec=SimpleNamespace(num_gpus=n))


def _reference(view, jobs):
    """What the reservation sorted before: every job's end, taken when its (rate, ready_at) changed."""
    out = []
    for j in jobs:
        key = (j.rate, j.ready_at)
        got = j.policy_data.get("ref")
        if got is None or got[0] != key:
            got = (key, view.now + view.remaining_time(j))
            j.policy_data["ref"] = got
        out.append((got[1], len(j.allocation.gpus), j.job_id))
    return sorted(out)


def test_the_index_follows_rate_changes_arrivals_and_departures():
    view, index = _View(), EndIndex()
    jobs = [_job(f"j{i}", 1 + i % 4, 1.0 + i % 3, 100.0 * (i % 5 + 1)) for i in range(12)]
    for j in jobs:
        index.add(j)
    fresh: list = []
    assert index.sync(view, fresh, None) == _reference(view, jobs) and not fresh
    view.now = 50.0
    jobs[3].rate = 9.0  # re-priced: its end is taken again, now
    jobs[7].ready_at = 60.0
    assert index.sync(view, fresh, None) == _reference(view, jobs)
    view.now = 80.0  # unchanged jobs keep the ends taken earlier (not recomputed at 80)
    index.remove("j5")
    del jobs[5]
    late = _job("late", 2, 2.0, 10.0)
    late.allocation = None  # started in this very call: estimated, not indexed yet
    index.add(late)
    got = index.sync(view, fresh, lambda v, j: 7.0)
    assert got == _reference(view, jobs) and fresh == [(87.0, 2, "late")]
    late.allocation = SimpleNamespace(gpus=(0, 1))  # applied by the engine before the next call
    jobs.append(late)
    fresh = []
    assert index.sync(view, fresh, None) == _reference(view, jobs) and not fresh
    jobs[0].allocation = None  # back in the queue without a finish: estimated again
    got = index.sync(view, fresh, lambda v, j: 1.0)
    assert got == _reference(view, jobs[1:]) and fresh == [(81.0, jobs[0].spec.num_gpus, "j0")]


def test_an_engine_that_prices_jobs_alone_keeps_every_end_until_the_job_leaves():
    view, index = _View(prices_alone=True), EndIndex()
    jobs = [_job(f"j{i}", 1 + i % 4, 1.0 + i % 3, 100.0 * (i % 5 + 1)) for i in range(12)]
    for j in jobs:
        index.add(j)
    fresh: list = []
    first = index.sync(view, fresh, None)
    assert first == _reference(view, jobs) and not fresh
    view.now = 50.0
    assert index.sync(view, fresh, None) == _reference(view, jobs)  # taken at 0, not again at 50
    index.remove("j5")
    del jobs[5]
    late = _job("late", 2, 2.0, 10.0)
    index.add(late)
    assert index.sync(view, fresh, None) == _reference(view, jobs + [late])


def test_the_engine_says_when_jobs_are_priced_alone():
    from dlsched.cluster import Cluster
    from dlsched.core.state import ExecutionCore
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.registry import make_policy

    c = Cluster.load("crius-testbed")
    perf = default_perf_model(c, "simple")

    def core(**kw):
        return ExecutionCore(c, make_policy("fcfs-backfill"), perf, **kw)

    assert core().view.prices_alone  # the simulator's fluid core, no contention model
    assert not core(fluid=False).view.prices_alone  # live: rates are measured as jobs run
    assert not core(contention=SimpleNamespace()).view.prices_alone  # a network re-prices jobs
