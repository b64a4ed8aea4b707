"""Per-job path choice compiled (``greedy_kernel.greedy_per_job``) against the Python ``job_paths._choose``."""

import random

import pytest

from dlsched.comm import paths
from dlsched.comm.base import shares_links
from dlsched.comm.job_paths import least_congested_per_job
from dlsched.comm.scheduled import build_view
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos, double_sided

FABRICS = {
    # bundles of ports between switches, jobs sharing NICs: routes x port choices, as on crux-lingjun
    "double-sided": lambda: double_sided(hosts=12, tors=4, aggs=4, cores=2, nics_per_host=2, gpus_per_host=2),
    # one link per ToR-aggregation pair, flows of one job with different route counts (hosts under one ToR)
    "clos": lambda: clos(16, 4, 3, nics_per_host=2, nic_gbps=200.0, gpus_per_host=2),
}


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_compiled_per_job_choice_gives_the_python_picks_fresh_and_memoised(monkeypatch, fabric):
    g = FABRICS[fabric]()
    for seed in range(4):
        fc = FlowContention(g, seed=seed)
        rng = random.Random(seed)
        placed = {}
        for j in range(12):
            hosts = rng.sample(range(len(g.hosts)), rng.choice([2, 3, 4, 6]))
            fc.add_placed(f"j{j}", [(h, rng.choice((0, 1))) for h in hosts], rng.uniform(1e8, 1e9),
                          rng.uniform(0.2, 0.5), 0.1)
            placed[f"j{j}"] = (len(hosts), 0.3, 0.1)
        view = build_view(fc, placed, {j: i for i, j in enumerate(placed)})
        memo = {}
        for order in (sorted(view.jobs), sorted(view.jobs, reverse=True), sorted(view.jobs, reverse=True)[:5] +
                      sorted(view.jobs)[:7], sorted(view.jobs, reverse=True)):
            jobs = [view.jobs[j] for j in order]
            fast = least_congested_per_job(view, jobs, memo)
            monkeypatch.setattr(paths, "COMPILED", False)
            assert least_congested_per_job(view, jobs) == fast
            monkeypatch.setattr(paths, "COMPILED", True)
            assert least_congested_per_job(view, jobs) == fast
            # the flows' links the compiled loop recorded give exactly the meetings under these picks
            assert paths.links_meeting(memo, view) == shares_links(view, fast)
