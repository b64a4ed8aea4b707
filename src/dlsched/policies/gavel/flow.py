"""Gavel's LP solved exactly as a transportation problem, without an LP solver (issue 21).

Gavel's max-sum-throughput LP (``gavel.py``) is, counted in GPUs rather than time fractions,
a transportation problem: job j supplies up to n_j GPU-units (g[j, t] = n_j * X[j, t]),
type t takes up to C_t of them, and a unit of job j on type t earns a[j, t] = w[j, t] / n_j.
With every supply and capacity an integer, the problem has integral optima, and one is
reached by *cycle cancelling* (Klein's algorithm): a flow is optimal exactly when its residual
graph has no cycle of positive profit, and pushing flow round such a cycle keeps it feasible
and raises the objective.

Jobs are many (hundreds) but GPU types few (3-4), so every residual cycle is searched on a
graph of T + 1 nodes: the types and one node O standing for the source and the sink (joined
by a free return arc).  Passing from one of these nodes to another goes through a single job
or through a capacity arc, and only the most profitable way matters:

- O -> t: a job with spare supply starts a unit on t (profit a[j, t]), or t gives a used unit
  of capacity back (profit 0);
- t -> O: t takes a unit of spare capacity (0), or a job on t drops a unit (-a[j, t]);
- t -> t': a job on t moves a unit to t' (a[j, t'] - a[j, t]).

So each step is a few numpy reductions over the jobs (the best job per edge) and a pass over
the graph's simple cycles (84 for four types), listed once per type count.  The most
profitable cycle is cancelled by its bottleneck (an integer: flows stay integral), until none
is positive beyond ``EPS`` (profits are sums of at most T + 1 terms of magnitude <= 1, so a
true zero can come out at about 1e-16, never near 1e-12).  Ties: the first cycle in a fixed
order, the earliest row (submission order) among equal jobs.

Warm: a solve starts from the flows the jobs had in the last solve (``solve_from``), so a job arriving or leaving costs a few cycles, not a solve from zero, and jobs not
concerned keep their shares.  This returns *an* optimum, as HiGHS does, but not HiGHS's vertex
where the LP has several (jobs with equal weight rows are interchangeable): decisions differ
from the HiGHS-solved ``gavel`` (``lp=highs``); see docs/replay.md.  The objective equals
HiGHS's to 1e-9 relative on random and real instances (``tests/crius/test_gavel_flow.py``).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations

import numpy as np

EPS = 1e-12  # a cycle is cancelled only if its profit exceeds this (see the module docstring)
MAX_STEPS = 1_000_000  # a guard: each step raises the objective by > EPS, so this is never reached


@lru_cache(maxsize=None)
def _cycles(n_types: int) -> np.ndarray:
    """Every simple cycle of the complete digraph on O (node 0) and the types (1..T), as rows of
    flat edge indices into a (T+1) x (T+1) matrix, padded with the index of a zero cell."""
    n = n_types + 1
    pad = n * n  # one past the matrix: a cell held at 0
    rows = []
    for k in range(2, n + 1):
        for perm in permutations(range(n), k):
            if perm[0] != min(perm):  # each cycle once, from its smallest node
                continue
            edges = [perm[i] * n + perm[(i + 1) % k] for i in range(k)]
            rows.append(edges + [pad] * (n - k))
    return np.array(rows, dtype=np.int64).reshape(-1, n)


def max_throughput_flow(w: np.ndarray, sizes: np.ndarray, capacity, start: np.ndarray | None = None
                        ) -> tuple[np.ndarray, int]:
    """An optimal g (GPUs of each job on each type, integers) of Gavel's LP, and the cycles cancelled.

    ``w`` jobs x types weights (0: the job cannot run there), ``sizes`` GPUs per job,
    ``capacity`` GPUs per type; ``start`` a feasible integral g to start from (zeros if None).
    X = g / n_j is the LP's time fractions.
    """
    nj, nt = w.shape
    n = np.asarray(sizes, dtype=np.int64)
    cap = np.asarray(capacity, dtype=np.int64)
    g = np.zeros((nj, nt), dtype=np.int64) if start is None else np.array(start, dtype=np.int64)
    if nj == 0 or nt == 0:
        return g, 0
    # types x jobs (reductions over the jobs then run along contiguous rows: several times faster)
    a = np.ascontiguousarray(np.where(w > 0, w / np.maximum(n, 1)[:, None], -np.inf).T)  # profit per GPU-unit
    neg_a = -a
    gt = np.ascontiguousarray(g.T)
    cyc = _cycles(nt)
    side = nt + 1
    e = np.zeros(side * side + 1)  # the contracted graph's edge profits, flat, and a 0 for padding
    m = e[:-1].reshape(side, side)
    m[0, 0] = -np.inf
    types = range(nt)
    cap_l = cap.tolist()
    used = gt.sum(axis=1).tolist()  # GPUs in use per type
    spare = (n - gt.sum(axis=0)).tolist()  # GPUs each job has not placed
    # per (type, job): the profit of the edge through that job, -inf where there is none; kept
    # up to date for the few jobs a cycle changes instead of rebuilt every step
    start_gain = np.where(n > gt.sum(axis=0), a, -np.inf)  # O -> t: a job starts a unit
    drop = np.where(gt > 0, neg_a, -np.inf)  # t -> O: a job on t drops a unit
    move = np.empty((nt, nt, nj))
    steps = 0
    while True:
        best_start = start_gain.max(axis=1).tolist()
        best_drop = drop.max(axis=1).tolist()
        np.add(drop[:, None, :], a[None, :, :], out=move)  # t -> t': a job on t moves a unit to t'
        moves = move.max(axis=2)
        moves.flat[::nt + 1] = -np.inf  # no edge from a type to itself
        m[1:, 1:] = moves
        # a job's unit (profit > 0) beats giving capacity back (0); spare capacity (0) beats
        # dropping a job's unit (< 0)
        m[0, 1:] = [v if v > 0.0 or used[t] == 0 else 0.0 for t, v in zip(types, best_start)]
        m[1:, 0] = [0.0 if used[t] < cap_l[t] else v for t, v in zip(types, best_drop)]
        profit = e[cyc].sum(axis=1)
        k = int(profit.argmax())
        if not profit[k] > EPS:
            return np.ascontiguousarray(gt.T), steps
        steps += 1
        if steps > MAX_STEPS:
            raise RuntimeError("gavel_flow: cycle cancelling did not converge (never expected)")
        # realise the cycle's edges on the jobs (the first best job: submission order) and
        # capacity arcs, and find its bottleneck
        plan, delta = [], None
        for idx in cyc[k].tolist():
            if idx == side * side:
                break
            u, v = divmod(idx, side)
            if u == 0:  # O -> type v-1
                t = v - 1
                if best_start[t] > 0.0:
                    j = int(start_gain[t].argmax())
                    plan.append((j, None, t))
                    room = spare[j]
                else:
                    room = used[t]
            elif v == 0:  # type u-1 -> O
                t = u - 1
                if used[t] < cap_l[t]:
                    room = cap_l[t] - used[t]
                else:
                    j = int(drop[t].argmax())
                    plan.append((j, t, None))
                    room = int(gt[t, j])
            else:
                t, t2 = u - 1, v - 1
                j = int(move[t, t2].argmax())
                plan.append((j, t, t2))
                room = int(gt[t, j])
            delta = room if delta is None else min(delta, room)
        for j, frm, to in plan:
            if frm is not None:
                gt[frm, j] -= delta
                used[frm] -= delta
                spare[j] += delta
                if gt[frm, j] == 0:
                    drop[frm, j] = -np.inf
            if to is not None:
                gt[to, j] += delta
                used[to] += delta
                spare[j] -= delta
                drop[to, j] = neg_a[to, j]
            start_gain[:, j] = a[:, j] if spare[j] > 0 else -np.inf


def solve_from(w: np.ndarray, sizes: np.ndarray, capacity, last_x: np.ndarray) -> tuple[np.ndarray, int]:
    """X (time fractions) of an optimum of Gavel's LP, started from the jobs' last shares ``last_x``
    (zeros for a new job), and the cycles cancelled.  ``gavel`` keeps each job's shares in its
    row of the round book, so nothing else is carried between solves; a start that does not fit
    (another cluster) is dropped for zeros."""
    n = np.asarray(sizes, dtype=np.int64)
    start = np.rint(last_x * n[:, None]).astype(np.int64)  # g = X * n_j, integers by construction
    # X came from an optimum for these jobs (shares >= 0, at most 1 per job, none where w = 0), so
    # only the capacities can refuse it
    if not (start.sum(axis=0) <= np.asarray(capacity)).all():
        start = None
    g, steps = max_throughput_flow(w, n, capacity, start)
    return g / n[:, None].astype(float), steps
