"""``gavel-admit``'s admission problem, solved exactly without a MILP solver (issue 21).

The problem (``gavel.solve_one_type_each``): admitted jobs keep their GPU counts; each job
gets one GPU type with a positive weight; per-type capacity holds; at most ``max_changes``
admitted jobs leave their current type; maximise the summed weights plus ``stay_bonus`` for
every admitted job left where it is.  The new job is admitted when this is feasible.

Relative to "everyone stays", a solution is the new job's type plus a set of at most
``max_changes`` *moves*, each an admitted job going from type ``a`` to type ``b``, with
gain ``w[b] - w[a] - stay_bonus``.  A move's effect on capacity depends only on its
*class* (a, b, GPU count), Gavel's own grouping of jobs that share a throughput row.
Within a class only the ``max_changes`` best moves can be in an optimum: if a solution
used a worse one, one of the class's best is unused by it (the solution moves at most
``max_changes - 1`` other jobs) and swapping it in frees and takes the same GPUs for at
least the same gain.  So the search looks at no more than ``max_changes`` moves per class,
best gain first, with bounds, instead of every job.

Exactness and ties: gains are compared as integers (weights times 10^12, rounded), so
sums do not depend on the order they are added in.  Among equal optima the answer is the
one with fewest moves, then the lowest type for the new job, then the moved jobs earliest
in (submit time, job id) order: a stated rule, where a MILP solver returns whichever
optimum it meets first (and HiGHS, at its default 0.01% relative gap, sometimes a
solution short of the optimum; ``tests/crius/test_gavel_admit.py`` checks both points).

``AdmissionBook`` keeps the classes across calls, updated as jobs are admitted, moved and
leave, so an admission costs the moves it looks at, not the number of admitted jobs.
``exhaustive_admission`` is the reference: every set of moves of every job, no classes,
no bounds (for tests on small clusters).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass
from itertools import combinations
from typing import NamedTuple

SCALE = 10 ** 12  # weights are normalised to (0, 1]: a 1e-12 grid keeps every real difference
_NONE = float("-inf")  # no such move


def quantize(x: float) -> int:
    return int(round(x * SCALE))


class Move(NamedTuple):
    """An admitted job leaving type ``src`` for ``dst``; ordered best first, then by rank
    (a tuple, so sorting and bisecting compare in C)."""

    neg_gain: int  # -(w[dst] - w[src] - stay_bonus), quantized
    rank: tuple  # (submit time, job id): the tie-break among equal gains
    dst: int
    src: int
    size: int
    job_id: str


@dataclass(frozen=True, slots=True)
class Admission:
    """The new job's type and the admitted jobs that change type (job id -> new type)."""

    new_type: int
    moves: dict[str, int]


def job_moves(job_id: str, rank: tuple, w: dict[int, float], cur: int, size: int, stay_bonus: float
              ) -> list[Move]:
    """Every move of one admitted job off its current type ``cur`` (types with w > 0)."""
    stay = w[cur] + stay_bonus
    return [Move(-quantize(v - stay), rank, t, cur, size, job_id) for t, v in w.items() if t != cur and v > 0]


def _key(gain: int, tz: int, moves) -> tuple:
    """Smaller is better: highest gain, fewest moves, lowest new type, earliest moved jobs."""
    return (-gain, len(moves), tz, tuple(sorted((m.rank, m.dst) for m in moves)))


_KERNEL: object = False  # admit_kernel.compiled_search, None without numba; False: not looked up yet
# numba costs about 0.5 CPU s to import and load: searches over fewer candidate moves than this
# stay in Python (a small cluster's never reach it), and the first larger one loads the kernel
KERNEL_MIN_MOVES = 64


def _kernel():
    global _KERNEL
    if _KERNEL is False:
        try:
            from dlsched.policies.gavel.admit_kernel import compiled_search
        except ImportError:
            compiled_search = None
        _KERNEL = compiled_search
    return _KERNEL


def search(cands: list[Move], slack: list[int], w_new: dict[int, float], size_new: int, max_changes: int
           ) -> Admission | None:
    """The best admission over these candidate moves (sorted best first); None if none fits.

    The compiled enumeration (``admit_kernel``) where numba is installed, at most 3 moves are
    allowed and there are at least ``KERNEL_MIN_MOVES`` candidates, else ``python_search``: the
    same admission either way (the smallest key over the same sets of moves; tests compare them)."""
    kernel = _kernel() if len(cands) >= KERNEL_MIN_MOVES or _KERNEL else None
    if kernel is None or max_changes > 3:
        return python_search(cands, slack, w_new, size_new, max_changes)
    found = kernel(cands, slack, w_new, size_new, max_changes, quantize)
    if found is None:
        return None
    tz, picked = found
    return Admission(tz, {cands[i].job_id: cands[i].dst for i in picked})


def python_search(cands: list[Move], slack: list[int], w_new: dict[int, float], size_new: int, max_changes: int
                  ) -> Admission | None:
    """The best admission over these candidate moves (sorted best first); None if none fits."""
    n = len(cands)
    gains = [-m.neg_gain for m in cands]
    # best[i][r]: the sum of the r largest positive gains among cands[i:] (they are sorted)
    best_after = [[0] * (max_changes + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        g = gains[i]
        row, nxt = best_after[i], best_after[i + 1]
        for r in range(1, max_changes + 1):
            row[r] = max(nxt[r], nxt[r - 1] + g) if g > 0 else nxt[r]
    biggest = [0] * len(slack)  # per type: the largest job among the moves off it
    by_src: list[list[int]] = [[] for _ in slack]  # per type: the moves off it (indices, ascending)
    for i, m in enumerate(cands):
        biggest[m.src] = max(biggest[m.src], m.size)
        by_src[m.src].append(i)
    found: list = [None, None]  # [key, (tz, moves)]
    fixes: dict[tuple[int, int], list] = {}

    def top_fix(s: int, x: int) -> list:
        """row[i]: the highest gain of a move off type ``s`` at index >= i that frees at least ``x``
        GPUs (-inf if none): what a state short of ``x`` GPUs of ``s`` can still gain from the move
        that must end that shortage (built on first use)."""
        row = fixes.get((s, x))
        if row is None:
            row = [_NONE] * (n + 1)
            for i in range(n - 1, -1, -1):
                m = cands[i]
                row[i] = max(row[i + 1], gains[i]) if m.src == s and m.size >= x else row[i + 1]
            fixes[(s, x)] = row
        return row

    def dead_end(sl: list[int], gain: int, start: int) -> bool:
        """Whether a state one move from the limit can yield nothing: short of two types (one
        move ends one shortage), or of one type by more than any move off it frees, or by so
        much that no move that frees enough reaches the best found."""
        s = -1
        for t, x in enumerate(sl):
            if x < 0:
                if s >= 0:
                    return True
                s = t
        if s < 0:
            return False  # not short: a complete solution, visited
        x = -sl[s]
        if biggest[s] < x:
            return True
        best = found[0]
        if best is None:
            return False
        row = fixes.get((s, x)) or top_fix(s, x)
        return gain + row[start] < -best[0]

    def visit(start: int, gain: int, sl: list[int], moves: list[Move], used: set[str], tz: int) -> None:
        feasible = min(sl) >= 0
        if feasible and (found[0] is None or gain >= -found[0][0]):  # a lower gain ranks below the best
            key = _key(gain, tz, moves)
            if found[0] is None or key < found[0]:
                found[0], found[1] = key, (tz, tuple(moves))
        left = max_changes - len(moves)
        if left == 0:
            return
        only_short = False
        if not feasible:
            # each short type needs moves off it, each freeing at most its largest candidate
            need = 0
            for t, x in enumerate(sl):
                if x < 0:
                    most = biggest[t]
                    if most == 0:
                        return
                    need += -(x // most)  # ceil(-x / most)
            if need > left:
                return
            # no move to spare: one off a type that is not short leaves the same need with one
            # move fewer, a state the check above refuses, so it is not tried
            only_short = need == left
        order = range(start, n)
        lone, fix = -1, None  # the one short type, and what a move ending its shortage can gain
        if not feasible:
            short = [t for t, x in enumerate(sl) if x < 0]
            if len(short) == 1:
                lone = short[0]
                if only_short:  # (always so with one move left: need >= the short types)
                    off = by_src[lone]
                    order = off[bisect_left(off, start):]
                    if left == 1 and found[0] is not None and \
                            gain + top_fix(lone, -sl[lone])[start] < -found[0][0]:
                        return  # no move that ends the shortage reaches the best found
                elif left == 2:
                    fix = top_fix(lone, -sl[lone])
            elif only_short:  # each remaining move must come off one of the short types
                order = sorted(j for t in short for j in by_src[t][bisect_left(by_src[t], start):])
        pos = 0
        while pos < len(order):
            i = order[pos]
            pos += 1
            g = gains[i]
            if feasible and g <= 0:
                break  # sorted: every later move loses throughput, and fewer moves rank first
            if found[0] is not None and gain + g + best_after[i + 1][left - 1] < -found[0][0]:
                break  # sorted: no later move can reach the best found
            m = cands[i]
            src, dst, size = m.src, m.dst, m.size
            if m.job_id in used or (only_short and sl[src] >= 0):
                continue
            if fix is not None and src != lone and found[0] is not None and gain + g + fix[i + 1] < -found[0][0]:
                # two moves left and this one not off the short type: the last must end the
                # shortage alone, so it frees at least as much, and ``fix`` bounds its gain.  Both
                # fall with i, so every later move off another type fails too: only moves off
                # the short type are left to try
                off = by_src[lone]
                order, pos, fix = off[bisect_left(off, i + 1):], 0, None
                continue
            if not feasible and left == 1:
                # the last move must end the only shortage (it leaves that type: ``order``) and fit
                if sl[src] + size < 0 or sl[dst] < size:
                    continue
            sl[src] += size
            sl[dst] -= size
            if left == 2 and dead_end(sl, gain + g, i + 1):
                # (a move leaving part of a shortage to the last move is refused here too)
                sl[src] -= size
                sl[dst] += size
                continue
            moves.append(m)
            used.add(m.job_id)
            visit(i + 1, gain + g, sl, moves, used, tz)
            used.discard(m.job_id)
            moves.pop()
            sl[src] -= size
            sl[dst] += size

    # best new types first, so that a strong bound is found early (the key, not this order, decides)
    types = sorted((t for t, v in w_new.items() if v > 0), key=lambda t: (-w_new[t], t))
    for tz in types:  # no moves at all first: the cheapest solutions, and the bound for the rest
        if slack[tz] >= size_new:
            key = _key(quantize(w_new[tz]), tz, ())
            if found[0] is None or key < found[0]:
                found[0], found[1] = key, (tz, ())
    for tz in types:
        sl = list(slack)
        sl[tz] -= size_new
        visit(0, quantize(w_new[tz]), sl, [], set(), tz)
    if found[1] is None:
        return None
    tz, moves = found[1]
    return Admission(tz, {m.job_id: m.dst for m in moves})


class AdmissionBook:
    """Admitted jobs' moves by class (from type, to type, GPU count), best first, kept across calls."""

    def __init__(self, capacity: list[int], max_changes: int, stay_bonus: float):
        self.capacity = list(capacity)
        self.max_changes = max_changes
        self.stay_bonus = stay_bonus
        self.load = [0] * len(capacity)
        self.classes: dict[tuple[int, int, int], list[Move]] = {}
        self.jobs: dict[str, tuple[int, int, list[Move]]] = {}  # job -> (type, size, its moves)

    def add(self, job_id: str, rank: tuple, w: dict[int, float], cur: int, size: int) -> None:
        self.remove(job_id)
        ms = job_moves(job_id, rank, w, cur, size, self.stay_bonus)
        for m in ms:
            insort(self.classes.setdefault((m.src, m.dst, m.size), []), m)
        self.load[cur] += size
        self.jobs[job_id] = (cur, size, ms)

    def remove(self, job_id: str) -> None:
        e = self.jobs.pop(job_id, None)
        if e is None:
            return
        cur, size, ms = e
        self.load[cur] -= size
        for m in ms:
            lst = self.classes[(m.src, m.dst, m.size)]
            del lst[bisect_left(lst, m)]

    def type_of(self, job_id: str) -> int | None:
        e = self.jobs.get(job_id)
        return None if e is None else e[0]

    def solve(self, w_new: dict[int, float], size_new: int) -> Admission | None:
        k = self.max_changes
        cands = sorted(m for lst in self.classes.values() for m in lst[:k])
        slack = [c - x for c, x in zip(self.capacity, self.load)]
        return search(cands, slack, w_new, size_new, k)


def exhaustive_admission(moves: list[Move], slack: list[int], w_new: dict[int, float], size_new: int,
                         max_changes: int) -> Admission | None:
    """The reference: every set of at most ``max_changes`` moves of distinct jobs, every new type."""
    found = None
    for tz in sorted(w_new):
        if w_new[tz] <= 0:
            continue
        for k in range(max_changes + 1):
            for combo in combinations(moves, k):
                if len({m.job_id for m in combo}) < k:
                    continue
                sl = list(slack)
                sl[tz] -= size_new
                for m in combo:
                    sl[m.src] += m.size
                    sl[m.dst] -= m.size
                if min(sl) < 0:
                    continue
                key = _key(quantize(w_new[tz]) - sum(m.neg_gain for m in combo), tz, combo)
                if found is None or key < found[0]:
                    found = (key, tz, combo)
    if found is None:
        return None
    return Admission(found[1], {m.job_id: m.dst for m in found[2]})
