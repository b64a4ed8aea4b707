"""Choosing GPUs: consolidated placements on the fewest nodes and racks.

Pure functions over a ``FreeMap``; nothing is allocated here.  Every policy
that needs "n GPUs, as close together as possible" calls ``pick_gpus``.
"""

from __future__ import annotations

import numpy as np

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.topology import Cluster, Tier


def _nodes_by_type(cluster: Cluster) -> list[np.ndarray]:
    cache = getattr(cluster, "_nodes_by_type", None)
    if cache is None:
        cache = [np.flatnonzero(cluster.node_type == t) for t in range(len(cluster.gpu_types))]
        cluster._nodes_by_type = cache
    return cache


def _take(freemap: FreeMap, nodes: np.ndarray, n: int) -> np.ndarray:
    """First ``n`` free GPUs walking ``nodes`` in order."""
    out = []
    need = n
    for node in nodes:
        g = freemap.free_gpus_of_node(int(node))
        if g.size:
            out.append(g[:need])
            need -= min(need, g.size)
            if need == 0:
                break
    return np.concatenate(out)


def _pick_of_type(freemap: FreeMap, n: int, t: int, max_tier: Tier) -> tuple[Tier, np.ndarray] | None:
    c = freemap.cluster
    if freemap.type_free[t] < n:
        return None
    nodes = _nodes_by_type(c)[t]
    free = freemap.node_free[nodes]
    # one node: best fit (the fullest node that still fits) keeps big holes for big jobs
    fits = free >= n
    if fits.any():
        cand = nodes[fits]
        node = cand[np.argmin(free[fits])]
        return Tier.NVLINK, _take(freemap, np.array([node]), n)
    if max_tier < Tier.RACK:
        return None
    racks = c.node_rack[nodes]
    rack_free = freemap.rack_type_free[:, t]
    cand_racks = np.unique(racks[rack_free[racks] >= n])
    # order nodes by free GPUs, most first, so the job spans as few nodes as possible
    if cand_racks.size:
        rack = cand_racks[np.argmin(rack_free[cand_racks])]
        sel = racks == rack
        order = np.argsort(-free[sel], kind="stable")
        return Tier.RACK, _take(freemap, nodes[sel][order], n)
    if max_tier < Tier.NETWORK:
        return None
    # across racks: fullest racks first, fullest nodes first inside each
    order = np.lexsort((-free, -rack_free[racks]))
    return Tier.NETWORK, _take(freemap, nodes[order], n)


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
    if n <= 0:
        raise ValueError("a placement needs at least one GPU")
    types = range(len(freemap.cluster.gpu_types)) if type_id is None else (type_id,)
    best = None
    for t in types:
        got = _pick_of_type(freemap, n, t, max_tier)
        if got is not None and (best is None or got[0] < best[0]):
            best = got
            if best[0] == Tier.NVLINK:
                break
    if best is None and type_id is None and max_tier >= Tier.NETWORK and freemap.total_free >= n:
        c = freemap.cluster
        free = freemap.node_free
        rack_free = freemap.rack_type_free.sum(axis=1)
        order = np.lexsort((-free, -rack_free[c.node_rack]))
        return _take(freemap, order, n)
    return None if best is None else best[1]


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
