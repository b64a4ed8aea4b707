"""Topology-oblivious placement: the first free GPUs in node order, as a plain cluster scheduler.

CRUX (Cao et al., SIGCOMM '24) motivates inter-job communication scheduling
with its production cluster, where 36.3% of jobs shared links with others
(section 2.2, Fig. 6).  It puts this down to the job scheduler: "resource
fragmentation caused by the job scheduler's GPU allocation policies" gives
PCIe contention, and "a job may use GPU resources from several cluster units
(pods) but may not use each pod completely.  If multiple jobs share resources
from the same pods, they would compete for the links connecting the pods"
(section 2.3); its own measurement puts a BERT job on four GPUs of each of
four hosts beside a GPT job under the same two ToRs.  ``pick_gpus`` packs
jobs onto the fewest nodes and racks, which hides exactly that contention, so
this module gives the placement such a scheduler makes: walk the nodes in id
order (the spec's rack order) and take the first free GPUs, whatever the
topology.  Fragmentation then comes from the arrivals and departures alone.

Opt-in per run (``dlsched simulate --placement first-free``, ``Simulator(placement=...)``); the default
(``packed``) is ``pick_gpus`` unchanged.  A tier limit is honoured the plain
way: a job held to one node (or rack) takes the first node (rack) with room.
"""

from __future__ import annotations

from dlsched.cluster.freemap import FreeMap, nodes_of_type
from dlsched.cluster.topology import Tier
from dlsched.defaults import PLACEMENTS as MODES


def check_mode(mode: str) -> str:
    """``mode`` if it is one of ``MODES``; a run chooses it (``RunSpec.cluster.placement``), the
    engine's free map carries it (``FreeMap.first_free``): the topology knows nothing of it."""
    if mode not in MODES:
        raise ValueError(f"placement must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


def first_free(freemap: FreeMap, n: int, type_id: int | None, max_tier: Tier) -> list[int] | None:
    """The first ``n`` free GPUs of one type in node order (any type with room, the first listed,
    when ``type_id`` is None; across types as a last resort, as ``pick_gpus`` does), or None."""
    c = freemap.cluster
    every = range(len(c.gpu_types)) if type_id is None else (type_id,)
    for t in every:
        if freemap.free_of_type(t) >= n:
            got = _first(freemap, nodes_of_type(c)[t].tolist(), n, max_tier)
            if got is not None:
                return got
    if type_id is None and max_tier >= Tier.NETWORK and freemap.total_free >= n:
        return _first(freemap, range(c.num_nodes), n, max_tier)
    return None


def _first(freemap: FreeMap, nodes, n: int, max_tier: Tier) -> list[int] | None:
    node_free = freemap._nf  # the free map's own fast view, as placement.py reads it
    if max_tier < Tier.RACK:  # one node: the first with room
        node = next((nd for nd in nodes if node_free[nd] >= n), None)
        return None if node is None else freemap.free_ids_of_node(node, n)
    if max_tier < Tier.NETWORK:  # one rack: the first whose nodes (of this list) have room
        by_rack: dict[int, list[int]] = {}
        for nd in nodes:
            by_rack.setdefault(int(freemap.cluster.node_rack[nd]), []).append(nd)
        for rack_nodes in by_rack.values():
            if sum(int(node_free[nd]) for nd in rack_nodes) >= n:
                return _take(freemap, rack_nodes, n)
        return None
    return _take(freemap, nodes, n)


def _take(freemap: FreeMap, nodes, n: int) -> list[int] | None:
    got = freemap.take(nodes, n)
    return got if len(got) == n else None
