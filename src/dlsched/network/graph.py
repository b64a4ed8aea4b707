"""A network as a directed link graph: switches, NICs and GPUs joined by one-way links.

Every cable is two directed links (full duplex), each with its own capacity
(bytes/s) and latency.  Links are numbered so the contention solver works on
integer arrays; the networkx ``DiGraph`` is kept for path enumeration only.

Hosts are the machines that run jobs.  A host has NICs (its attachment points
to the network) and GPUs; each GPU reaches the network through one NIC, over
a link of its own (PCIe or NVLink-to-NIC).  A NIC shared by two GPUs, as in
the CRUX testbed (Fig. 18), is two GPU links into one NIC node whose uplink
both GPUs' flows then share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np


@dataclass
class Host:
    name: str
    nics: list[str]  # NIC node names, in order (rail r of a job uses NIC r of each host)
    gpus: list[str]  # GPU node names, local GPU order
    gpu_nic: list[int]  # index into ``nics`` of each GPU's NIC


@dataclass
class LinkGraph:
    """Directed links with capacity and latency, and the hosts attached to them."""

    name: str
    graph: nx.DiGraph = field(default_factory=nx.DiGraph)
    hosts: list[Host] = field(default_factory=list)
    link_src: list[str] = field(default_factory=list)
    link_dst: list[str] = field(default_factory=list)
    _cap: list[float] = field(default_factory=list)
    _lat: list[float] = field(default_factory=list)
    layers: dict[str, str] = field(default_factory=dict)  # switch/NIC node -> layer name (tor, agg, ...)

    def cable(self, a: str, b: str, bandwidth_Bps: float, latency_s: float, ports: int = 1) -> None:
        """Join ``a`` and ``b`` by a full-duplex cable (two directed links); parallel cables add up.

        ``ports`` > 1 joins them by that many parallel cables instead, each ``bandwidth_Bps / ports``
        and each its own pair of links: a switch-to-switch bundle, over which ECMP hashes every flow
        to one port (a flow never spreads over two), so two flows can collide on one port while
        another idles.  ``graph[u][v]["ports"]`` lists the port links of a hop.
        """
        if ports < 1:
            raise ValueError(f"cable {a}-{b}: ports must be at least 1, got {ports}")
        for u, v in ((a, b), (b, a)):
            if self.graph.has_edge(u, v):
                ids = self.graph[u][v]["ports"]
                if ports != 1 or len(ids) != 1:
                    raise ValueError(f"cable {u}-{v}: a bundle of ports is cabled once")
                self._cap[ids[0]] += bandwidth_Bps
                continue
            ids = list(range(len(self._cap), len(self._cap) + ports))
            self.graph.add_edge(u, v, id=ids[0], ports=ids)
            for _ in ids:
                self.link_src.append(u)
                self.link_dst.append(v)
                self._cap.append(float(bandwidth_Bps) / ports)
                self._lat.append(float(latency_s))

    def add_host(self, name: str, nic_Bps: list[float], gpus: int, gpu_Bps: float, gpu_latency_s: float,
                 uplinks: list[list[tuple[str, float]]]) -> Host:
        """A host with one NIC per entry of ``nic_Bps`` and ``gpus`` GPUs spread evenly over the NICs.

        ``uplinks[k]`` lists (switch, latency) pairs NIC ``k`` is cabled to; its bandwidth is split
        evenly over them (a dual-homed NIC port pair).
        """
        nics = [f"{name}/nic{k}" for k in range(len(nic_Bps))]
        per_nic = max(1, -(-gpus // len(nics)))
        host = Host(name, nics, [f"{name}/gpu{i}" for i in range(gpus)],
                    [min(i // per_nic, len(nics) - 1) for i in range(gpus)])
        for k, nic in enumerate(nics):
            self.layers[nic] = "nic"
            for sw, lat in uplinks[k]:
                self.cable(nic, sw, nic_Bps[k] / len(uplinks[k]), lat)
        for gpu, k in zip(host.gpus, host.gpu_nic):
            self.cable(gpu, nics[k], gpu_Bps, gpu_latency_s)
        self.hosts.append(host)
        return host

    @property
    def capacity(self) -> np.ndarray:
        return np.asarray(self._cap, dtype=np.float64)

    @property
    def latency(self) -> np.ndarray:
        return np.asarray(self._lat, dtype=np.float64)

    @property
    def num_links(self) -> int:
        return len(self._cap)

    def link_id(self, u: str, v: str) -> int:
        """The link from ``u`` to ``v`` (the first port of a bundle)."""
        return self.graph[u][v]["id"]

    def ports(self, u: str, v: str) -> list[int]:
        """Every parallel link from ``u`` to ``v`` (one unless cabled with ``ports`` > 1)."""
        return self.graph[u][v]["ports"]

    def link_name(self, i: int) -> str:
        u, v = self.link_src[i], self.link_dst[i]
        ids = self.graph[u][v]["ports"]
        return f"{u}->{v}" if len(ids) == 1 else f"{u}->{v}#{i - ids[0]}"

    def host_index(self) -> dict[str, int]:
        return {h.name: i for i, h in enumerate(self.hosts)}

    def switches(self, layer: str) -> list[str]:
        return sorted(n for n, l in self.layers.items() if l == layer)

    def describe(self) -> str:
        counts: dict[str, int] = {}
        for l in self.layers.values():
            counts[l] = counts.get(l, 0) + 1
        parts = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        return f"{self.name}: {len(self.hosts)} hosts, {parts}, {self.num_links} directed links"
