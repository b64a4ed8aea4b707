"""The compiled event loop of ``microsim.simulate_group`` (numba), over flat arrays.

Same model and rules as ``microsim``'s docstring: each job computes, starts communicating
``start`` seconds into its iteration, needs ``comm`` seconds at its solo rate, and ends its
iteration when both are done; rates are the max-min solution (strict priority levels,
progressive filling inside a level) of the jobs communicating.  Written in Python the
per-event work cost ~45 ms per 50-job group (issue 17's target is 10 ms); compiled, the
whole simulation is about 1 ms, so each event re-solves max-min for the communicating
jobs instead of maintaining rates incrementally: level by level over each level's own jobs
and links, from the first level whose jobs changed (``solve_levels``).

Determinism: no fastmath, no parallelism; the same arrays give the same bits.  Importing this
module imports numba (~0.15 CPU s, then 0.4 s to load the cached code or 5 s to compile it), so ``microsim`` imports it only when a group is simulated.
"""

from __future__ import annotations

import math

import numpy as np

from dlsched.numba_cache import compiled as _compiled


def _inlined(fn):
    """``_compiled``, inlined into its callers: a call per level per event otherwise pays for its
    array arguments (reference counts, unpacking)."""
    return _compiled(fn, inline="always")


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
    scratch arrays, passed in so an event allocates nothing.  (``level_groups`` + ``solve_levels``,
    which ``run_group`` calls at every event with the groups built once.)
    """
    lv_ptr, lv_jobs, lk_ptr, lk_links = level_groups(jl_ptr, jl_link, level, levels, capacity.shape[0])
    saved = np.empty(lk_links.shape[0])
    done = np.zeros(levels.shape[0], dtype=np.bool_)
    return solve_levels(active, jl_ptr, jl_link, jl_n, capacity, cap, lv_ptr, lv_jobs, lk_ptr, lk_links,
                        residual, load, rising, x, 0, saved, done)


@_compiled
def level_groups(jl_ptr, jl_link, level, levels, L):
    """Jobs by level (``lv_jobs[lv_ptr[g]:lv_ptr[g + 1]]``: the jobs of ``levels[g]``, ascending) and the
    links any of them crosses (``lk_links[lk_ptr[g]:lk_ptr[g + 1]]``, ascending)."""
    J = level.shape[0]
    G = levels.shape[0]
    lv_ptr = np.zeros(G + 1, dtype=np.int64)
    lv_jobs = np.empty(J, dtype=np.int64)
    lk_ptr = np.zeros(G + 1, dtype=np.int64)
    seen = np.zeros(L, dtype=np.bool_)
    n = 0
    for g in range(G):
        for j in range(J):
            if level[j] == levels[g]:
                lv_jobs[n] = j
                n += 1
        lv_ptr[g + 1] = n
    lk_links = np.empty(jl_link.shape[0], dtype=np.int64)  # a level's links are at most its jobs' entries
    m = 0
    for g in range(G):
        for k in range(lv_ptr[g], lv_ptr[g + 1]):
            j = lv_jobs[k]
            for q in range(jl_ptr[j], jl_ptr[j + 1]):
                seen[jl_link[q]] = True
        for l in range(L):
            if seen[l]:
                seen[l] = False
                lk_links[m] = l
                m += 1
        lk_ptr[g + 1] = m
    lk_links = lk_links[:m].copy()
    return lv_ptr, lv_jobs, lk_ptr, lk_links


@_compiled
def solve_levels(active, jl_ptr, jl_link, jl_n, capacity, cap, lv_ptr, lv_jobs, lk_ptr, lk_links, residual, load,
                 rising, x, g0, saved, done):
    """``maxmin_solve`` over the level groups of ``level_groups``: the same floats.

    Inside a level only its own jobs can rise and only links they cross can carry load, so a level
    crossing few of the group's links visits only its jobs (ascending, as a scan over every job meets
    them: loads are added and removed in the same order) and those links; a level crossing most of
    them keeps the dense scans over every job and link, which vectorise (an indirect scan there was
    slower).  With a level per job (Varys: one per coflow) every solve was a dense scan per level.

    Resuming (``g0 > 0``): levels are served in order, so what levels ``0 .. g0-1`` leave (their rates,
    the residual capacity) depends only on their own jobs.  Where no job of theirs started or stopped
    since the last solve, that is exactly what the last solve left; the residual is brought back to it
    from ``saved`` (each level's links' residual before that level was filled; ``done``: levels filled
    last time), undone from the last level filled down to ``g0``, and only levels ``g0 ..`` are filled
    again.  ``g0 = 0`` is the whole solve.
    """
    J = cap.shape[0]
    L = capacity.shape[0]
    G = lv_ptr.shape[0] - 1
    if g0 == 0:
        for l in range(L):
            residual[l] = capacity[l]
        for j in range(J):
            x[j] = 0.0
        for g in range(G):
            done[g] = False
    else:
        for g in range(G - 1, g0 - 1, -1):
            if done[g]:
                for q in range(lk_ptr[g], lk_ptr[g + 1]):
                    residual[lk_links[q]] = saved[q]
                done[g] = False
            for k in range(lv_ptr[g], lv_ptr[g + 1]):
                x[lv_jobs[k]] = 0.0
    for g in range(g0, G):
        a = lv_ptr[g]
        b = lv_ptr[g + 1]
        # a level with no job communicating leaves everything as it is: skipped
        left = 0
        for k in range(a, b):
            if active[lv_jobs[k]]:
                left += 1
        if left == 0:
            continue
        if g > 0:  # a resume starts at level 1 or below, so level 0's residual is never restored
            for q in range(lk_ptr[g], lk_ptr[g + 1]):  # only these links' residual can change below
                saved[q] = residual[lk_links[q]]
            done[g] = True
        if SPARSE * ((b - a) + 2 * (lk_ptr[g + 1] - lk_ptr[g])) < J + 2 * L:
            _fill_sparse(left, a, b, lk_ptr[g], lk_ptr[g + 1], active, jl_ptr, jl_link, jl_n, capacity, cap,
                         lv_jobs, lk_links, residual, load, rising, x)
        else:
            _fill_dense(left, a, b, active, jl_ptr, jl_link, jl_n, capacity, cap, lv_jobs, residual, load, rising,
                        x)
    return x


# a level whose jobs and links (links weigh double: two scans a round) are under 1/SPARSE of the group's
# is filled over them only; the indirect scans cost about twice the dense ones per element
SPARSE = 2


@_inlined
def _fill_dense(left, a, b, active, jl_ptr, jl_link, jl_n, capacity, cap, lv_jobs, residual, load, rising, x):
    """Progressive filling of one level (its jobs ``lv_jobs[a:b]``), scanning every job and link."""
    J = cap.shape[0]
    L = capacity.shape[0]
    for l in range(L):
        load[l] = 0.0
    for k in range(a, b):
        j = lv_jobs[k]
        rising[j] = active[j]
        if rising[j]:
            for q in range(jl_ptr[j], jl_ptr[j + 1]):
                load[jl_link[q]] += jl_n[q]
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
                for q in range(jl_ptr[j], jl_ptr[j + 1]):
                    if residual[jl_link[q]] == 0.0:
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


@_inlined
def _fill_sparse(left, a, b, la, lb, active, jl_ptr, jl_link, jl_n, capacity, cap, lv_jobs, lk_links, residual,
                 load, rising, x):
    """``_fill_dense`` over the level's jobs and links only (``lk_links[la:lb]``): loads on other links,
    left by an earlier level, are never read here."""
    for q in range(la, lb):
        load[lk_links[q]] = 0.0
    for k in range(a, b):
        j = lv_jobs[k]
        rising[j] = active[j]
        if rising[j]:
            for q in range(jl_ptr[j], jl_ptr[j + 1]):
                load[jl_link[q]] += jl_n[q]
    t = 0.0
    while left > 0:
        step = math.inf
        for k in range(a, b):
            j = lv_jobs[k]
            if rising[j] and cap[j] - t < step:
                step = cap[j] - t
        for q in range(la, lb):
            l = lk_links[q]
            if load[l] > 0.0 and residual[l] / load[l] < step:
                step = residual[l] / load[l]
        if step < 0.0:
            step = 0.0
        t += step
        for q in range(la, lb):
            l = lk_links[q]
            if load[l] > 0.0:
                r = residual[l] - step * load[l]
                if r <= _FULL * max(capacity[l], 1.0):
                    r = 0.0
                residual[l] = r
        froze = 0
        for k in range(a, b):
            j = lv_jobs[k]
            if not rising[j]:
                continue
            stop = cap[j] - t <= _FULL * max(cap[j], 1.0)
            if not stop:
                for q in range(jl_ptr[j], jl_ptr[j + 1]):
                    if residual[jl_link[q]] == 0.0:
                        stop = True
                        break
            if stop:
                _freeze(j, t, jl_ptr, jl_link, jl_n, load, rising, x)
                froze += 1
        if froze == 0:  # numerical guard: the step froze nothing
            for k in range(a, b):
                j = lv_jobs[k]
                if rising[j]:
                    _freeze(j, t, jl_ptr, jl_link, jl_n, load, rising, x)
        left = 0 if froze == 0 else left - froze


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
    lv_ptr, lv_jobs, lk_ptr, lk_links = level_groups(jl_ptr, jl_link, level, np.unique(level), L)
    G = lv_ptr.shape[0] - 1
    group_of = np.empty(J, dtype=np.int64)  # a job's level, as an index into the level groups
    for g in range(G):
        for k in range(lv_ptr[g], lv_ptr[g + 1]):
            group_of[lv_jobs[k]] = g
    saved = np.empty(lk_links.shape[0])
    filled = np.zeros(G, dtype=np.bool_)
    first = 0  # the highest level whose jobs started or stopped communicating since the last solve
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
                    if group_of[j] < first:
                        first = group_of[j]
                    continue
            if phase[j] == 1:
                if active[j]:
                    active[j] = False
                    speed[j] = 0.0
                    changed = True
                    if group_of[j] < first:
                        first = group_of[j]
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
            solve_levels(active, jl_ptr, jl_link, jl_n, capacity, cap, lv_ptr, lv_jobs, lk_ptr, lk_links, residual,
                         load, rising, x, first, saved, filled)
            first = G
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
