"""The cluster: GPUs, nodes and racks as flat arrays, and the link tier between GPUs.

Everything is indexed by integer ids so the simulator and policies can work
on arrays: GPU ids run node by node, node ids group by group, rack ids are
global.  Nothing here changes after construction; occupancy lives in
``FreeMap``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

import numpy as np

from dlsched.cluster.gpus import GPUType, gpu_type
from dlsched.errors import UnknownNameError

if TYPE_CHECKING:  # the schema (pydantic) loads only for a spec that is not shipped
    from dlsched.cluster.plainspec import PlainClusterSpec
    from dlsched.cluster.spec import ClusterSpec


class Tier(IntEnum):
    """Slowest link a pair (or a set) of GPUs must cross, nearest first."""

    GPU = 0  # the same GPU
    NVLINK = 1  # NVLink / NVSwitch inside one node
    PCIE_SWITCH = 2  # under one PCIe switch
    PCIE_HOST = 3  # same socket, different PCIe switches (through the root complex)
    CROSS_SOCKET = 4  # across CPU sockets (QPI/UPI)
    RACK = 5  # different nodes of one rack (NIC + top-of-rack switch)
    NETWORK = 6  # different racks


@dataclass(frozen=True, slots=True)
class LinkCost:
    """Alpha-beta cost of one link tier: time(bytes) = latency + bytes / bandwidth."""

    bandwidth_Bps: float  # bytes per second, one direction
    latency_s: float

    def time(self, nbytes: float) -> float:
        return self.latency_s + nbytes / self.bandwidth_Bps


@dataclass(frozen=True, slots=True)
class Node:
    """One node of the cluster: its GPUs, rack and links."""

    id: int
    group: str
    gpu: GPUType
    rack: int
    first_gpu: int
    num_gpus: int
    intra_kind: str
    nic_Bps: float

    @property
    def gpus(self) -> range:
        return range(self.first_gpu, self.first_gpu + self.num_gpus)


class Cluster:
    """Immutable topology built from a ``ClusterSpec`` (or a shipped spec's ``PlainClusterSpec``)."""

    def __init__(self, spec: ClusterSpec | PlainClusterSpec):
        self.spec = spec
        self.name = spec.name
        self._derived: dict[str, object] = {}
        self.gpu_types: list[GPUType] = []
        type_index: dict[str, int] = {}
        nodes: list[Node] = []
        gpu_node, gpu_socket, gpu_switch = [], [], []
        node_type, node_rack = [], []
        self._intra: list[dict[Tier, LinkCost]] = []
        rack = 0
        switch = 0
        for group in spec.node_groups:
            gt = gpu_type(group.gpu)
            t = type_index.setdefault(gt.name, len(type_index))
            if t == len(self.gpu_types):
                self.gpu_types.append(gt)
            intra = group.intra
            per_socket = group.gpus_per_node // intra.sockets
            per_switch = intra.gpus_per_switch or per_socket
            costs = self._intra_costs(intra)
            for i in range(group.nodes):
                if i and i % group.nodes_per_rack == 0:
                    rack += 1
                nid = len(nodes)
                first = len(gpu_node)
                nodes.append(Node(nid, group.name, gt, rack, first, group.gpus_per_node, intra.kind,
                                  group.nic_gbps * 1e9 / 8))
                for local in range(group.gpus_per_node):
                    gpu_node.append(nid)
                    gpu_socket.append(local // per_socket)
                    gpu_switch.append(switch + local // per_switch)
                switch += group.gpus_per_node // per_switch
                node_type.append(t)
                node_rack.append(rack)
                self._intra.append(costs)
            rack += 1  # a new group starts a new rack
        self.nodes = nodes
        self.type_index = type_index
        self.gpu_node = np.asarray(gpu_node, dtype=np.int32)
        self.gpu_socket = np.asarray(gpu_socket, dtype=np.int16)
        self.gpu_switch = np.asarray(gpu_switch, dtype=np.int32)
        self.node_type = np.asarray(node_type, dtype=np.int16)
        self.node_rack = np.asarray(node_rack, dtype=np.int32)
        self.node_gpus = np.asarray([n.num_gpus for n in nodes], dtype=np.int32)
        self.gpu_type_idx = self.node_type[self.gpu_node]
        self.gpu_rack = self.node_rack[self.gpu_node]
        self.num_gpus = len(gpu_node)
        self.num_nodes = len(nodes)
        self.num_racks = int(self.node_rack.max()) + 1
        self.rack_nodes: list[np.ndarray] = [np.flatnonzero(self.node_rack == r)
                                             for r in range(self.num_racks)]
        self.type_gpus = np.bincount(self.gpu_type_idx, minlength=len(self.gpu_types))
        net = spec.network
        self.network = net

    # ---------------------------------------------------------------- construction helpers

    @staticmethod
    def _intra_costs(intra) -> dict[Tier, LinkCost]:
        bw = intra.value("bandwidth_GBps") * 1e9
        lat = intra.value("latency_us") * 1e-6
        if intra.kind in ("nvswitch", "nvlink"):
            link = LinkCost(bw, lat)
            return {Tier.NVLINK: link, Tier.PCIE_SWITCH: link, Tier.PCIE_HOST: link,
                    Tier.CROSS_SOCKET: link}
        host = LinkCost(float(intra.value("host_bridge_GBps")) * 1e9 if intra.kind == "pcie" else bw, lat)
        cross = LinkCost(intra.value("cross_socket_GBps") * 1e9, intra.value("cross_socket_latency_us") * 1e-6)
        return {Tier.PCIE_SWITCH: LinkCost(bw, lat), Tier.PCIE_HOST: host, Tier.CROSS_SOCKET: cross}

    @classmethod
    def load(cls, name_or_path) -> "Cluster":
        from dlsched.cluster.shipped import load_shipped

        shipped = load_shipped(name_or_path)
        if shipped is not None:
            return cls(shipped)
        from dlsched.cluster.spec import load_spec

        return cls(load_spec(name_or_path))

    # ---------------------------------------------------------------- queries

    def derived(self, key: str, build):
        """A structure computed from this (immutable) topology once and kept with it.

        Perf models and policies share their per-cluster indexes and caches this way,
        so several models over one cluster build them once.
        """
        got = self._derived.get(key)
        if got is None:
            got = self._derived[key] = build()
        return got

    def type_id(self, name: str, **where) -> int:
        """Index of a GPU type in this cluster (accepts aliases); error if the cluster has none."""
        gt = gpu_type(name, **where)
        try:
            return self.type_index[gt.name]
        except KeyError:
            raise UnknownNameError(f"GPU type in cluster '{self.name}'", name, self.type_index,
                                   **where) from None

    def pair_tier(self, a: int, b: int) -> Tier:
        if a == b:
            return Tier.GPU
        na, nb = self.gpu_node[a], self.gpu_node[b]
        if na != nb:
            return Tier.RACK if self.node_rack[na] == self.node_rack[nb] else Tier.NETWORK
        if self.nodes[na].intra_kind != "pcie":
            return Tier.NVLINK
        if self.gpu_switch[a] == self.gpu_switch[b]:
            return Tier.PCIE_SWITCH
        if self.gpu_socket[a] == self.gpu_socket[b]:
            return Tier.PCIE_HOST
        return Tier.CROSS_SOCKET

    def tier(self, gpus) -> Tier:
        """Slowest tier a set of GPUs spans (Dally's machine / rack / network, finer inside a node)."""
        g = np.asarray(gpus, dtype=np.int64)
        if g.size <= 1:
            return Tier.GPU
        nodes = self.gpu_node[g]
        if nodes.min() != nodes.max():
            racks = self.node_rack[nodes]
            return Tier.RACK if racks.min() == racks.max() else Tier.NETWORK
        if self.nodes[int(nodes[0])].intra_kind != "pcie":
            return Tier.NVLINK
        sw = self.gpu_switch[g]
        if sw.min() == sw.max():
            return Tier.PCIE_SWITCH
        so = self.gpu_socket[g]
        return Tier.PCIE_HOST if so.min() == so.max() else Tier.CROSS_SOCKET

    def link(self, tier: Tier, node: int = 0) -> LinkCost:
        """Alpha-beta cost of a tier; intra-node tiers are those of ``node``."""
        if tier <= Tier.CROSS_SOCKET:
            costs = self._intra[node]
            return costs.get(tier) or costs[min(costs)]
        nic = self.nodes[node].nic_Bps
        net = self.network
        if tier == Tier.RACK:
            bw = net.rack_gbps * 1e9 / 8 if net.rack_gbps else nic
            return LinkCost(min(bw, nic), net.rack_latency_us * 1e-6)
        bw = net.inter_rack_gbps * 1e9 / 8 if net.inter_rack_gbps else nic
        return LinkCost(min(bw, nic) / net.oversubscription, net.inter_rack_latency_us * 1e-6)

    def describe(self) -> str:
        parts = [f"{g.nodes}x{g.gpus_per_node} {g.gpu} ({g.intra.kind})" for g in self.spec.node_groups]
        return (f"{self.name}: {self.num_gpus} GPUs, {self.num_nodes} nodes, {self.num_racks} racks: "
                + ", ".join(parts))
