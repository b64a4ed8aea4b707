"""Suspended jobs merged into the queue's order as it is read (``core.late_jobs``): the order a
policy reads is the sorted order, through suspensions, starts, drops and folds."""

from __future__ import annotations

import random
from collections import OrderedDict

from dlsched.core.late_jobs import LateJobs, Merged
from dlsched.policies.base import JobState
from dlsched.workload.job import JobSpec


def _job(i: int, t: float) -> JobState:
    return JobState(JobSpec(f"j{i:04d}", t, "resnet50", 1, total_iterations=10), 10)


def test_merged_order_is_the_sorted_order_through_random_changes():
    rng = random.Random(3)
    jobs = [_job(i, float(rng.randint(0, 50))) for i in range(400)]  # equal times: ties by id
    queue: OrderedDict = OrderedDict()
    late = LateJobs()
    out: list = []  # jobs not queued
    nxt = 0
    for step in range(3000):
        r = rng.random()
        if r < 0.3 and nxt < len(jobs):  # an arrival
            j = jobs[nxt]
            nxt += 1
            if queue and (j.spec.submit_time, j.job_id) < max((q.spec.submit_time, q.job_id) for q in queue.values()):
                late.add(j)  # the test's arrivals are not sorted: such a one is out of order too
            queue[j.job_id] = j
        elif r < 0.6 and queue:  # a start: any queued job leaves
            jid = rng.choice(list(queue))
            del queue[jid]
            late.discard(jid)
            out.append(jid)
        elif r < 0.9 and out:  # a suspension: back at the end, out of order
            jid = out.pop(rng.randrange(len(out)))
            j = next(x for x in jobs if x.job_id == jid)
            queue[jid] = j
            late.add(j)
        elif late.due(len(queue)) or r >= 0.97:  # a fold, as the core does
            order = sorted(queue.values(), key=lambda j: (j.spec.submit_time, j.job_id))
            queue.clear()
            queue.update((j.job_id, j) for j in order)
            late.clear()
        want = sorted(queue.values(), key=lambda j: (j.spec.submit_time, j.job_id))
        view = Merged(queue, late)
        assert len(view) == len(queue)
        assert [j.job_id for j in view] == [j.job_id for j in want]


def test_core_queue_reads_sorted_after_suspensions():
    from dlsched.cluster import Cluster
    from dlsched.core.state import ExecutionCore
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.base import Allocation, Decision
    from dlsched.policies.fcfs import FCFS

    cluster = Cluster.load("crius-sim")
    core = ExecutionCore(cluster, FCFS(), default_perf_model(cluster))
    jobs = [_job(i, float(i // 3)) for i in range(60)]
    for j in jobs:
        core.submit(j, j.spec.submit_time)
    now = 100.0
    # start every third job, then suspend some of them in an order unlike their submission
    started = jobs[::3]
    core.apply(Decision(allocate={j.job_id: Allocation.of([k]) for k, j in enumerate(started)}), now)
    for j in reversed(started[::2]):
        core.suspend(j, now + 1)
    want = sorted((j for j in jobs if j.job_id in core.queue), key=lambda j: (j.spec.submit_time, j.job_id))
    assert [j.job_id for j in core.queued()] == [j.job_id for j in want]
    assert len(core.queued()) == len(want)
    # a suspended job started again leaves the merge; the order read stays sorted
    core.apply(Decision(allocate={started[0].job_id: Allocation.of([200])}), now + 2)
    want = [j for j in want if j is not started[0]]
    assert [j.job_id for j in core.queued()] == [j.job_id for j in want]
    snap = core.snapshot()  # folds: the dict itself is then in order
    assert list(core.queue) == [j.job_id for j in want] and snap[3] == tuple(core.queue)
