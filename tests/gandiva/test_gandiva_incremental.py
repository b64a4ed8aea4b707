"""Gandiva carries its plan from call to call, settles round-robin accounting lazily and profiles
only the windows that are due or changed: each must give what rebuilding and recounting every
running job at every call gives."""

from __future__ import annotations

import numpy as np

from dlsched.experiments import gandiva as exp
from dlsched.policies.gandiva import windows as gandiva_windows
from dlsched.policies.gandiva.introspect import observe
from dlsched.policies.gandiva.plan import Plan
from dlsched.policies.gandiva.policy import Gandiva
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.synthetic import generate


def _busy():
    """A loaded two-type cluster with every mechanism at work: slicing, packing, migration, grow-shrink."""
    c, _ = exp.cluster_jobs(60, 0.3)
    jobs = generate(200, 0.3 * 3600, cluster=c, seed=2, max_gpus=4, max_duration_s=3 * 3600)
    return c, [j.with_(elastic=True) if i % 3 == 0 else j for i, j in enumerate(jobs)]


def _run(policy=None):
    c, jobs = _busy()
    policy = policy or make_policy("gandiva")
    res = Simulator(c, policy, jobs, config=SimConfig(debug=True, **exp.COSTS)).run()
    assert res.summary["finished"] == len(jobs)
    return res, policy


def _same_state(kept: Plan, fresh: Plan) -> None:
    assert kept.gpus == fresh.gpus
    assert {g: sorted(h) for g, h in kept.holders.items()} == {g: sorted(h) for g, h in fresh.holders.items()}
    assert kept.packed == fresh.packed
    assert kept.repacked == fresh.repacked
    assert kept.shared == fresh.shared and kept.elastic == fresh.elastic and kept.multi == fresh.multi
    assert {n: j for n, j in kept._on_node.items() if j} == {n: j for n, j in fresh._on_node.items() if j}
    assert {n: d for n, d in kept._demands.items() if d} == {n: d for n, d in fresh._demands.items() if d}
    assert {n: h for n, h in kept._held.items() if h} == {n: h for n, h in fresh._held.items() if h}
    assert {a: s for a, s in kept._by_affinity.items() if s} == {a: s for a, s in fresh._by_affinity.items() if s}
    assert np.array_equal(kept.scratch.occupancy, fresh.scratch.occupancy)
    assert np.array_equal(kept.scratch.node_free, fresh.scratch.node_free)
    assert kept.scratch.total_free == fresh.scratch.total_free
    for jid in fresh.gpus:
        assert kept.sharing(jid) == fresh.sharing(jid)
    # the order a fresh build meets the GPUs in (packing trials of one mix are taken in it)
    order = kept.holder_order()
    assert sorted(kept.holders, key=order.get) == list(fresh.holders)


def test_the_carried_plan_and_the_lazy_accounting_equal_a_rebuild_at_every_call(monkeypatch):
    calls = {"kept": 0, "rebuilt": 0}
    eager: dict[str, float] = {}  # served, added at every call for every running job (the rule itself)
    last = [None]
    real_plan_for, real_account = Gandiva._plan_for, Gandiva._account

    def plan_for(self, view):
        kept = self._plan
        plan = real_plan_for(self, view)
        calls["kept" if plan is kept else "rebuilt"] += 1
        _same_state(plan, Plan(view))
        return plan

    def account(self, plan, now):
        if last[0] is not None and now > last[0]:
            for jid in plan.gpus:
                if jid in eager:
                    eager[jid] += (now - last[0]) / plan.sharing(jid)
        real_account(self, plan, now)
        last[0] = now
        for jid in plan.gpus:
            eager.setdefault(jid, plan.jobs[jid].policy_data["served"])
            assert self._served.value(plan, jid) == eager[jid]  # bit for bit

    monkeypatch.setattr(Gandiva, "_plan_for", plan_for)
    monkeypatch.setattr(Gandiva, "_account", account)
    res, policy = _run()
    assert calls["rebuilt"] == 1 and calls["kept"] > 100
    assert policy.counts["slice"] and policy.counts["rotate"] and policy.counts["migrate"]
    assert policy.counts["pack"] and policy.counts["resize"]


def test_rebuilding_and_observing_every_job_decides_the_same(monkeypatch):
    """The shortcuts off (a fresh plan every call, every window looked at every round): same run."""
    fast, fast_policy = _run()

    def every_window(self, view, plan, now):
        observe(view, plan, now, self.window_s)

    # the path a fault takes (the engine no longer holds what the plan says), at every call
    monkeypatch.setattr(Plan, "matches", lambda self, view, running: False)
    monkeypatch.setattr(gandiva_windows.Windows, "round", every_window)
    slow, slow_policy = _run()
    assert fast.records == slow.records
    assert fast_policy.counts == slow_policy.counts
    assert [(e.time, e.job_id, e.kind, e.gpus) for e in fast.events] == \
        [(e.time, e.job_id, e.kind, e.gpus) for e in slow.events]
