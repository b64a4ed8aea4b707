"""The flow model of a cluster spec, CRUX's two production fabrics included.

``network.topology`` of a spec may be ``double-sided`` (CRUX section 6.1: 6 ToRs, 12
aggregation and 32 core switches, each host on two ToRs) or ``lingjun`` (the Lingjun 2023
``topo.csv``, 847 hosts under 48 ToRs).  ``dlsched.network`` builds both graphs
(``double_sided``, ``read_lingjun``) but numbers their hosts its own way; this module ties
the cluster's nodes to those hosts so that the racks a job policy sees are the graph's ToRs
(double-sided: a rack is a ToR pair; Lingjun: a node group per ToR, named after it).

It lives beside the communication policies because it is what ``--comm`` runs need; the
other topologies go to ``FlowContention.for_cluster`` unchanged.
"""

from __future__ import annotations

import csv
from pathlib import Path

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.network.contention import FlowContention, optimum_plans
from dlsched.network.topologies import double_sided

LINGJUN_TOPO = Path("traces") / "alibaba-lingjun-2023" / "topo.csv"
DOUBLE_SIDED = {"tors": 6, "aggs": 12, "cores": 32}  # CRUX section 6.1


def contention_for(cluster: Cluster, seed: int = 0, charge_self_collisions: bool = False,
                   links: str = "full") -> FlowContention:
    """The flow-contention model of ``cluster``'s network, whatever its topology (``charge_self_collisions``:
    ``FlowContention``'s opt-in charge for a job's own flows sharing a switch port; ``links``: its
    link report, full or summary)."""
    kind = cluster.network.topology
    if kind == "double-sided":
        graph, host_of = _double_sided(cluster)
    elif kind == "lingjun":
        graph, host_of = _lingjun(cluster)
    else:
        return FlowContention.for_cluster(cluster, seed=seed, charge_self_collisions=charge_self_collisions,
                                          links=links)
    first = [n.first_gpu for n in cluster.nodes]

    def gpu_host(g: int) -> tuple[int, int]:
        node = int(cluster.gpu_node[g])
        return host_of[node], int(g - first[node])

    # large models send their parallelism plan's traffic, as for_cluster's default (plans="adaptive")
    return FlowContention(graph, seed, gpu_host, optimum_plans(cluster), charge_self_collisions, links)


def _one_group(cluster: Cluster):
    groups = cluster.spec.node_groups
    nics = {g.nics for g in groups}
    speeds = {g.nic_gbps / g.nics for g in groups}
    gpus = {g.gpus_per_node for g in groups}
    if len(nics) > 1 or len(speeds) > 1 or len(gpus) > 1:
        raise InputError(f"cluster '{cluster.name}': a {cluster.network.topology} network needs every node "
                         "group to have the same NICs, NIC speed and GPUs per node", field="node_groups")
    return groups[0]


def _double_sided(cluster: Cluster):
    """Racks are ToR pairs: node ``k`` of rack ``r`` is graph host ``k * pairs + r`` (the builder puts
    host ``h`` on pair ``h mod pairs``)."""
    group = _one_group(cluster)
    pairs = DOUBLE_SIDED["tors"] // 2
    sizes = [len(n) for n in cluster.rack_nodes]
    if len(sizes) != pairs or len(set(sizes)) != 1:
        raise InputError(f"cluster '{cluster.name}': a double-sided network has {pairs} ToR pairs; the spec "
                         f"must form {pairs} racks of equal size (it forms {len(sizes)}: {sizes})",
                         field="nodes_per_rack")
    graph = double_sided(hosts=cluster.num_nodes, nic_gbps=group.nic_gbps / group.nics,
                         nics_per_host=group.nics, gpus_per_host=group.gpus_per_node,
                         oversubscription=cluster.network.oversubscription,
                         latency_us=cluster.network.inter_rack_latency_us, name=f"{cluster.name}:double-sided",
                         **DOUBLE_SIDED)
    host_of = {}
    for r, nodes in enumerate(cluster.rack_nodes):
        for k, node in enumerate(nodes.tolist()):
            host_of[node] = k * pairs + r
    return graph, host_of


def _lingjun(cluster: Cluster):
    """One node group per ToR (ASW), named after it and as large as it: the group's nodes are that
    ToR's hosts in ``topo.csv`` order."""
    from dlsched.network.lingjun import read_lingjun
    from dlsched.shared_data import shared_dir, where_to_set

    path = shared_dir() / LINGJUN_TOPO
    if not path.exists():
        raise InputError(f"cluster '{cluster.name}' uses the Lingjun topology, but {path} is missing "
                         f"({where_to_set()})")
    group = _one_group(cluster)
    graph = read_lingjun(path, nic_gbps=group.nic_gbps / group.nics, nics_per_host=group.nics,
                         gpus_per_host=group.gpus_per_node, oversubscription=cluster.network.oversubscription,
                         latency_us=cluster.network.inter_rack_latency_us)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    by_tor: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        by_tor.setdefault(row["ASW"].strip(), []).append(i)
    host_of = {}
    for g in cluster.spec.node_groups:
        nodes = [n.id for n in cluster.nodes if n.group == g.name]
        hosts = by_tor.get(g.name)
        if hosts is None or len(hosts) != len(nodes):
            raise InputError(f"cluster '{cluster.name}': node group {g.name} must name a ToR (ASW) of {path} and "
                             f"have as many nodes as it has hosts ({len(hosts) if hosts else 'no such ToR'})",
                             field="node_groups")
        host_of.update(zip(nodes, hosts))
    if len(host_of) != len(rows):
        raise InputError(f"cluster '{cluster.name}': {len(host_of)} nodes for the {len(rows)} hosts of {path}",
                         field="node_groups")
    return graph, host_of
