"""Sia's kept HiGHS model (``--option lp=hot``) against a fresh model per round (``lp=cold``)."""

from __future__ import annotations

import numpy as np
import pytest
from crius_helpers import cold_lp_value, small_trace

from dlsched.errors import InputError
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.policies.gavel import highs_lp
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator

pytestmark = pytest.mark.skipif(not highs_lp.binding_available(), reason="no HiGHS binding")


def _columns(rng, n_types):
    k = int(rng.integers(1, 6))
    return {"type": rng.integers(0, n_types, k), "count": rng.choice([1, 2, 4, 8], k),
            "goodput": rng.uniform(1, 4, k)}


def test_hot_model_reaches_the_cold_optimum_as_jobs_come_and_go():
    """Jobs join and leave a kept model between solves; every solve's optimum is a cold solve's."""
    rng = np.random.default_rng(7)
    cap = np.array([12.0, 20.0, 8.0])
    lp = highs_lp.HotAssignmentLP(cap)
    jobs: dict[int, dict] = {}
    next_id = 0
    for step in range(40):
        for k in [k for k in jobs if rng.random() < 0.2]:
            del jobs[k]  # leave
        for _ in range(int(rng.integers(0, 4))):
            jobs[next_id] = _columns(rng, len(cap))
            next_id += 1
        keys = sorted(jobs, key=lambda k: -k if step % 2 else k)  # order given does not matter
        lp.sync(keys, lambda k: jobs[k])
        assert sorted(lp.rows) == sorted(jobs)
        # the model's columns are each job's own, contiguous and in its order
        for r, k in enumerate(lp.rows):
            mine = lp.col_job == r
            assert np.array_equal(lp.data["type"][mine], jobs[k]["type"])
            assert np.array_equal(lp.data["goodput"][mine], jobs[k]["goodput"])
        if not jobs:
            continue
        value = lp.data["goodput"] * rng.uniform(0.9, 1.0, len(lp.col_job))  # costs change every round
        x, fun = lp.solve(value)
        n = len(lp.rows)
        cold = cold_lp_value(lp, value, cap)
        assert fun == pytest.approx(cold, rel=1e-9, abs=1e-9)
        assert (np.bincount(lp.col_job, weights=x, minlength=n) <= 1 + 1e-9).all()
        assert (np.bincount(lp.data["type"], weights=x * lp.data["count"], minlength=len(cap)) <= cap + 1e-9).all()
    assert lp.hot_solves > 0


def test_sia_hot_and_cold_both_finish_every_job(testbed, perf):
    jobs, removed = fit_requests(small_trace(n=12, gap_s=60), testbed, shared_estimator(testbed))
    assert not removed
    out = {}
    for lp in ("hot", "cold"):
        p = make_policy("sia", lp=lp)
        res = Simulator(testbed, p, jobs, perf=perf, config=SimConfig(seed=0, debug=lp == "hot")).run()
        assert res.summary["finished"] == len(jobs) and p.solves > 0
        assert p.describe()["lp"] == lp
        out[lp] = (p, res)
    assert out["hot"][0]._hot is not None and out["hot"][0]._hot.hot_solves > 0
    assert out["cold"][0]._hot is None  # the cold path builds no kept model


def test_sia_lp_option_is_checked():
    with pytest.raises(InputError, match="lp"):
        make_policy("sia", lp="warm")
