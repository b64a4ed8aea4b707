import numpy as np
import pytest

from dlsched.cluster import Cluster, FreeMap, Tier
from dlsched.cluster.placement import ideal_gpus, pick_gpus
from dlsched.errors import InvariantError


@pytest.fixture
def sim():
    return Cluster.load("crius-sim")


def test_counts_follow_allocations(sim):
    f = FreeMap(sim)
    a100 = sim.type_id("A100")
    g = pick_gpus(f, 6, a100)
    f.allocate(g)
    assert f.free_of_type(a100) == 320 - 6
    assert f.total_free == 1280 - 6
    nodes = sim.gpu_node[g]
    assert sum(f.free_on_node(int(n)) for n in set(nodes)) == 8 - 6
    f.release(g)
    assert f.free_of_type(a100) == 320 and f.total_free == 1280
    f.check()


def test_double_allocation_is_refused(sim):
    f = FreeMap(sim)
    f.allocate([0, 1])
    with pytest.raises(InvariantError, match="already held"):
        f.allocate([1, 2])
    with pytest.raises(InvariantError, match="not held"):
        f.release([5])
    # a packed job beside an exclusive one is refused, as is an exclusive job on a packed GPU
    with pytest.raises(InvariantError, match="another sharing mode"):
        f.allocate([1, 2], shared=True)
    f.allocate([2, 3], mode="packed")
    f.allocate([3, 4], mode="packed")  # packing beside packing is explicit and allowed
    assert f.occupancy[3] == 2
    with pytest.raises(InvariantError, match="already held"):
        f.allocate([3])
    with pytest.raises(InvariantError, match="another sharing mode"):
        f.allocate([4], mode="sliced")
    f.release([3, 4])
    assert f.occupancy[3] == 1 and f.is_free([4])
    f.allocate([4], mode="sliced")  # a freed GPU takes any mode again
    f.check()


def test_rack_and_type_counts_are_consistent(sim):
    f = FreeMap(sim)
    rng = np.random.default_rng(1)
    held = []
    for _ in range(50):
        g = pick_gpus(f, int(rng.integers(1, 9)))
        if g is not None:
            f.allocate(g)
            held.append(g)
    for g in held[::2]:
        f.release(g)
    f.check()
    for r in range(sim.num_racks):
        for t in range(len(sim.gpu_types)):
            mask = (sim.gpu_rack == r) & (sim.gpu_type_idx == t) & (f.occupancy == 0)
            assert f.free_in_rack(r, t) == int(mask.sum())


def test_placement_prefers_one_node_then_one_rack(sim):
    f = FreeMap(sim)
    v100 = sim.type_id("V100")
    g = pick_gpus(f, 16, v100)
    assert sim.tier(g) == Tier.NVLINK
    a40 = sim.type_id("A40")
    g = pick_gpus(f, 8, a40)
    assert sim.tier(g) == Tier.RACK and len(set(sim.gpu_node[g])) == 4
    assert pick_gpus(f, 8, a40, max_tier=Tier.NVLINK) is None
    assert pick_gpus(f, 321, a40) is None


def test_best_fit_keeps_whole_nodes(sim):
    f = FreeMap(sim)
    a100 = sim.type_id("A100")
    first = pick_gpus(f, 1, a100)
    f.allocate(first)
    second = pick_gpus(f, 1, a100)
    assert sim.gpu_node[second[0]] == sim.gpu_node[first[0]]  # fills the started node


def test_tiers_inside_a_pcie_node():
    c = Cluster.load("gandiva-100")
    n = c.nodes[0]
    g = list(n.gpus)
    assert c.pair_tier(g[0], g[1]) == Tier.PCIE_SWITCH
    assert c.pair_tier(g[0], g[2]) == Tier.CROSS_SOCKET
    assert c.tier(g) == Tier.CROSS_SOCKET
    assert c.link(Tier.CROSS_SOCKET, 0).bandwidth_Bps < c.link(Tier.PCIE_SWITCH, 0).bandwidth_Bps


def test_ideal_placement_is_cached_and_tight(sim):
    g = ideal_gpus(sim, 4, sim.type_id("A100"))
    assert sim.tier(g) == Tier.NVLINK
    assert ideal_gpus(sim, 4, sim.type_id("A100")) is g
