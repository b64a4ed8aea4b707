"""Sia's ``--option lp=priced``: the kept HiGHS model holding only the columns LP pricing asks for."""

from __future__ import annotations

import numpy as np
import pytest
from crius_helpers import cold_lp_value, small_trace

from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.policies.gavel import highs_lp
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator

pytestmark = pytest.mark.skipif(not highs_lp.binding_available(), reason="no HiGHS binding")


def _columns(rng, n_types):
    k = int(rng.integers(1, 8))
    return {"type": rng.integers(0, n_types, k), "count": rng.choice([1, 2, 4, 8, 16], k),
            "goodput": rng.uniform(1, 6, k)}


def test_priced_model_reaches_the_whole_optimum_as_jobs_come_and_go():
    """Every solve's value is the whole LP's (a cold solve with every column), its x is an
    assignment over every column, and no column left out of HiGHS's model prices above zero."""
    rng = np.random.default_rng(11)
    cap = np.array([16.0, 24.0, 8.0])
    lp = highs_lp.PricedAssignmentLP(cap)
    jobs: dict[int, dict] = {}
    next_id, smaller = 0, 0
    for step in range(60):
        for k in [k for k in jobs if rng.random() < 0.15]:
            del jobs[k]
        for _ in range(int(rng.integers(0, 4))):
            jobs[next_id] = _columns(rng, len(cap))
            next_id += 1
        lp.sync(sorted(jobs), lambda k: jobs[k])
        assert sorted(lp.rows) == sorted(jobs)
        for r, k in enumerate(lp.rows):  # every job's full columns are kept, in its order
            assert np.array_equal(lp.data["goodput"][lp.col_job == r], jobs[k]["goodput"])
        if not jobs:
            continue
        value = lp.data["goodput"] * rng.uniform(0.8, 1.0, len(lp.col_job))
        x, fun = lp.solve(value)
        n = len(lp.rows)
        cold = cold_lp_value(lp, value, cap)
        assert fun == pytest.approx(cold, rel=1e-9, abs=1e-9)
        assert float(value @ x) == pytest.approx(-cold, rel=1e-9, abs=1e-9)
        assert (np.bincount(lp.col_job, weights=x, minlength=n) <= 1 + 1e-9).all()
        assert (np.bincount(lp.data["type"], weights=x * lp.data["count"], minlength=len(cap)) <= cap + 1e-9).all()
        out = ~lp.in_model
        assert not x[out].any()
        smaller += int(len(lp.mcol) < len(lp.col_job))
    assert lp.hot_solves > 0 and smaller > 0  # the model did leave columns out


def test_sia_priced_finishes_every_job(testbed, perf):
    jobs, removed = fit_requests(small_trace(n=12, gap_s=60), testbed, shared_estimator(testbed))
    assert not removed
    p = make_policy("sia", lp="priced")
    res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
    assert res.summary["finished"] == len(jobs) and p.solves > 0
    assert p.describe()["lp"] == "priced"
    assert isinstance(p._hot, highs_lp.PricedAssignmentLP) and p._hot.hot_solves > 0
