"""The max-min solve filled level by level, and resumed from the first level that changed, gives the bits
of a dense solve from scratch (a scan of every job and link per level, as the kernel did before)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dlsched.network.fluid_kernel import level_groups, solve_levels
from dlsched.network.maxmin import flat_links


def dense_reference(active, ptr, links, flows, capacity, cap, level):
    """The former kernel's solve, transcribed: every job and link scanned for every level."""
    J, L = len(cap), len(capacity)
    residual, load, rising, x = list(capacity), [0.0] * L, [False] * J, [0.0] * J
    for lv in sorted(set(level)):
        if not any(active[j] and level[j] == lv for j in range(J)):
            continue
        left = 0
        load = [0.0] * L
        for j in range(J):
            rising[j] = bool(active[j] and level[j] == lv)
            if rising[j]:
                left += 1
                for k in range(ptr[j], ptr[j + 1]):
                    load[links[k]] += flows[k]
        t = 0.0
        while left > 0:
            step = math.inf
            for j in range(J):
                if rising[j] and cap[j] - t < step:
                    step = cap[j] - t
            for l in range(L):
                if load[l] > 0.0 and residual[l] / load[l] < step:
                    step = residual[l] / load[l]
            step = max(step, 0.0)
            t += step
            for l in range(L):
                if load[l] > 0.0:
                    r = residual[l] - step * load[l]
                    residual[l] = 0.0 if r <= 1e-12 * max(capacity[l], 1.0) else r
            froze = 0
            for j in range(J):
                if rising[j] and (cap[j] - t <= 1e-12 * max(cap[j], 1.0)
                                  or any(residual[links[k]] == 0.0 for k in range(ptr[j], ptr[j + 1]))):
                    rising[j], x[j] = False, t
                    for k in range(ptr[j], ptr[j + 1]):
                        load[links[k]] -= flows[k]
                    froze += 1
            if froze == 0:
                for j in range(J):
                    if rising[j]:
                        rising[j], x[j] = False, t
                        for k in range(ptr[j], ptr[j + 1]):
                            load[links[k]] -= flows[k]
            left = 0 if froze == 0 else left - froze
    return x


@pytest.mark.parametrize("seed,levels", [(0, 1), (1, 3), (2, 40), (3, 40)])
def test_level_fill_resumed_equals_a_dense_solve_from_scratch(seed, levels):
    rng = np.random.default_rng(seed)
    J, L = 40, 30
    job_links = []
    for _ in range(J):
        # a few jobs cross most links, so both the dense and the per-level scans are taken
        on = rng.choice(L, size=int(rng.integers(1, 25 if rng.random() < 0.2 else 5)), replace=False)
        job_links.append([(int(l), float(rng.integers(1, 4))) for l in sorted(on)])
    capacity = rng.uniform(1.0, 10.0, L)
    cap = np.array([min(float(c), *(capacity[l] / n for l, n in jl)) for c, jl in
                    zip(rng.uniform(0.5, 6.0, J), job_links)])
    level = rng.integers(0, levels, J).astype(np.int64)
    ptr, links, flows = flat_links(job_links)
    lv_ptr, lv_jobs, lk_ptr, lk_links = level_groups(ptr, links, level, np.unique(level), L)
    group_of = np.empty(J, dtype=np.int64)
    for g in range(len(lv_ptr) - 1):
        group_of[lv_jobs[lv_ptr[g]:lv_ptr[g + 1]]] = g
    residual, load, x = np.empty(L), np.empty(L), np.zeros(J)
    rising = np.zeros(J, dtype=np.bool_)
    saved, done = np.empty(len(lk_links)), np.zeros(len(lv_ptr) - 1, dtype=np.bool_)
    active = rng.random(J) < 0.5
    first = 0
    for _ in range(300):  # jobs start and stop communicating, one to three at a time, as events do
        solve_levels(active, ptr, links, flows, capacity, cap, lv_ptr, lv_jobs, lk_ptr, lk_links, residual, load,
                     rising, x, first, saved, done)
        assert x.tolist() == dense_reference(active.tolist(), ptr, links, flows, capacity.tolist(), cap.tolist(),
                                             level.tolist())
        flip = rng.choice(J, size=int(rng.integers(1, 4)), replace=False)
        active[flip] = ~active[flip]
        first = int(group_of[flip].min())
