"""Topology-oblivious placement (``--placement first-free``): first free GPUs in node order."""

import pytest

from dlsched.cluster import Cluster, FreeMap, Tier
from dlsched.cluster.oblivious import check_mode
from dlsched.cluster.placement import pick_gpus


def test_first_free_fragments_where_packed_consolidates():
    c = Cluster.load("crux-clos")  # 2 hosts of 8 GPUs per ToR (rack)
    packed, oblivious = FreeMap(c), FreeMap(c, first_free=True)
    # a 12-GPU job, then free GPUs 4-9 (across the boundary of the first two hosts)
    f = oblivious
    a = pick_gpus(f, 12, None)
    assert a.tolist() == list(range(12))  # the first free GPUs, across the first host boundary
    f.allocate(a)
    f.release(a[4:10])
    b = pick_gpus(f, 8, None)
    assert b.tolist() == [4, 5, 6, 7, 8, 9, 12, 13] and len(set(c.gpu_node[b])) == 2  # the holes first
    # a job held to one node takes the first node with room, not the holes
    assert len(set(c.gpu_node[pick_gpus(f, 8, None, max_tier=Tier.NVLINK)])) == 1
    # the packed default on the same free GPUs keeps the job on one host; the cluster holds no mode
    p = packed
    p.allocate(a)
    p.release(a[4:10])
    assert len(set(c.gpu_node[pick_gpus(p, 8, None)])) == 1


def test_first_free_is_opt_in_and_checked():
    c = Cluster.load("crux-clos")
    with pytest.raises(ValueError, match="placement must be one of"):
        check_mode("scatter")
    f = FreeMap(c)
    f.allocate(list(range(4)))
    assert len(set(c.gpu_node[pick_gpus(f, 8, None)])) == 1  # default: packed, a whole free host


def test_a_scratch_copy_keeps_the_mode():
    c = Cluster.load("crux-clos")
    assert FreeMap(c, first_free=True).copy().first_free and not FreeMap(c).copy().first_free
