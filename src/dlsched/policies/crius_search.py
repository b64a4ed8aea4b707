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

from dataclasses import dataclass
from itertools import combinations

from dlsched.policies.crius_common import Shape, ShapeTable


@dataclass(frozen=True, slots=True)
class Move:
    job_id: str
    old: Shape
    new: Shape
    delta: float  # change in the job's normalised throughput (negative = loss)


class VirtualCluster:
    """Free counts per type and running jobs' shapes, changed only inside one policy call."""

    def __init__(self, free: list[int], shapes: dict[str, Shape]):
        self.free = free
        self.shapes = shapes  # running (virtually) job -> shape
        self.by_type: list[set[str]] = [set() for _ in free]
        for jid, (t, _) in shapes.items():
            self.by_type[t].add(jid)
        self.version = [0] * len(free)  # bumped when a job on that type changes
        self.cache: dict[int, tuple[int, list]] = {}
        self.sizes: dict[int, list[int]] = {}  # per type: running jobs' GPU counts, largest first

    def place(self, jid: str, shape: Shape) -> None:
        old = self.shapes.get(jid)
        if old is not None:
            self.free[old[0]] += old[1]
            self.by_type[old[0]].discard(jid)
            self.version[old[0]] += 1
        self.version[shape[0]] += 1
        self.free[shape[0]] -= shape[1]
        assert self.free[shape[0]] >= 0, "virtual allocation over capacity"
        self.shapes[jid] = shape
        self.by_type[shape[0]].add(jid)

    def remove(self, jid: str) -> None:
        old = self.shapes.pop(jid, None)
        if old is not None:
            self.free[old[0]] += old[1]
            self.by_type[old[0]].discard(jid)
            self.version[old[0]] += 1

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
                 beam: int, skip: set[str], move_penalty: float, allowed=None, fewest_moves: bool = False):
    """Cheapest set of at most ``depth`` moves freeing ``need`` GPUs of type ``t``.

    ``fewest_moves``: stop at the smallest number of moves that frees enough.

    Returns (value, moves) with value = summed throughput change minus a
    per-move penalty (re-planning is not free), or None if no set frees enough.
    """
    if depth <= 0:
        return None
    free = vc.free
    groups = ranked_moves(vc, tables, t)
    # quick bound: ``depth`` jobs leaving type t entirely could not free enough
    if sum(vc.sizes[t][:depth]) < need:
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
    best = None
    for k in range(1, min(depth, len(cands)) + 1):
        for combo in combinations(range(len(cands)), k):
            for choice in _choices(cands, combo):
                freed = sum(_freed(m, t) for m in choice)
                if freed < need:
                    continue
                # moves onto other types must fit there together
                use: dict[int, int] = {}
                ok = True
                for m in choice:
                    if m.new[0] != t:
                        use[m.new[0]] = use.get(m.new[0], 0) + m.new[1]
                        if use[m.new[0]] > free[m.new[0]]:
                            ok = False
                            break
                if not ok:
                    continue
                value = sum(m.delta for m in choice) - move_penalty * k
                if best is None or value > best[0] + 1e-12:
                    best = (value, choice)
        if best is not None and (fewest_moves or best[0] > -move_penalty * k):
            break  # fewest moves first (restarts are what depth bounds); or a loss-free set
    return best


def _choices(cands, combo):
    """All ways to pick one move from each chosen job."""
    if len(combo) == 1:
        for m in cands[combo[0]]:
            yield (m,)
        return
    head, rest = combo[0], combo[1:]
    for m in cands[head]:
        for tail in _choices(cands, rest):
            yield (m,) + tail


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
