"""The Gavel the Crius paper compared against (the authors' arena ``baselines/gavel_sched.py``):
admission by a one-type-per-job max-throughput ILP, no time-sharing, at most 3 type changes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from crius_helpers import small_trace

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.policies.gavel.policy import solve_one_type_each
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator


def test_one_type_each_ilp():
    w = [{0: 1.0, 1: 0.6}, {0: 0.5, 1: 1.0}, {0: 1.0, 1: 0.9}]
    # capacity forces job 2 to type 1 since job 0 holds type 0's 16 GPUs
    sol = solve_one_type_each(w, [16, 8, 8], [16, 16], [0, 1, None])
    assert sol == [0, 1, 1]
    # infeasible: nothing fits a third 16-GPU job
    assert solve_one_type_each(w, [16, 16, 16], [16, 16], [0, 1, None]) is None
    # at most `max_changes` admitted jobs may change type
    w2 = [{0: 1.0, 1: 1.0}] * 3 + [{0: 1.0}]
    assert solve_one_type_each(w2, [4, 4, 4, 12], [12, 12], [0, 0, 0, None], max_changes=2) is None
    assert solve_one_type_each(w2, [4, 4, 4, 12], [12, 12], [0, 0, 0, None], max_changes=3) == [1, 1, 1, 0]


def test_gavel_admit_never_time_shares(testbed, perf):
    jobs, removed = fit_requests(small_trace(n=40, gap_s=30), testbed, shared_estimator(testbed))
    assert not removed
    p = make_policy("gavel-admit")
    inner, preempted = p.schedule, []

    def spy(view, now):
        d = inner(view, now)
        preempted.extend(d.preempt)
        for jid, a in d.allocate.items():  # always the requested count (Gavel does not scale)
            assert len(a.gpus) == min(view.jobs[jid].spec.num_gpus, 16)
        return d

    p.schedule = spy
    res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    assert res.summary["finished"] == len(jobs)
    assert not preempted  # admitted jobs run to completion
    assert all(r.restarts == 0 and r.resizes == 0 for r in res.records)


def test_crius_experiment_uses_the_papers_gavel():
    # the paper's "66.4% lower than Gavel" is against the authors' admission-based Gavel;
    # the reproduction must compare with it (round-based time-sharing Gavel stays as an extra row)
    path = Path(__file__).resolve().parents[2] / "experiments" / "crius" / "run.py"
    spec = importlib.util.spec_from_file_location("crius_run", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert "gavel-admit" in mod.BASELINES
