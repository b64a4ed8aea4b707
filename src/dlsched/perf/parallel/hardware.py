"""What a plan runs on: one GPU type, its node size, and the links between GPUs.

A job's GPUs are assumed consolidated as the cluster allows (whole nodes,
nodes of one rack before the next), so GPU ``i`` of an allocation sits on
node ``i // gpus_per_node`` and rack ``node // nodes_per_rack``.  The link a
group of GPUs communicates over is then the slowest tier it spans: the node's
intra-node link, the rack (NIC + top-of-rack switch) or the network.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.cluster.gpus import GPUType
from dlsched.cluster.gpus import gpu_type as lookup_gpu
from dlsched.cluster.topology import Cluster, LinkCost, Tier
from dlsched.perf.compute import peak_flops_at

# the same precision rule as the data-parallel compute model (fp16, TF32 on Ampere+, fp32)
peak_flops = peak_flops_at


@dataclass(frozen=True, slots=True)
class TierLinks:
    """Link costs of a consolidated allocation, by tier."""

    intra: LinkCost  # inside a node
    rack: LinkCost  # node to node within a rack
    network: LinkCost  # across racks
    gpus_per_node: int
    nodes_per_rack: int

    def tier(self, first: int, last: int) -> Tier:
        """Slowest tier between GPU indices ``first`` <= ``last`` of the allocation."""
        na, nb = first // self.gpus_per_node, last // self.gpus_per_node
        if na == nb:
            return Tier.NVLINK  # stands for "intra-node"; the cost is ``intra``
        return Tier.RACK if na // self.nodes_per_rack == nb // self.nodes_per_rack else Tier.NETWORK

    def cost(self, tier: Tier) -> LinkCost:
        if tier <= Tier.CROSS_SOCKET:
            return self.intra
        return self.rack if tier == Tier.RACK else self.network

    def group(self, start: int, size: int, stride: int = 1) -> tuple[LinkCost, bool]:
        """Link of the group ``start + k * stride`` (k < size), and whether it leaves the node."""
        t = self.tier(start, start + (size - 1) * stride)
        return self.cost(t), t > Tier.CROSS_SOCKET

    @staticmethod
    def uniform(gpus_per_node: int, intra_GBps: float, nic_Gbps: float, nodes_per_rack: int = 8,
                intra_latency_us: float = 2.0, net_latency_us: float = 5.0) -> TierLinks:
        """Hand-made links (tests, notebooks): one intra-node figure, one NIC figure."""
        intra = LinkCost(intra_GBps * 1e9, intra_latency_us * 1e-6)
        nic = LinkCost(nic_Gbps * 1e9 / 8, net_latency_us * 1e-6)
        return TierLinks(intra, nic, nic, gpus_per_node, nodes_per_rack)

    @staticmethod
    def from_cluster(cluster: Cluster, gpu_type: str) -> TierLinks:
        """Link costs of ``gpu_type``'s nodes in ``cluster`` (its first node group of that type)."""
        t = cluster.type_id(gpu_type)
        node = next(n for n in cluster.nodes if cluster.node_type[n.id] == t)
        if node.num_gpus > 1:
            intra = cluster.link(cluster.tier(list(node.gpus)), node.id)
        else:  # a one-GPU node never talks inside itself; any finite figure will do
            intra = cluster.link(Tier.NVLINK, node.id)
        rack_nodes = cluster.rack_nodes[int(cluster.node_rack[node.id])]
        return TierLinks(intra, cluster.link(Tier.RACK, node.id), cluster.link(Tier.NETWORK, node.id),
                     node.num_gpus, len(rack_nodes))


@dataclass(frozen=True, slots=True)
class Hardware:
    """A GPU type and its links: everything a plan's cost depends on besides the model."""

    gpu: GPUType
    links: TierLinks

    @property
    def gpus_per_node(self) -> int:
        return self.links.gpus_per_node

    @staticmethod
    def of(gpu_type: str | GPUType, links: TierLinks) -> Hardware:
        g = gpu_type if isinstance(gpu_type, GPUType) else lookup_gpu(gpu_type)
        return Hardware(g, links)
