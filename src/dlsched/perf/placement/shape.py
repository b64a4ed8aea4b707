"""Placement shapes: what about a set of GPU ids decides its speed, as a small hashable key.

Two allocations with the same shape run a job equally fast: same GPU type(s),
same GPUs-per-node counts, same nodes-per-rack counts, same slowest tier
inside a node, and nodes whose links are the same (same node group).  The
shape is what ``PlacementPerfModel`` caches on, so computing it must be cheap:
it walks precomputed per-GPU Python lists (for the tens of GPUs a job holds,
plain Python beats numpy's per-call overhead).
"""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from dlsched.cluster.topology import Cluster, LinkCost, Tier
from dlsched.perf.comm.collectives import Level, Links


class PlacementShape(NamedTuple):
    """Immutable and hashable; a NamedTuple because it is built on every cache miss of the
    exact-GPU memo and a tuple is the cheapest hashable record Python has."""

    types: tuple[int, ...]  # GPU type indices present, sorted
    gpus_per_node: tuple[int, ...]  # sorted, largest first
    nodes_per_rack: tuple[int, ...]  # sorted, largest first; len = racks spanned
    intra_tier: Tier  # slowest tier inside any node (GPU when every node holds one GPU)
    groups: tuple[int, ...]  # node-group indices present, sorted (decides link figures)

    @property
    def n(self) -> int:
        return sum(self.gpus_per_node)

    @property
    def tier(self) -> Tier:
        if len(self.nodes_per_rack) > 1:
            return Tier.NETWORK
        if len(self.gpus_per_node) > 1:
            return Tier.RACK
        return self.intra_tier


class ShapeIndex:
    """Per-GPU and per-node lookup lists of one cluster, for fast shape keys."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.node = cluster.gpu_node.tolist()
        self.type = cluster.gpu_type_idx.tolist()
        self.switch = cluster.gpu_switch.tolist()
        self.socket = cluster.gpu_socket.tolist()
        self.rack = cluster.node_rack.tolist()
        names = [g.name for g in cluster.spec.node_groups]
        self.group = [names.index(nd.group) for nd in cluster.nodes]
        self.pcie = [nd.intra_kind == "pcie" for nd in cluster.nodes]
        self.one_group = len(names) == 1
        self.one_type = len(cluster.gpu_types) == 1
        self.any_pcie = any(self.pcie)
        self.group_node = {}  # a representative node of each group, for its link figures
        for nd in cluster.nodes:
            self.group_node.setdefault(self.group[nd.id], nd.id)

    def _intra_tier(self, gpus: list[int], node: int) -> Tier:
        if len(gpus) == 1:
            return Tier.GPU
        if not self.pcie[node]:
            return Tier.NVLINK
        sw = self.switch
        s0 = sw[gpus[0]]
        if all(sw[g] == s0 for g in gpus):
            return Tier.PCIE_SWITCH
        so = self.socket
        k0 = so[gpus[0]]
        return Tier.PCIE_HOST if all(so[g] == k0 for g in gpus) else Tier.CROSS_SOCKET

    def shape(self, gpus: list[int]) -> PlacementShape:
        node = self.node
        g0 = gpus[0]
        n0 = node[g0]
        types = self.types_of(gpus)
        # fast path: one node (the common case for small jobs)
        if all(node[g] == n0 for g in gpus):
            return PlacementShape(types, (len(gpus),), (1,), self._intra_tier(gpus, n0), (self.group[n0],))
        per_node = Counter(map(node.__getitem__, gpus))  # C-speed counting
        per_rack = Counter(map(self.rack.__getitem__, per_node))
        groups = (self.group[n0],) if self.one_group else tuple(sorted({self.group[nd] for nd in per_node}))
        counts = sorted(per_node.values(), reverse=True)
        if counts[0] == 1:
            intra = Tier.GPU
        elif not self.any_pcie:
            intra = Tier.NVLINK
        else:
            intra = self._multi_node_intra(gpus)
        return PlacementShape(types, tuple(counts), tuple(sorted(per_rack.values(), reverse=True)), intra, groups)

    def types_of(self, gpus: list[int]) -> tuple[int, ...]:
        if self.one_type:
            return (0,)
        ty = self.type
        t0 = ty[gpus[0]]
        return (t0,) if all(ty[g] == t0 for g in gpus) else tuple(sorted({ty[g] for g in gpus}))

    def _multi_node_intra(self, gpus: list[int]) -> Tier:
        per_node: dict[int, list[int]] = {}
        node = self.node
        for g in gpus:
            per_node.setdefault(node[g], []).append(g)
        return max((self._intra_tier(gs, nd) for nd, gs in per_node.items() if len(gs) > 1), default=Tier.GPU)

    def links(self, shape: PlacementShape) -> Links:
        """The link hierarchy of a shape: slowest link of each level over the groups present."""
        c = self.cluster
        reps = [self.group_node[g] for g in shape.groups]
        levels: list[Level] = []
        gpn = shape.gpus_per_node
        if gpn[0] > 1:
            link = min((c.link(shape.intra_tier, nd) for nd in reps), key=lambda x: x.bandwidth_Bps)
            levels.append(Level(shape.intra_tier, gpn[0], gpn[-1], link, False))
        npr = shape.nodes_per_rack
        # a message leaving a node also crosses the node's own path to the NIC (PCIe or
        # NVSwitch, then GPUDirect RDMA): its latency adds to the switch's, which keeps an
        # inter-node hop never cheaper than an intra-node one even where a spec gives a
        # sub-microsecond switch
        hop = max(c.link(Tier.NVLINK, nd).latency_s for nd in reps)
        if len(gpn) > 1 and npr[0] > 1:
            link = min((c.link(Tier.RACK, nd) for nd in reps), key=lambda x: x.bandwidth_Bps)
            levels.append(Level(Tier.RACK, npr[0], npr[-1], LinkCost(link.bandwidth_Bps, link.latency_s + hop), True))
        if len(npr) > 1:
            link = min((c.link(Tier.NETWORK, nd) for nd in reps), key=lambda x: x.bandwidth_Bps)
            levels.append(Level(Tier.NETWORK, len(npr), len(npr), LinkCost(link.bandwidth_Bps, link.latency_s + hop),
                                True))
        return Links(shape.n, tuple(levels))


def shape_index(cluster: Cluster) -> ShapeIndex:
    """One ``ShapeIndex`` per cluster object (built on first use)."""
    return cluster.derived("perf.shape_index", lambda: ShapeIndex(cluster))


def placement_shape(cluster: Cluster, gpus) -> PlacementShape:
    gl = gpus.tolist() if hasattr(gpus, "tolist") else [int(g) for g in gpus]
    if not gl:
        raise ValueError("a placement needs at least one GPU")
    return shape_index(cluster).shape(gl)
