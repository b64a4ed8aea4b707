"""The greedy pass of a Gavel round, compiled (numba): pairs (job, type) in priority order, each
job served at most once, while its type has GPUs for it.  Integer work only, so the result is the
Python loop's exactly.  Importing this module imports numba (a fraction of a CPU second, then the
cached machine code)."""

from __future__ import annotations

import numpy as np

from dlsched.numba_cache import compiled


@compiled
def greedy_serve(jobs, types, sizes, free):
    """(job, type) served, in order, as two int64 arrays; ``free`` (GPUs per type) is consumed."""
    n = jobs.shape[0]
    taken = np.zeros(sizes.shape[0], dtype=np.bool_)
    out_j = np.empty(n, dtype=np.int64)
    out_t = np.empty(n, dtype=np.int64)
    k = 0
    for p in range(n):
        i = jobs[p]
        if taken[i]:
            continue
        t = types[p]
        need = sizes[i]
        if free[t] >= need:
            free[t] -= need
            taken[i] = True
            out_j[k] = i
            out_t[k] = t
            k += 1
    return out_j[:k], out_t[:k]
