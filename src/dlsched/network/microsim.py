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

import heapq
import math
from dataclasses import dataclass
from typing import Sequence

from dlsched.network.maxmin import maxmin_rates

MIN_ITERATIONS = 2  # completed iterations per job: a warm-up from the aligned start, then one measured
MAX_EVENTS = 4_000
_SLACK = 1e-9  # relative room below which a link counts as full (solves are exact; this only skips them)
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
    """
    return _GroupSim(compute, start, comm, job_links, capacity, cap, level).run()


class _GroupSim:
    """The event loop of ``simulate_group``.

    Each job has one pending event (its communication starts, its communication ends, or its
    iteration ends) in a heap, so an event costs the jobs it touches, not the whole group.  A
    communicating job's remaining bytes are brought up to date only when its speed changes.
    Rates are kept equal to the max-min solution of the jobs communicating: a start or stop
    that provably moves nobody else's rate skips the solve (``_fits_alone``, ``_saturates``),
    any other re-solves only the jobs it can reach (``_resolve_above``).  In a congested group
    nearly every event is of the second kind, and those re-solves are most of the cost.
    """

    def __init__(self, compute, start, comm, job_links, capacity, cap, level):
        self.compute, self.start, self.comm = compute, start, comm
        job_links = binding_links(job_links, capacity)
        self.job_links, self.capacity, self.cap, self.level = job_links, capacity, cap, level
        J = len(compute)
        self.members: list[list[tuple[int, float]]] = [[] for _ in capacity]  # per link: (job, its flows)
        for j, links in enumerate(job_links):
            for l, n in links:
                self.members[l].append((j, n))
        self.neighbours = [sorted({o for l, _ in links for o, _ in self.members[l]} - {j})
                           for j, links in enumerate(job_links)]
        # a link counts as full from this much use: a job crossing it may be held by it
        self.full = [c * (1.0 - _SLACK) for c in capacity]
        self.usage = [0.0] * len(capacity)  # bytes/s the communicating jobs put on each link
        self.rate = [0.0] * J  # bytes/s per flow
        self.speed = [0.0] * J  # rate / solo rate
        self.active: set[int] = set()
        self.phase = [0] * J  # 0 computing before comm, 1 communicating, 2 comm done, waiting for compute
        self.it_start = [0.0] * J
        self.remaining = list(comm)  # solo seconds of communication left, as of ``since``
        self.since = [0.0] * J
        self.due = [start[j] for j in range(J)]
        self.version = [0] * J
        self.heap = [(self.due[j], j, 0) for j in range(J)]
        heapq.heapify(self.heap)
        self.slowed = [False] * J

    def run(self) -> GroupResult:
        J = len(self.compute)
        heap, version, phase = self.heap, self.version, self.phase
        compute, start, comm, it_start = self.compute, self.start, self.comm, self.it_start
        done = [0] * J
        first_end = [0.0] * J
        last_end = [0.0] * J
        finished_all = 0
        events = 0
        t = 0.0
        while events < MAX_EVENTS:
            while heap and heap[0][2] != version[heap[0][1]]:
                heapq.heappop(heap)
            if not heap:
                break
            t = heap[0][0]
            events += 1
            tol = 1e-12 * max(1.0, t)
            due = []
            while heap and heap[0][0] <= t + tol:
                _, j, v = heapq.heappop(heap)
                if v == version[j]:
                    due.append(j)
            started: list[int] = []
            stopped: list[int] = []
            for j in sorted(due):
                if phase[j] == 0:
                    phase[j] = 1
                    self.remaining[j] = comm[j]
                    self.since[j] = t
                    if comm[j] > 0.0:
                        started.append(j)
                        continue
                if phase[j] == 1:
                    if j in self.active:
                        stopped.append(j)
                    self.remaining[j] = 0.0
                    phase[j] = 2
                    if it_start[j] + compute[j] > t + tol:
                        self._schedule(j, it_start[j] + compute[j])
                        continue
                done[j] += 1
                if done[j] == 1:
                    first_end[j] = t
                elif done[j] == MIN_ITERATIONS:
                    finished_all += 1
                last_end[j] = t
                it_start[j] = t
                phase[j] = 0
                self._schedule(j, t + start[j])
            if started or stopped:
                self._rerate(t, started, stopped)
            if finished_all == J:
                break
        # a job that never finished an iteration (starved) gets the elapsed time: a lower bound
        steady = tuple((last_end[j] - first_end[j]) / (done[j] - 1) if done[j] > 1
                       else (last_end[j] if done[j] == 1 else t) for j in range(J))
        return GroupResult(steady, tuple(self.slowed), events)

    def _schedule(self, j: int, when: float) -> None:
        self.version[j] += 1
        self.due[j] = when
        if when < math.inf:
            heapq.heappush(self.heap, (when, j, self.version[j]))

    # ------------------------------------------------------------------ rates
    #
    # Rates are kept equal to the max-min solution (strict priority levels, progressive filling
    # inside a level) of the jobs communicating, and are updated one start or stop at a time.
    # Progressive filling freezes jobs in order of (level, rate).  A change only alters the run
    # from the point the changed job first matters: a leaving job from its own (level, rate), a
    # joining one from the fill level at which it would first fill a link or reach its cap.  Jobs
    # frozen before that point keep their rates; the others connected to the change through
    # jobs like them are re-solved on the capacity the frozen ones leave.  The result is the
    # same solution as a solve from scratch, for a fraction of the work.

    def _rerate(self, t: float, started: list[int], stopped: list[int]) -> None:
        for j in stopped:
            self._leave(t, j)
        for j in started:
            self._join(t, j)

    def _leave(self, t: float, j: int) -> None:
        self.active.discard(j)
        x = self.rate[j]
        full = self._saturates(j)
        self._set_rate(t, j, 0.0)
        if not full:
            return
        floor = (self.level[j], x * (1.0 - _SLACK))
        level, rate, active = self.level, self.rate, self.active
        seeds = {o for o in self.neighbours[j] if o in active and (level[o], rate[o]) >= floor}
        if seeds:
            self._resolve_above(t, seeds, floor)

    def _join(self, t: float, j: int) -> None:
        self.active.add(j)
        if self._fits_alone(j):
            self._set_rate(t, j, self.cap[j])
            return
        self._resolve_above(t, {j}, (self.level[j], self._first_hold(j) * (1.0 - _SLACK)))

    def _saturates(self, j: int) -> bool:
        """Whether a link of job ``j`` is full: then its leaving may raise others' rates.

        A job whose links all have room is at its cap and bottlenecks nobody (each other job's
        bottleneck link is full), so its leaving changes no other rate.
        """
        usage, full = self.usage, self.full
        return any(usage[l] >= full[l] for l, _ in self.job_links[j])

    def _fits_alone(self, j: int) -> bool:
        """Whether job ``j`` at its cap fits in every link's room left by the others.

        Then it takes its cap and fills no link, so every other job keeps its bottleneck (a full
        link that ``j`` does not cross) and its rate: the max-min solution with ``j`` added.
        """
        usage, full, c = self.usage, self.full, self.cap[j]
        return all(usage[l] + n * c < full[l] for l, n in self.job_links[j])

    def _first_hold(self, j: int) -> float:
        """The fill level at which joining job ``j`` first fills one of its links or reaches its cap.

        On link ``l`` at fill level ``t`` of j's priority level, the others use what the levels
        above hold plus ``n min(x, t)`` for each job of j's level; j adds ``n_j t``.
        """
        lj, level, rate, active = self.level[j], self.level, self.rate, self.active
        best = self.cap[j]
        for l, nj in self.job_links[j]:
            room = self.capacity[l]
            same = []
            for o, n in self.members[l]:
                if o == j or o not in active:
                    continue
                if level[o] < lj:
                    room -= n * rate[o]
                elif level[o] == lj:
                    same.append((rate[o], n))
            same.sort()
            slope = nj + sum(n for _, n in same)
            for x, n in same:  # below x every job of the level on the link is still rising
                if room <= slope * x:
                    break
                room -= n * x
                slope -= n
            hold = room / slope
            if hold < best:
                best = hold
        return max(best, 0.0)

    def _resolve_above(self, t: float, seeds: set[int], floor: tuple[int, float]) -> None:
        """Re-solve the jobs at or above ``floor`` (level, rate) connected to ``seeds`` through such jobs."""
        active, level, rate, job_links, neighbours = self.active, self.level, self.rate, self.job_links, self.neighbours
        lf, xf = floor
        seen = set(seeds)
        stack = list(seeds)
        while stack:
            for o in neighbours[stack.pop()]:
                if o not in seen and o in active and (level[o] > lf or (level[o] == lf and rate[o] >= xf)):
                    seen.add(o)
                    stack.append(o)
        comp = sorted(seen)
        links = {l for j in comp for l, _ in job_links[j]}
        room = list(self.capacity)
        members = self.members
        for l in links:  # what the jobs kept as they are leave on each link (summed afresh: no drift)
            r = room[l]
            for o, n in members[l]:
                if o in active and o not in seen:
                    r -= n * rate[o]
            room[l] = r
        if len(comp) == 1:
            j = comp[0]
            x = [min(self.cap[j], min(room[l] / n for l, n in job_links[j]))] if job_links[j] else [self.cap[j]]
            x = [max(x[0], 0.0)]
        else:
            x = maxmin_rates([job_links[j] for j in comp], room, [self.cap[j] for j in comp],
                             [level[j] for j in comp])
        usage = self.usage
        for l in links:
            usage[l] = self.capacity[l] - room[l]
        for j, r in zip(comp, x):
            rate[j] = r
            for l, n in job_links[j]:
                usage[l] += n * r
            v = r / self.cap[j]
            if v != self.speed[j]:  # a job that just started has speed 0 until here
                self._set_speed(t, j, v)
            elif v < 1.0 - 1e-12:
                self.slowed[j] = True

    def _set_rate(self, t: float, j: int, rate: float) -> None:
        old = self.rate[j]
        if rate == old and self.phase[j] != 1:
            return
        for l, n in self.job_links[j]:
            self.usage[l] += n * (rate - old)
        self.rate[j] = rate
        self._set_speed(t, j, rate / self.cap[j] if rate > 0.0 else 0.0)

    def _set_speed(self, t: float, j: int, v: float) -> None:
        if self.phase[j] != 1:
            self.speed[j] = 0.0
            return
        if self.remaining[j] > 0.0:
            self.remaining[j] -= self.speed[j] * (t - self.since[j])
        self.since[j] = t
        self.speed[j] = v
        if v < 1.0 - 1e-12:
            self.slowed[j] = True
        left = self.remaining[j]
        if left <= 1e-9 * self.comm[j] + 1e-15:
            left = 0.0
        self._schedule(j, t + left / v if v > 0.0 else math.inf)


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
