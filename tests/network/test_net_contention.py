"""Flow-level contention: hand-computed max-min slowdowns, strict priority, solo exactness."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.network import FlowContention, clos
from dlsched.network.maxmin import maxmin_rates
from dlsched.network.microsim import simulate_group
from dlsched.perf.placement.model import PlacementPerfModel
from dlsched.policies.base import Allocation
from dlsched.workload.job import JobSpec

NIC = 100e9 / 8  # 100 Gb/s in bytes/s


def two_tor_clos():
    # 2 ToRs x 2 hosts, one aggregation switch, 2:1 oversubscribed: each ToR uplink is 100 Gb/s,
    # the same as one host NIC, so two cross-ToR rings from one ToR halve each other
    return clos(4, 2, 1, nic_gbps=100, gpus_per_host=1, oversubscription=2)


def test_two_rings_on_one_uplink_slow_down_as_maxmin_predicts():
    fc = FlowContention(two_tor_clos())
    nbytes, total, comm = 1e9, 1.05, 0.05
    assert fc.add_placed("a", [(0, 0), (2, 0)], nbytes, total, comm) == ["a"]
    assert fc.iteration_time("a") == (total, comm)
    assert fc.add_placed("b", [(1, 0), (3, 0)], nbytes, total, comm) == ["a", "b"]
    # by hand: a 2-host ring sends S = 1 GB each way per iteration; alone at 12.5 GB/s that is
    # D = 0.08 s, ending when the iteration does.  Both start together and share the uplink
    # 50/50, so the transfer takes 2D: the iteration grows by D.
    D = nbytes / NIC
    for job in ("a", "b"):
        t, c = fc.iteration_time(job)
        assert t == pytest.approx(total + D, rel=1e-9)
        assert c == pytest.approx(comm + D, rel=1e-9)
    assert fc.bottleneck("a") == ("tor0->agg0", pytest.approx(2.0))
    # the uplink runs at (bytes per iteration) / (iteration) of its capacity
    util = dict(fc.drain_utilisation())
    assert util["tor0->agg0"] == pytest.approx(2 * nbytes / (total + D) / NIC)
    assert fc.remove("b") == ["a"]
    assert fc.iteration_time("a") == (total, comm)


def test_strict_priority_job_runs_as_if_alone():
    fc = FlowContention(two_tor_clos())
    fc.set_priority("low", 1)
    fc.add_placed("high", [(0, 0), (2, 0)], 1e9, 1.05, 0.05)
    fc.add_placed("low", [(1, 0), (3, 0)], 1e9, 1.05, 0.05)
    assert fc.iteration_time("high") == (1.05, 0.05)
    assert fc.iteration_time("low")[0] >= 1.05


def test_unequal_sharing_by_hand():
    # link 0 (10) shared by jobs 0 and 1; job 1 also on link 1 (3): job 1 is held to 3, job 0 gets 7
    assert maxmin_rates([[(0, 1)], [(0, 1), (1, 1)]], [10.0, 3.0], [100.0, 100.0]) == [7.0, 3.0]
    # strict priority: level 0 takes the whole link first
    assert maxmin_rates([[(0, 1)], [(0, 1)]], [10.0], [100.0, 100.0], [1, 0]) == [0.0, 10.0]
    # a job capped below its fair share leaves the rest to the other
    assert maxmin_rates([[(0, 1)], [(0, 1)]], [10.0], [2.0, 100.0]) == [2.0, 8.0]


def test_overlap_hides_a_slowdown_that_fits_in_compute():
    # job 0 communicates early in a long compute: stretching its transfer costs it nothing;
    # job 1 communicates at the end: it pays the whole stretch
    res = simulate_group([1.0, 1.0], [0.0, 0.9], [0.1, 0.1], [[(0, 1)], [(0, 1)]], [1.0], [1.0, 1.0], [0, 0])
    assert res.iteration_s[0] == pytest.approx(1.0)
    assert res.iteration_s[1] >= 1.0


def test_engine_protocol_alone_gets_exactly_the_perf_price():
    cluster = Cluster.load("crux-testbed")
    perf = PlacementPerfModel(cluster)
    fc = FlowContention.for_cluster(cluster)
    spec = JobSpec("gpt", 0.0, "bert-large", 16, batch_size=256, total_iterations=1)
    alloc = Allocation.of(range(16))  # two hosts
    cost = perf.price(spec, alloc.gpus)
    assert cost.comm > 0
    assert list(fc.add("gpt", spec, alloc, cost)) == ["gpt"]
    assert fc.traffic("gpt").flows, "a two-host job must have network flows"
    assert fc.iteration_time("gpt") == (cost.total, cost.comm)
    # a second job on other hosts of the same ToR pair does not touch it
    spec2 = JobSpec("bert", 0.0, "bert-large", 16, batch_size=256, total_iterations=1)
    alloc2 = Allocation.of(range(48, 64))
    fc.add("bert", spec2, alloc2, perf.price(spec2, alloc2.gpus))
    assert fc.iteration_time("gpt") == (cost.total, cost.comm)
    assert list(fc.remove("bert")) == []


def test_large_groups_use_the_all_communicating_bound():
    from dlsched.network.microsim import all_communicating

    # two jobs on one link of capacity 1, solo rate 1 each: both at half speed for the whole transfer
    res = all_communicating([1.0, 1.0], [0.9, 0.5], [0.1, 0.1], [[(0, 1)], [(0, 1)]], [1.0], [1.0, 1.0], [0, 0])
    assert res.iteration_s == (pytest.approx(1.1), pytest.approx(1.0))
    # strict priority: the starved job waits for the other's transfer, then sends alone
    res = all_communicating([1.0, 1.0], [0.9, 0.9], [0.1, 0.1], [[(0, 1)], [(0, 1)]], [1.0], [1.0, 1.0], [0, 1])
    assert res.iteration_s == (pytest.approx(1.0), pytest.approx(1.1))


def test_level_changes_that_keep_every_rank_leave_the_times_of_a_fresh_solve():
    # a job moved to another level with no job of its group in between skips the solve (its group's
    # ranks are unchanged); the times kept must be what solving every group afresh gives
    import random

    g = clos(16, 4, 1, nic_gbps=100, gpus_per_host=2, oversubscription=4)
    rng = random.Random(3)
    fc = FlowContention(g)
    for j in range(10):
        hosts = rng.sample(range(16), rng.choice([2, 3]))
        fc.add_placed(f"j{j}", [(h, rng.choice((0, 1))) for h in hosts], rng.uniform(2e8, 1e9),
                      rng.uniform(0.2, 0.5), 0.05)
    skipped = 0
    for _ in range(60):
        job, level = f"j{rng.randrange(10)}", rng.randrange(0, 40, 3)
        solves, moved = fc.stats["solves"], fc._jobs[job].level != level
        changed = fc.set_priority(job, level)
        skipped += moved and fc.stats["solves"] == solves
        now = {j: fc.iteration_time(j) for j in fc._jobs}
        fc._cache.clear()
        fc._solve_around(list(fc._jobs))
        assert {j: fc.iteration_time(j) for j in fc._jobs} == now
        assert all(now[j] == fc.iteration_time(j) for j in changed)
    assert fc.stats["largest_group"] > 2 and 0 < skipped < 60  # both paths were taken
