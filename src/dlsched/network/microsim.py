"""A short periodic micro-simulation of jobs that share links: their steady iteration times.

Each job repeats: compute for ``C`` seconds; its communication starts ``s``
seconds into the iteration (after that share of the compute, overlapping the
rest) and needs ``D`` seconds at its solo speed; the next iteration starts
when both the compute and the communication are done.  While several jobs
communicate they share the links (``maxmin_rates``: strict priority levels,
max-min inside a level), so a job's communication progresses at
``rate / solo rate`` of its solo speed.  Rates only change when a job starts
or ends communicating; between such events everything is linear, so the
simulation jumps from event to event (a fluid model: no packets).

All jobs start their first iteration together (the worst alignment); the
first iteration is a warm-up and the steady time is the mean over the rest.
Rates are cached by the set of jobs communicating, since periodic jobs
revisit the same sets.  The run stops once every job has finished
``MIN_ITERATIONS`` iterations, or after ``MAX_EVENTS`` events (a group whose
periods differ a hundredfold: the fast jobs have by then cycled many times
against the slow ones; a slow job that finished fewer iterations is timed
on those it finished).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from dlsched.network.maxmin import maxmin_rates

MIN_ITERATIONS = 2  # completed iterations per job: a warm-up from the aligned start, then one measured
MAX_EVENTS = 4_000
# Larger groups get ``all_communicating`` instead: the event-by-event simulation of a 50-job group
# costs ~70 ms in Python (hundreds of events, each re-solving max-min over the jobs communicating),
# and a saturated 1,280-GPU cluster forms such groups hundreds of times in a run (at 64 the two-week
# crius-sim FCFS run takes 120 s instead of 15 s: benchmarks/bench_network.py).
MAX_SIMULATED_JOBS = 32


@dataclass(frozen=True, slots=True)
class GroupResult:
    iteration_s: tuple[float, ...]  # steady seconds per iteration, per job
    slowed: tuple[bool, ...]  # whether contention ever slowed the job's communication
    events: int


def simulate_group(compute: Sequence[float], start: Sequence[float], comm: Sequence[float],
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
            x = maxmin_rates([job_links[j] for j in comp], capacity, [cap[j] for j in comp],
                             [level[j] for j in comp])
            got = cache[key] = [(j, r / cap[j]) for j, r in zip(comp, x)]
        for j, v in got:
            speed[j] = v


def all_communicating(compute: Sequence[float], start: Sequence[float], comm: Sequence[float],
                      job_links: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float],
                      cap: Sequence[float], level: Sequence[int]) -> GroupResult:
    """The bound used for groups above ``MAX_SIMULATED_JOBS``: every job communicates at once.

    One max-min solve with the whole group sending; each job's communication is stretched by
    its solo rate / shared rate: ``iteration = max(C, s + D / speed)``.  This is the aligned
    start of the micro-simulation held for the whole transfer, so it never under-states a
    slowdown; it over-states it where jobs' transfers would drift apart.
    """
    x = maxmin_rates(job_links, capacity, cap, level)
    speed = [x[j] / cap[j] if cap[j] > 0 else 1.0 for j in range(len(compute))]
    # a job starved by higher levels waits for their transfers, then sends at its solo rate
    served = max((comm[j] / v for j, v in enumerate(speed) if v > 0), default=0.0)
    times, slowed = [], []
    for j, v in enumerate(speed):
        slow = v < 1.0 - 1e-12
        end = start[j] + (comm[j] / v if v > 0 else served + comm[j])
        times.append(max(compute[j], end) if slow else compute[j] + 0.0)
        slowed.append(slow)
    return GroupResult(tuple(times), tuple(slowed), 1)
