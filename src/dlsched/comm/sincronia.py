"""Sincronia (Agarwal et al., "Sincronia: Near-Optimal Network Design for Coflows", SIGCOMM '18).

Ordering by Bottleneck-Select-Scale-Iterate (the paper's Algorithm 1): find the most
loaded link ``b``; put last the unordered coflow with the smallest weight per demand
on it (``w_j / d_jb``); scale the weights of the others on ``b`` by what that coflow
used (``w_j -= w_last * d_jb / d_last,b``); repeat on the rest.  Weights start at 1
(the CRUX paper gives none), so the first pick is the most bytes on the bottleneck
and the scaling then favours, among the rest, those that shared it least.  Compression as Sincronia maps its order onto few levels (and as CRUX's
Figure 13 shows it): exponentially growing classes, 1 job on the top level, 2 on
the next, 4 on the next, the rest on the lowest.  Paths stay ECMP.
The bottlenecks are the hosts' ports, as in Sincronia's model: the fabric is one
non-blocking switch and a coflow's demand sits on its senders' egress and its
receivers' ingress ports (the NIC-ToR links: each flow's first and last network
link).  ``bottlenecks="links"`` (the rule before) weighs every network link on the
flows' ECMP paths instead, hash collisions in the fabric included, which
Sincronia's ordering never sees.
Simplification: each job is one coflow whose demand is its bytes per iteration.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from dlsched.comm.base import Assignment, CommView, bucket_levels, cached_demand, link_demand, usable_levels


_PORTS: dict = {"links": None, "capacity": None, "jobs": {}}

# the order in one compiled loop (``bssi_kernel``, the same steps and floats); False keeps the Python
# loop below, the reference the tests hold it equal to
COMPILED = True


def port_demand(view: CommView, job_id: str) -> dict[int, float]:
    """Seconds each host port (a flow's first and last network link: its NIC's egress and the receiving
    NIC's ingress) needs for the job's bytes of one iteration.  Cached per ``CommJob``, as ``link_demand``."""
    return cached_demand(_PORTS, view, job_id, _route_ports)


def _route_ports(view: CommView, route) -> Iterable[int]:
    net = [l for l in route if l in view.network_links]
    return dict.fromkeys((net[0], net[-1])) if net else ()


def bssi_order(view: CommView, weights: dict[str, float] | None = None, bottlenecks: str = "ports") -> list[str]:
    """Sincronia's order, first to last (``weights``: each coflow's, default 1; ``bottlenecks``: "ports",
    the hosts' ports as Sincronia's big-switch model has them, or "links", every network link).

    Each round's link loads are the sums over the coflows left, in job-id order (a fixed order, so the
    float sums do not follow the process's string hashing).  Only the links of the coflow just ordered
    change between rounds, so only theirs are summed again (in that same order, so the floats are those
    of a sum from scratch), and the most loaded link comes off a heap (stale entries skipped)."""
    if bottlenecks not in ("ports", "links"):
        raise ValueError(f"bottlenecks must be ports or links, not {bottlenecks!r}")
    of = port_demand if bottlenecks == "ports" else link_demand
    demand = {j: of(view, j) for j in view.jobs}
    if COMPILED:
        got = _compiled_order(view, demand, weights)
        if got is not None:
            return got
    w = {j: (weights or {}).get(j, 1.0) for j in view.jobs}
    left = set(view.jobs)
    on_link: dict[int, list[str]] = {}
    for j in sorted(left):
        for l in demand[j]:
            on_link.setdefault(l, []).append(j)

    def summed(l: int) -> float | None:
        total, any_left = 0.0, False
        for j in on_link[l]:
            if j in left:
                total = total + demand[j][l] if any_left else 0.0 + demand[j][l]
                any_left = True
        return total if any_left else None

    load: dict[int, float] = {l: summed(l) for l in on_link}
    heap = [(-v, l) for l, v in load.items()]
    heapq.heapify(heap)
    last_first: list[str] = []
    while left:
        if not load:
            last_first.extend(sorted(left, key=lambda j: (-view.jobs[j].arrival, j)))
            break
        while True:  # the largest load, ties to the lowest link id
            v, neck = heap[0]
            if load.get(neck) == -v:
                break
            heapq.heappop(heap)
        on = [j for j in on_link[neck] if j in left and demand[j][neck] > 0]
        last = min(on, key=lambda j: (w[j] / demand[j][neck], -demand[j][neck], j))  # select
        d_last = demand[last][neck]
        for j in on:  # scale: the others on the bottleneck pay for what the last one's weight covered
            if j != last:
                w[j] = max(w[j] - w[last] * demand[j][neck] / d_last, 0.0)
        last_first.append(last)
        left.discard(last)
        for l in demand[last]:
            v = summed(l)
            if v is None:
                load.pop(l, None)
            elif v != load[l]:
                load[l] = v
                heapq.heappush(heap, (-v, l))
    return last_first[::-1]


# per demand dict (cached per ``CommJob`` by ``cached_demand``): its links and seconds as arrays
_ARRAYS: dict[int, tuple] = {}


def _compiled_order(view: CommView, demand: dict[str, dict[int, float]],
                    weights: dict[str, float] | None) -> list[str] | None:
    """``bssi_order``'s answer from ``bssi_kernel`` (None where the Python loop must give it: a
    bottleneck with no positive demand left, which fails there)."""
    from dlsched.comm.bssi_kernel import bssi

    ids = sorted(view.jobs)  # the kernel's job numbers: job-id order, the order loads are summed in
    links, dems, sizes = [], [], []
    for j in ids:
        d = demand[j]
        got = _ARRAYS.get(id(d))
        if got is None or got[0] is not d:
            got = _ARRAYS[id(d)] = (d, np.fromiter(d.keys(), dtype=np.int64, count=len(d)),
                                    np.fromiter(d.values(), dtype=np.float64, count=len(d)))
        links.append(got[1])
        dems.append(got[2])
        sizes.append(len(d))
    if len(_ARRAYS) > 4 * len(ids) + 256:  # demands of jobs gone: forget them
        keep = {id(demand[j]) for j in ids}
        for k in [k for k in _ARRAYS if k not in keep]:
            del _ARRAYS[k]
    n = len(ids)
    j_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=j_ptr[1:])
    j_link = np.concatenate(links) if n else np.zeros(0, dtype=np.int64)
    j_dem = np.concatenate(dems) if n else np.zeros(0)
    # links numbered densely in link-id order (ties go to the lowest link id either way)
    ids_of_links, j_link = np.unique(j_link, return_inverse=True)
    j_link = j_link.astype(np.int64).reshape(-1)
    num_links = len(ids_of_links)
    job_of = np.repeat(np.arange(n, dtype=np.int64), sizes)
    by_link = np.argsort(j_link, kind="stable")  # per link, its jobs in job order
    l_ptr = np.zeros(num_links + 1, dtype=np.int64)
    np.cumsum(np.bincount(j_link, minlength=num_links), out=l_ptr[1:])
    w = np.array([(weights or {}).get(j, 1.0) for j in ids], dtype=np.float64)
    if not len(j_link):
        out, m = np.zeros(0, dtype=np.int64), 0
    else:
        out, m = bssi(num_links, j_ptr, j_link, l_ptr, job_of[by_link], j_dem[by_link], w)
    if m < 0:
        return None
    last_first = [ids[k] for k in out[:m].tolist()]
    if m < n:  # on no link: last, latest placed first
        done = set(last_first)
        last_first.extend(sorted((j for j in ids if j not in done), key=lambda j: (-view.jobs[j].arrival, j)))
    return last_first[::-1]


@dataclass
class Sincronia:
    name: str = "sincronia"
    levels: int = 8
    reserved: int = 2
    bottlenecks: str = "ports"  # Sincronia's big switch; "links": every network link (the rule before)

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        sizes = [2 ** i for i in range(usable)]
        levels = bucket_levels(bssi_order(view, bottlenecks=self.bottlenecks), sizes, self.reserved)
        return {j: Assignment(levels[j], None) for j in view.jobs}
