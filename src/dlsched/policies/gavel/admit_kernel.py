"""``gavel.admit.search`` compiled (numba): the same optimum over the same candidate moves.

``search`` returns the admission with the smallest key (highest gain, fewest moves, lowest new
type, earliest moved jobs) over every set of at most ``max_changes`` candidate moves of
distinct jobs that fits, and every pruning rule it applies only drops states whose gain is
strictly below the best found.  So any exhaustive enumeration with sound pruning returns the
same admission, ties included; this one walks the sets in the candidates' order (best gain
first) with three of ``search``'s rules (the gain bound, the count of moves a shortage still needs,
and with no move to spare only moves off a short type), and leaves out its finer capacity bounds, which save visits in Python but cost more
than they save in compiled code.  ``tests/crius/test_gavel_admit.py`` checks both against the
exhaustive reference and each other.

Written for ``max_changes <= 3`` (the Crius authors' Gavel: 3); ``search`` keeps the Python
path for more.  Importing this module imports numba (about 0.15 CPU s, then about 0.4 s to load
the cached machine code, or a few seconds to compile it once).
"""

from __future__ import annotations

import numpy as np

from dlsched.numba_cache import compiled

MAX_MOVES = 3


def _compiled(signature):
    """The function compiled for ``signature`` alone (one machine-code entry to load from the
    cache, not one per mix of literal and variable arguments)."""
    return lambda fn: compiled(fn, signature)


_I = "int64"
_ARR = "int64[::1]"


@_compiled("boolean(" + ", ".join([_I] * 9) + ", " + _ARR + ")")
def _better(gain, nm, tz, r0, d0, r1, d1, r2, d2, best):
    """Whether (gain, moves, type, moved (rank, dst) pairs by rank) ranks before ``best``."""
    if best[0] == 0:
        return True
    if gain != best[1]:
        return gain > best[1]
    if nm != best[2]:
        return nm < best[2]
    if tz != best[3]:
        return tz < best[3]
    if nm > 0:
        if r0 != best[4]:
            return r0 < best[4]
        if d0 != best[5]:
            return d0 < best[5]
    if nm > 1:
        if r1 != best[6]:
            return r1 < best[6]
        if d1 != best[7]:
            return d1 < best[7]
    if nm > 2:
        if r2 != best[8]:
            return r2 < best[8]
        if d2 != best[9]:
            return d2 < best[9]
    return False


@_compiled("void(" + ", ".join([_I] * 6) + ", " + ", ".join([_ARR] * 4) + ")")
def _keep(gain, nm, tz, a, b, c, rank, dst, best, sel):
    """Record the solution if it ranks first so far: its moves sorted by their jobs' rank."""
    ra = rank[a] if nm > 0 else 0
    rb = rank[b] if nm > 1 else 0
    rc = rank[c] if nm > 2 else 0
    x, y, z = a, b, c
    # sort the (at most three) moves by rank: ranks of distinct jobs differ
    if nm > 1 and rb < ra:
        x, y, ra, rb = y, x, rb, ra
    if nm > 2:
        if rc < rb:
            y, z, rb, rc = z, y, rc, rb
        if nm > 1 and rb < ra:
            x, y, ra, rb = y, x, rb, ra
    dx = dst[x] if nm > 0 else 0
    dy = dst[y] if nm > 1 else 0
    dz = dst[z] if nm > 2 else 0
    if not _better(gain, nm, tz, ra, dx, rb, dy, rc, dz, best):
        return
    best[0] = 1
    best[1] = gain
    best[2] = nm
    best[3] = tz
    best[4], best[5], best[6], best[7], best[8], best[9] = ra, dx, rb, dy, rc, dz
    sel[0], sel[1], sel[2] = x, y, z


@_compiled("int64(" + _ARR + ", " + _ARR + ", " + _I + ")")
def _needs(sl, biggest, left):
    """-1 if the state fits; else the moves its shortages still need (left + 1: hopeless)."""
    need = 0
    short = False
    for t in range(sl.shape[0]):
        if sl[t] < 0:
            short = True
            if biggest[t] == 0:
                return left + 1
            need += (-sl[t] + biggest[t] - 1) // biggest[t]
    return need if short else -1


@_compiled("void(" + ", ".join([_ARR] * 7) + ", " + _I + ", " + _I + ", " + _ARR + ", " + _ARR + ")")
def search_kernel(gains, src, dst, size, rank, slack, w_new, size_new, max_changes, best, sel):
    """The best admission into ``best`` / ``sel`` (``best[0] == 0``: none fits).

    Moves are sorted best gain first; ``rank`` is each move's job's place in (submit time, id)
    order (the moves of one job share it); ``w_new[t] < 0`` marks a type the new job cannot use.
    ``best`` holds (found, gain, moves, type, then the moved jobs' (rank, dst) pairs by rank),
    ``sel`` the moves' indices in the same order."""
    n = gains.shape[0]
    T = slack.shape[0]
    # best_after[i, r]: the sum of the r largest positive gains among moves i: (sorted, so the
    # first r of them, where positive)
    best_after = np.zeros((n + 1, max_changes + 1), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        g = gains[i] if gains[i] > 0 else 0
        for r in range(1, max_changes + 1):
            best_after[i, r] = g + best_after[i + 1, r - 1]
    biggest = np.zeros(T, dtype=np.int64)
    for i in range(n):
        if size[i] > biggest[src[i]]:
            biggest[src[i]] = size[i]
    sl = np.empty(T, dtype=np.int64)
    for tz in range(T):
        if w_new[tz] < 0:
            continue
        g0 = w_new[tz]
        for t in range(T):
            sl[t] = slack[t]
        sl[tz] -= size_new
        need0 = _needs(sl, biggest, max_changes)
        if need0 < 0:
            _keep(g0, 0, tz, 0, 0, 0, rank, dst, best, sel)
        if max_changes == 0 or need0 > max_changes:
            continue
        for i in range(n):
            gi = gains[i]
            if need0 < 0 and gi <= 0:
                break  # from a fitting state only a gain can rank first, and gains fall from here
            if best[0] == 1 and g0 + gi + best_after[i + 1, max_changes - 1] < best[1]:
                break
            if need0 == max_changes and sl[src[i]] >= 0:
                continue  # no move to spare, and one off a type that is not short ends no shortage
            sl[src[i]] += size[i]
            sl[dst[i]] -= size[i]
            need1 = _needs(sl, biggest, max_changes - 1)
            if need1 < 0:
                _keep(g0 + gi, 1, tz, i, 0, 0, rank, dst, best, sel)
            if max_changes >= 2 and need1 <= max_changes - 1:
                for j in range(i + 1, n):
                    gj = gains[j]
                    if need1 < 0 and gj <= 0:
                        break
                    if best[0] == 1 and g0 + gi + gj + best_after[j + 1, max_changes - 2] < best[1]:
                        break
                    if rank[j] == rank[i]:  # one job: ranks are per job
                        continue
                    if need1 == max_changes - 1 and sl[src[j]] >= 0:
                        continue
                    sl[src[j]] += size[j]
                    sl[dst[j]] -= size[j]
                    need2 = _needs(sl, biggest, max_changes - 2)
                    if need2 < 0:
                        _keep(g0 + gi + gj, 2, tz, i, j, 0, rank, dst, best, sel)
                    if max_changes >= 3 and need2 <= max_changes - 2:
                        for k in range(j + 1, n):
                            gk = gains[k]
                            if need2 < 0 and gk <= 0:
                                break
                            if best[0] == 1 and g0 + gi + gj + gk < best[1]:
                                break
                            if rank[k] == rank[i] or rank[k] == rank[j]:
                                continue
                            if need2 == 1 and sl[src[k]] >= 0:
                                continue
                            sl[src[k]] += size[k]
                            sl[dst[k]] -= size[k]
                            fits = True
                            for t in range(T):
                                if sl[t] < 0:
                                    fits = False
                                    break
                            if fits:
                                _keep(g0 + gi + gj + gk, 3, tz, i, j, k, rank, dst, best, sel)
                            sl[src[k]] -= size[k]
                            sl[dst[k]] += size[k]
                    sl[src[j]] -= size[j]
                    sl[dst[j]] += size[j]
            sl[src[i]] -= size[i]
            sl[dst[i]] += size[i]


def compiled_search(cands, slack, w_new, size_new, max_changes, quantize):
    """``search``'s answer as (new type, [indices of the moves in ``cands``]), or None."""
    T = len(slack)
    if cands:
        neg, ranks, dst, src, size, _ = zip(*cands)
    else:
        neg = ranks = dst = src = size = ()
    gains = -np.array(neg, dtype=np.int64)
    # each job's (submit time, id) rank, as its place among the candidates' jobs (one per job)
    uniq = sorted(set(ranks))
    rank = np.fromiter(map(dict(zip(uniq, range(len(uniq)))).__getitem__, ranks), dtype=np.int64, count=len(ranks))
    w = np.full(T, -1, dtype=np.int64)
    for t, v in w_new.items():
        if v > 0:
            w[t] = quantize(v)
    best = np.zeros(10, dtype=np.int64)
    sel = np.zeros(MAX_MOVES, dtype=np.int64)
    search_kernel(gains, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                  np.array(size, dtype=np.int64), rank, np.array(slack, dtype=np.int64), w,
                  int(size_new), int(max_changes), best, sel)
    if best[0] == 0:
        return None
    return int(best[3]), [int(x) for x in sel[:best[2]]]
