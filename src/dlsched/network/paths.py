"""Equal-cost paths between hosts, enumerated once and cached, and ECMP path choice.

Paths run over switches only (a dual-homed NIC is never a shortcut between two
ToRs).  Between two NICs the candidates are the shortest switch paths from any
ToR of the first to any ToR of the second, kept at the minimal length.  ECMP
picks one per flow by a hash of (seed, job, flow index), as switches hash a
flow's five-tuple: deterministic for a seed, uniform over the candidates.  A
communication policy may pin a job's flows to chosen candidates instead.

Parallel ports.  Two switches joined by a bundle of k ports (``LinkGraph.cable(...,
ports=k)``) are k links; a candidate path takes one port on every hop, so a switch
route of hops with k1, k2, ... ports stands for k1 * k2 * ... candidates.  They are
too many to list on wide fabrics (double-sided: 116 x 7 x 7 x 116 per route), so ``PathSet``
holds the routes and their hops and numbers the candidates lazily: route by route,
ports in lexicographic order.  With one port per hop it is exactly the old list.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence

import networkx as nx
import numpy as np

from dlsched.network.graph import LinkGraph


def ecmp_hash(seed: int, job_id: str, flow: int) -> int:
    """A stable 64-bit hash (Python's ``hash`` of a str changes between runs)."""
    d = hashlib.blake2b(f"{seed}|{job_id}|{flow}".encode(), digest_size=8).digest()
    return int.from_bytes(d, "big")


class PathSet(Sequence):
    """The equal-cost candidates between two NICs: ``routes`` (each a tuple of hops, each hop the
    tuple of its parallel port links), indexed lazily (route by route, ports lexicographically)."""

    __slots__ = ("routes", "_offsets", "_len", "_route_of", "_base", "_grid")

    def __init__(self, routes: list[tuple[tuple[int, ...], ...]], base: Sequence[int]):
        self.routes = tuple(routes)
        offsets, n = [], 0
        for r in self.routes:
            offsets.append(n)
            size = 1
            for hop in r:
                size *= len(hop)
            n += size
        self._offsets, self._len = offsets, n
        # a route by its bundles' first links; a port's position is its offset from that first link
        # (``LinkGraph.cable`` numbers a bundle's ports consecutively)
        # (``base[l]``: the first link of link ``l``'s bundle, from the graph)
        self._route_of = {tuple(hop[0] for hop in r): i for i, r in enumerate(self.routes)}
        self._base = base
        self._grid = None

    def grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The routes as arrays, for scoring every route at once: ``first[r, h]`` the first port link
        of hop ``h`` of route ``r``, ``width[r, h]`` its number of ports, ``offsets[r]`` the index of the
        route's first candidate.  A bundle's ports are consecutive links (``LinkGraph.cable``), so
        port ``k`` of hop ``h`` is link ``first[r, h] + k``.  Built once (a ``PathTable`` keeps its ``PathSet``s)."""
        if self._grid is None:
            if len({len(r) for r in self.routes}) > 1:
                raise ValueError("PathSet.grid: routes of unequal length (PathTable keeps the shortest only)")
            # ports are cabled in order, so first and last decide whether a hop is one run of links
            if any(hop[-1] - hop[0] != len(hop) - 1 for r in self.routes for hop in r):
                raise ValueError("PathSet.grid: a bundle's ports are not consecutive links")
            H = len(self.routes[0]) if self.routes else 0
            first = np.array([[hop[0] for hop in r] for r in self.routes], dtype=np.int64).reshape(-1, H)
            width = np.array([[len(hop) for hop in r] for r in self.routes], dtype=np.int64).reshape(-1, H)
            self._grid = (first, width, np.array(self._offsets, dtype=np.int64))
        return self._grid

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i: int) -> tuple[int, ...]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(f"path index {i} out of range ({self._len} paths)")
        r = bisect_right(self._offsets, i) - 1
        rest = i - self._offsets[r]
        out = []
        for hop in reversed(self.routes[r]):
            rest, k = divmod(rest, len(hop))
            out.append(hop[k])
        return tuple(reversed(out))

    def index_of(self, route: int, picks: Sequence[int]) -> int:
        """The index of the candidate taking port ``picks[h]`` (a position in hop ``h``) on ``route``."""
        i = 0
        for hop, k in zip(self.routes[route], picks):
            i = i * len(hop) + k
        return self._offsets[route] + i

    def index(self, path, *args) -> int:
        path = tuple(path)
        # the route by its bundles' first links; every link of the path then lies in its hop's
        # bundle (``base`` maps a port to its bundle's first link), at its offset from the first
        r = self._route_of.get(tuple(self._base[l] if 0 <= l < len(self._base) else -1 for l in path))
        if r is not None and len(self.routes[r]) == len(path):
            return self.index_of(r, [l - h[0] for l, h in zip(path, self.routes[r])])
        raise ValueError(f"{path} is not a candidate path")

    def __contains__(self, path) -> bool:
        try:
            self.index(path)
        except ValueError:
            return False
        return True


class PathTable:
    """Cached equal-cost NIC-to-NIC paths (as tuples of link ids) of a link graph."""

    def __init__(self, graph: LinkGraph):
        self.g = graph
        switches = [n for n, layer in graph.layers.items() if layer != "nic"]
        # a copy, not a subgraph view: a view filters every node it visits, and the shortest-path
        # searches between ToR pairs then spent most of their time in that filter
        self._fabric = graph.graph.subgraph(switches).copy()
        self._tor_paths: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        self._nic_paths: dict[tuple[str, str], PathSet] = {}
        self._bundles: dict[tuple[str, str], tuple[int, ...]] = {}  # one shared tuple per hop
        # each link's bundle, named by the bundle's first link (the flow model's self-collision count reads it too)
        self.bundle_of = [graph.graph[u][v]["ports"][0] for u, v in zip(graph.link_src, graph.link_dst)]

    def _switch_paths(self, a: str, b: str) -> list[tuple[str, ...]]:
        key = (a, b)
        got = self._tor_paths.get(key)
        if got is None:
            if a == b:
                got = [(a,)]
            else:
                try:
                    got = sorted(tuple(p) for p in nx.all_shortest_paths(self._fabric, a, b))
                except nx.NetworkXNoPath:
                    got = []
            self._tor_paths[key] = got
        return got

    def paths(self, src_nic: str, dst_nic: str) -> PathSet:
        """Every shortest path from one NIC to another, as link ids; routes sorted, so indices are stable."""
        key = (src_nic, dst_nic)
        got = self._nic_paths.get(key)
        if got is not None:
            return got
        G = self.g.graph
        cands: list[tuple[str, ...]] = []
        for a in sorted(G.successors(src_nic)):
            if a not in self._fabric:
                continue
            for b in sorted(G.predecessors(dst_nic)):
                if b in self._fabric:
                    cands.extend((src_nic, *p, dst_nic) for p in self._switch_paths(a, b))
        if cands:
            shortest = min(len(p) for p in cands)
            cands = sorted(set(p for p in cands if len(p) == shortest))
        got = PathSet([tuple(self._bundle(u, v) for u, v in zip(p, p[1:])) for p in cands], self.bundle_of)
        self._nic_paths[key] = got
        return got

    def _bundle(self, u: str, v: str) -> tuple[int, ...]:
        got = self._bundles.get((u, v))
        if got is None:
            got = self._bundles[(u, v)] = tuple(self.g.ports(u, v))
        return got

    def choose(self, src_nic: str, dst_nic: str, seed: int, job_id: str, flow: int,
               pinned: int | None = None) -> tuple[int, ...]:
        """The path a flow takes: ``pinned`` (an index into ``paths``) or the ECMP hash's pick."""
        cands = self.paths(src_nic, dst_nic)
        if not cands:
            raise ValueError(f"no path from {src_nic} to {dst_nic} in {self.g.name}")
        if pinned is not None:
            if not 0 <= pinned < len(cands):
                raise ValueError(f"path index {pinned} out of range: {len(cands)} paths from {src_nic} "
                                 f"to {dst_nic}")
            return cands[pinned]
        return cands[ecmp_hash(seed, job_id, flow) % len(cands)]
