"""The network traffic of one job per iteration: flows between hosts, and the links they cross.

A data-parallel job synchronises its gradients with one all-reduce per
iteration (bucketed; ``perf.gradsync`` gives the bytes).  Across hosts NCCL
runs rings that enter and leave each host once, one ring per NIC rail: with
``k`` hosts, every host sends ``2 (k - 1) / k`` of the gradient bytes to the
next host of the ring, split over the rails.  Traffic inside a host (NVLink,
PCIe between GPUs) is not on the network and is left to the perf model.

Simplifications, each stated where it applies: jobs on a tensor/pipeline plan
are treated as data-parallel over their whole gradient (their pipeline
send/recv and in-node tensor all-reduces are not modelled as flows), and
MoE all-to-alls are not flows (expert gradients are excluded, as in
``gradsync``); their price alone still comes from the perf model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dlsched.network.graph import LinkGraph
from dlsched.network.paths import PathTable
from dlsched.perf import gradsync
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


@dataclass(frozen=True, slots=True)
class JobTraffic:
    job_id: str
    flows: tuple[Flow, ...]

    @property
    def network_bytes(self) -> float:
        return sum(f.nbytes for f in self.flows)

    def link_counts(self) -> dict[int, int]:
        """How many of the job's flows cross each link."""
        out: dict[int, int] = {}
        for f in self.flows:
            for l in f.links:
                out[l] = out.get(l, 0) + 1
        return out


def gradient_bytes(spec: JobSpec) -> float:
    """Bytes a data-parallel replica all-reduces per iteration (experts excluded for MoE)."""
    model = get_model(spec.model, spec.params)
    return sum(b.nbytes for b in gradsync.buckets(model, BUCKET_MB, model.family == "moe"))


def ring_flows(graph: LinkGraph, paths: PathTable, job_id: str, placement: Sequence[tuple[int, int]],
               nbytes: float, seed: int = 0, pinned: dict[int, int] | None = None) -> JobTraffic:
    """Flows of a ring all-reduce of ``nbytes`` over the hosts of ``placement`` ((host, local GPU) pairs).

    Ring ``r`` uses, on every host, the ``r``-th NIC among those the job's GPUs sit behind (as many
    rings as the least-connected host allows), from the first of the job's GPUs behind it.  Flow
    ``i`` goes from the ``i``-th host of the sorted order to the next; ``pinned`` maps flow
    indices to path indices (``PathTable.paths``), others follow ECMP.
    """
    by_host: dict[int, list[int]] = {}
    for h, local in placement:
        by_host.setdefault(int(h), []).append(int(local))
    hosts = sorted(by_host)
    k = len(hosts)
    if k < 2 or nbytes <= 0:
        return JobTraffic(job_id, ())
    ends = []  # per host: [(gpu node, nic node)] for each rail the job can use there
    for h in hosts:
        host = graph.hosts[h]
        first: dict[int, int] = {}
        for local in sorted(by_host[h]):
            first.setdefault(host.gpu_nic[local], local)
        ends.append([(host.gpus[g], host.nics[n]) for n, g in sorted(first.items())])
    rails = min(len(e) for e in ends)
    per_flow = 2.0 * (k - 1) / k * nbytes / rails
    pinned = pinned or {}
    flows = []
    for r in range(rails):
        for i in range(k):
            (sg, sn), (dg, dn) = ends[i][r], ends[(i + 1) % k][r]
            idx = len(flows)
            mid = paths.choose(sn, dn, seed, job_id, idx, pinned.get(idx))
            links = (graph.link_id(sg, sn), *mid, graph.link_id(dn, dg))
            flows.append(Flow(sg, dg, sn, dn, per_flow, links))
    return JobTraffic(job_id, tuple(flows))
