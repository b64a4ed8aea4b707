"""Small synthetic Philly-like traces for the Crius policy tests (no shared data needed)."""

from __future__ import annotations

import random

from dlsched.workload.job import JobSpec

# (family, variant, batch) pairs from Crius Table 2 that fit the testbed's 24 GB GPUs at small counts
MODELS = [("bert", "760M", 128), ("bert", "1.3B", 256), ("wide_resnet", "1B", 256),
          ("moe", "1.3B", 256), ("wide_resnet", "500M", 256), ("bert", "2.6B", 256)]


def small_trace(n: int = 40, seed: int = 0, gap_s: float = 120.0, iters=(300, 3000),
                types=("A40", "A10"), deadline_slack: float | None = None) -> list[JobSpec]:
    rng = random.Random(seed)
    jobs, t = [], 0.0
    for i in range(n):
        fam, var, batch = MODELS[rng.randrange(len(MODELS))]
        t += rng.expovariate(1.0 / gap_s)
        it = rng.randint(*iters)
        ddl = None
        if deadline_slack is not None:
            # a mix: some generous, some impossible (a few seconds)
            ddl = t + (5.0 if i % 4 == 0 else deadline_slack * it)
        jobs.append(JobSpec(f"j{i:03d}", round(t, 3), fam, rng.choice([1, 2, 4, 8]), batch_size=batch,
                            total_iterations=it, gpu_type=rng.choice(types), params=var, deadline=ddl))
    return jobs


def cold_lp_value(lp, value, cap) -> float:
    """The minimised objective of a kept LP model's problem (``lp``: ``HotAssignmentLP`` or
    ``PricedAssignmentLP``, every job's full columns) solved afresh with these column values."""
    import numpy as np

    from dlsched.policies.gavel import highs_lp

    n = len(lp.rows)
    indptr, indices, data = highs_lp.assignment_columns(lp.col_job, n + lp.data["type"], lp.data["count"])
    return highs_lp.solve_box_lp_value(value, indptr, indices, data, np.concatenate([np.ones(n), cap]),
                                       presolve=False, simplex=True)[1]
