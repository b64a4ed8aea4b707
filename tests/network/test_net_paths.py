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
    # other pairs climb to the pod's 4 aggregation switches and the 4 cores: 4 x 4 x 4 switch routes.
    # Each is a bundle of 200 Gb/s ports (a ToR carries 4 hosts x 4 NICs over 4 aggregation switches:
    # 4 ports each; an aggregation switch 2 ToRs x 800 Gb/s over 4 cores: 2 ports), and every port
    # combination is a candidate: 64 routes x (4 x 2 x 2 x 4) ports.  (Before ports were modelled,
    # a bundle was one link and this was 64.)
    ps = pt.paths("host0/nic0", "host1/nic0")
    assert len(ps.routes) == 64
    assert [len(h) for h in ps.routes[0]] == [1, 4, 2, 2, 4, 1]
    assert len(ps) == 64 * 4 * 2 * 2 * 4
    assert all(ps.index(ps[i]) == i for i in (0, 1, 63, 64, 4095))


def test_port_bundle_is_separate_links_each_a_share():
    # a ToR of 2 hosts x 4 NICs x 200 Gb/s at 1:1 over 2 aggregation switches: 4 ports of 200 Gb/s each
    g = clos(4, 2, 2, nics_per_host=4)
    ports = g.ports("tor0", "agg0")
    assert len(ports) == 4
    assert all(g.capacity[l] == 200e9 / 8 for l in ports)
    assert len({g.link_name(l) for l in ports}) == 4
    pt = PathTable(g)
    ps = pt.paths("host0/nic0", "host2/nic0")
    assert len(ps.routes) == 2 and len(ps) == 2 * 4 * 4  # aggregation switch, then a port up and a port down
    assert [g.link_dst[l] for l in ps[0]] == ["tor0", "agg0", "tor1", "host2/nic0"]
    # ECMP spreads flows over every port, not only every switch
    ups = {pt.choose("host0/nic0", "host2/nic0", 0, f"j{i}", 0)[1] for i in range(400)}
    assert ups == set(g.ports("tor0", "agg0")) | set(g.ports("tor0", "agg1"))


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
