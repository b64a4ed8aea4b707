"""ScaleResource (Crius, Algorithm 1 line 16): bounded search over scaling moves.

Works on *virtual* state only: free GPU counts per type and each running
job's (type, count), held in ``VirtualCluster``; nothing touches the engine.

A move changes one running job's shape: scale down on its type, scale up,
or move to another GPU type (the paper's "downscale their used GPU numbers
or move them to another type of GPU").  The search depth bounds the number
of moves in one scheduling choice (section 6.1 "search depth", default 3).

Simplification (said here and in docs/crius.md): the paper enumerates all
choices up to the depth and reports 0.88-5.98 s per job for it (section
8.7).  We rank every candidate move by throughput lost per GPU freed, keep
the ``beam`` best (default 4) from distinct jobs, and enumerate all
combinations of up to ``depth`` of those; that keeps a choice within the
same depth bound while costing milliseconds.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from dataclasses import dataclass
from itertools import combinations, product

from dlsched.policies.crius.common import Shape, ShapeTable


@dataclass(frozen=True, slots=True)
class Move:
    job_id: str
    old: Shape
    new: Shape
    delta: float  # change in the job's normalised throughput (negative = loss)


class VirtualCluster:
    """Free counts per type and running jobs' shapes, changed only inside one policy call."""

    def __init__(self, free: list[int], shapes: dict[str, Shape], indexes=(), *, borrowed: bool = False):
        self.free = free
        self.shapes = shapes  # running (virtually) job -> shape
        # ``borrowed``: ``shapes`` is the caller's record, changed in place and given back as it
        # was by ``restore`` (each changed job's former shape is kept on the first change: a copy
        # of every running job per call that moves anything cost a long backlog's calls most)
        self._borrowed = borrowed
        self._undo: dict[str, Shape | None] = {}
        # persistent indexes (GrowIndex, ReleaseIndex) kept in step with every virtual move
        self.indexes = tuple(indexes)
        self.release_index = next((i for i in self.indexes if isinstance(i, ReleaseIndex)), None)
        self._by_type: list[set[str]] | None = None  # built on first use (only the scans need it)
        self.version = [0] * len(free)  # bumped when a job on that type changes
        self.cache: dict[int, tuple[int, list]] = {}
        self.sizes: dict[int, list[int]] = {}  # per type: running jobs' GPU counts, largest first
        # jobs moved virtually: their index entries may now differ from the engine's shapes
        self.touched: set[str] = set()
        self.gen = 0  # bumped by every virtual change (invalidates ``cached_release``)
        self.memo_key: tuple | None = None
        self.memo: dict = {}
        self.fail: dict[int, int] = {}
        self.job_fail_key: tuple | None = None  # requests known to find nothing in a state (Crius)
        self.job_fail: set = set()

    @property
    def by_type(self) -> list[set[str]]:
        if self._by_type is None:
            self._by_type = [set() for _ in self.free]
            for jid, (t, _) in self.shapes.items():
                self._by_type[t].add(jid)
        return self._by_type

    def restore(self) -> None:
        """Give a borrowed record back as it was before this call's changes."""
        shapes = self.shapes
        for jid, old in self._undo.items():
            if old is None:
                shapes.pop(jid, None)
            else:
                shapes[jid] = old
        self._undo = {}

    def place(self, jid: str, shape: Shape) -> None:
        old = self.shapes.get(jid)
        if self._borrowed and jid not in self._undo:
            self._undo[jid] = old
        by_type = self._by_type
        if old is not None:
            self.free[old[0]] += old[1]
            if by_type is not None:
                by_type[old[0]].discard(jid)
            self.version[old[0]] += 1
        self.version[shape[0]] += 1
        self.free[shape[0]] -= shape[1]
        assert self.free[shape[0]] >= 0, "virtual allocation over capacity"
        self.shapes[jid] = shape
        if by_type is not None:
            by_type[shape[0]].add(jid)
        self.gen += 1
        self.touched.add(jid)
        for index in self.indexes:
            index.update(jid, shape)

    def remove(self, jid: str) -> None:
        old = self.shapes.pop(jid, None)
        if self._borrowed and jid not in self._undo:
            self._undo[jid] = old
        if old is not None:
            self.free[old[0]] += old[1]
            if self._by_type is not None:
                self._by_type[old[0]].discard(jid)
            self.version[old[0]] += 1
            self.gen += 1
            self.touched.add(jid)
            for index in self.indexes:
                index.remove(jid)

    def apply(self, moves) -> None:
        # release first, then take: a move's target may rely on GPUs another move frees
        for m in moves:
            self.remove(m.job_id)
        for m in moves:
            self.place(m.job_id, m.new)


def _freed(m: Move, t: int) -> int:
    return m.old[1] - (m.new[1] if m.new[0] == t else 0)


def _job_moves(tab: ShapeTable, jid: str, old: Shape) -> tuple[tuple, list[Move]]:
    """A job's release moves from ``old`` (shrink on its type, or leave it), best first; cached."""
    hit = tab.moves.get(old)
    if hit is not None:
        return hit
    t = old[0]
    cur = tab.norm(old)
    ms = [Move(jid, old, shape, thr / tab.ref - cur) for shape, thr in tab.thr.items()
          if shape != old and not (shape[0] == t and shape[1] >= old[1])]
    ms.sort(key=lambda m: (-m.delta / max(1, _freed(m, t)), -_freed(m, t), m.new))
    key = (-ms[0].delta / max(1, _freed(ms[0], t)), jid) if ms else None
    tab.moves[old] = (key, ms)
    return key, ms


def ranked_moves(vc: VirtualCluster, tables: dict[str, ShapeTable], t: int) -> list[list[Move]]:
    """Every move that frees GPUs of type ``t`` (shrink on ``t`` or leave ``t``), grouped by job.

    Each job's moves are sorted by throughput lost per GPU freed (cached per
    job and shape), and jobs by their best such move.  Whether a move onto
    another type fits is checked at use time (free counts change), so the
    ranking is cached on the virtual cluster until a job on ``t`` changes.
    """
    hit = vc.cache.get(t)
    if hit is not None and hit[0] == vc.version[t]:
        return hit[1]
    keyed = []
    for jid in vc.by_type[t]:
        key, ms = _job_moves(tables[jid], jid, vc.shapes[jid])
        if ms:
            keyed.append((key, ms))
    keyed.sort(key=lambda x: x[0])
    groups = [ms for _, ms in keyed]
    vc.cache[t] = (vc.version[t], groups)
    vc.sizes[t] = sorted((ms[0].old[1] for ms in groups), reverse=True)
    return groups


def best_release(vc: VirtualCluster, tables: dict[str, ShapeTable], t: int, need: int, depth: int,
                 beam: int, skip: set[str], move_penalty: float, allowed=None, fewest_moves: bool = False,
                 bounded: bool = True):
    """Cheapest set of at most ``depth`` moves freeing ``need`` GPUs of type ``t``.

    ``fewest_moves``: stop at the smallest number of moves that frees enough.
    ``bounded=False`` enumerates every combination (the reference the bounds are tested against).

    Returns (value, moves) with value = summed throughput change minus a
    per-move penalty (re-planning is not free), or None if no set frees enough.
    """
    if depth <= 0:
        return None
    free = vc.free
    if vc.release_index is not None:
        groups, largest = vc.release_index.ranked(t, beam * 2, depth)
    else:
        groups = ranked_moves(vc, tables, t)
        largest = vc.sizes[t][:depth]
    # quick bound: ``depth`` jobs leaving type t entirely could not free enough
    if sum(largest) < need:
        return None
    cands = []
    # look at a bounded prefix of the ranking: the cheapest releases are there, and scanning
    # every running job for every Cell is what would make a round cost seconds
    for ms in groups[:beam * 2]:
        if ms[0].job_id in skip:
            continue
        ok = []
        for m in ms:  # the job's two best moves that are possible now
            nt = m.new[0]
            if (nt == t or free[nt] >= m.new[1]) and (allowed is None or allowed(m.job_id, m.new)):
                ok.append(m)
                if len(ok) == 2:
                    break
        if ok:
            cands.append(ok)  # e.g. shrink by half, or leave the type
            if len(cands) >= beam:
                break
    if not cands:
        return None
    # quick bound: even the biggest releases of ``depth`` jobs cannot free enough
    tops = sorted((max(_freed(m, t) for m in ms) for ms in cands), reverse=True)
    if sum(tops[:depth]) < need:
        return None
    # each move with what it frees on t, its throughput change, and the type it takes (-1: t itself)
    info = [[(m, _freed(m, t), m.delta, -1 if m.new[0] == t else m.new[0], m.new[1]) for m in ms]
            for ms in cands]
    # per job, its largest release and its best throughput change: bounds on a combination
    top_freed = [max(x[1] for x in row) for row in info]
    top_delta = [max(x[2] for x in row) for row in info]
    best = None
    for k in range(1, min(depth, len(cands)) + 1):
        penalty = move_penalty * k
        for combo in combinations(range(len(cands)), k):
            # skip a combination none of whose choices could be taken below: its largest releases
            # free too little, or its best changes cannot beat the best set so far (a float sum
            # is monotone in each term, so the bound summed in the same order is never below)
            freed = 0
            for c in combo:
                freed += top_freed[c]
            if freed < need and bounded:
                continue
            if best is not None and bounded:
                bound = 0
                for c in combo:
                    bound += top_delta[c]
                if bound - penalty <= best[0] + 1e-12:
                    continue
            # one move from each chosen job, in the order of the nested loops it replaces
            for choice in product(*[info[c] for c in combo]):
                freed = 0
                for x in choice:
                    freed += x[1]
                if freed < need:
                    continue
                # moves onto other types must fit there together
                use: dict[int, int] = {}
                ok = True
                for x in choice:
                    nt = x[3]
                    if nt >= 0:
                        use[nt] = use.get(nt, 0) + x[4]
                        if use[nt] > free[nt]:
                            ok = False
                            break
                if not ok:
                    continue
                value = sum(x[2] for x in choice) - move_penalty * k
                if best is None or value > best[0] + 1e-12:
                    best = (value, choice)
        if best is not None and (fewest_moves or best[0] > -move_penalty * k):
            break  # fewest moves first (restarts are what depth bounds); or a loss-free set
    return None if best is None else (best[0], tuple(x[0] for x in best[1]))


_INF = float("inf")


def cached_release(vc: VirtualCluster, tables: dict[str, ShapeTable], t: int, need: int, depth: int,
                   beam: int, skip: set[str], move_penalty: float, fewest_moves: bool, token: int,
                   allowed=None):
    """``best_release``, remembered while nothing changes.

    Crius asks the same question for many queued jobs in one call (every job in the window
    behind a blocked head, every shape).  The answer depends only on the virtual cluster,
    the skip set and (t, need), so it is kept until the virtual cluster changes (``vc.gen``)
    or ``token`` does (the caller's count of touched jobs: the skip set only grows within a
    call).  A failure at ``need`` is a failure at any larger need: every test in
    ``best_release`` that involves ``need`` gets harder as it grows.  An ``allowed``
    predicate must be the same function of (job, shape) for as long as ``vc`` lives (one
    policy call: the deadline test reads the clock and the jobs' progress, fixed during a call).
    """
    key = (vc.gen, token)
    if vc.memo_key != key:
        vc.memo_key = key
        vc.memo = {}
        vc.fail = {}
    if need >= vc.fail.get(t, _INF):
        return None
    hit = vc.memo.get((t, need), vc)
    if hit is not vc:
        return hit
    got = best_release(vc, tables, t, need, depth, beam, skip, move_penalty, allowed, fewest_moves)
    if got is None:
        vc.fail[t] = need
    else:
        vc.memo[(t, need)] = got
    return got


def best_grow(vc: VirtualCluster, tables: dict[str, ShapeTable], skip: set[str], min_gain: float,
              allowed=None) -> Move | None:
    """The single move onto idle GPUs with the highest gain per extra GPU (reverse scaling)."""
    best = None
    free = vc.free
    for jid, old in vc.shapes.items():
        if jid in skip:
            continue
        tab = tables[jid]
        cur = tab.norm(old)
        for shape, _ in tab.thr.items():
            nt, nn = shape
            if shape == old:
                continue
            avail = free[nt] + (old[1] if nt == old[0] else 0)
            if nn > avail:
                continue
            gain = tab.norm(shape) - cur
            if gain <= min_gain:
                continue
            if allowed is not None and not allowed(jid, shape):
                continue
            extra = max(1, nn - (old[1] if nt == old[0] else 0))
            key = (gain / extra, gain, jid)
            if best is None or key > best[0]:
                best = (key, Move(jid, old, shape, gain))
    return None if best is None else best[1]


class _Synced:
    """What the persistent indexes share: which shape and table each job's entries were built from."""

    def __init__(self, tables: dict[str, ShapeTable]):
        self.tables = tables
        self.shape: dict[str, Shape] = {}
        self.table: dict[str, ShapeTable] = {}

    def sync(self, shapes: dict[str, Shape]) -> None:
        """Bring the index to these running shapes (the engine's, at the start of a call)."""
        for jid in [j for j in self.shape if j not in shapes]:
            self.remove(jid)
        for jid, shape in shapes.items():
            if self.shape.get(jid) != shape or self.table.get(jid) is not self.tables[jid]:
                self.update(jid, shape)

    def sync_some(self, shapes: dict[str, Shape], jids) -> None:
        """``sync`` for the jobs that may differ: those whose engine shape changed since the last
        call, those that left, and those moved virtually in it (every other entry still holds)."""
        for jid in jids:
            shape = shapes.get(jid)
            if shape is None:
                if jid in self.shape:
                    self.remove(jid)
            elif not self.current(jid, shape):
                self.update(jid, shape)

    def current(self, jid: str, shape: Shape) -> bool:
        return self.shape.get(jid) == shape and self.table.get(jid) is self.tables[jid]

    def update(self, jid: str, shape: Shape) -> None:
        raise NotImplementedError

    def remove(self, jid: str) -> None:
        raise NotImplementedError


class ReleaseIndex(_Synced):
    """``ranked_moves`` kept across calls: per GPU type, the jobs on it ordered by their best
    release move, and their GPU counts, updated when a job's shape changes rather than
    re-sorted on every call.  Same order as ``ranked_moves`` (the key ends with the job id)."""

    def __init__(self, tables: dict[str, ShapeTable]):
        super().__init__(tables)
        self.order: dict[int, list] = {}  # type -> sorted [(key, job id)]
        self.sizes: dict[int, list[int]] = {}  # type -> GPU counts of its ranked jobs, ascending
        self.entry: dict[str, tuple] = {}  # job -> (type, key, count, moves)

    def update(self, jid: str, shape: Shape) -> None:
        if self.current(jid, shape):
            return
        self.remove(jid)
        tab = self.tables[jid]
        self.shape[jid] = shape
        self.table[jid] = tab
        key, ms = _job_moves(tab, jid, shape)
        if not ms:
            return
        t = shape[0]
        insort(self.order.setdefault(t, []), (key, jid))
        insort(self.sizes.setdefault(t, []), shape[1])
        self.entry[jid] = (t, key, shape[1], ms)

    def remove(self, jid: str) -> None:
        self.shape.pop(jid, None)
        self.table.pop(jid, None)
        e = self.entry.pop(jid, None)
        if e is None:
            return
        t, key, n, _ = e
        order, sizes = self.order[t], self.sizes[t]
        del order[bisect_left(order, (key, jid))]
        del sizes[bisect_left(sizes, n)]

    def ranked(self, t: int, first: int, depth: int) -> tuple[list[list[Move]], list[int]]:
        """The ``first`` best-ranked jobs' moves off type ``t``, and its ``depth`` largest jobs' counts."""
        order = self.order.get(t, [])
        sizes = self.sizes.get(t, [])
        entry = self.entry
        return [entry[jid][3] for _, jid in order[:first]], (sizes[-depth:][::-1] if depth > 0 else [])


class _Desc:
    """A job id ordered backwards, so a min-heap pops the largest id first on equal keys."""

    __slots__ = ("s",)

    def __init__(self, s: str):
        self.s = s

    def __lt__(self, other: "_Desc") -> bool:
        return self.s > other.s

    def __eq__(self, other) -> bool:
        return self.s == other.s


class GrowIndex(_Synced):
    """``best_grow`` without scanning every running job and shape on every call.

    Every (running job, target shape) move that gains more than ``min_gain`` is kept in a
    heap by the GPU type it grows onto and the number of extra GPUs of that type it needs;
    a move is possible when its type has that many free.  The heap order is ``best_grow``'s
    key (gain per extra GPU, gain, job id), then the shape's position in the job's table,
    which is the scan's tie-break, so the answer is the same move.  A job's entries are
    rebuilt only when its shape changes (``update``; older entries are dropped lazily by a
    version number), so a call costs the moves it looks at, not running jobs x shapes.
    """

    def __init__(self, tables: dict[str, ShapeTable], min_gain: float):
        super().__init__(tables)
        self.min_gain = min_gain
        self.ver: dict[str, int] = {}
        self.heaps: dict[tuple[int, int], list] = {}  # (type, extra GPUs needed) -> entries
        self.count: dict[str, int] = {}  # job -> its live entries
        self.live = 0
        self.stale = 0

    def remove(self, jid: str) -> None:
        if self.shape.pop(jid, None) is not None:
            self.table.pop(jid, None)
            self.ver[jid] = self.ver.get(jid, 0) + 1
            self._retire(jid)

    def update(self, jid: str, old: Shape) -> None:
        if self.current(jid, old):
            return
        if jid in self.shape:
            self._retire(jid)
        tab = self.tables[jid]
        ver = self.ver.get(jid, 0) + 1
        self.ver[jid] = ver
        self.shape[jid] = old
        self.table[jid] = tab
        cur = tab.norm(old)
        desc = _Desc(jid)
        n = 0
        for idx, shape in enumerate(tab.thr):
            if shape == old:
                continue
            nt, nn = shape
            need = nn - (old[1] if nt == old[0] else 0)
            gain = tab.norm(shape) - cur
            if gain <= self.min_gain:
                continue
            extra = max(1, need)
            entry = (-(gain / extra), -gain, desc, idx, ver, jid, old, shape, gain)
            heapq.heappush(self.heaps.setdefault((nt, need), []), entry)
            n += 1
        self.live += n
        self.count[jid] = n

    def _retire(self, jid: str) -> None:
        n = self.count.pop(jid, 0)
        self.live -= n
        self.stale += n
        if self.stale > 4 * max(self.live, 64):  # drop dead entries once they dominate
            for key, h in list(self.heaps.items()):
                kept = [e for e in h if not self._dead(e)]
                heapq.heapify(kept)
                if kept:
                    self.heaps[key] = kept
                else:
                    del self.heaps[key]
            self.stale = 0

    def _dead(self, e) -> bool:
        return self.ver.get(e[5]) != e[4]

    def best(self, free: list[int], skip: set[str], allowed=None) -> Move | None:
        """The move ``best_grow`` would return for these free counts."""
        tops = []
        for key, h in self.heaps.items():
            if key[1] > free[key[0]]:
                continue
            while h and self._dead(h[0]):
                heapq.heappop(h)
            if h:
                tops.append((h[0][:4], key))
        heapq.heapify(tops)
        held = []
        found = None
        while tops:
            _, key = heapq.heappop(tops)
            h = self.heaps[key]
            e = heapq.heappop(h)
            held.append((h, e))
            jid, shape = e[5], e[7]
            if jid not in skip and (allowed is None or allowed(jid, shape)):
                found = Move(jid, e[6], shape, e[8])
                break
            while h and self._dead(h[0]):
                heapq.heappop(h)
            if h:
                heapq.heappush(tops, (h[0][:4], key))
        for h, e in held:
            heapq.heappush(h, e)
        return found
