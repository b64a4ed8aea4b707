"""Choosing GPUs: consolidated placements on the fewest nodes and racks.

Pure functions over a ``FreeMap``; nothing is allocated here.  Every policy
that needs "n GPUs, as close together as possible" calls ``pick_gpus``.
"""

from __future__ import annotations

import numpy as np

from dlsched.cluster.freemap import NO_FIT, FreeMap, nodes_of_type
from dlsched.cluster.oblivious import first_free
from dlsched.cluster.topology import Cluster, Tier


def _racks_of_type(cluster: Cluster) -> list[tuple[list[int], list[list[int]]]]:
    """Per GPU type: the racks holding its nodes (ascending), and each such rack's nodes of the type."""
    def build():
        out = []
        for nodes in nodes_of_type(cluster):
            racks = cluster.node_rack[nodes]
            ids = sorted(set(racks.tolist()))  # not np.unique: its first call imports numpy.ma (~10 ms)
            out.append((ids, [nodes[racks == r].tolist() for r in ids]))
        return out
    return cluster.derived("placement.racks_of_type", build)


def _single_node(freemap: FreeMap, n: int, t: int) -> list[int] | None:
    """Best fit on one node of type ``t``: the fullest node that still fits keeps big holes for big jobs."""
    node = freemap.best_fit_node(t, n)
    return None if node is None else freemap.free_ids_of_node(node, n)


def _one_rack(freemap: FreeMap, n: int, t: int) -> list[int] | None:
    """The fullest rack that fits (ties: lowest rack id), its nodes by free GPUs, most first
    (ties: node id), so the job spans as few nodes as possible."""
    racks_t, rack_nodes = _racks_of_type(freemap.cluster)[t]
    rack_type_free = freemap._rtf
    i, best_k = -1, NO_FIT
    for j, r in enumerate(racks_t):  # a few dozen racks: plain Python beats numpy's fixed costs
        k = rack_type_free[r, t]
        if n <= k < best_k:
            i, best_k = j, k
            if k == n:
                break  # nothing fits tighter, and later racks only tie
    if i < 0:
        return None
    node_free = freemap._nf
    return freemap.take(sorted(rack_nodes[i], key=lambda nd: -node_free[nd]), n)


def _fullest_first(freemap: FreeMap, nodes: list[int], rack_free: list[int]) -> list[int]:
    """``nodes`` by their rack's free GPUs (``rack_free[rack]``), most first, then by their own,
    most first, then by id: the order numpy's lexsort gives over every node, but only over the
    nodes that have a free GPU (the only ones a placement takes from)."""
    node_rack, node_free = freemap._lists[1], freemap._nf
    nodes.sort(key=lambda nd: (-rack_free[node_rack[nd]], -node_free[nd], nd))
    return nodes


def _across_racks(freemap: FreeMap, n: int, t: int) -> list[int]:
    """Fullest racks first, fullest nodes first inside each (the type has ``n`` free GPUs)."""
    nodes = freemap.nodes_with_free((t,))
    if nodes is not None:
        return freemap.take(_fullest_first(freemap, nodes, freemap.rack_type_free[:, t].tolist()), n)
    c = freemap.cluster  # a scratch map keeps no index of nodes with free GPUs
    nodes = nodes_of_type(c)[t]
    racks = c.node_rack[nodes]
    order = np.lexsort((-freemap.node_free[nodes], -freemap.rack_type_free[racks, t]))
    return freemap.take(nodes[order], n)


def pick_gpus(freemap: FreeMap, n: int, type_id: int | None = None,
              max_tier: Tier = Tier.NETWORK) -> np.ndarray | None:
    """``n`` free GPUs of one type on the fewest nodes/racks, or None if none fit.

    With ``type_id`` None every type is tried and the tightest tier wins
    (ties: the type listed first in the cluster spec).  ``max_tier`` refuses
    placements looser than that tier (Dally's machine / rack consolidation).
    Intra-node tiers are not distinguished here: any single node counts as
    the machine tier.  An unpinned job too big for any one type may span
    types (fullest racks and nodes first); it then runs at the pace of its
    slowest GPU, which is the perf model's business.
    """
    got = pick_gpu_ids(freemap, n, type_id, max_tier)
    return None if got is None else np.array(got, dtype=np.intp)


def pick_gpu_ids(freemap: FreeMap, n: int, type_id: int | None = None,
                 max_tier: Tier = Tier.NETWORK) -> list[int] | None:
    """``pick_gpus`` as a list of ints: cheaper for a caller that only hands the ids on."""
    if n <= 0:
        raise ValueError("a placement needs at least one GPU")
    if freemap.first_free:  # opt-in topology-oblivious placement (cluster/oblivious.py)
        return first_free(freemap, n, type_id, max_tier)
    # the tightest tier wins, ties to the type listed first: each tier is tried over every type
    # before the next, so a looser placement is only computed when no tighter one exists
    every = range(len(freemap.cluster.gpu_types)) if type_id is None else (type_id,)
    type_free = freemap._tf
    types = [t for t in every if type_free[t] >= n]
    for t in types:
        got = _single_node(freemap, n, t)
        if got is not None:
            return got
    if max_tier >= Tier.RACK:
        for t in types:
            got = _one_rack(freemap, n, t)
            if got is not None:
                return got
    if types and max_tier >= Tier.NETWORK:
        return _across_racks(freemap, n, types[0])
    if type_id is None and max_tier >= Tier.NETWORK and freemap.total_free >= n:
        c = freemap.cluster
        nodes = freemap.nodes_with_free(range(len(c.gpu_types)))
        if nodes is not None:
            return freemap.take(_fullest_first(freemap, nodes, freemap.rack_type_free.sum(axis=1).tolist()), n)
        rack_free = freemap.rack_type_free.sum(axis=1)
        order = np.lexsort((-freemap.node_free, -rack_free[c.node_rack]))
        return freemap.take(order, n)
    return None


def ideal_gpus(cluster: Cluster, n: int, type_id: int | None) -> np.ndarray:
    """The tightest placement of ``n`` GPUs (of a type, or of any) on an empty cluster, for sizing jobs."""
    cache = cluster.derived("placement.ideal_gpus", dict)
    key = (n, type_id)
    if key not in cache:
        got = pick_gpus(FreeMap(cluster), n, type_id)
        if got is None:
            what = "in all" if type_id is None else f"of {cluster.gpu_types[type_id].name}"
            raise ValueError(f"cluster {cluster.name} has fewer than {n} GPUs {what}")
        cache[key] = got
    return cache[key]
