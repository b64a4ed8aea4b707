"""Alpha-beta collectives: textbook values, algorithm choice, monotonicity in the tier."""

from __future__ import annotations

import math

import pytest

from dlsched.cluster.topology import Cluster, LinkCost, Tier
from dlsched.perf.comm.collectives import (ALGORITHMS, allgather_time, allreduce_time, alltoall_time, flat_links,
                                      links_of, reduce_scatter_time, sendrecv_time)

LINK = LinkCost(10e9, 5e-6)
MB = 1 << 20


@pytest.fixture(scope="module")
def dally():
    return Cluster.load("dally-2racks")


def test_ring_matches_textbook():
    n, s = 8, 100 * MB
    want = 2 * (n - 1) * (LINK.latency_s + s / (n * LINK.bandwidth_Bps))
    assert allreduce_time(s, flat_links(n, LINK), "ring") == pytest.approx(want)


def test_tree_latency_beats_ring_for_tiny_messages():
    links = flat_links(64, LINK)
    assert allreduce_time(64, links, "tree") < allreduce_time(64, links, "ring")
    assert allreduce_time(64, links, "auto") == min(allreduce_time(64, links, a) for a in ("ring", "tree"))


def test_one_rank_costs_nothing(dally):
    for a in ALGORITHMS:
        assert allreduce_time(MB, links_of(dally, [3]), a) == 0.0
    assert alltoall_time(MB, links_of(dally, [3])) == 0.0


def test_reduce_scatter_plus_allgather_is_ring_allreduce():
    links = flat_links(4, LINK)
    assert reduce_scatter_time(MB, links, "ring") + allgather_time(MB, links, "ring") == pytest.approx(
        allreduce_time(MB, links, "ring"))


def test_sendrecv():
    assert sendrecv_time(10e9, LINK) == pytest.approx(1.0 + 5e-6)


def test_links_of_levels(dally):
    one_node = links_of(dally, range(8))
    assert [lv.tier for lv in one_node.levels] == [Tier.NVLINK]
    two_racks = links_of(dally, [0, 1, 8, 9, 64, 65, 72, 73])
    assert [lv.tier for lv in two_racks.levels] == [Tier.NVLINK, Tier.RACK, Tier.NETWORK]
    assert [lv.fan_in for lv in two_racks.levels] == [2, 2, 2]


def test_hierarchical_beats_flat_ring_across_nodes(dally):
    links = links_of(dally, range(16))
    assert allreduce_time(100 * MB, links, "hierarchical") < allreduce_time(100 * MB, links, "ring")


@pytest.mark.parametrize("algo", ALGORITHMS)
@pytest.mark.parametrize("nbytes", [4 * 1024, MB, 100 * MB])
def test_slower_tier_never_faster(dally, algo, nbytes):
    """Same GPU count, looser placement: the collective never gets cheaper."""
    machine = links_of(dally, range(8))
    rack = links_of(dally, range(0, 64, 8))
    network = links_of(dally, [0, 8, 16, 24, 64, 72, 80, 88])
    t = [allreduce_time(nbytes, x, algo) for x in (machine, rack, network)]
    assert t[0] <= t[1] <= t[2]
    a = [alltoall_time(nbytes, x) for x in (machine, rack, network)]
    assert a[0] <= a[1] <= a[2]


def test_more_gpus_across_slower_tier_never_speed_up_sync(dally):
    """Adding racks or nodes at a slower tier cannot make the all-reduce cheaper."""
    s = 25 * MB
    prev = 0.0
    for racks, nodes in ((1, 1), (1, 2), (1, 4), (1, 8), (2, 8)):
        gpus = [r * 64 + n * 8 + g for r in range(racks) for n in range(nodes) for g in range(8)]
        t = allreduce_time(s, links_of(dally, gpus), "auto")
        assert t >= prev - 1e-12, (racks, nodes)
        prev = t
    # the same 8 GPUs spread one per node, then one rack further: never cheaper
    assert allreduce_time(s, links_of(dally, [0, 8, 16, 24, 32, 40, 48, 64]), "auto") >= \
        allreduce_time(s, links_of(dally, [0, 8, 16, 24, 32, 40, 48, 56]), "auto")


def test_alltoall_bandwidth_term():
    # 4 ranks on one link, each sends 1 GB in all: 3/4 of it leaves the rank
    t = alltoall_time(1e9, flat_links(4, LinkCost(1e9, 0.0)))
    assert math.isclose(t, 0.75)
