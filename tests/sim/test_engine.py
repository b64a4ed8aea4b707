"""The engine's accounting, on hand-made policies whose outcome can be worked out by hand."""

import pytest

from dlsched.cluster import Cluster
from dlsched.cluster.placement import pick_gpus
from dlsched.errors import InvariantError
from dlsched.perf.base import IterCost, PerfModel
from dlsched.policies.base import Allocation, Decision, JobPolicy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec


class FixedPerf(PerfModel):
    """One second per iteration on any allocation, a tenth of it communication."""

    def price(self, job, gpus, plan=None):
        return IterCost(1.0, 0.9, 0.1)


class Scripted(JobPolicy):
    """Replays a list of (time, Decision-builder) steps; builders see the view."""

    name = "scripted"

    def __init__(self, steps):
        self.steps = steps

    def schedule(self, view, now):
        nxt = min((t for t, _ in self.steps if t > now), default=None)
        for t, build in self.steps:
            if t == now:
                d = build(view)
                d.wakeup = nxt
                return d
        return Decision(wakeup=nxt)


@pytest.fixture
def cluster():
    return Cluster.load("crius-testbed")


def job(jid, t=0.0, n=1, iters=100, **kw):
    return JobSpec(jid, t, "resnet50", n, 32, total_iterations=iters, **kw)


def run(cluster, policy, jobs, **cfg):
    cfg.setdefault("debug", True)
    cfg.setdefault("restore_base_s", 0.0)
    cfg.setdefault("restore_s_per_gb", 0.0)
    return Simulator(cluster, policy, jobs, perf=FixedPerf(cluster), config=SimConfig(**cfg)).run()


def test_single_job_accounting(cluster):
    pol = Scripted([(10.0, lambda v: Decision(allocate={"a": Allocation.of([0, 1])}))])
    res = run(cluster, pol, [job("a", n=2, iters=100)])
    r = res.records[0]
    assert r.status == "finished"
    assert r.first_start == 10.0 and r.finish == 110.0 and r.jct == 110.0
    assert r.queueing_delay == 10.0
    assert r.run_time == 100.0 and r.gpu_seconds == 200.0
    assert r.comm_time == pytest.approx(10.0)
    assert res.summary["finished"] == 1


def test_preempt_and_resume_with_overhead(cluster):
    steps = [
        (0.0, lambda v: Decision(allocate={"a": Allocation.of([0])})),
        (30.0, lambda v: Decision(preempt=["a"])),
        (50.0, lambda v: Decision(allocate={"a": Allocation.of([5])})),
    ]
    res = run(cluster, Scripted(steps), [job("a", iters=100)], restore_base_s=7.0)
    r = res.records[0]
    # 30 iterations, 20 s queued, 7 s restore, 70 more iterations
    assert r.finish == pytest.approx(50 + 7 + 70)
    assert r.restarts == 1 and r.queueing_delay == pytest.approx(20.0)
    assert r.run_time == pytest.approx(30 + 77)


def test_checkpoint_interval_loses_work(cluster):
    steps = [
        (0.0, lambda v: Decision(allocate={"a": Allocation.of([0])})),
        (25.0, lambda v: Decision(preempt=["a"])),
        (30.0, lambda v: Decision(allocate={"a": Allocation.of([0])})),
    ]
    res = run(cluster, Scripted(steps), [job("a", iters=100)], checkpoint_interval_s=10.0)
    # checkpoints at 10 and 20 s: the 5 iterations after 20 s are lost
    assert res.records[0].finish == pytest.approx(30 + 80)


def test_migration_and_resize_are_counted(cluster):
    steps = [
        (0.0, lambda v: Decision(allocate={"a": Allocation.of([0, 1])})),
        (10.0, lambda v: Decision(allocate={"a": Allocation.of([2, 3])})),
        (20.0, lambda v: Decision(allocate={"a": Allocation.of([2, 3, 4, 5])})),
    ]
    res = run(cluster, Scripted(steps), [job("a", n=2, iters=50)])
    r = res.records[0]
    assert (r.migrations, r.resizes, r.restarts) == (1, 1, 0)
    assert r.finish == pytest.approx(50.0)


def test_swap_in_one_decision(cluster):
    steps = [
        (0.0, lambda v: Decision(allocate={"a": Allocation.of([0]), "b": Allocation.of([1])})),
        (5.0, lambda v: Decision(allocate={"a": Allocation.of([1]), "b": Allocation.of([0])})),
    ]
    res = run(cluster, Scripted(steps), [job("a", iters=20), job("b", iters=20)])
    assert all(r.migrations == 1 and r.status == "finished" for r in res.records)


def test_policy_bugs_are_caught(cluster):
    double = Scripted([(0.0, lambda v: Decision(allocate={"a": Allocation.of([0]), "b": Allocation.of([0])}))])
    with pytest.raises(InvariantError, match="already held"):
        run(cluster, double, [job("a"), job("b")])
    ghost = Scripted([(0.0, lambda v: Decision(preempt=["a"]))])
    with pytest.raises(InvariantError, match="not running"):
        run(cluster, ghost, [job("a")])


def test_packing_uses_perf_factors(cluster):
    steps = [(0.0, lambda v: Decision(allocate={"a": Allocation.of([0], shared=True),
                                                "b": Allocation.of([0], shared=True)}))]
    jobs = [job("a", iters=10), job("b", iters=30)]
    res = run(cluster, Scripted(steps), jobs)
    fin = {r.job_id: r.finish for r in res.records}
    fa, fb = FixedPerf(cluster).packing_factors(jobs, cluster.nodes[0].gpu.name)
    assert fa < 1.0 and fb < 1.0  # interference: both slower than alone
    # packed at the interference factors until a ends, then b alone at full speed
    t_a = 10 / fa
    assert fin == {"a": pytest.approx(t_a), "b": pytest.approx(t_a + (30 - t_a * fb))}


def test_time_slicing_shares_turns_and_pays_switches(cluster):
    steps = [(0.0, lambda v: Decision(allocate={"a": Allocation.of([0], mode="sliced"),
                                                "b": Allocation.of([0], mode="sliced")}))]
    res = run(cluster, Scripted(steps), [job("a", iters=10), job("b", iters=30)],
              slice_quantum_s=10.0, slice_switch_s=1.0)
    fin = {r.job_id: r.finish for r in res.records}
    # each gets half the GPU less one switch per 10-s quantum: 0.45 it/s, then b alone
    assert fin == {"a": pytest.approx(10 / 0.45), "b": pytest.approx(10 / 0.45 + 20)}


def test_drop_and_unfinished_are_reported(cluster):
    steps = [(0.0, lambda v: Decision(drop={"a": "deadline cannot be met"}))]
    res = run(cluster, Scripted(steps), [job("a"), job("b")])
    by = {r.job_id: r for r in res.records}
    assert by["a"].status == "dropped" and by["a"].reason == "deadline cannot be met"
    assert by["b"].status == "unfinished" and "cannot be placed" in by["b"].reason
    assert res.summary["jobs"] == 2 and res.summary["finished"] == 0


def test_max_time_stops(cluster):
    pol = Scripted([(0.0, lambda v: Decision(allocate={"a": Allocation.of([0])}))])
    res = run(cluster, pol, [job("a", iters=1000)], max_time=100.0)
    r = res.records[0]
    assert r.status == "unfinished" and r.done_iterations == pytest.approx(100.0)


def test_duration_jobs_are_sized_by_reference_time(cluster):
    class Greedy(JobPolicy):
        name = "greedy"

        def schedule(self, view, now):
            d = Decision()
            fm = view.free.copy()
            for j in view.queued():
                g = pick_gpus(fm, j.spec.num_gpus)
                if g is not None:
                    fm.allocate(g)
                    d.allocate[j.job_id] = Allocation.of(g)
            return d

    spec = JobSpec("d", 0.0, "resnet50", 2, 32, duration_s=3600.0)
    res = run(cluster, Greedy(), [spec])
    assert res.records[0].total_iterations == 3600 and res.records[0].jct == pytest.approx(3600.0)


def test_duplicate_ids_rejected(cluster):
    with pytest.raises(InvariantError, match="duplicate job ids"):
        Simulator(cluster, Scripted([]), [job("a"), job("a")], perf=FixedPerf(cluster))


def test_debug_mode_catches_a_policy_writing_state(cluster):
    class Meddler(JobPolicy):
        name = "meddler"

        def schedule(self, view, now):
            view.free.allocate([0])  # wrong: planning must happen on view.free.copy()
            return Decision()

    with pytest.raises(InvariantError, match="changed engine state"):
        run(cluster, Meddler(), [job("a")])


def test_run_ends_at_the_last_finish_not_at_a_later_round(cluster):
    class Periodic(JobPolicy):
        name = "periodic"
        period = 1000.0

        def schedule(self, view, now):
            return Decision(allocate={j.job_id: Allocation.of([0]) for j in view.queued()})

    res = run(cluster, Periodic(), [job("a", iters=100)])
    assert res.records[0].finish == 100.0
    assert res.series.time[-1] == 100.0  # the round at t=1000 changes nothing and is not simulated
    assert res.summary["utilization"] == pytest.approx(1 / cluster.num_gpus)


def test_superseded_predictions_do_not_stretch_the_run(cluster):
    # a migrated job's first completion prediction (t=100) is stale; the job ends at t=60
    class Fast(FixedPerf):
        def price(self, job, gpus, plan=None):
            return IterCost(1.0, 1.0, 0.0) if gpus[0] == 0 else IterCost(0.2, 0.2, 0.0)

    steps = [(0.0, lambda v: Decision(allocate={"a": Allocation.of([0])})),
             (50.0, lambda v: Decision(allocate={"a": Allocation.of([3])}))]
    res = Simulator(cluster, Scripted(steps), [job("a", iters=100)], perf=Fast(cluster),
                    config=SimConfig(debug=True, restore_base_s=0.0, restore_s_per_gb=0.0)).run()
    assert res.records[0].finish == pytest.approx(60.0)
    assert res.series.time[-1] == pytest.approx(60.0)
    assert res.stats["events"] == 3  # arrival, wakeup, completion: the stale prediction is not an event


def test_an_allocation_the_model_cannot_run_is_an_error(cluster):
    class Impossible(FixedPerf):
        def price(self, job, gpus, plan=None):
            return IterCost(float("inf"), float("inf"), 0.0)

    pol = Scripted([(0.0, lambda v: Decision(allocate={"a": Allocation.of([0])}))])
    with pytest.raises(InvariantError, match="cannot run on GPUs"):
        Simulator(cluster, pol, [job("a")], perf=Impossible(cluster)).run()


def test_debug_mode_allows_reading_the_queue_after_a_preemption(cluster):
    # preemption appends the job at the queue's end; the view re-sorts it lazily, which is
    # not a state change a policy made
    seen = []

    def resume(v):
        seen.append([j.job_id for j in v.queued()])
        return Decision(allocate={"a": Allocation.of([0])})

    steps = [(0.0, lambda v: Decision(allocate={"a": Allocation.of([0])})),
             (10.0, lambda v: Decision(preempt=["a"])),
             (20.0, resume)]
    res = run(cluster, Scripted(steps), [job("a", iters=50), job("b", t=1.0, iters=10**6)])
    assert seen == [["a", "b"]]
    assert res.records[0].status == "finished"
