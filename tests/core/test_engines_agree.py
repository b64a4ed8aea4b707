"""One sequence of decisions through the core as the simulator uses it and as the live service does.

The live side runs the service's own decision path (``_maybe_schedule`` ->
``_apply`` -> segments in the SQLite store) with a fake agent layer: no Ray,
no workers, so no segment ever launches.  Both engines must produce the same
actions, the same event log (less "ready", which live learns from a worker's
first iteration) and the same records, except progress: the simulator
computes it, live measures it (here: none).
"""

from __future__ import annotations

import dataclasses

import pytest

from dlsched.cluster import Cluster
from dlsched.live.calibrated import MeasuredPerfModel
from dlsched.live.jobfile import LiveJob
from dlsched.live.results import job_records
from dlsched.live.service import LiveService, ServiceConfig
from dlsched.live.store import Store
from dlsched.policies.base import Allocation, Decision, JobPolicy, JobState
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec

END = 50.0


def steps():
    a = Allocation.of
    return {
        0.0: Decision(allocate={"a": a([0, 1]), "b": a([2])}),
        10.0: Decision(allocate={"a": a([0, 1], plan="tp2"), "b": a([3])}),  # replan, migrate
        20.0: Decision(preempt=["b"], allocate={"c": a([2, 3])}),
        30.0: Decision(allocate={"b": a([4, 5]), "a": a([0])}),  # resume, resize
        40.0: Decision(drop={"c": "deadline cannot be met"}),
    }


class Script(JobPolicy):
    """Replays ``steps()``; charges its own re-planning time, as Crius does."""

    name = "script"

    def reset(self):
        self.plan = steps()

    def schedule(self, view, now):
        d = self.plan.pop(now, Decision())
        d.wakeup = min((t for t in self.plan if t > now), default=None)
        return d

    def overhead(self, cluster, job, old, new, kind):
        return 7.0 if kind == "replan" else None


def specs():
    return [JobSpec(j, 0.0, "resnet50", n, 32, total_iterations=10**9) for j, n in (("a", 2), ("b", 1), ("c", 2))]


def recording(core, into: list):
    apply = core.apply

    def wrapped(d, now):
        actions = apply(d, now)
        into.extend(actions)
        return actions

    core.apply = wrapped


def simulate(cluster):
    sim = Simulator(cluster, Script(), specs(), perf=MeasuredPerfModel(cluster),
                    config=SimConfig(max_time=END, debug=True))
    sim.start()
    actions: list = []
    recording(sim.core, actions)
    while sim.step():
        pass
    return actions, sim.result(), sim.core.events


class FakeSlot:
    """The agent layer: nothing launches in this test, so nothing may be asked of a slot."""

    def __getattr__(self, name):
        raise AssertionError(f"the test's decisions should not reach a worker ({name})")


def fake_service(cluster, tmp_path, policy):
    svc = LiveService.__new__(LiveService)  # no Ray: the state and decision path only
    svc.store, svc.policy, svc.cfg = Store(tmp_path / "state"), policy, ServiceConfig()
    svc._init_state(cluster)
    svc.slots = {g: FakeSlot() for g in range(cluster.num_gpus)}
    return svc


def serve(cluster, tmp_path):
    policy = Script()
    policy.reset()
    svc = fake_service(cluster, tmp_path, policy)
    actions: list = []
    recording(svc.core, actions)
    jobs = [LiveJob(s, "/nonexistent/train.py") for s in specs()]
    svc.store.submit(jobs)
    for lj in jobs:  # what _ingest does, at simulated rather than wall-clock times
        svc.store.update_job(lj.spec.job_id, status="pending", arrival=0.0, queued_since=0.0)
        svc.live[lj.spec.job_id] = lj
        svc.core.submit(JobState(lj.spec, lj.spec.total_iterations, queued_since=0.0), 0.0)
    for t in sorted(steps()):
        svc._maybe_schedule(t)
    assert not svc.phys  # nothing launched: the fake agent layer was never used
    svc.core.close(END, "the run ended")
    return actions, svc.core.records, svc.core.events, job_records(svc.store, now=END)


def _comparable(records):
    return [dataclasses.replace(r, done_iterations=0.0, comm_time=0.0, reason="" if r.status != "dropped"
                                else r.reason) for r in records]


@pytest.fixture
def cluster():
    return Cluster.load("crius-testbed")


def test_simulator_and_live_get_the_same_actions_and_records(cluster, tmp_path):
    sim_actions, res, sim_events, = simulate(cluster)
    live_actions, live_records, live_events, store_records = serve(cluster, tmp_path)
    kinds = [a.kind for a in sim_actions]
    assert kinds == ["start", "start", "replan", "migrate", "suspend", "start", "resume", "resize", "drop"]
    replan = sim_actions[2]
    assert replan.cost_s == 7.0 and replan.by_policy  # the policy's re-planning cost, charged live too
    assert live_actions == sim_actions
    assert [e for e in sim_events if e.kind != "ready"] == [e for e in live_events if e.kind != "ready"]
    assert _comparable(res.records) == _comparable(live_records) == _comparable(store_records)
    by = {r.job_id: r for r in res.records}
    assert (by["a"].migrations, by["a"].resizes, by["b"].migrations, by["b"].restarts) == (0, 1, 1, 1)
    assert by["c"].status == "dropped" and by["c"].gpu_seconds == pytest.approx(2 * 20.0)
    assert res.records[0].done_iterations > 0  # the simulator's progress is computed, live's measured


def test_live_applies_shared_allocations_through_the_core(cluster, tmp_path):
    """Live carries out packed and time-sliced allocations (docs/live-runtime.md, "Sharing GPUs"):
    the core places them as in the simulator, and each becomes a segment of that mode, waiting to
    launch (nothing reaches a worker here: the fake agent layer would fail)."""
    svc = fake_service(cluster, tmp_path, Script())
    b = JobSpec("b", 0.0, "resnet50", 1, 32, total_iterations=10**9)
    d = JobSpec("d", 0.0, "resnet50", 1, 32, total_iterations=10**9)
    for spec in (b, d):
        svc.store.submit([LiveJob(spec, "/nonexistent/train.py")])
        svc.store.update_job(spec.job_id, status="pending", arrival=0.0, queued_since=0.0)
        svc.core.submit(JobState(spec, 10, queued_since=0.0), 0.0)
    svc._apply(Decision(allocate={j: Allocation.of([0], mode="packed") for j in ("b", "d")}), 1.0)
    assert svc.free.total_free == cluster.num_gpus - 1 and not svc.core.queue
    assert {j: (s.gpus, s.mode, s.state) for j, s in svc.segs.items()} == \
        {"b": ((0,), "packed", "waiting"), "d": ((0,), "packed", "waiting")}
    rows = {r["job_id"]: r for r in svc.store.jobs()}
    assert rows["b"]["mode"] == rows["d"]["mode"] == "packed"  # a restarted service adopts them packed
    # unpacking flips the waiting segments to time-sliced; they stay placed
    svc._apply(Decision(allocate={j: Allocation.of([0], mode="sliced") for j in ("b", "d")}), 2.0)
    assert {s.mode for s in svc.segs.values()} == {"sliced"}
    assert [e["job_id"] for e in svc.store.events("slice-in")] == ["b", "d"]  # the core names it so
    assert not svc.phys
    # results written mid-run split the shared GPU between its holders, as the core does
    for jid in ("b", "d"):
        svc.store.update_job(jid, status="running", held_since=2.0)
    held = {r.job_id: r.gpu_seconds for r in job_records(svc.store, now=12.0)}
    assert held == pytest.approx({"b": 5.0, "d": 5.0})
