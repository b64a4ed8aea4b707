"""The direct HiGHS call (``policies/highs_lp.py``) against ``scipy.optimize.linprog``, which it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from dlsched.policies import highs_lp
from dlsched.policies.gavel import solve_max_throughput


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


@pytest.mark.parametrize("seed", range(12))
def test_same_vertex_as_linprog(seed, monkeypatch):
    """Same solver, same options, same model: the same solution, bit for bit, ties included."""
    assert highs_lp.binding_available()
    rng = np.random.default_rng(seed)
    weights, sizes, cap = _gavel_lp(rng, int(rng.integers(3, 60)), int(rng.integers(1, 5)))
    direct = solve_max_throughput(weights, sizes, cap)
    monkeypatch.setattr(highs_lp, "_BINDING", None)  # as if scipy had no binding: linprog itself
    assert solve_max_throughput(weights, sizes, cap) == direct


def test_fallback_is_linprog(monkeypatch):
    monkeypatch.setattr(highs_lp, "_BINDING", None)
    assert not highs_lp.binding_available()
    # two jobs, one type of 4 GPUs: the 4-GPU job is worth less per GPU, the 2-GPU one runs fully
    x = solve_max_throughput([{0: 1.0}, {0: 1.0}], [2, 4], [4])
    assert x[0] == {0: 1.0} and x[1] == pytest.approx({0: 0.5})
