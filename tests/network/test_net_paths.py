"""Equal-cost paths and ECMP hashing."""

from __future__ import annotations

import math

from dlsched.network import PathTable, clos, double_sided
from dlsched.network.paths import ecmp_hash


def test_two_tor_two_agg_clos_path_counts():
    g = clos(4, 2, 2)
    pt = PathTable(g)
    assert len(pt.paths("host0/nic0", "host2/nic0")) == 2  # across ToRs: one path per aggregation switch
    assert len(pt.paths("host0/nic0", "host1/nic0")) == 1  # same ToR
    for p in pt.paths("host0/nic0", "host2/nic0"):
        names = [g.link_name(l) for l in p]
        assert names[0] == "host0/nic0->tor0" and names[-1] == "tor1->host2/nic0"


def test_double_sided_hosts_reach_each_other_over_many_paths():
    g = double_sided(hosts=12, tors=6, aggs=12, cores=4, nics_per_host=8)
    pt = PathTable(g)
    # host0 and host3 sit on the same ToR pair: through the ToR directly
    assert len(pt.paths("host0/nic0", "host3/nic0")) == 1
    # other pairs climb to the pod's 4 aggregation switches and the 4 cores: 4 x 4 x 4 paths
    assert len(pt.paths("host0/nic0", "host1/nic0")) == 64


def test_ecmp_collisions_match_hashing_rate():
    # two flows hashed onto k equal-cost paths collide with probability 1/k
    g = clos(8, 4, 4)
    pt = PathTable(g)
    n, k = 4000, 4
    same = 0
    for i in range(n):
        a = pt.choose("host0/nic0", "host4/nic0", seed=7, job_id=f"a{i}", flow=0)
        b = pt.choose("host1/nic0", "host5/nic0", seed=7, job_id=f"b{i}", flow=0)
        same += g.link_dst[a[0 + 1]] == g.link_dst[b[1]]  # same aggregation switch
    p = 1 / k
    sigma = math.sqrt(p * (1 - p) / n)
    assert abs(same / n - p) < 4 * sigma


def test_ecmp_is_deterministic_and_seeded():
    g = clos(8, 4, 4)
    pt = PathTable(g)
    picks = [pt.choose("host0/nic0", "host4/nic0", 0, f"j{i}", 0) for i in range(50)]
    assert picks == [pt.choose("host0/nic0", "host4/nic0", 0, f"j{i}", 0) for i in range(50)]
    assert picks != [pt.choose("host0/nic0", "host4/nic0", 1, f"j{i}", 0) for i in range(50)]
    assert ecmp_hash(0, "x", 1) == ecmp_hash(0, "x", 1)
    assert pt.choose("host0/nic0", "host4/nic0", 0, "j", 0, pinned=3) == pt.paths("host0/nic0", "host4/nic0")[3]
