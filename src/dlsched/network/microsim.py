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
The run stops once every job has finished
``MIN_ITERATIONS`` iterations, or after ``MAX_EVENTS`` events (a group whose
periods differ a hundredfold: the fast jobs have by then cycled many times
against the slow ones; a slow job that finished fewer iterations is timed
on those it finished).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from dlsched.network.maxmin import maxmin_rates

MIN_ITERATIONS = 2  # completed iterations per job: a warm-up from the aligned start, then one measured
MAX_EVENTS = 4_000
# Larger groups get ``all_communicating`` instead.  The simulation's cost grows about with the
# square of the group (events x the jobs each re-solve reaches): ~50 CPU ms for the benchmark's
# 50-job group, ~0.2 s at 100 jobs (benchmarks/bench_network.py).  The two-week 13,000-job
# crius-sim FCFS run forms groups of up to ~100 jobs and simulates them all at this limit within
# its 2-minute target; far larger groups (a saturated cluster chained through shared NICs) would
# cost seconds per solve, and for them the bound's over-statement matters least (they are
# congested throughout).
MAX_SIMULATED_JOBS = 128


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
    The event loop is compiled (``fluid_kernel``); this converts the inputs to flat arrays once.
    """
    from dlsched.network.fluid_kernel import run_group  # imports numba: only when a group is simulated

    job_links = binding_links(job_links, capacity)
    ptr = np.zeros(len(job_links) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(links) for links in job_links])
    flat = [pair for links in job_links for pair in links]
    steady, slowed, events = run_group(
        np.asarray(compute, dtype=np.float64), np.asarray(start, dtype=np.float64),
        np.asarray(comm, dtype=np.float64), ptr, np.array([l for l, _ in flat], dtype=np.int64),
        np.array([n for _, n in flat], dtype=np.float64), np.asarray(capacity, dtype=np.float64),
        np.asarray(cap, dtype=np.float64), np.asarray(level, dtype=np.int64), MIN_ITERATIONS, MAX_EVENTS)
    return GroupResult(tuple(steady.tolist()), tuple(slowed.tolist()), int(events))


def binding_links(job_links: Sequence[Sequence[tuple[int, float]]],
                  capacity: Sequence[float]) -> list[list[tuple[int, float]]]:
    """``job_links`` without links another link dominates: same answer, fewer constraints.

    Link ``l`` is dominated by ``m`` when every job on ``l`` is also on ``m`` with at least as
    large a share of ``m`` (flows / capacity): any rates that fit ``m`` fit ``l``, so ``l`` never
    changes the feasible set, and max-min sharing (strict priority included) depends on nothing
    else.  A ring's hops into and out of a host, or a NIC and the ToR port behind it, are such
    pairs; dropping them halves the links a typical group's solves walk.
    """
    rows: dict[int, dict[int, float]] = {}
    for j, links in enumerate(job_links):
        for l, n in links:
            rows.setdefault(l, {})[j] = n / capacity[l]
    drop = set()
    for l, row in rows.items():
        # a dominating link holds every job of l, so it is among the links of l's job with fewest links
        pivot = min(row, key=lambda j: len(job_links[j]))
        for m, _ in job_links[pivot]:
            if m == l or m in drop:
                continue
            other = rows[m]
            if len(other) < len(row):
                continue
            if all(j in other and other[j] >= w for j, w in row.items()):
                # identical rows dominate each other: keep the lower index
                if len(other) == len(row) and all(other[j] == w for j, w in row.items()) and m > l:
                    continue
                drop.add(l)
                break
    if not drop:
        return [list(links) for links in job_links]
    return [[(l, n) for l, n in links if l not in drop] for links in job_links]


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
