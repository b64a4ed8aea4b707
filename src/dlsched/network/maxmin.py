"""Link bandwidth shared by strict priority between levels and max-min fairness within a level.

Every job sends its flows at one rate ``x_j`` (a ring all-reduce moves at the
pace of its slowest hop, so a job gains nothing from one flow outrunning the
others).  Link ``e`` carries ``n[e, j]`` flows of job ``j``:
``sum_j n[e, j] x_j <= c_e``.  Each job is also capped by ``cap_j``, its rate
on its own narrowest link.  Levels are served in order (0 first, the highest
priority, as a strict-priority switch queue drains); inside a level,
progressive filling raises every unfrozen job's rate together until a link
saturates or a job reaches its cap, freezes those jobs, and goes on
(Bertsekas and Gallager, Data Networks, section 6.5.2).  A lower level gets
only what the levels above left.

The solve itself is ``fluid_kernel.maxmin_solve``, compiled, because the
micro-simulation runs it at every event; this module is its list-based entry
point (and converts job-link lists to the flat arrays the kernel takes).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def flat_links(job_links: Sequence[Sequence[tuple[int, float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``job_links`` as CSR arrays: (row pointer per job, link index, flows), job ``j`` at ``ptr[j]:ptr[j+1]``."""
    ptr = np.zeros(len(job_links) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(links) for links in job_links])
    flat = [pair for links in job_links for pair in links]
    return (ptr, np.array([l for l, _ in flat], dtype=np.int64),
            np.array([n for _, n in flat], dtype=np.float64))


def maxmin_rates(job_links: Sequence[Sequence[tuple[int, float]]], capacity: Sequence[float],
                 cap: Sequence[float], level: Sequence[int] | None = None) -> list[float]:
    """Per-job rates (bytes/s per flow).

    ``job_links[j]`` lists (link index, flows of job j on it); ``capacity[l]`` is link ``l``'s
    bytes/s; ``cap[j]`` job ``j``'s own limit; ``level[j]`` its priority level (0 is served first).
    """
    from dlsched.network.fluid_kernel import maxmin_solve  # imports numba: only when rates are solved

    n = len(job_links)
    levels = np.zeros(n, dtype=np.int64) if level is None else np.asarray(level, dtype=np.int64)
    ptr, links, flows = flat_links(job_links)
    capacity = np.asarray(capacity, dtype=np.float64)
    x = maxmin_solve(np.ones(n, dtype=np.bool_), ptr, links, flows, capacity, np.asarray(cap, dtype=np.float64),
                     levels, np.unique(levels), np.empty(len(capacity)), np.empty(len(capacity)),
                     np.zeros(n, dtype=np.bool_), np.zeros(n))
    return x.tolist()
