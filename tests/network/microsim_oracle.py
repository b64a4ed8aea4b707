"""The previous micro-simulation and max-min solver, kept only as test oracles for ``microsim`` and ``maxmin``.

It scans every job at every event and re-solves max-min for every connected set of
communicating jobs around a change; the package's version keeps an event queue and
skips solves that provably change nothing, and must give the same iteration times.
"""

from __future__ import annotations

import math
from typing import Sequence

from dlsched.network.microsim import MAX_EVENTS, MIN_ITERATIONS, GroupResult


def oracle_simulate_group(compute: Sequence[float], start: Sequence[float], comm: Sequence[float],
                   job_links: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float],
                   cap: Sequence[float], level: Sequence[int]) -> GroupResult:
    """Steady iteration times of jobs (``compute``, comm ``start``, solo ``comm`` seconds) on shared links.

    ``job_links[j]`` lists (shared link index, flows of job j on it); ``capacity`` those links'
    bytes/s; ``cap[j]`` the job's solo rate per flow (its narrowest link); ``level`` its priority.
    """
    J = len(compute)
    inf = math.inf
    rate_cache: dict[frozenset, list[tuple[int, float]]] = {}
    link_jobs: dict[int, list[int]] = {}
    for j, links in enumerate(job_links):
        for l, _ in links:
            link_jobs.setdefault(l, []).append(j)
    phase = [0] * J  # 0 computing before comm, 1 communicating, 2 comm done, waiting for compute
    it_start = [0.0] * J
    remaining = list(comm)
    done = [0] * J
    first_end = [0.0] * J
    last_end = [0.0] * J
    slowed = [False] * J
    speed = [0.0] * J
    t = 0.0
    events = 0
    active: set[int] = set()
    changed: set[int] = set()
    finished_all = 0
    while events < MAX_EVENTS:
        if changed:
            _update_speeds(speed, changed, active, job_links, link_jobs, capacity, cap, level, rate_cache)
            changed.clear()
        t_next = inf
        for j in range(J):
            p = phase[j]
            if p == 0:
                e = it_start[j] + start[j]
            elif p == 1:
                e = t + remaining[j] / speed[j] if speed[j] > 0 else inf
            else:
                e = it_start[j] + compute[j]
            if e < t_next:
                t_next = e
        if t_next == inf:
            break
        dt = t_next - t
        for j in active:
            remaining[j] -= speed[j] * dt
            if speed[j] < 1.0 - 1e-12:
                slowed[j] = True
        t = t_next
        events += 1
        tol = 1e-12 * max(1.0, t)
        for j in range(J):
            if phase[j] == 0 and it_start[j] + start[j] <= t + tol:
                phase[j] = 1
                active.add(j)
                changed.add(j)
            if phase[j] == 1 and remaining[j] <= 1e-9 * comm[j] + 1e-15:
                remaining[j] = 0.0
                phase[j] = 2
                active.discard(j)
                changed.add(j)
            if phase[j] == 2 and it_start[j] + compute[j] <= t + tol:
                done[j] += 1
                if done[j] == 1:
                    first_end[j] = t
                elif done[j] == MIN_ITERATIONS:
                    finished_all += 1
                last_end[j] = t
                it_start[j] = t
                phase[j] = 0
                remaining[j] = comm[j]
        if finished_all == J:
            break
    # a job that never finished an iteration (starved) gets the elapsed time: a lower bound
    steady = tuple((last_end[j] - first_end[j]) / (done[j] - 1) if done[j] > 1
                   else (last_end[j] if done[j] == 1 else t) for j in range(J))
    return GroupResult(steady, tuple(slowed), events)


def _update_speeds(speed: list[float], changed: set[int], active: set[int], job_links, link_jobs, capacity,
                   cap, level, cache) -> None:
    """Re-solve the speeds (rate / solo rate) of the active jobs near those that started or stopped.

    Max-min sharing decomposes over connected sets of communicating jobs, so only the sets
    holding a changed job or a neighbour of one are solved again, each cached by its members
    (periodic jobs meet the same sets again and again); a job alone runs at its solo speed.
    """
    seeds = set()
    for j in changed:
        if j in active:
            seeds.add(j)
        else:
            speed[j] = 0.0
        for l, _ in job_links[j]:
            for o in link_jobs[l]:
                if o in active:
                    seeds.add(o)
    while seeds:
        first = seeds.pop()
        comp = [first]
        seen = {first}
        stack = [first]
        while stack:
            j = stack.pop()
            for l, _ in job_links[j]:
                for o in link_jobs[l]:
                    if o in active and o not in seen:
                        seen.add(o)
                        comp.append(o)
                        stack.append(o)
        seeds -= seen
        if len(comp) == 1:
            speed[first] = 1.0
            continue
        key = frozenset(comp)
        got = cache.get(key)
        if got is None:
            comp.sort()
            x = oracle_maxmin_rates([job_links[j] for j in comp], capacity, [cap[j] for j in comp],
                             [level[j] for j in comp])
            got = cache[key] = [(j, r / cap[j]) for j, r in zip(comp, x)]
        for j, v in got:
            speed[j] = v


_EPS = 1e-12


def oracle_maxmin_rates(job_links: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float],
                 cap: Sequence[float], level: Sequence[int] | None = None) -> list[float]:
    """Per-job rates (bytes/s per flow).

    ``job_links[j]`` lists (link index, flows of job j on it); ``capacity[l]`` is link ``l``'s
    bytes/s; ``cap[j]`` job ``j``'s own limit; ``level[j]`` its priority level (0 is served first).
    """
    n = len(job_links)
    x = [0.0] * n
    residual = list(capacity)
    levels = [0] * n if level is None else level
    inf = float("inf")
    for lv in sorted(set(levels)):
        # inside a level every unfrozen job has the same rate t; load counts the flows still rising
        members = [j for j in range(n) if levels[j] == lv]
        active = set(members)
        by_cap = sorted(members, key=lambda j: cap[j])
        next_cap = 0
        load: dict[int, float] = {}
        on_link: dict[int, list[int]] = {}
        for j in members:
            for l, k in job_links[j]:
                load[l] = load.get(l, 0.0) + k
                on_link.setdefault(l, []).append(j)
        t = 0.0
        while active:
            while next_cap < len(by_cap) and by_cap[next_cap] not in active:
                next_cap += 1
            step = cap[by_cap[next_cap]] - t if next_cap < len(by_cap) else inf
            for l, k in load.items():
                if k > 0:
                    share = residual[l] / k
                    if share < step:
                        step = share
            step = max(step, 0.0)
            t += step
            frozen = set()
            for l, k in load.items():
                if k > 0:
                    residual[l] -= step * k
                    if residual[l] <= _EPS * max(capacity[l], 1.0):
                        residual[l] = 0.0
                        frozen.update(j for j in on_link[l] if j in active)
            while next_cap < len(by_cap) and cap[by_cap[next_cap]] - t <= _EPS * max(cap[by_cap[next_cap]], 1.0):
                if by_cap[next_cap] in active:
                    frozen.add(by_cap[next_cap])
                next_cap += 1
            if not frozen:  # numerical guard: the step froze nothing
                frozen = set(active)
            for j in frozen:
                x[j] = t
                active.discard(j)
                for l, k in job_links[j]:
                    load[l] -= k
            for l in [l for l, k in load.items() if k <= 0]:
                del load[l]
    return x
