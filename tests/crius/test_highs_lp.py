"""The direct HiGHS call (``policies/gavel/highs_lp.py``) against ``scipy.optimize.linprog``, which it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.policies.gavel import highs_lp
from dlsched.policies.gavel.policy import solve_max_throughput


def _gavel_lp(rng, nj: int, nt: int):
    """Random Gavel LPs with many ties (weights on a coarse grid), where vertex choice matters."""
    weights = []
    for _ in range(nj):
        row = {t: float(rng.choice([0.0, 0.25, 0.5, 1.0])) for t in range(nt)}
        row[int(rng.integers(nt))] = 1.0
        weights.append(row)
    sizes = [int(rng.choice([1, 2, 4, 8])) for _ in range(nj)]
    cap = [int(rng.integers(4, 40)) for _ in range(nt)]
    return weights, sizes, cap


def _bindings():
    """Each HiGHS binding this environment has, as ``highs_lp._BINDING`` would hold it."""
    out = []
    for load in (highs_lp._highspy, highs_lp._scipy_copy):
        try:
            load()
        except ImportError:
            continue
        out.append(pytest.param(load, id=load.__name__))
    return out


@pytest.mark.parametrize("load", _bindings())
@pytest.mark.parametrize("seed", range(10))
def test_same_vertex_as_linprog(seed, load, monkeypatch):
    """Same solver, same options, same model: the same solution, bit for bit, ties included."""
    rng = np.random.default_rng(seed)
    weights, sizes, cap = _gavel_lp(rng, int(rng.integers(3, 60)), int(rng.integers(1, 5)))
    monkeypatch.setattr(highs_lp, "_BINDING", None)  # as if there were no binding: linprog itself
    reference = solve_max_throughput(weights, sizes, cap)
    monkeypatch.setattr(highs_lp, "_BINDING", False)
    monkeypatch.setattr(highs_lp, "_highspy", load)  # this binding first
    assert highs_lp.binding_available() and highs_lp._BINDING[0] is load()
    assert solve_max_throughput(weights, sizes, cap) == reference


def test_fallback_is_linprog(monkeypatch):
    monkeypatch.setattr(highs_lp, "_BINDING", None)
    assert not highs_lp.binding_available()
    # two jobs, one type of 4 GPUs: the 4-GPU job is worth less per GPU, the 2-GPU one runs fully
    x = solve_max_throughput([{0: 1.0}, {0: 1.0}], [2, 4], [4])
    assert x[0] == {0: 1.0} and x[1] == pytest.approx({0: 0.5})


@pytest.mark.parametrize("seed", range(6))
def test_warm_starts_reach_the_cold_optimum(seed):
    """A sequence of Gavel LPs as jobs arrive and leave: each warm-started solve is feasible and
    reaches the cold solve's objective (the vertex may differ where optima tie)."""
    from dlsched.policies.gavel.policy import solve_dense
    from dlsched.policies.gavel.highs_lp import WarmLP

    rng = np.random.default_rng(100 + seed)
    nt = int(rng.integers(2, 5))
    cap = [int(c) for c in rng.integers(8, 40, size=nt)]
    pool = {}  # job id -> (weight row, size)
    warm = WarmLP()
    next_id = 0
    for _ in range(25):
        for _ in range(int(rng.integers(0, 6))):  # arrivals
            row = rng.choice([0.0, 0.25, 0.5, 1.0], size=nt)
            row[int(rng.integers(nt))] = 1.0
            pool[f"j{next_id}"] = (row, int(rng.choice([1, 2, 4, 8])))
            next_id += 1
        for jid in [j for j in pool if rng.random() < 0.15]:  # departures
            del pool[jid]
        if not pool:
            continue
        ids = sorted(pool)
        w = np.array([pool[j][0] for j in ids])
        sizes = np.array([pool[j][1] for j in ids], dtype=float)
        xw = solve_dense(w, sizes, cap, warm, ids)
        xc = solve_dense(w, sizes, cap)
        assert (w * xw).sum() == pytest.approx((w * xc).sum(), rel=1e-9, abs=1e-9)
        assert (xw.sum(axis=1) <= 1 + 1e-9).all()
        assert ((sizes[:, None] * xw).sum(axis=0) <= np.asarray(cap) + 1e-9).all()
    assert warm.warm_starts > 0


@pytest.mark.parametrize("load", _bindings())
@pytest.mark.parametrize("seed", range(8))
def test_sia_lp_same_vertex_and_value_as_linprog_highs_ds(seed, load, monkeypatch):
    """Sia's relaxation (dual simplex, presolve off) through the binding: ``linprog``'s x and fun, bit for bit."""
    from scipy.optimize import linprog
    from scipy.sparse import csc_array

    rng = np.random.default_rng(100 + seed)
    nj, nt = int(rng.integers(3, 80)), int(rng.integers(1, 5))
    jobs_idx = np.repeat(np.arange(nj), nt * 3)
    types = np.tile(np.repeat(np.arange(nt), 3), nj)
    counts = np.tile([1, 2, 4], nj * nt)
    value = rng.choice([1.0, 1.5, 2.0, 2.5], size=len(jobs_idx)) * (1 + counts / 8)  # ties on purpose
    cap = rng.integers(2, 40, size=nt).astype(float)
    indptr, indices, data = highs_lp.assignment_columns(jobs_idx, nj + types, counts)
    b = np.concatenate([np.ones(nj), cap])
    a = csc_array((data, indices, indptr), shape=(len(b), len(value)))
    ref = linprog(-value, A_ub=a, b_ub=b, bounds=(0, 1), method="highs-ds", options={"presolve": False})
    monkeypatch.setattr(highs_lp, "_BINDING", False)
    monkeypatch.setattr(highs_lp, "_highspy", load)
    x, fun = highs_lp.solve_box_lp_value(value, indptr, indices, data, b, presolve=False, simplex=True)
    assert np.array_equal(x, ref.x) and fun == ref.fun
