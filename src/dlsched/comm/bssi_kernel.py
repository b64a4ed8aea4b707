"""Sincronia's Bottleneck-Select-Scale-Iterate order (``sincronia.bssi_order``), compiled (numba).

The policy orders every placed job at every arrival, completion and move; in Python that was about
half of a Sincronia run on the Lingjun fabric.  The loop here is the Python one's, step for step: each
link's load is summed over the coflows left in job-id order starting from ``0.0 +`` the first term,
the most loaded link (ties to the lowest link id) comes off a heap whose stale entries are skipped,
the coflow put last is the smallest (weight / demand, -demand, job-id order), the others on the
bottleneck scale by ``max(w - w_last * d / d_last, 0.0)``, and only the links of the coflow just
ordered are summed again.  Plain float adds, multiplies, divides and comparisons in the same order,
compiled without ``fastmath``, so the order is the same (``tests/crux/test_comm_bssi.py`` holds it
to the Python loop, ``sincronia.COMPILED = False``).  Imported on the first order, so start-up does
not load numba.
"""

from __future__ import annotations

import heapq

import numpy as np

from dlsched.network.fluid_kernel import _compiled


def _bssi(num_links, j_ptr, j_link, l_ptr, l_job, l_dem, w):
    """Jobs 0..n-1 (job-id order) with their links (``j_ptr``/``j_link``, CSR) and each link's jobs
    in job order with their demands (``l_ptr``/``l_job``/``l_dem``, CSR over link ids); ``w`` the
    weights (changed in place).  Returns the jobs ordered last first, and how many: those on no
    link are left out (the caller appends them), as is everything from a bottleneck on which no job
    left has a positive demand (returned count -1: the caller runs the Python loop, which fails there)."""
    n = len(j_ptr) - 1
    left = np.ones(n, dtype=np.bool_)
    load = np.zeros(num_links)
    live = np.zeros(num_links, dtype=np.bool_)
    heap = [(0.0, 0)]
    heap.pop()
    lives = 0
    for l in range(num_links):
        a, b = l_ptr[l], l_ptr[l + 1]
        if b > a:
            t = 0.0 + l_dem[a]
            for q in range(a + 1, b):
                t = t + l_dem[q]
            load[l] = t
            live[l] = True
            lives += 1
            heap.append((-t, l))
    heapq.heapify(heap)
    out = np.empty(n, dtype=np.int64)
    m = 0
    while lives > 0:
        while True:  # the largest load, ties to the lowest link id
            v, neck = heap[0]
            if live[neck] and load[neck] == -v:
                break
            heapq.heappop(heap)
        last = -1
        best_r = 0.0
        best_d = 0.0
        for q in range(l_ptr[neck], l_ptr[neck + 1]):  # select: the smallest (w / d, -d, job order)
            k = l_job[q]
            d = l_dem[q]
            if left[k] and d > 0:
                r = w[k] / d
                if last < 0 or r < best_r or (r == best_r and -d < -best_d):
                    last, best_r, best_d = k, r, d
        if last < 0:
            return out, -1
        d_last = best_d
        w_last = w[last]
        for q in range(l_ptr[neck], l_ptr[neck + 1]):  # scale the others on the bottleneck
            k = l_job[q]
            d = l_dem[q]
            if left[k] and d > 0 and k != last:
                x = w[k] - w_last * d / d_last
                if 0.0 > x:
                    x = 0.0
                w[k] = x
        out[m] = last
        m += 1
        left[last] = False
        for p in range(j_ptr[last], j_ptr[last + 1]):  # iterate: the links of the job just ordered
            l = j_link[p]
            any_left = False
            t = 0.0
            for q in range(l_ptr[l], l_ptr[l + 1]):
                if left[l_job[q]]:
                    t = t + l_dem[q] if any_left else 0.0 + l_dem[q]
                    any_left = True
            if not any_left:
                if live[l]:
                    live[l] = False
                    lives -= 1
            elif t != load[l]:
                load[l] = t
                heapq.heappush(heap, (-t, l))
    return out, m


bssi = _compiled(_bssi)
