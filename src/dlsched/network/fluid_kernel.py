"""The compiled event loop of ``microsim.simulate_group`` (numba), over flat arrays.

Same model and rules as ``microsim``'s docstring: each job computes, starts communicating
``start`` seconds into its iteration, needs ``comm`` seconds at its solo rate, and ends its
iteration when both are done; rates are the max-min solution (strict priority levels,
progressive filling inside a level) of the jobs communicating.  Written in Python the
per-event work cost ~45 ms per 50-job group (issue 17's target is 10 ms); compiled, the
whole simulation is about 1 ms, so each event simply re-solves max-min for all
communicating jobs from scratch instead of maintaining rates incrementally.

Determinism: no fastmath, no parallelism; the same arrays give the same bits.  Importing this
module imports numba (~0.15 CPU s, then 0.4 s to load the cached code or 5 s to compile it), so ``microsim`` imports it only when a group is simulated.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit



def _compiled(fn):
    """``fn`` compiled, its machine code cached on disk where numba finds a writable place.

    With none (no writable ``__pycache__`` beside this file, nor a user cache directory) numba
    refuses ``cache=True`` at decoration; the kernel then compiles afresh in each process.
    """
    try:
        return njit(cache=True)(fn)
    except RuntimeError:
        return njit(fn)


# relative tolerances, as the Python solver they replace and the test oracle use them
_FULL = 1e-12  # a link's residual below this share of its capacity counts as full
_SLOW = 1e-12  # a speed below 1 - this counts as slowed
_LEFT = 1e-9  # communication left below this share of the job's total counts as done


@_compiled
def maxmin_solve(active, jl_ptr, jl_link, jl_n, capacity, cap, level, levels, residual, load, rising, x):
    """Max-min rates of the jobs with ``active[j]`` into ``x`` (others get 0).

    Strict priority between ``levels`` (ascending: 0 is served first), progressive filling
    inside a level: every rising job's rate rises together until a link fills or a job reaches
    its cap; those jobs freeze.  ``residual``, ``load`` (per link) and ``rising`` (per job) are
    scratch arrays, passed in so an event allocates nothing.
    """
    J = cap.shape[0]
    L = capacity.shape[0]
    for l in range(L):
        residual[l] = capacity[l]
    for j in range(J):
        x[j] = 0.0
    for lv in levels:
        # a level with no job communicating leaves everything as it is (the next level resets the
        # loads itself): skipped, so a group with a level per job does not pay for every link per level
        busy = False
        for j in range(J):
            if active[j] and level[j] == lv:
                busy = True
                break
        if not busy:
            continue
        left = 0
        for l in range(L):
            load[l] = 0.0
        for j in range(J):
            rising[j] = active[j] and level[j] == lv
            if rising[j]:
                left += 1
                for k in range(jl_ptr[j], jl_ptr[j + 1]):
                    load[jl_link[k]] += jl_n[k]
        t = 0.0
        while left > 0:
            step = math.inf
            for j in range(J):
                if rising[j] and cap[j] - t < step:
                    step = cap[j] - t
            for l in range(L):
                if load[l] > 0.0 and residual[l] / load[l] < step:
                    step = residual[l] / load[l]
            if step < 0.0:
                step = 0.0
            t += step
            for l in range(L):
                if load[l] > 0.0:
                    r = residual[l] - step * load[l]
                    if r <= _FULL * max(capacity[l], 1.0):
                        r = 0.0
                    residual[l] = r
            froze = 0
            for j in range(J):
                if not rising[j]:
                    continue
                stop = cap[j] - t <= _FULL * max(cap[j], 1.0)
                if not stop:
                    for k in range(jl_ptr[j], jl_ptr[j + 1]):
                        if residual[jl_link[k]] == 0.0:
                            stop = True
                            break
                if stop:
                    _freeze(j, t, jl_ptr, jl_link, jl_n, load, rising, x)
                    froze += 1
            if froze == 0:  # numerical guard: the step froze nothing
                for j in range(J):
                    if rising[j]:
                        _freeze(j, t, jl_ptr, jl_link, jl_n, load, rising, x)
            left = 0 if froze == 0 else left - froze
    return x


@_compiled
def _freeze(j, t, jl_ptr, jl_link, jl_n, load, rising, x):
    rising[j] = False
    x[j] = t
    for k in range(jl_ptr[j], jl_ptr[j + 1]):
        load[jl_link[k]] -= jl_n[k]


@_compiled
def run_group(compute, start, comm, jl_ptr, jl_link, jl_n, capacity, cap, level, min_iterations, max_events):
    """(steady seconds per iteration, slowed flags, events) of the group: ``simulate_group``'s loop.

    Each job has at most one pending event (``due``: its communication starts, ends, or its
    iteration ends); events closer than a relative 1e-12 count as one, handled in job order.
    A communicating job's remaining solo seconds are brought up to date only when its speed
    (rate / solo rate) changes.
    """
    J = compute.shape[0]
    L = capacity.shape[0]
    levels = np.unique(level)
    residual = np.empty(L)
    load = np.empty(L)
    rising = np.zeros(J, dtype=np.bool_)
    x = np.zeros(J)
    active = np.zeros(J, dtype=np.bool_)
    phase = np.zeros(J, dtype=np.int64)  # 0 computing before comm, 1 communicating, 2 comm done, waiting
    it_start = np.zeros(J)
    remaining = comm.copy()  # solo seconds of communication left, as of ``since``
    since = np.zeros(J)
    speed = np.zeros(J)
    due = start.copy()
    slowed = np.zeros(J, dtype=np.bool_)
    done = np.zeros(J, dtype=np.int64)
    first_end = np.zeros(J)
    last_end = np.zeros(J)
    now = np.empty(J, dtype=np.int64)  # the jobs due at this event
    finished_all = 0
    events = 0
    t = 0.0
    while events < max_events:
        t_next = math.inf
        for j in range(J):
            if due[j] < t_next:
                t_next = due[j]
        if t_next == math.inf:
            break
        t = t_next
        events += 1
        tol = 1e-12 * max(1.0, t)
        n_now = 0
        for j in range(J):
            if due[j] <= t + tol:
                now[n_now] = j
                n_now += 1
                due[j] = math.inf
        changed = False
        for i in range(n_now):
            j = now[i]
            if phase[j] == 0:
                phase[j] = 1
                remaining[j] = comm[j]
                since[j] = t
                if comm[j] > 0.0:
                    active[j] = True
                    changed = True
                    continue
            if phase[j] == 1:
                if active[j]:
                    active[j] = False
                    speed[j] = 0.0
                    changed = True
                remaining[j] = 0.0
                phase[j] = 2
                if it_start[j] + compute[j] > t + tol:
                    due[j] = it_start[j] + compute[j]
                    continue
            done[j] += 1
            if done[j] == 1:
                first_end[j] = t
            elif done[j] == min_iterations:
                finished_all += 1
            last_end[j] = t
            it_start[j] = t
            phase[j] = 0
            due[j] = t + start[j]
        if changed:
            maxmin_solve(active, jl_ptr, jl_link, jl_n, capacity, cap, level, levels, residual, load, rising, x)
            for j in range(J):
                if not active[j]:
                    continue
                v = x[j] / cap[j]
                if v < 1.0 - _SLOW:
                    slowed[j] = True
                if v == speed[j]:
                    continue
                if remaining[j] > 0.0:
                    remaining[j] -= speed[j] * (t - since[j])
                since[j] = t
                speed[j] = v
                left = remaining[j]
                if left <= _LEFT * comm[j] + 1e-15:
                    left = 0.0
                due[j] = t + left / v if v > 0.0 else math.inf
        if finished_all == J:
            break
    steady = np.empty(J)
    for j in range(J):
        if done[j] > 1:
            steady[j] = (last_end[j] - first_end[j]) / (done[j] - 1)
        elif done[j] == 1:
            steady[j] = last_end[j]
        else:  # never finished an iteration (starved): the elapsed time, a lower bound
            steady[j] = t
    return steady, slowed, events
