"""The compiled loop of ``paths.least_congested`` over ``PathSet`` candidates (numba), on flat arrays.

Same rule, same floats as ``paths._PortLoads`` (which stays the reference and the path for hand-made
candidate lists): per flow, on every switch route the least loaded port of each hop; the route whose
worst network link, once the flow's load is added, is least; ties to the least total load (summed hop
by hop in route order), then the first route; the flow's load onto the ports it takes, and each
bundle's least loaded port kept.  A replayed pick (a job that opens the order as it did last time)
adds the same load to the same ports without scoring.

Per call the Python loop cost ~40 us a flow (numpy calls on 2-6 element arrays); a re-selection over
every placed job's flows at every arrival and completion made that most of a CRUX run.

Layout: every ``PathSet`` of the fabric has a number ``p``; its routes x hops grid is at
``rh_ptr[p]`` in ``first``/``width``/``on_net`` (row-major, ``hops[p]`` columns), its network
columns mask (a hop some route has on the network) at ``h_ptr[p]`` in ``col``, its route offsets
at ``r_ptr[p]`` in ``offsets``.
"""

from __future__ import annotations

import math

import numpy as np

from dlsched.network.fluid_kernel import _compiled


@_compiled
def _add(first, width, on_net, base, H, r, picks, rate, cap, load, least):
    for h in range(H):
        i = base + r * H + h
        if on_net[i]:
            f = first[i]
            p = picks[h]
            l = f + p
            load[l] += rate / cap[l]
            w = width[i]
            if w > 1 and least[f] == p:
                best = 0
                bv = load[f]
                for q in range(1, w):
                    if load[f + q] < bv:
                        bv = load[f + q]
                        best = q
                least[f] = best


@_compiled
def _fixed_picks(offsets, r0, R, width, base, H, index, picks):
    """Decode a kept choice ``index`` into its route (returned) and its per-hop ``picks``."""
    r = 0
    for q in range(1, R):
        if offsets[r0 + q] <= index:
            r = q
    rest = index - offsets[r0 + r]
    for h in range(H - 1, -1, -1):
        w = width[base + r * H + h]
        picks[h] = rest % w
        rest = rest // w
    return r


@_compiled
def _least_picks(first, width, col, cb, base, H, r, least, picks):
    """Fill ``picks`` with route ``r``'s least-loaded choice per free hop (0 where the hop is fixed) and
    return that choice's offset among the route's combinations."""
    c = 0
    for h in range(H):
        j = base + r * H + h
        picks[h] = least[first[j]] if col[cb + h] else 0
        c = c * width[j] + picks[h]
    return c


@_compiled
def _take(first, width, on_net, base, H, r, picks, rate, cap, load, least, out_links, i):
    """Record flow ``i``'s network links on route ``r`` with ``picks`` and add its rate to their load."""
    k = 0
    for h in range(H):
        j = base + r * H + h
        if on_net[j]:
            out_links[i, k] = first[j] + picks[h]
            k += 1
    _add(first, width, on_net, base, H, r, picks, rate, cap, load, least)


@_compiled
def greedy(flow_set, flow_rate, flow_fixed, rh_ptr, r_ptr, h_ptr, routes, hops, first, width, on_net,
           col, offsets, cap, load, least, out_pick, out_links):
    """Every flow in order: ``flow_fixed[i] >= 0`` replays that candidate, else the least congested
    is chosen; the candidate goes to ``out_pick[i]`` and its network links to row ``i`` of
    ``out_links`` (-1 padded).  ``load`` and ``least`` are the fabric's port loads and each bundle's
    least loaded port, updated in place."""
    maxH = out_links.shape[1]
    picks = np.zeros(maxH, dtype=np.int64)
    worst = np.zeros(64, dtype=np.float64)
    for i in range(flow_set.shape[0]):
        for h in range(maxH):
            out_links[i, h] = -1
        p = flow_set[i]
        R = routes[p]
        H = hops[p]
        if R == 0:
            out_pick[i] = 0
            continue
        base = rh_ptr[p]
        cb = h_ptr[p]
        rate = flow_rate[i]
        if flow_fixed[i] >= 0:
            index = flow_fixed[i]
            r = _fixed_picks(offsets, r_ptr[p], R, width, base, H, index, picks)
        else:
            C = 0
            for h in range(H):
                if col[cb + h]:
                    C += 1
            if R == 1:
                r = 0
            else:
                if worst.shape[0] < R:
                    worst = np.zeros(R, dtype=np.float64)
                lo = math.inf
                for q in range(R):
                    wv = 0.0
                    seen = False
                    for h in range(H):
                        if col[cb + h]:
                            j = base + q * H + h
                            f = first[j]
                            c = cap[f] if on_net[j] else math.inf
                            v = load[f + least[f]] + rate / c
                            if not seen or v > wv:
                                wv = v
                                seen = True
                    worst[q] = wv
                    if wv < lo:
                        lo = wv
                r = -1
                best_total = 0.0
                for q in range(R):
                    if worst[q] != lo:
                        continue
                    if C == 0:
                        r = q
                        break
                    t = 0.0
                    seen = False
                    for h in range(H):
                        if col[cb + h]:
                            f = first[base + q * H + h]
                            g = load[f + least[f]]
                            t = g if not seen else t + g
                            seen = True
                    if r < 0 or t < best_total:
                        r = q
                        best_total = t
            index = offsets[r_ptr[p] + r] + _least_picks(first, width, col, cb, base, H, r, least, picks)
        out_pick[i] = index
        _take(first, width, on_net, base, H, r, picks, rate, cap, load, least, out_links, i)


@_compiled
def greedy_per_job(job_ptr, flow_set, flow_rate, flow_fixed, rh_ptr, r_ptr, h_ptr, routes, hops, first, width,
                   on_net, col, offsets, cap, load, least, out_pick, out_links):
    """``job_paths._choose`` over every job in order (jobs at ``job_ptr[k]:job_ptr[k+1]`` of the flows), the
    same floats as its numpy: one route number ``r`` per job, each flow on its route ``r`` modulo its count;
    ``r`` has the least worst link over the job's flows (each flow's route scored as ``greedy`` scores it),
    ties to the least total (summed flow by flow), then the lowest; the flows' loads then added one flow
    at a time, each flow's ports read after the previous flow's were added.  A job whose first flow has
    ``flow_fixed >= 0`` is replayed, as in ``greedy``."""
    maxH = out_links.shape[1]
    picks = np.zeros(maxH, dtype=np.int64)
    worst = np.zeros(64, dtype=np.float64)
    total = np.zeros(64, dtype=np.float64)
    for k in range(job_ptr.shape[0] - 1):
        a = job_ptr[k]
        b = job_ptr[k + 1]
        if b == a:
            continue
        replay = flow_fixed[a] >= 0
        r = 0
        if not replay:
            R = 0
            for i in range(a, b):
                if routes[flow_set[i]] > R:
                    R = routes[flow_set[i]]
            RR = R if R > 1 else 1
            if worst.shape[0] < RR:
                worst = np.zeros(RR, dtype=np.float64)
                total = np.zeros(RR, dtype=np.float64)
            for q in range(RR):
                worst[q] = 0.0
                total[q] = 0.0
            for i in range(a, b):
                p = flow_set[i]
                Rp = routes[p]
                H = hops[p]
                if Rp == 0:
                    continue
                cb = h_ptr[p]
                C = 0
                for h in range(H):
                    if col[cb + h]:
                        C += 1
                if C == 0:
                    continue
                base = rh_ptr[p]
                rate = flow_rate[i]
                for rr in range(R):
                    q = rr % Rp
                    wv = 0.0
                    t = 0.0
                    seen = False
                    for h in range(H):
                        if col[cb + h]:
                            j = base + q * H + h
                            f = first[j]
                            g = load[f + least[f]]
                            c = cap[f] if on_net[j] else math.inf
                            v = g + rate / c
                            if not seen or v > wv:
                                wv = v
                            t = g if not seen else t + g
                            seen = True
                    if wv > worst[rr]:
                        worst[rr] = wv
                    total[rr] = total[rr] + t
            lo = worst[0]
            for q in range(1, RR):
                if worst[q] < lo:
                    lo = worst[q]
            r = -1
            best_total = 0.0
            for q in range(RR):
                if worst[q] == lo and (r < 0 or total[q] < best_total):
                    r = q
                    best_total = total[q]
        for i in range(a, b):
            for h in range(maxH):
                out_links[i, h] = -1
            p = flow_set[i]
            Rp = routes[p]
            H = hops[p]
            if Rp == 0:
                out_pick[i] = 0
                continue
            base = rh_ptr[p]
            cb = h_ptr[p]
            if replay:
                index = flow_fixed[i]
                q = _fixed_picks(offsets, r_ptr[p], Rp, width, base, H, index, picks)
            else:
                q = r % Rp
                index = offsets[r_ptr[p] + q] + _least_picks(first, width, col, cb, base, H, q, least, picks)
            out_pick[i] = index
            _take(first, width, on_net, base, H, q, picks, flow_rate[i], cap, load, least, out_links, i)
