"""Alpha-beta costs of collective operations on a concrete placement.

Public API (pure functions; seconds; ``nbytes`` is the full buffer each rank holds):

    links_of(cluster, gpus) -> Links
        The link hierarchy a set of GPU ids spans: one ``Level`` per tier crossed,
        innermost first (GPUs in a node, nodes in a rack, racks).
    flat_links(n, link, tier=Tier.NVLINK) -> Links
        One level of ``n`` ranks on one link (for callers with a link description only).
    Links(n, levels)       levels: tuple of Level(tier, fan_in, min_fan_in, link, per_node)
    ring_allreduce(nbytes, p, link) / tree_allreduce(nbytes, p, link) -> float
        The single-link primitives.
    allreduce_time(nbytes, links, algorithm="auto") -> float    # "ring" | "tree" | "hierarchical" | "auto"
    reduce_scatter_time(nbytes, links, algorithm="auto") -> float
    allgather_time(nbytes, links, algorithm="auto") -> float    # nbytes = the gathered (full) size
    alltoall_time(nbytes, links) -> float                       # nbytes = what each rank sends in all
    sendrecv_time(nbytes, link) -> float                        # one point-to-point transfer

Model.  A link tier costs ``latency + bytes / bandwidth`` (``LinkCost``).
Inter-node tiers are priced per *node*: every GPU of a node shares its NIC,
so after the intra-node stage a node moves the whole buffer through one NIC
(this is what NCCL's hierarchical and ring algorithms both do: a ring enters
and leaves each node once).  Formulas follow Thakur, Rabenseifner and Gropp,
"Optimization of collective communication operations in MPICH" (IJHPCA 2005):

- ring all-reduce on p ranks: 2(p-1) steps, each ``alpha + S/(p B)`` on the
  slowest link of the ring;
- tree (NCCL's double binary tree): 2 log2(p) latency hops, bandwidth term
  ``2 S / B`` since two pipelined trees each carry half the data one way and back;
- hierarchical: reduce-scatter up the levels, all-reduce (ring or tree, the
  faster) at the top, all-gather back down; each level's buffer is the previous
  one divided by its fan-in, except past the node level, where the node's GPUs
  together still move S through the NIC.
- ``auto`` takes the fastest of the three, as NCCL's tuner does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from dlsched.cluster.topology import Cluster, LinkCost, Tier

ALGORITHMS = ("ring", "tree", "hierarchical", "auto")


@dataclass(frozen=True, slots=True)
class Level:
    """One stage of the hierarchy: ``fan_in`` participants (max over groups), ``min_fan_in`` (min)."""

    tier: Tier
    fan_in: int
    min_fan_in: int
    link: LinkCost
    per_node: bool  # True above the node: the buffer is not split among the node's GPUs


@dataclass(frozen=True, slots=True)
class Links:
    """Link hierarchy of a placement, innermost level first; ``n`` ranks in all."""

    n: int
    levels: tuple[Level, ...]

    @property
    def slowest(self) -> LinkCost:
        """The link a flat ring is bounded by: lowest bandwidth, highest latency."""
        bw = min(lv.link.bandwidth_Bps for lv in self.levels)
        lat = max(lv.link.latency_s for lv in self.levels)
        return LinkCost(bw, lat)

    @property
    def top_tier(self) -> Tier:
        return self.levels[-1].tier if self.levels else Tier.GPU


def flat_links(n: int, link: LinkCost, tier: Tier = Tier.NVLINK) -> Links:
    """A single level of ``n`` ranks on one link."""
    return Links(n, (Level(tier, n, n, link, False),) if n > 1 else ())


def links_of(cluster: Cluster, gpus: Sequence[int]) -> Links:
    """The link hierarchy a set of GPU ids spans (slowest link of each level, over the nodes used)."""
    from dlsched.perf.placement.shape import placement_shape, shape_index  # shape builds on Level/Links

    return shape_index(cluster).links(placement_shape(cluster, gpus))


# ----------------------------------------------------------------------------- primitives


def ring_reduce_scatter(nbytes: float, p: int, link: LinkCost) -> float:
    """Ring reduce-scatter (or all-gather) of an ``nbytes`` buffer over ``p`` ranks."""
    if p <= 1:
        return 0.0
    return (p - 1) * (link.latency_s + nbytes / (p * link.bandwidth_Bps))


def ring_allreduce(nbytes: float, p: int, link: LinkCost) -> float:
    return 2.0 * ring_reduce_scatter(nbytes, p, link)


def tree_allreduce(nbytes: float, p: int, link: LinkCost) -> float:
    if p <= 1:
        return 0.0
    return 2.0 * math.ceil(math.log2(p)) * link.latency_s + 2.0 * nbytes / link.bandwidth_Bps


def _climb(nbytes: float, links: Links, top_allreduce: bool) -> float:
    """Reduce-scatter up every level (a ring per level); optionally all-reduce at the top.

    Above the node the shard shrinks by each level's fan-in; inside a node it
    does not for the next level, because the node's GPUs share one NIC and
    together move the whole buffer through it.
    """
    t = 0.0
    s = nbytes
    last = len(links.levels) - 1
    for i, lv in enumerate(links.levels):
        if i == last and top_allreduce:
            # NCCL's tuner picks ring or tree per level by size; take the faster
            t += min(ring_allreduce(s, lv.fan_in, lv.link), tree_allreduce(s, lv.fan_in, lv.link))
        else:
            t += ring_reduce_scatter(s, lv.fan_in, lv.link)
            if lv.per_node:
                s /= max(1, lv.min_fan_in)
    return t


def hierarchical_allreduce(nbytes: float, links: Links) -> float:
    """Reduce-scatter up, all-reduce at the top level, all-gather back down (mirror of the climb)."""
    if links.n <= 1 or not links.levels:
        return 0.0
    up = _climb(nbytes, links, top_allreduce=True)
    # the way down costs what the way up cost below the top level
    below = _climb(nbytes, Links(links.n, links.levels[:-1]), top_allreduce=False) if len(links.levels) > 1 else 0.0
    return up + below


def allreduce_time(nbytes: float, links: Links, algorithm: str = "auto") -> float:
    """All-reduce of ``nbytes`` on every rank of ``links``."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    if links.n <= 1 or not links.levels or nbytes <= 0:
        return 0.0
    if algorithm == "ring":
        return ring_allreduce(nbytes, links.n, links.slowest)
    if algorithm == "tree":
        return tree_allreduce(nbytes, links.n, links.slowest)
    if algorithm == "hierarchical":
        return hierarchical_allreduce(nbytes, links)
    return min(ring_allreduce(nbytes, links.n, links.slowest),
               tree_allreduce(nbytes, links.n, links.slowest),
               hierarchical_allreduce(nbytes, links))


def reduce_scatter_time(nbytes: float, links: Links, algorithm: str = "auto") -> float:
    """Reduce-scatter of an ``nbytes`` buffer (each rank ends with nbytes/n): half a ring all-reduce."""
    if links.n <= 1 or not links.levels:
        return 0.0
    flat = ring_reduce_scatter(nbytes, links.n, links.slowest)
    if algorithm == "ring":
        return flat
    hier = _climb(nbytes, links, top_allreduce=False)
    return hier if algorithm == "hierarchical" else min(flat, hier)


def allgather_time(nbytes: float, links: Links, algorithm: str = "auto") -> float:
    """All-gather to a full ``nbytes`` buffer on every rank: the mirror of reduce-scatter."""
    return reduce_scatter_time(nbytes, links, algorithm)


def alltoall_time(nbytes: float, links: Links) -> float:
    """All-to-all where each rank sends ``nbytes`` in all, spread evenly over the ranks.

    Pairs exchange directly (NCCL's grouped send/recv).  At a level whose groups
    hold ``inner`` ranks below it, a share ``(p - inner) / p`` of each rank's
    data must cross that level's link; above the node a NIC carries the
    shares of all the node's GPUs.  The slowest level bounds the time; the
    messages are issued together, so latency is paid about once per level.
    """
    p = links.n
    if p <= 1 or not links.levels:
        return 0.0
    gpus_per_node = links.levels[0].fan_in if links.levels[0].tier <= Tier.CROSS_SOCKET else 1
    inner = 1
    t = 0.0
    for lv in links.levels:
        share = (p - inner) / p
        vol = nbytes * share * (gpus_per_node if lv.per_node else 1)
        t = max(t, vol / lv.link.bandwidth_Bps)
        inner *= lv.fan_in
    return t + sum(lv.link.latency_s for lv in links.levels)


def sendrecv_time(nbytes: float, link: LinkCost) -> float:
    """One point-to-point message (pipeline-stage activations); nothing to send costs nothing."""
    return link.time(nbytes) if nbytes > 0 else 0.0
