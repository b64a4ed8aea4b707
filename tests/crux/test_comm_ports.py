"""Parallel switch ports: ECMP collisions on one port, and path choice over port bundles."""

import random

from dlsched.comm.base import CommFlow, CommJob, CommView
from dlsched.comm.paths import least_congested
from dlsched.comm.scheduled import build_view
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos


def _view_on(g, seed):
    """Ten random 2-host jobs on a fabric with port bundles, as the flow model hashes them."""
    fc = FlowContention(g, seed=seed)
    rng = random.Random(seed)
    placed = {}
    for j in range(10):
        a, b = rng.sample(range(len(g.hosts)), 2)
        fc.add_placed(f"j{j}", [(a, 0), (b, 0)], rng.uniform(1e8, 1e9), 0.3, 0.1)
        placed[f"j{j}"] = (8, 0.3, 0.1)
    return build_view(fc, placed, {j: i for i, j in enumerate(placed)})


def test_port_aware_choice_equals_listing_every_candidate():
    # the least-congested choice over port bundles (per hop, the least loaded port) picks exactly what
    # trying every port combination picks: same candidate index, flow by flow
    g = clos(8, 2, 2, nics_per_host=2, nic_gbps=200.0)  # ToR-agg bundles of 2 ports
    for seed in range(3):
        view = _view_on(g, seed)
        assert any(len(r[1]) > 1 for j in view.jobs.values() for f in j.flows for r in f.candidates.routes)
        listed = CommView({k: CommJob(j.job_id, j.gpus, j.iteration_s, j.compute_s, j.comm_s, j.start_s,
                                      tuple(CommFlow(f.nbytes, tuple(f.candidates), f.chosen) for f in j.flows),
                                      j.arrival) for k, j in view.jobs.items()},
                          view.capacity, view.network_links)
        order = sorted(view.jobs)
        assert least_congested(view, [view.jobs[j] for j in order]) == \
            least_congested(listed, [listed.jobs[j] for j in order])


def test_two_jobs_collide_on_one_port_and_path_selection_parts_them():
    # one aggregation switch, ToR uplinks of 2 ports: two jobs hashed onto the same port slow each other;
    # on separate ports (what least_congested picks) neither is slowed.  A merged uplink would hide this.
    g = clos(4, 2, 1, nics_per_host=1, nic_gbps=200.0)
    assert len(g.ports("tor0", "agg0")) == 2
    for seed in range(50):
        fc = FlowContention(g, seed=seed)
        fc.add_placed("a", [(0, 0), (2, 0)], 1e9, 1.0, 0.2)
        fc.add_placed("b", [(1, 0), (3, 0)], 1e9, 1.0, 0.2)
        if set(fc.traffic("a").flows[0].links) & set(fc.traffic("b").flows[0].links) - {
                l for l in range(g.num_links) if not fc._network_link[l]}:
            break
    else:
        raise AssertionError("no seed hashed the two jobs onto one port")
    assert fc.iteration_time("a")[0] > 1.0 and fc.iteration_time("b")[0] > 1.0
    view = build_view(fc, {"a": (8, 1.0, 0.2), "b": (8, 1.0, 0.2)}, {"a": 1, "b": 2})
    picks = least_congested(view, [view.jobs["a"], view.jobs["b"]])
    for j in ("a", "b"):
        fc.pin(j, picks[j])
        fc.add_placed(j, [(0, 0), (2, 0)] if j == "a" else [(1, 0), (3, 0)], 1e9, 1.0, 0.2)
    assert fc.iteration_time("a") == (1.0, 0.2) and fc.iteration_time("b") == (1.0, 0.2)


def test_port_choice_on_a_three_layer_fabric_equals_listing():
    # the route x hop array scoring (least loaded port of every bundle kept between flows) against
    # trying all 648 port combinations of every cross-pod flow, on a small double-sided fabric where
    # jobs pile onto the same bundles, so ties, loaded ports and idle ports all occur
    from dlsched.network.topologies import double_sided

    g = double_sided(hosts=12, tors=4, aggs=4, cores=2, nics_per_host=2, gpus_per_host=2)
    for seed in range(2):
        fc = FlowContention(g, seed=seed)
        rng = random.Random(seed)
        placed = {}
        for j in range(8):
            hosts = rng.sample(range(len(g.hosts)), rng.choice([2, 3, 4]))
            fc.add_placed(f"j{j}", [(h, k) for h in hosts for k in (0, 1)], rng.uniform(1e8, 1e9), 0.3, 0.1)
            placed[f"j{j}"] = (2 * len(hosts), 0.3, 0.1)
        view = build_view(fc, placed, {j: i for i, j in enumerate(placed)})
        assert max(len(f.candidates) for j in view.jobs.values() for f in j.flows) == 648
        listed = CommView({k: CommJob(j.job_id, j.gpus, j.iteration_s, j.compute_s, j.comm_s, j.start_s,
                                      tuple(CommFlow(f.nbytes, tuple(f.candidates), f.chosen) for f in j.flows),
                                      j.arrival) for k, j in view.jobs.items()},
                          view.capacity, view.network_links)
        for order in (sorted(view.jobs), sorted(view.jobs, reverse=True)):
            assert least_congested(view, [view.jobs[j] for j in order]) == \
                least_congested(listed, [listed.jobs[j] for j in order])


def _self_collided(seed, charge):
    # one job on both NICs of 4 hosts under 2 ToRs: its two rails' rings cross the ToR-aggregation
    # bundles (4 ports each way), where the hash may put two of its own flows on one port
    g = clos(4, 2, 1, nics_per_host=2, nic_gbps=200.0, gpus_per_host=2)
    fc = FlowContention(g, seed=seed, charge_self_collisions=charge)
    fc.add_placed("a", [(h, k) for h in range(4) for k in (0, 1)], 1e9, 1.0, 0.2)
    return fc


def test_self_collisions_are_charged_only_when_asked():
    def collided(fc):
        return any(n > 1 for l, n in fc.traffic("a").link_counts().items() if "agg" in fc.graph.link_name(l))

    hit = [s for s in range(30) if collided(_self_collided(s, False))]
    miss = [s for s in range(30) if s not in hit]
    assert hit and miss
    # default: a job alone keeps its price whatever the hash did ("solo exactness")
    assert _self_collided(hit[0], False).iteration_time("a") == (1.0, 0.2)
    # charged: two flows on one port halve the ring's rate, so its network time doubles
    fc = _self_collided(hit[0], True)
    total, comm = fc.iteration_time("a")
    D = fc.traffic("a").flows[0].nbytes / 25e9  # a ring hop's bytes over a 200 Gb/s NIC (and port)
    assert abs(total - (1.0 + D)) < 1e-9 and abs(comm - (0.2 + D)) < 1e-9
    assert fc.stats["self_collided"] == 1 and fc.describe()["self_collisions"] == "charged"
    # charged, but the hash spread the flows: the price alone
    assert _self_collided(miss[0], True).iteration_time("a") == (1.0, 0.2)


def test_path_choice_memo_gives_a_fresh_searchs_picks_as_jobs_come_and_go():
    from dlsched.comm.crux import by_intensity
    from dlsched.comm.paths import least_congested
    from dlsched.comm.scheduled import build_view
    from dlsched.network.contention import FlowContention
    from dlsched.network.topologies import clos

    fc = FlowContention(clos(8, 2, 2, nic_gbps=200.0, nics_per_host=2, port_gbps=100.0), seed=3)
    placed, arrival, cache, memo = {}, {}, {}, {}
    # one link set and capacity tuple for the run, as ``ScheduledContention`` keeps them (the memo is per fabric)
    net = frozenset(i for i in range(fc.graph.num_links) if fc._network_link[i])
    cap = tuple(float(c) for c in fc.graph.capacity)
    steps = [("add", "a", [(0, 0), (2, 0), (4, 0)], 2e9), ("add", "b", [(1, 0), (3, 0)], 1e9),
             ("add", "c", [(5, 0), (6, 0), (7, 0)], 3e9), ("remove", "b"), ("add", "d", [(1, 4), (3, 4)], 5e8),
             ("remove", "a"), ("add", "e", [(0, 4), (2, 4), (4, 4)], 4e9)]
    for n, step in enumerate(steps):
        if step[0] == "add":
            _, j, where, nbytes = step
            fc.add_placed(j, where, nbytes, 0.4, 0.1)
            placed[j], arrival[j] = (len(where), 0.4, 0.1), n
        else:
            fc.remove(step[1])
            del placed[step[1]]
            cache.pop(step[1], None)
        view = build_view(fc, placed, arrival, net, cap, cache)
        order = by_intensity(view)
        assert least_congested(view, order, memo) == least_congested(view, order)
    assert memo["jobs"][0].job_id == "d"  # the memo was kept between calls


def test_compiled_path_choice_equals_the_python_reference_and_its_meetings_equal_shares_links(monkeypatch):
    # the compiled loop against ``_PortLoads`` (COMPILED off), fresh and memoised, on a three-layer fabric
    # where jobs share NICs and bundles; the links it records give exactly ``shares_links``'s meetings
    from dlsched.comm import paths
    from dlsched.comm.base import shares_links
    from dlsched.network.topologies import double_sided

    g = double_sided(hosts=12, tors=4, aggs=4, cores=2, nics_per_host=2, gpus_per_host=2)
    for seed in range(3):
        fc = FlowContention(g, seed=seed)
        rng = random.Random(seed)
        placed = {}
        for j in range(10):
            hosts = rng.sample(range(len(g.hosts)), rng.choice([2, 3, 5]))
            fc.add_placed(f"j{j}", [(h, rng.choice((0, 1))) for h in hosts], rng.uniform(1e8, 1e9), 0.3, 0.1)
            placed[f"j{j}"] = (len(hosts), 0.3, 0.1)
        view = build_view(fc, placed, {j: i for i, j in enumerate(placed)})
        memo = {}
        for order in (sorted(view.jobs), sorted(view.jobs, reverse=True), sorted(view.jobs, reverse=True)[:4] +
                      sorted(view.jobs)[:6]):
            jobs = [view.jobs[j] for j in order]
            fast = least_congested(view, jobs, memo)
            assert paths.links_meeting(memo, view) == shares_links(view, fast)
            monkeypatch.setattr(paths, "COMPILED", False)
            assert least_congested(view, jobs) == fast
            monkeypatch.setattr(paths, "COMPILED", True)
