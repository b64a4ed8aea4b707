"""Builders of link graphs: the tiered layout of the shipped specs, two-layer Clos, the
three-layer double-sided topology of CRUX section 6.1, and a cluster spec's own network.

Switch-to-switch capacities follow the oversubscription ratio: a switch's uplinks
together carry ``downlink capacity / oversubscription``, spread evenly over them.
Between two switches that capacity is a bundle of parallel ports, each as fast as a
host NIC port (``ports_for``), and each its own link: ECMP hashes a flow onto one
port, so flows collide on ports as they do on real switches (CRUX section 2.2).  The
tiered layout keeps one link from a rack to its single core switch: that core stands
for the whole upper fabric, whose ports it does not describe.
The production Lingjun topology is read from its CSV in ``lingjun.py``.
"""

from __future__ import annotations

from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.network.graph import LinkGraph

GBIT = 1e9 / 8  # bytes per second in one Gbit/s
HOST_LINK_LATENCY_S = 1e-6  # GPU to NIC inside a host (PCIe hop)
GPU_LINK_Bps = 32e9  # GPU to its NIC: PCIe Gen4 x16, one direction (~32 GB/s theoretical)


def ports_for(capacity_Bps: float, port_Bps: float) -> int:
    """Parallel ports that carry ``capacity_Bps`` at ``port_Bps`` each (at least one; the bundle
    keeps the capacity exactly, so a fraction of a port is spread over the nearest whole count)."""
    return max(1, int(capacity_Bps / port_Bps + 0.5)) if port_Bps > 0 else 1


def _host_uplinks(nics: int, tors: list[str], lat: float) -> list[list[tuple[str, float]]]:
    """NIC ``k`` goes to every listed ToR (one ToR: a single-homed host)."""
    return [[(t, lat) for t in tors] for _ in range(nics)]


def clos(hosts: int, hosts_per_tor: int, aggs: int, nic_gbps: float = 200.0, nics_per_host: int = 1,
         gpus_per_host: int = 8, oversubscription: float = 1.0, host_latency_us: float = 2.0,
         fabric_latency_us: float = 2.0, name: str = "clos", port_gbps: float | None = None) -> LinkGraph:
    """Two-layer Clos: hosts under ToRs, every ToR cabled to every aggregation switch.

    ``port_gbps``: the switch ports' speed (default: a NIC port's, ``nic_gbps``); 0 makes each
    ToR-aggregation bundle one link (the section 4.4 micro-benchmark's model: one path per
    aggregation switch, as the paper enumerates).
    """
    _positive(hosts=hosts, hosts_per_tor=hosts_per_tor, aggs=aggs, nics_per_host=nics_per_host,
              gpus_per_host=gpus_per_host)
    g = LinkGraph(name)
    n_tors = -(-hosts // hosts_per_tor)
    tors = [f"tor{t}" for t in range(n_tors)]
    agg_names = [f"agg{a}" for a in range(aggs)]
    for s in tors:
        g.layers[s] = "tor"
    for s in agg_names:
        g.layers[s] = "agg"
    for h in range(hosts):
        t = h // hosts_per_tor
        g.add_host(f"host{h}", [nic_gbps * GBIT] * nics_per_host, gpus_per_host, GPU_LINK_Bps,
                   HOST_LINK_LATENCY_S, _host_uplinks(nics_per_host, [tors[t]], host_latency_us * 1e-6))
    for t, s in enumerate(tors):
        under = min(hosts, (t + 1) * hosts_per_tor) - t * hosts_per_tor
        up = under * nics_per_host * nic_gbps * GBIT / oversubscription / aggs
        for a in agg_names:
            g.cable(s, a, up, fabric_latency_us * 1e-6,
                    ports_for(up, (nic_gbps if port_gbps is None else port_gbps) * GBIT))
    return g


def double_sided(hosts: int = 847, tors: int = 6, aggs: int = 12, cores: int = 32, nic_gbps: float = 200.0,
                 nics_per_host: int = 8, gpus_per_host: int = 8, oversubscription: float = 1.0,
                 latency_us: float = 2.0, name: str = "double-sided") -> LinkGraph:
    """Three-layer double-sided topology (CRUX section 6.1: 6 ToRs, 12 aggregation, 32 core switches;
    each host on two ToRs over eight links).

    ToRs come in pairs; host ``h`` is on pair ``h mod pairs``, half its NICs on each ToR of the
    pair.  The paper gives no wiring below that, so: each pair has its own aggregation pod
    (``aggs / pairs`` switches, cabled to both ToRs of the pair) and every aggregation switch is
    cabled to every core switch.
    """
    _positive(hosts=hosts, tors=tors, aggs=aggs, cores=cores, nics_per_host=nics_per_host,
              gpus_per_host=gpus_per_host)
    if tors % 2 or nics_per_host % 2:
        raise ValueError("double-sided: tors and nics_per_host must be even (each host sits on two ToRs)")
    pairs = tors // 2
    if aggs % pairs:
        raise ValueError(f"double-sided: aggs ({aggs}) must split evenly over the {pairs} ToR pairs")
    g = LinkGraph(name)
    lat = latency_us * 1e-6
    tor_names = [f"tor{t}" for t in range(tors)]
    agg_names = [f"agg{a}" for a in range(aggs)]
    core_names = [f"core{c}" for c in range(cores)]
    for layer, names in (("tor", tor_names), ("agg", agg_names), ("core", core_names)):
        for s in names:
            g.layers[s] = layer
    load = [0.0] * tors  # host bandwidth under each ToR
    for h in range(hosts):
        p = h % pairs
        a, b = tor_names[2 * p], tor_names[2 * p + 1]
        half = nics_per_host // 2
        uplinks = [[(a, lat)]] * half + [[(b, lat)]] * half
        g.add_host(f"host{h}", [nic_gbps * GBIT] * nics_per_host, gpus_per_host, GPU_LINK_Bps,
                   HOST_LINK_LATENCY_S, uplinks)
        load[2 * p] += half * nic_gbps * GBIT
        load[2 * p + 1] += half * nic_gbps * GBIT
    per_pod = aggs // pairs
    agg_load = [0.0] * aggs
    for t, s in enumerate(tor_names):
        pod = agg_names[(t // 2) * per_pod:(t // 2 + 1) * per_pod]
        for i, a in enumerate(pod):
            cap = load[t] / oversubscription / per_pod
            g.cable(s, a, cap, lat, ports_for(cap, nic_gbps * GBIT))
            agg_load[(t // 2) * per_pod + i] += cap
    for i, a in enumerate(agg_names):
        for c in core_names:
            cap = agg_load[i] / oversubscription / cores
            g.cable(a, c, cap, lat, ports_for(cap, nic_gbps * GBIT))
    return g


def tiered(cluster: Cluster) -> LinkGraph:
    """The shipped specs' layout: hosts under one ToR per rack, ToRs under one core switch.

    Host-to-ToR links run at the rack tier's speed, ToR-to-core links carry the rack's
    inter-rack bandwidth divided by the oversubscription ratio (``Cluster.link``'s figures).
    """
    g = LinkGraph(f"{cluster.name}:tiered")
    net = cluster.network
    g.layers["core"] = "core"
    rack_load = _racks_of_hosts(g, cluster)
    if cluster.num_racks > 1:
        for r in range(cluster.num_racks):
            g.cable(f"tor{r}", "core", rack_load[r] / net.oversubscription, net.inter_rack_latency_us * 1e-6)
    return g


def clos_of(cluster: Cluster) -> LinkGraph:
    """A spec's ``network: {topology: clos, spines: S}``: racks are ToRs, cabled to S aggregation switches."""
    g = LinkGraph(f"{cluster.name}:clos")
    net = cluster.network
    aggs = [f"agg{a}" for a in range(net.spines)]
    for a in aggs:
        g.layers[a] = "agg"
    rack_load = _racks_of_hosts(g, cluster)
    port = _nic_port_Bps(cluster)
    for r in range(cluster.num_racks):
        for a in aggs:
            cap = rack_load[r] / net.oversubscription / len(aggs)
            g.cable(f"tor{r}", a, cap, net.inter_rack_latency_us * 1e-6, ports_for(cap, port))
    return g


def _nic_port_Bps(cluster: Cluster) -> float:
    """The fastest host NIC port of the spec: the speed of the fabric's switch ports."""
    return max(g.nic_gbps / g.nics for g in cluster.spec.node_groups) * GBIT


def _racks_of_hosts(g: LinkGraph, cluster: Cluster) -> list[float]:
    """Every node as a host under its rack's ToR; returns each rack's inter-rack bandwidth (bytes/s)."""
    net = cluster.network
    rack_load = [0.0] * cluster.num_racks
    for node in cluster.nodes:
        tor = f"tor{node.rack}"
        g.layers[tor] = "tor"
        rack_bw = min(net.rack_gbps * GBIT if net.rack_gbps else node.nic_Bps, node.nic_Bps)
        _cluster_host(g, cluster, node, [tor], rack_bw, net.rack_latency_us * 1e-6)
        rack_load[node.rack] += min(net.inter_rack_gbps * GBIT if net.inter_rack_gbps else node.nic_Bps,
                                    node.nic_Bps)
    return rack_load


def from_cluster(cluster: Cluster) -> LinkGraph:
    """The link graph a cluster spec describes (``network.topology``: tiered or clos).

    CRUX's fabrics (``double-sided``, ``lingjun``) number their hosts their own way, so the
    graph alone cannot be tied to the cluster's nodes: ``dlsched.comm.fabric.contention_for``
    builds them with that mapping.  They are refused here rather than read as tiered.
    """
    kind = cluster.network.topology
    if kind in ("double-sided", "lingjun"):
        raise InputError(f"cluster '{cluster.name}': a {kind} network is built with its host mapping by "
                         "dlsched.comm.fabric.contention_for (what `dlsched simulate --network flow` uses), "
                         "not as a bare link graph (`dlsched net` builds these fabrics from --topology double-sided or "
                         "lingjun[:PATH])", field="network.topology")
    return clos_of(cluster) if kind == "clos" else tiered(cluster)


def _cluster_host(g: LinkGraph, cluster: Cluster, node, tors: list[str], host_Bps: float,
                  latency_s: float) -> None:
    """One cluster node as a host: its NICs share the node's bandwidth; GPUs reach them over the
    node's intra-host link (PCIe switch or NVLink figures of the spec)."""
    group = next(gr for gr in cluster.spec.node_groups if gr.name == node.group)
    nics = group.nics
    gpu_link = cluster.link(min(cluster._intra[node.id]), node.id)
    g.add_host(f"n{node.id}", [host_Bps / nics] * nics, node.num_gpus, gpu_link.bandwidth_Bps,
               gpu_link.latency_s, _host_uplinks(nics, tors, latency_s))


def _positive(**values: int) -> None:
    for k, v in values.items():
        if v < 1:
            raise ValueError(f"{k} must be at least 1, got {v}")
