"""Per-job path choice (CRUX section 4.1, TACCL* as CRUX ran it): one switch route for all of a job's flows."""

import random

from dlsched.comm.base import CommFlow, CommJob, CommView
from dlsched.comm.crux import crux_flow, crux_full
from dlsched.comm.job_paths import least_congested_per_job
from dlsched.comm.paths import least_congested
from dlsched.comm.scheduled import build_view
from dlsched.comm.taccl import Taccl
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos


def _view(g, seed, jobs=3, hosts_each=2):
    """Jobs of whole hosts on both NICs, on distinct random hosts."""
    fc = FlowContention(g, seed=seed)
    rng = random.Random(seed)
    hosts = list(range(len(g.hosts)))
    rng.shuffle(hosts)
    placed = {}
    for j in range(jobs):
        mine = hosts[hosts_each * j:hosts_each * (j + 1)]
        fc.add_placed(f"j{j}", [(h, n) for h in mine for n in (0, 1)], rng.uniform(1e8, 1e9), 0.3, 0.1)
        placed[f"j{j}"] = (8 * hosts_each, 0.3, 0.1)
    return build_view(fc, placed, {j: i for i, j in enumerate(placed)})


def _route(paths, index):
    return max(r for r, o in enumerate(paths.grid()[2].tolist()) if o <= index)


def _routes(view, picks):
    return {j: [_route(f.candidates, picks[j][i]) for i, f in enumerate(job.flows) if len(f.candidates.routes) > 1]
            for j, job in view.jobs.items()}


def test_every_flow_of_a_job_takes_one_route():
    g = clos(12, 4, 2, nics_per_host=2, nic_gbps=200.0, port_gbps=0)  # a ToR-agg bundle is one link
    for seed in range(6):
        view = _view(g, seed, jobs=2, hosts_each=4)
        order = [view.jobs[j] for j in sorted(view.jobs)]
        assert all(len(set(r)) <= 1 for r in _routes(view, least_congested_per_job(view, order)).values())


def test_per_flow_splits_a_job_over_both_aggregation_switches_and_per_job_does_not():
    # x (ToRs 0, 1) loads aggregation switch 0's links first; y's ring crosses ToR 0 (loaded on agg 0),
    # then ToRs 2 -> 3 (idle): per flow it takes agg 1, agg 0, agg 1; per job one switch for all three
    g = clos(8, 2, 2, nics_per_host=1, nic_gbps=200.0, port_gbps=0)
    fc = FlowContention(g, seed=0)
    fc.add_placed("x", [(0, 0), (2, 0)], 1e9, 0.3, 0.1)
    fc.add_placed("y", [(1, 0), (4, 0), (6, 0)], 1e9, 0.3, 0.1)
    view = build_view(fc, {"x": (16, 0.3, 0.1), "y": (24, 0.3, 0.1)}, {"x": 1, "y": 2})
    order = [view.jobs["x"], view.jobs["y"]]
    per_flow = _routes(view, least_congested(view, order))["y"]
    per_job = _routes(view, least_congested_per_job(view, order))["y"]
    assert len(per_flow) == 3 and set(per_flow) == {0, 1}
    assert len(per_job) == 3 and len(set(per_job)) == 1


def test_per_job_choice_on_listed_candidates_equals_path_sets_and_replays():
    # one link per bundle: a candidate is a route, so the listed search must pick the same candidates
    g = clos(8, 4, 2, nics_per_host=2, nic_gbps=200.0, port_gbps=0)
    for seed in range(4):
        view = _view(g, seed)
        listed = CommView({k: CommJob(j.job_id, j.gpus, j.iteration_s, j.compute_s, j.comm_s, j.start_s,
                                      tuple(CommFlow(f.nbytes, tuple(f.candidates), f.chosen) for f in j.flows),
                                      j.arrival) for k, j in view.jobs.items()},
                          view.capacity, view.network_links)
        order = sorted(view.jobs)
        fresh = least_congested_per_job(view, [view.jobs[j] for j in order])
        assert fresh == least_congested_per_job(listed, [listed.jobs[j] for j in order])
        memo = {}
        least_congested_per_job(view, [view.jobs[j] for j in order[:2]], memo)
        assert least_congested_per_job(view, [view.jobs[j] for j in order], memo) == fresh


def test_paper_granularity_is_the_default_and_per_flow_stays_available():
    assert crux_full().path == "job" and Taccl().path == "job"
    assert crux_flow().path == "flow" and crux_flow().name == "crux-flow"
    try:
        crux_full(path="link")
    except ValueError as e:
        assert "link" in str(e)
    else:
        raise AssertionError("an unknown path granularity was accepted")
