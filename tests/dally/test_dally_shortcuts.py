"""Dally's in-call shortcuts (a key that found no placement is not asked again; a round's job whose
key already failed to preempt with as many victims is passed over) must decide exactly what asking
the placer for every job decides."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.perf.default import default_perf_model
from dlsched.policies.common.placing import PlaceOrPreempt
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import generate


def _run(name: str, shortcuts: bool, monkeypatch) -> tuple[list, int]:
    c = Cluster.load("dally-2racks")  # 2 racks x 8 machines x 8 GPUs
    # a queue several times the cluster: jobs wait, rounds preempt and move running jobs
    jobs = generate(300, 120.0, cluster=c, seed=3, max_gpus=16, max_duration_s=6 * 3600)
    policy = make_policy(name)
    policy.shortcuts = shortcuts
    asked = [0]
    real = PlaceOrPreempt.place

    def place(self, key, rank):
        asked[0] += 1
        return real(self, key, rank)

    monkeypatch.setattr(PlaceOrPreempt, "place", place)
    perf = default_perf_model(c, "placement", tier_profile="dally-table1")
    res = Simulator(c, policy, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    rows = sorted(res.records, key=lambda r: r.job_id)  # every field jobs.csv writes
    return [rows, policy.moves, policy.accepted, res.summary], asked[0]


@pytest.mark.parametrize("name", ["dally", "dally-manual", "dally-consolidated", "dally-nowait"])
def test_the_shortcuts_decide_what_asking_the_placer_every_time_decides(name, monkeypatch):
    fast, asked_fast = _run(name, True, monkeypatch)
    plain, asked_plain = _run(name, False, monkeypatch)
    assert fast == plain
    assert asked_fast < asked_plain  # the shortcuts were taken
