"""Placed jobs on a topology, alone and together: what ``dlsched net`` prints."""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.cluster.spec import ClusterSpec
from dlsched.cluster.topology import Cluster
from dlsched.errors import InputError
from dlsched.network.contention import FlowContention
from dlsched.network.graph import LinkGraph
from dlsched.network.jobfile import NetInput, TopologySpec
from dlsched.perf.base import IterCost
from dlsched.policies.base import Allocation
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

MB = 1 << 20


@dataclass(frozen=True, slots=True)
class NetRow:
    job_id: str
    hosts: int
    gpus: int
    alone_s: float
    contended_s: float
    comm_alone_s: float
    comm_contended_s: float
    network_mb: float  # bytes the job's flows carry per iteration, in all
    bottleneck: str
    load: float  # offered load on the bottleneck: its flows at solo rate / capacity

    @property
    def slowdown(self) -> float:
        return self.contended_s / self.alone_s


def parse_topology_arg(text: str) -> TopologySpec:
    """``--topology``: a cluster spec name or path, ``lingjun[:PATH]``, or ``clos:key=value,...``."""
    kind, _, rest = text.partition(":")
    if kind == "lingjun":
        return TopologySpec(kind="lingjun", path=rest or None)
    if kind in ("clos", "double-sided"):
        opts: dict = {"kind": kind}
        for part in filter(None, rest.split(",")):
            k, eq, v = part.partition("=")
            if not eq:
                raise InputError(f"expected key=value, got {part!r}", field="--topology")
            try:
                opts[k.strip()] = float(v) if k.strip() in ("nic_gbps", "oversubscription") else (
                    v.strip() if k.strip() == "gpu" else int(v))
            except ValueError:
                raise InputError(f"{k}: not a number: {v!r}", field="--topology") from None
        try:
            return TopologySpec(**opts)
        except Exception as e:
            msg = e.errors()[0]["msg"] if hasattr(e, "errors") else str(e)
            raise InputError(msg.removeprefix("Value error, "), field="--topology") from None
    return TopologySpec(kind="cluster", cluster=text.removeprefix("cluster:"))


def build(topo: TopologySpec) -> tuple[LinkGraph, Cluster]:
    """The link graph, and the cluster the perf model prices jobs on (host i is its node i)."""
    from dlsched.network import lingjun, topologies

    if topo.kind == "cluster":
        cluster = Cluster.load(topo.cluster)
        return topologies.from_cluster(cluster), cluster
    nics = topo.nics_per_host
    if topo.kind == "clos":
        g = topologies.clos(topo.hosts, topo.hosts_per_tor, topo.aggs, topo.nic_gbps, nics or 1,
                            topo.gpus_per_host, topo.oversubscription)
    elif topo.kind == "double-sided":
        g = topologies.double_sided(topo.hosts, topo.tors, topo.aggs, topo.cores, topo.nic_gbps, nics or 8,
                                    topo.gpus_per_host, topo.oversubscription)
    else:
        g = lingjun.read_lingjun(topo.path or lingjun.default_path(), topo.nic_gbps, nics or 4,
                                 topo.gpus_per_host, topo.oversubscription)
    host_gbps = len(g.hosts[0].nics) * topo.nic_gbps
    spec = ClusterSpec.model_validate({
        "name": g.name, "node_groups": [{
            "name": "hosts", "gpu": topo.gpu, "nodes": len(g.hosts), "gpus_per_node": topo.gpus_per_host,
            "intra": {"kind": "nvswitch"}, "nic_gbps": host_gbps, "nodes_per_rack": topo.hosts_per_tor}]})
    return g, Cluster(spec)


def evaluate(net: NetInput, lines: dict[str, int], source: str, seed: int = 0) -> tuple[list[NetRow], LinkGraph]:
    """Each job alone (the perf model or its measured times) and under contention with the others."""
    if net.topology is None:
        raise InputError("no topology: give one in the file or with --topology", file=source)
    graph, cluster = build(net.topology)
    from dlsched.perf.placement.model import PlacementPerfModel

    perf = PlacementPerfModel(cluster)
    names = graph.host_index()
    fc = FlowContention.for_cluster(cluster, seed, graph=graph, plans="none")
    placed = []
    for job in net.jobs:
        line = lines.get(job.id)
        hosts = []
        for h in job.hosts:
            idx = h if isinstance(h, int) else names.get(h)
            if idx is None or not 0 <= idx < len(graph.hosts):
                raise InputError(f"job {job.id}: no host {h!r} in {graph.name} ({len(graph.hosts)} hosts, "
                                 f"0-{len(graph.hosts) - 1} or their names)", file=source, line=line, field="hosts")
            hosts.append(idx)
        per = job.gpus_per_host or len(graph.hosts[hosts[0]].gpus)
        if any(per > len(graph.hosts[h].gpus) for h in hosts):
            raise InputError(f"job {job.id}: {per} GPUs per host; hosts have "
                             f"{len(graph.hosts[hosts[0]].gpus)}", file=source, line=line, field="gpus_per_host")
        placement = [(h, g) for h in hosts for g in range(per)]
        fc.set_priority(job.id, job.priority)
        if job.paths:
            fc.pin(job.id, job.paths)
        try:
            if job.model is not None:
                try:
                    model = get_model(job.model, job.params)
                except InputError as e:
                    raise InputError(e.reason, file=source, line=line, field="model") from None
                n = len(placement)
                spec = JobSpec(job.id, 0.0, job.model, n, batch_size=job.batch or model.default_batch * n,
                               total_iterations=1, params=job.params)
                gpus = [cluster.nodes[h].first_gpu + g for h, g in placement]
                plan = None
                if job.stages is not None or job.tp is not None:
                    plan, total = _planned(job, model, spec.batch_size, n, cluster, source, line)
                    cost = IterCost(total, total, 0.0)
                else:
                    cost = perf.price(spec, gpus)
                fc.add(job.id, spec, Allocation.of(gpus, plan), cost)
                total, comm = cost.total, cost.comm
            else:
                total, comm = job.iteration_s, job.comm_s
                fc.add_placed(job.id, placement, job.gradient_mb * MB, total, comm)
        except ValueError as e:
            raise InputError(f"job {job.id}: {e}", file=source, line=line, field="paths") from None
        placed.append((job.id, len(hosts), len(placement), total, comm))
    rows = []
    for jid, nh, ng, total, comm in placed:
        t, c = fc.iteration_time(jid)
        link, load = fc.bottleneck(jid)
        rows.append(NetRow(jid, nh, ng, total, t, comm, c, fc.traffic(jid).network_bytes / MB, link, load))
    return rows, graph


def _planned(job, model, batch: int, n: int, cluster: Cluster, source: str, line: int | None):
    """The plan ``stages`` x ``tp`` of a model job (Crius's stage partition), and its seconds per iteration."""
    from dlsched.perf.parallel.adaptive import shared_estimator
    from dlsched.perf.parallel.cost import plan_time
    from dlsched.perf.parallel.partition import stage_partition

    stages, tp = job.stages or 1, job.tp or 1
    if stages > len(model.layers) or n < stages * tp:
        raise InputError(f"job {job.id}: {stages} stages x tp {tp} need at least {stages * tp} GPUs and "
                         f"{stages} layers; it has {n} GPUs, {len(model.layers)} layers",
                         file=source, line=line, field="stages")
    split = stage_partition(model, n, stages)
    if any(g % tp for g in split.gpus):
        raise InputError(f"job {job.id}: stage GPU counts {list(split.gpus)} are not all multiples of tp {tp}",
                         file=source, line=line, field="tp")
    plan = split.with_degrees([(g // tp, tp) for g in split.gpus])
    t = plan_time(model, batch, plan, shared_estimator(cluster).hardware(cluster.gpu_types[0].name))
    if t is None:
        raise InputError(f"job {job.id}: plan {plan.describe()} cannot run (memory, or fewer samples than "
                         f"replicas, or more tensor shards than heads)", file=source, line=line, field="stages")
    return plan, t
