"""Equal-cost paths between hosts, enumerated once and cached, and ECMP path choice.

Paths run over switches only (a dual-homed NIC is never a shortcut between two
ToRs).  Between two NICs the candidates are the shortest switch paths from any
ToR of the first to any ToR of the second, kept at the minimal length.  ECMP
picks one per flow by a hash of (seed, job, flow index), as switches hash a
flow's five-tuple: deterministic for a seed, uniform over the candidates.  A
communication policy may pin a job's flows to chosen candidates instead.
"""

from __future__ import annotations

import hashlib

import networkx as nx

from dlsched.network.graph import LinkGraph


def ecmp_hash(seed: int, job_id: str, flow: int) -> int:
    """A stable 64-bit hash (Python's ``hash`` of a str changes between runs)."""
    d = hashlib.blake2b(f"{seed}|{job_id}|{flow}".encode(), digest_size=8).digest()
    return int.from_bytes(d, "big")


class PathTable:
    """Cached equal-cost NIC-to-NIC paths (as tuples of link ids) of a link graph."""

    def __init__(self, graph: LinkGraph):
        self.g = graph
        switches = [n for n, layer in graph.layers.items() if layer != "nic"]
        self._fabric = graph.graph.subgraph(switches)
        self._tor_paths: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        self._nic_paths: dict[tuple[str, str], list[tuple[int, ...]]] = {}

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

    def paths(self, src_nic: str, dst_nic: str) -> list[tuple[int, ...]]:
        """Every shortest path from one NIC to another, as link ids; sorted, so indices are stable."""
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
        got = [tuple(self.g.link_id(u, v) for u, v in zip(p, p[1:])) for p in cands]
        self._nic_paths[key] = got
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
