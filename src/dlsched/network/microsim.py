"""A short periodic micro-simulation of jobs that share links: their steady iteration times.

Each job repeats: compute for ``C`` seconds; its communication starts ``s``
seconds into the iteration (after that share of the compute, overlapping the
rest) and needs ``D`` seconds at its solo speed; the next iteration starts
when both the compute and the communication are done.  While several jobs
communicate they share the links (``maxmin``: strict priority levels,
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

from dlsched.network.maxmin import flat_links, maxmin_rates

MIN_ITERATIONS = 2  # completed iterations per job: a warm-up from the aligned start, then one measured
MAX_EVENTS = 4_000
# Larger groups get ``all_communicating`` instead.  The compiled simulation's cost grows about
# with the cube of the group (events x progressive-filling rounds x jobs and links per round):
# ~1 CPU ms for the benchmark's 50-job group, ~6 ms at 100 jobs, ~35 ms at 200, ~0.3 s at 400
# (benchmarks/bench_network.py --group).  256 keeps the worst solve near 0.1 s, so a
# saturated cluster chained through shared NICs stays cheap, and such groups are congested
# throughout, where the bound's over-statement matters least.
MAX_SIMULATED_JOBS = 256


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
    return simulate_flat(compute, start, comm, *flat_links(job_links), capacity, cap, level)


def simulate_flat(compute: Sequence[float], start: Sequence[float], comm: Sequence[float], ptr: np.ndarray,
                  links: np.ndarray, flows: np.ndarray, capacity: Sequence[float], cap: Sequence[float],
                  level: Sequence[int]) -> GroupResult:
    """``simulate_group`` with the job-link incidence already flat (``maxmin.flat_links``'s arrays)."""
    from dlsched.network.fluid_kernel import run_group  # imports numba: only when a group is simulated

    steady, slowed, events = run_group(
        np.asarray(compute, dtype=np.float64), np.asarray(start, dtype=np.float64),
        np.asarray(comm, dtype=np.float64), ptr, links, flows, np.asarray(capacity, dtype=np.float64),
        np.asarray(cap, dtype=np.float64), np.asarray(level, dtype=np.int64), MIN_ITERATIONS, MAX_EVENTS)
    return GroupResult(tuple(steady.tolist()), tuple(slowed.tolist()), int(events))


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
