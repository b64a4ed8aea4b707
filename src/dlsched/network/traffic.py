"""The network traffic of one job per iteration: flows between hosts, and the links they cross.

A data-parallel job synchronises its gradients with one all-reduce per
iteration (bucketed; ``perf.gradsync`` gives the bytes).  Across hosts NCCL
runs rings that enter and leave each host once, one ring per NIC rail: with
``k`` hosts, every host sends ``2 (k - 1) / k`` of the gradient bytes to the
next host of the ring, split over the rails.  Traffic inside a host (NVLink,
PCIe between GPUs) is not on the network and is left to the perf model.

Jobs on a pipeline/tensor/expert-parallel plan, and data-parallel MoE jobs'
all-to-alls, get their demands from ``plan_traffic``; ``demand_flows`` turns
any such list into flows, one per ordered pair of NICs.  A job whose flows
carry different bytes advances them together: ``link_counts`` weighs each
flow by its bytes over the largest flow's (the first), so the job's rate is
its largest flow's and a smaller flow moves proportionally slower, ending
with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dlsched.network.graph import LinkGraph
from dlsched.network.paths import PathTable
from dlsched.network.plan_traffic import Demand, ring_demands
from dlsched.perf.comm import gradsync
from dlsched.workload.job import JobSpec
from dlsched.workload.models import get_model

BUCKET_MB = 25.0  # PlacementPerfModel's default bucket size (PyTorch DDP's bucket_cap_mb)


@dataclass(frozen=True, slots=True)
class Flow:
    src: str  # GPU node that sends
    dst: str
    src_nic: str
    dst_nic: str
    nbytes: float  # bytes per iteration
    links: tuple[int, ...]  # link ids, GPU to GPU
    kind: str = "dp"  # what it carries: "dp", "pp", "ep", "tp", or several joined by "+"


@dataclass(frozen=True, slots=True)
class JobTraffic:
    job_id: str
    flows: tuple[Flow, ...]

    @property
    def network_bytes(self) -> float:
        return sum(f.nbytes for f in self.flows)

    def link_counts(self) -> dict[int, float]:
        """The job's flows on each link, each weighted by its bytes over the first (largest) flow's.

        For a ring all-reduce every flow carries the same bytes: the count of flows.
        """
        out: dict[int, float] = {}
        if not self.flows:
            return out
        ref = self.flows[0].nbytes
        for f in self.flows:
            w = 1 if f.nbytes == ref else f.nbytes / ref
            for l in f.links:
                out[l] = out.get(l, 0) + w
        return out


def gradient_bytes(spec: JobSpec) -> float:
    """Bytes a data-parallel replica all-reduces per iteration (experts excluded for MoE)."""
    model = get_model(spec.model, spec.params)
    return sum(b.nbytes for b in gradsync.buckets(model, BUCKET_MB, model.family == "moe"))


def rail_ends(graph: LinkGraph, placement: Sequence[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Per host of ``placement`` (ascending), the job's GPU behind each NIC it can use: one per rail.

    The ``r``-th entry is the first of the job's GPUs behind the ``r``-th such NIC of the host.
    """
    by_host: dict[int, list[int]] = {}
    for h, local in placement:
        by_host.setdefault(int(h), []).append(int(local))
    out = []
    for h in sorted(by_host):
        first: dict[int, int] = {}
        for local in sorted(by_host[h]):
            first.setdefault(graph.hosts[h].gpu_nic[local], local)
        out.append([(h, g) for _, g in sorted(first.items())])
    return out


def rail_ring_demands(graph: LinkGraph, placement: Sequence[tuple[int, int]], nbytes: float) -> list[Demand]:
    """``ring_flows``'s rings as demands: one ring per rail, ``nbytes / rails`` each."""
    ends = rail_ends(graph, placement)
    if len(ends) < 2:
        return []
    rails = min(len(e) for e in ends)
    return [d for r in range(rails) for d in ring_demands([e[r] for e in ends], nbytes / rails)]


def _nodes(graph: LinkGraph, gpu: tuple[int, int]) -> tuple[str, str]:
    host = graph.hosts[gpu[0]]
    return host.gpus[gpu[1]], host.nics[host.gpu_nic[gpu[1]]]


def ring_flows(graph: LinkGraph, paths: PathTable, job_id: str, placement: Sequence[tuple[int, int]],
               nbytes: float, seed: int = 0, pinned: dict[int, int] | None = None) -> JobTraffic:
    """Flows of a ring all-reduce of ``nbytes`` over the hosts of ``placement`` ((host, local GPU) pairs).

    Ring ``r`` uses, on every host, the ``r``-th NIC among those the job's GPUs sit behind (as many
    rings as the least-connected host allows), from the first of the job's GPUs behind it.  Flow
    ``i`` goes from the ``i``-th host of the sorted order to the next; ``pinned`` maps flow
    indices to path indices (``PathTable.paths``), others follow ECMP.
    """
    ends = rail_ends(graph, placement)
    k = len(ends)
    if k < 2 or nbytes <= 0:
        return JobTraffic(job_id, ())
    rails = min(len(e) for e in ends)
    per_flow = 2.0 * (k - 1) / k * nbytes / rails
    pinned = pinned or {}
    flows = []
    for r in range(rails):
        for i in range(k):
            (sg, sn), (dg, dn) = (_nodes(graph, ends[i][r]), _nodes(graph, ends[(i + 1) % k][r]))
            idx = len(flows)
            mid = paths.choose(sn, dn, seed, job_id, idx, pinned.get(idx))
            links = (graph.link_id(sg, sn), *mid, graph.link_id(dn, dg))
            flows.append(Flow(sg, dg, sn, dn, per_flow, links))
    return JobTraffic(job_id, tuple(flows))


def demand_flows(graph: LinkGraph, paths: PathTable, job_id: str, demands: Sequence[Demand], seed: int = 0,
                 pinned: dict[int, int] | None = None) -> JobTraffic:
    """Flows carrying ``demands`` between GPUs on different hosts, merged per ordered pair of NICs.

    A merged flow runs between the first GPUs (lowest local index) of its demands behind each
    NIC, as ``ring_flows`` uses one GPU per rail.  Flows are ordered by bytes, largest first
    (stable), and flow ``i`` takes ``pinned[i]`` or its ECMP path.
    """
    merged: dict[tuple[str, str], list] = {}  # (src nic, dst nic) -> [bytes, src GPU, dst GPU, kinds]
    for d in demands:
        if d.src[0] == d.dst[0] or d.nbytes <= 0:
            continue
        sh, dh = graph.hosts[d.src[0]], graph.hosts[d.dst[0]]
        key = (sh.nics[sh.gpu_nic[d.src[1]]], dh.nics[dh.gpu_nic[d.dst[1]]])
        m = merged.get(key)
        if m is None:
            merged[key] = [d.nbytes, d.src, d.dst, {d.kind}]
        else:
            m[0] += d.nbytes
            m[1], m[2] = min(m[1], d.src), min(m[2], d.dst)  # same host: the lowest local GPU
            m[3].add(d.kind)
    order = sorted(merged.items(), key=lambda kv: -kv[1][0])
    pinned = pinned or {}
    flows = []
    for idx, ((sn, dn), (nbytes, src, dst, kinds)) in enumerate(order):
        sg, dg = graph.hosts[src[0]].gpus[src[1]], graph.hosts[dst[0]].gpus[dst[1]]
        mid = paths.choose(sn, dn, seed, job_id, idx, pinned.get(idx))
        links = (graph.link_id(sg, sn), *mid, graph.link_id(dn, dg))
        flows.append(Flow(sg, dg, sn, dn, nbytes, links, "+".join(sorted(kinds))))
    return JobTraffic(job_id, tuple(flows))
