"""A direct round-by-round re-statement of the Crius authors' FCFS simulation, to check the replay.

Written from the semantics described in docs/replay.md ("The Crius authors' simulator"), not
from their code: 300-s rounds; a round's arrivals join in trace order; per round, running jobs
gain 300 s of progress (none in a round of re-planning debt) and end once
``floor(time / iteration time) >= iterations``; ended jobs free their GPUs; queued jobs are
tried in order, a type held back at its first misfit; a job starts only at its tightest packing,
most-free nodes first.  Independent of dlsched's engine, so agreement is evidence that the
engine replay reproduces those semantics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from dlsched.perf.measured.arena_replay import ROUND_S, debt_rounds


@dataclass
class _Job:
    jid: str
    sub: float
    gtype: int
    n: int
    iters: int
    it: float
    nodes: list = field(default_factory=list)
    per: int = 0
    exec_s: float = 0.0
    debt: int = 0


def simulate(jobs, node_types: list[int], node_cap: list[int], rounds: int, search: str = "full"):
    """jobs: (id, submit s, type index, GPUs, iterations, s/iteration) in trace order.
    Returns {job id: JCT s} for jobs ended within ``rounds`` rounds."""
    free = list(node_cap)
    by_round: dict[int, list[_Job]] = {}
    for jid, t, g, n, iters, it in jobs:
        r = max(0, math.ceil(t / ROUND_S) - 1)
        by_round.setdefault(r, []).append(_Job(jid, r * ROUND_S, g, n, iters, it))
    running: list[_Job] = []
    queue: list[_Job] = []
    done: dict[str, float] = {}
    type_nodes = {}
    for i, t in enumerate(node_types):
        type_nodes.setdefault(t, []).append(i)

    def place(j: _Job) -> bool:
        cap = max(node_cap[i] for i in type_nodes[j.gtype])
        per = j.n if j.n <= cap else cap
        k = j.n // per
        cands = [i for i in type_nodes[j.gtype] if free[i] >= per]
        if len(cands) < k:
            return False
        cands.sort(key=lambda i: -free[i])
        j.nodes, j.per = cands[:k], per
        for i in j.nodes:
            free[i] -= per
        return True

    for k in range(rounds):
        now = k * ROUND_S
        ended = []
        for j in running:
            if j.debt:
                j.debt -= 1
                continue
            j.exec_s += ROUND_S
            if j.iters - j.exec_s // j.it <= 0:
                ended.append(j)
        for j in ended:
            running.remove(j)
            done[j.jid] = now - j.sub
            for i in j.nodes:
                free[i] += j.per
        queue.extend(by_round.get(k, []))
        blocked, left = set(), []
        for j in queue:
            if j.gtype in blocked or not place(j):
                blocked.add(j.gtype)
                left.append(j)
                continue
            j.debt = debt_rounds(j.n, search)
            running.append(j)
        queue = left
    return done
