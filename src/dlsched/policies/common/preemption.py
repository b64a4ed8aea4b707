"""Freeing GPUs for a queued job by preempting running ones, shared by priority schedulers.

Tiresias (discretised 2D-LAS) and Dally (network-sensitive priority) both let a
queued job of better priority take GPUs from running jobs of worse priority.
Victims are released one at a time in the order given until the job fits at
the tier it will accept; nothing is preempted unless the job then fits.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from dlsched.cluster.freemap import FreeMap
from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Cluster, Tier
from dlsched.policies.base import JobState


def preempt_to_fit(cluster: Cluster, scratch: FreeMap, n: int, type_id: int | None, max_tier: Tier,
                   victims: Iterable[JobState]) -> tuple[np.ndarray, FreeMap, list[JobState]] | None:
    """(GPUs, the free map after releasing the victims used, those victims), or None if no prefix helps."""
    trial: FreeMap | None = None
    taken: list[JobState] = []
    # once pick_gpus has found nothing on ``trial``, a release can only make it succeed through
    # the nodes and racks it touched (below the network tier, where any GPUs of the type do):
    # those are checked before pick_gpus is asked again, instead of asking it after every victim
    failed = False
    bounded = max_tier < Tier.NETWORK and not scratch.first_free
    for v in victims:
        own = v.allocation.gpus
        if type_id is not None and int(cluster.gpu_type_idx[own[0]]) != type_id:
            continue  # its GPUs would not help
        trial = trial or scratch.copy()
        trial.release(own)
        taken.append(v)
        if trial.free_of_type(type_id) < n:
            failed = True
            continue
        if failed and bounded and not _may_fit(trial, own, n, type_id, max_tier):
            continue
        gpus = pick_gpus(trial, n, type_id, max_tier=max_tier)
        if gpus is not None:
            return gpus, trial, taken
        failed = True
    return None


def _may_fit(trial: FreeMap, released, n: int, type_id: int | None, max_tier: Tier) -> bool:
    """Whether the release of ``released`` may have made ``n`` GPUs fit on one node (or one rack,
    with ``max_tier`` RACK) where nothing fitted before: only a node or rack it touched can."""
    gpu_node, node_rack, node_type, _ = trial._lists
    node_free, rack_type_free = trial._nf, trial._rtf
    rack = max_tier >= Tier.RACK
    for g in released:
        nd = gpu_node[g]
        t = node_type[nd]
        if type_id is not None and t != type_id:
            continue
        if node_free[nd] >= n or (rack and rack_type_free[node_rack[nd], t] >= n):
            return True
    return False


def placement_level(cluster: Cluster, gpus) -> str:
    """Dally's consolidation level of a placement: "machine", "rack" or "network"."""
    # plain Python over a handful of ids: asked for every running job at every call, where two
    # np.unique calls cost ~40 us
    gpu_node, node_rack = cluster.derived("preemption.node_lists",
                                          lambda: (cluster.gpu_node.tolist(), cluster.node_rack.tolist()))
    nodes = {gpu_node[int(g)] for g in gpus}
    if len(nodes) == 1:
        return "machine"
    return "rack" if len({node_rack[nd] for nd in nodes}) == 1 else "network"


def largest_fits(cluster: Cluster, type_id: int | None) -> tuple[int, int]:
    """(GPUs of the largest machine, GPUs of the largest rack) of a type (any type for None)."""
    def build():
        out = {}
        for t in [None, *range(len(cluster.gpu_types))]:
            mask = np.ones(cluster.num_nodes, bool) if t is None else cluster.node_type == t
            per_rack = np.bincount(cluster.node_rack[mask], weights=cluster.node_gpus[mask],
                                   minlength=cluster.num_racks)
            node_max = int(cluster.node_gpus[mask].max()) if mask.any() else 0
            out[t] = (node_max, int(per_rack.max()) if per_rack.size else 0)
        return out
    return cluster.derived("preemption.largest_fits", build)[type_id]
