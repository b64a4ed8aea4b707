"""Gavel's LP by cycle cancelling (``policies/gavel/flow.py``) against HiGHS: the same optimum's value
(its solution may be another of several optima), feasible, integral in GPUs, deterministic."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.errors import InputError
from dlsched.policies.gavel import policy as gavel_mod
from dlsched.policies.gavel.policy import solve_dense
from dlsched.policies.gavel.flow import _cycles, max_throughput_flow, solve_from
from dlsched.policies.registry import make_policy


def _random_lp(rng, nj: int, nt: int, coarse: bool):
    """Weights on a coarse grid (many ties, where optima are not unique) or continuous."""
    if coarse:
        w = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(nj, nt))
    else:
        w = np.where(rng.random((nj, nt)) < 0.2, 0.0, rng.random((nj, nt)))
    w[np.arange(nj), rng.integers(nt, size=nj)] = 1.0  # normalised: every job has a best type at 1
    sizes = rng.choice([1, 2, 4, 8, 16], size=nj).astype(float)
    cap = [int(c) for c in rng.integers(0, 3 * nj, size=nt)]
    return w, sizes, cap


def _check(w, sizes, cap, x):
    """x is feasible, whole GPUs per (job, type), and its objective is HiGHS's optimum."""
    assert (x >= 0).all() and (x.sum(axis=1) <= 1 + 1e-12).all()
    g = x * sizes[:, None]
    assert np.array_equal(g, np.rint(g))
    assert (g.sum(axis=0) <= np.asarray(cap) + 1e-9).all()
    assert not x[w <= 0].any()
    best = (w * solve_dense(w, sizes, cap)).sum()
    assert (w * x).sum() == pytest.approx(best, rel=1e-9, abs=1e-12)


def test_cycles_of_the_contracted_graph():
    # simple cycles of the complete digraph on 5 nodes (O and 4 types): 10 + 20 + 30 + 24
    assert _cycles(4).shape == (84, 5)
    assert _cycles(1).tolist() == [[1, 2]]  # O -> type -> O


@pytest.mark.parametrize("seed", range(40))
def test_cold_solves_reach_highs_optimum(seed):
    rng = np.random.default_rng(seed)
    w, sizes, cap = _random_lp(rng, int(rng.integers(1, 70)), int(rng.integers(1, 5)), coarse=seed % 2 == 0)
    g, _ = max_throughput_flow(w, sizes, cap)
    _check(w, sizes, cap, g / sizes[:, None])


@pytest.mark.parametrize("seed", range(8))
def test_warm_sequences_reach_highs_optimum(seed):
    """Jobs arrive and leave; each solve starts from the last shares of the jobs still there."""
    rng = np.random.default_rng(500 + seed)
    nt = int(rng.integers(2, 5))
    cap = [int(c) for c in rng.integers(8, 60, size=nt)]
    pool: dict[str, tuple] = {}
    last: dict[str, np.ndarray] = {}
    steps = 0
    for k in range(30):
        for i in range(int(rng.integers(0, 6))):
            wj, sj, _ = _random_lp(rng, 1, nt, coarse=True)
            pool[f"j{k}-{i}"] = (wj[0], sj[0])
        for jid in [j for j in pool if rng.random() < 0.15]:
            del pool[jid]
        ids = sorted(pool)
        if not ids:
            continue
        w = np.array([pool[j][0] for j in ids])
        sizes = np.array([pool[j][1] for j in ids])
        start = np.array([last.get(j, np.zeros(nt)) for j in ids])
        x, n = solve_from(w, sizes, cap, start)
        steps += n
        _check(w, sizes, cap, x)
        again, _ = solve_from(w, sizes, cap, x)  # from an optimum nothing moves
        assert np.array_equal(again, x)
        last = dict(zip(ids, x))
    assert steps > 0


def test_a_start_that_does_not_fit_is_dropped():
    w = np.array([[1.0, 0.5], [0.5, 1.0]])
    sizes = np.array([4.0, 4.0])
    x, _ = solve_from(w, sizes, [4, 4], np.array([[1.0, 0.0], [1.0, 0.0]]))  # 8 GPUs on a 4-GPU type
    assert x.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_deterministic_and_ties_go_to_the_earliest_job():
    w = np.ones((3, 1))
    sizes = np.array([2.0, 2.0, 2.0])
    g, _ = max_throughput_flow(w, sizes, [4])
    assert g[:, 0].tolist() == [2, 2, 0]  # three equal jobs, room for two: the first two
    rng = np.random.default_rng(7)
    w, sizes, cap = _random_lp(rng, 60, 4, coarse=True)
    assert np.array_equal(max_throughput_flow(w, sizes, cap)[0], max_throughput_flow(w, sizes, cap)[0])


def test_lp_option_is_checked():
    assert make_policy("gavel").lp == "flow"  # the default since 2026-11-24; highs is the reference option
    with pytest.raises(InputError, match="lp: must be one of flow, highs"):
        make_policy("gavel", lp="simplex")
    with pytest.raises(InputError, match="warm_start: applies to lp=highs only; add --option lp=highs"):
        make_policy("gavel", warm_start=True)  # warm_start alone: the default lp is flow
    with pytest.raises(InputError, match="warm_start: applies to lp=highs only"):
        make_policy("gavel", lp="flow", warm_start=True)
    assert make_policy("gavel", lp="highs", warm_start=True).warm_start


@pytest.mark.shared
def test_every_lp_of_a_run_on_gavels_trace_reaches_highs_optimum(shared_dir, tmp_path, monkeypatch):
    """Real instances: each LP a ``gavel`` run solves on a slice of Gavel's trace (36 GPUs, so
    capacity binds), checked against HiGHS as it is solved."""
    from dlsched.perf.default import default_perf_model
    from dlsched.sim import SimConfig, Simulator
    from test_gavel_speed import _gavel_slice

    cluster, jobs = _gavel_slice(shared_dir, tmp_path)
    seen = []

    def checked(w, sizes, cap, last_x):
        x, n = solve_from(w, sizes, cap, last_x)
        _check(w, sizes, cap, x)
        seen.append(n)
        return x, n

    monkeypatch.setattr(gavel_mod, "solve_from", checked)
    p = make_policy("gavel", round_s=1800.0, lp="flow")
    res = Simulator(cluster, p, jobs, perf=default_perf_model(cluster), config=SimConfig(seed=0)).run()
    assert {r.status for r in res.records} == {"finished"} and len(res.records) == len(jobs)
    assert len(seen) == p.timings()["lp_solves"] > 10 and sum(seen) == p.timings()["lp_cycles_cancelled"] > 0
