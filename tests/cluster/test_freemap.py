import numpy as np
import pytest

from dlsched.cluster import Cluster, FreeMap, Tier
from dlsched.cluster.placement import ideal_gpus, pick_gpu_ids, pick_gpus
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


def _brute_best_fit(fm, t, n):
    """The fullest node of type t with at least n free GPUs, lowest id on ties, by a plain scan."""
    c = fm.cluster
    fits = [(int(fm.node_free[nd]), nd) for nd in range(c.num_nodes)
            if int(c.node_type[nd]) == t and fm.node_free[nd] >= n]
    return min(fits)[1] if fits else None


@pytest.mark.parametrize("name", ["crius-sim", "gavel-900"])
def test_best_fit_index_agrees_with_a_scan_through_changes(name):
    # the engine's map answers best-fit queries from its (type, free count) index, a scratch copy
    # from the arrays: both must equal a plain scan after any mix of small and large changes
    import random

    c = Cluster.load(name)
    fm = FreeMap(c)
    rng = random.Random(7)
    held: list[list[int]] = []
    for step in range(300):
        if held and rng.random() < 0.45:
            fm.release(held.pop(rng.randrange(len(held))))
        else:
            free = np.flatnonzero(fm.occupancy == 0).tolist()
            if not free:
                continue
            gpus = rng.sample(free, min(len(free), rng.choice([1, 2, 5, 40])))
            fm.allocate(gpus)
            held.append(gpus)
        if step % 25 == 0:
            fm.check()  # also re-checks the index against the free counts
            scratch = fm.copy()
            for t in range(len(c.gpu_types)):
                for n in (1, 2, 3, 4, 8, 16):
                    want = _brute_best_fit(fm, t, n)
                    assert fm.best_fit_node(t, n) == want
                    assert scratch.best_fit_node(t, n) == want
            # whole placements too: the engine's map orders only the nodes its index says have a
            # free GPU, a scratch copy sorts every node with numpy
            for t in [None, *range(len(c.gpu_types))]:
                for n in (1, 3, 8, 24, 64, 200):
                    assert pick_gpu_ids(fm, n, t) == pick_gpu_ids(scratch, n, t)


def test_free_map_survives_pickling(sim):
    # it holds memoryviews on its arrays (not picklable): they are rebuilt on the other side
    import copy
    import pickle

    fm = FreeMap(sim)
    fm.allocate([0, 1, 9])
    for other in (pickle.loads(pickle.dumps(fm)), copy.deepcopy(fm)):
        other.allocate([2])
        assert other.total_free == sim.num_gpus - 4 and fm.total_free == sim.num_gpus - 3
        assert other.occupancy[2] == 1 and fm.occupancy[2] == 0
        other.check()


def test_free_ids_of_a_node_never_exceed_its_free_gpus(sim):
    """Asked for more GPUs than a node has (a placement spanning nodes asks each for the rest),
    an idle node gives all of its GPUs and a partly busy one all of its free ones."""
    fm = FreeMap(sim)
    node = next(nd.id for nd in sim.nodes if nd.num_gpus >= 2)
    first, count = sim.nodes[node].first_gpu, sim.nodes[node].num_gpus
    assert fm.free_ids_of_node(node, count + 5) == list(range(first, first + count))
    assert fm.free_ids_of_node(node, 1) == [first]
    fm.allocate([first])
    assert fm.free_ids_of_node(node, count + 5) == list(range(first + 1, first + count))
    assert fm.copy().free_ids_of_node(node, count + 5) == list(range(first + 1, first + count))
