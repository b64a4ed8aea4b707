"""Timeslice keeps its running, spread and queued jobs from call to call: the same run as looking
at every running and queued job again at every call (what it did before)."""

from __future__ import annotations

from dlsched.experiments import gandiva as exp
from dlsched.policies.gandiva.serving import ServingQueue
from dlsched.policies.gandiva.timeslice import TimeSlice
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import generate


def _run():
    c, _ = exp.cluster_jobs(60, 0.3)
    jobs = generate(200, 0.3 * 3600, cluster=c, seed=2, max_gpus=8, max_duration_s=3 * 3600)
    res = Simulator(c, make_policy("timeslice", quantum_s=300.0), jobs, config=SimConfig(debug=True)).run()
    assert res.summary["finished"] == len(jobs)
    return res


def test_kept_state_decides_as_a_fresh_look_at_every_call(monkeypatch):
    kept = _run()
    assert sum(r.restarts for r in kept.records) > 50  # rounds preempted (the walks over expired jobs)
    assert sum(r.migrations for r in kept.records) > 0  # spread jobs consolidated
    real = TimeSlice.schedule

    def forgetful(self, view, now):
        self._running = None  # as after a fault: every running job looked at again
        self._queued = ServingQueue()  # and the queue re-sorted from the view
        return real(self, view, now)

    monkeypatch.setattr(TimeSlice, "schedule", forgetful)
    fresh = _run()
    assert kept.records == fresh.records
    assert [(e.time, e.job_id, e.kind, e.gpus) for e in kept.events] == \
        [(e.time, e.job_id, e.kind, e.gpus) for e in fresh.events]
