"""Link bandwidth shared by strict priority between levels and max-min fairness within a level.

Every job sends its flows at one rate ``x_j`` (a ring all-reduce moves at the
pace of its slowest hop, so a job gains nothing from one flow outrunning the
others).  Link ``e`` carries ``n[e, j]`` flows of job ``j``:
``sum_j n[e, j] x_j <= c_e``.  Each job is also capped by ``cap_j``, its rate
on its own narrowest link.  Levels are served in order (0 first, the highest
priority, as a strict-priority switch queue drains); inside a level,
progressive filling raises every unfrozen job's rate together until a link
saturates or a job reaches its cap, freezes those jobs, and goes on
(Bertsekas and Gallager, Data Networks, section 6.5.2).  A lower level gets
only what the levels above left.

Plain Python over sparse dicts: the groups are small (tens of jobs, each on a few shared
links) and this runs at every event of a micro-simulation, where numpy's per-call overhead on
tiny arrays costs more than the work (and a heap of fill levels costs more than the scan).
"""

from __future__ import annotations

from typing import Sequence

_EPS = 1e-12  # relative residual below which a link counts as full


def maxmin_rates(job_links: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float],
                 cap: Sequence[float], level: Sequence[int] | None = None) -> list[float]:
    """Per-job rates (bytes/s per flow).

    ``job_links[j]`` lists (link index, flows of job j on it); ``capacity[l]`` is link ``l``'s
    bytes/s; ``cap[j]`` job ``j``'s own limit; ``level[j]`` its priority level (0 is served first).
    """
    n = len(job_links)
    x = [0.0] * n
    residual = {l: float(capacity[l]) for links in job_links for l, _ in links}
    full = {l: _EPS * max(c, 1.0) for l, c in residual.items()}
    levels = [0] * n if level is None else level
    for lv in sorted(set(levels)):
        # inside a level every rising job has the same rate t; load counts the flows still rising
        members = [j for j in range(n) if levels[j] == lv]
        rising = set(members)
        by_cap = sorted(members, key=lambda j: cap[j])
        next_cap = 0
        load: dict[int, float] = {}
        on_link: dict[int, list[int]] = {}
        for j in members:
            for l, k in job_links[j]:
                load[l] = load.get(l, 0.0) + k
                on_link.setdefault(l, []).append(j)
        t = 0.0
        while rising:
            while by_cap[next_cap] not in rising:
                next_cap += 1
            c = cap[by_cap[next_cap]]
            step = c - t
            for l, k in load.items():
                share = residual[l] / k
                if share < step:
                    step = share
            if step < 0.0:
                step = 0.0
            t += step
            frozen = set()
            for l, k in load.items():
                r = residual[l] - step * k
                if r <= full[l]:
                    r = 0.0
                    frozen.update(on_link[l])
                residual[l] = r
            if c - t <= _EPS * max(c, 1.0):
                frozen.add(by_cap[next_cap])
            frozen &= rising
            if not frozen:  # numerical guard: the step froze nothing
                frozen = set(rising)
            for j in frozen:
                x[j] = t
                rising.discard(j)
                for l, k in job_links[j]:
                    left = load[l] - k
                    if left > 0:
                        load[l] = left
                    else:
                        del load[l]
    return x
