"""Gandiva's working picture of the cluster inside one ``schedule`` call.

``Plan`` starts from the running jobs (who holds which GPU, in which sharing
mode) and records every change the policy makes to it: new placements,
migrations, time-slicing a job onto GPUs that already hold others, packing,
growing and shrinking.  At the end ``decision()`` turns the difference between
the plan and the present into one ``Decision``, after giving every job the
mode its GPUs call for: alone on its GPUs it runs exclusive; sharing them it
runs sliced, or packed where the policy packed that group.  A GPU therefore
never mixes modes, as the core requires.

It also answers the node-level questions of Gandiva's node-allocation
algorithm: a node's affinity (the GPU demand of the jobs on it: 0 when it is
empty, -1 when it holds mixed demands) and height (GPUs allocated over GPUs
it has; above 1 it is time-sliced).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Tier
from dlsched.policies.base import Allocation, ClusterView, Decision, JobState

MIXED = -1  # affinity of a node whose jobs ask for different numbers of GPUs


def best_in_node(cluster, free: list[int], n: int) -> tuple[int, ...] | None:
    """``n`` of a node's free GPUs with the tightest PCIe/socket tier (ties: lowest ids)."""
    if len(free) < n:
        return None
    if n == len(free) or n == 1:
        return tuple(free[:n])
    best, best_tier = None, None
    for combo in combinations(free, n):  # nodes hold at most a handful of GPUs
        t = cluster.tier(combo)
        if best_tier is None or t < best_tier:
            best, best_tier = combo, t
            if t <= Tier.PCIE_SWITCH:
                break
    return best


class Plan:
    def __init__(self, view: ClusterView):
        self.view = view
        self.c = view.cluster
        self.jobs: dict[str, JobState] = {}
        self.gpus: dict[str, tuple[int, ...]] = {}  # planned GPUs per job
        self.packed: set[str] = set()  # jobs whose shared group runs packed, not sliced
        self.holders: dict[int, list[str]] = {}
        self.scratch = view.free.copy()
        # one holder per held GPU in the scratch copy: the plan keeps its own holder lists, the scratch
        # only answers "which GPUs are free" (its free counts do not change: no GPU becomes free here)
        np.minimum(self.scratch.occupancy, 1, out=self.scratch.occupancy)
        for j in view.running():
            self.jobs[j.job_id] = j
            self.gpus[j.job_id] = j.allocation.gpus
            if j.allocation.mode == "packed":
                self.packed.add(j.job_id)
            for g in j.allocation.gpus:
                self.holders.setdefault(g, []).append(j.job_id)
        self.touched: set[int] = set()  # GPUs whose holders changed: only their jobs can change mode
        self.repacked: set[str] = set()  # jobs whose packed flag the policy set or cleared
        for jid, job in self.jobs.items():  # left alone by a co-tenant that finished: back to exclusive
            if job.allocation.mode != "exclusive" and self.sharing(jid) == 1:
                self.repacked.add(jid)

    # ------------------------------------------------------------------ questions

    def node_of(self, g: int) -> int:
        return int(self.c.gpu_node[g])

    def node_jobs(self, node: int) -> set[str]:
        n = self.c.nodes[node]
        out: set[str] = set()
        for g in range(n.first_gpu, n.first_gpu + n.num_gpus):
            out.update(self.holders.get(g, ()))
        return out

    def affinity(self, node: int) -> int:
        demands = {self.jobs[j].spec.num_gpus for j in self.node_jobs(node)}
        if not demands:
            return 0
        return demands.pop() if len(demands) == 1 else MIXED

    def height(self, node: int) -> float:
        n = self.c.nodes[node]
        held = sum(len(self.holders.get(g, ())) for g in range(n.first_gpu, n.first_gpu + n.num_gpus))
        return held / n.num_gpus

    def free_in_node(self, node: int) -> list[int]:
        return [int(g) for g in self.scratch.free_gpus_of_node(node)]

    def nodes_of_type(self, type_id: int | None):
        c = self.c
        return [i for i in range(c.num_nodes) if type_id is None or int(c.node_type[i]) == type_id]

    def sharing(self, jid: str) -> int:
        """How many jobs take turns on (or pack) the job's most shared GPU."""
        gpus = self.gpus[jid]
        if len(gpus) == 1:  # most jobs: skip the generator (this is the policy's hottest line)
            return len(self.holders.get(gpus[0], ()))
        return max(len(self.holders.get(g, ())) for g in gpus)

    def pick_free(self, n: int, type_id: int | None) -> tuple[int, ...] | None:
        """Any ``n`` free GPUs, one node first (then the best PCIe/socket tier inside it)."""
        if self.scratch.free_of_type(type_id) < n:
            return None
        got = pick_gpus(self.scratch, n, type_id)
        if got is None:
            return None
        nodes = {self.node_of(int(g)) for g in got}
        if len(nodes) == 1:
            inner = best_in_node(self.c, self.free_in_node(nodes.pop()), n)
            if inner is not None:
                return inner
        return tuple(sorted(int(g) for g in got))

    # ------------------------------------------------------------------ changes

    def remove(self, jid: str) -> None:
        for g in self.gpus.pop(jid, ()):
            self.touched.add(g)
            hold = self.holders[g]
            hold.remove(jid)
            if not hold:
                del self.holders[g]
                self.scratch.release([g])

    def place(self, job: JobState, gpus, packed: bool = False) -> None:
        jid = job.job_id
        self.remove(jid)
        self.jobs[jid] = job
        gpus = tuple(sorted(int(g) for g in gpus))
        self.gpus[jid] = gpus
        self.repacked.add(jid)
        for g in gpus:
            self.touched.add(g)
            hold = self.holders.setdefault(g, [])
            if not hold:
                self.scratch.allocate([g])
            hold.append(jid)
        if packed:
            self.packed.add(jid)
        else:
            self.packed.discard(jid)

    def set_packed(self, group: list[str], packed: bool) -> None:
        self.repacked.update(group)
        for jid in group:
            (self.packed.add if packed else self.packed.discard)(jid)

    # ------------------------------------------------------------------ result

    def mode(self, jid: str) -> str:
        if self.sharing(jid) <= 1:
            return "exclusive"
        return "packed" if jid in self.packed else "sliced"

    def allocation(self, jid: str) -> Allocation:
        job = self.jobs[jid]
        old = job.allocation
        plan = old.plan if old is not None and old.gpus == self.gpus[jid] else None
        return Allocation(self.gpus[jid], plan, self.mode(jid))

    def decision(self) -> Decision:
        """Every job whose GPUs or mode the plan changed, in a fixed order (deterministic)."""
        self._consistent_modes()
        d = Decision()
        for jid in sorted(self.changed(), key=lambda j: (self.jobs[j].spec.submit_time, j)):
            new = self.allocation(jid)
            old = self.jobs[jid].allocation
            if old is None or old.gpus != new.gpus or old.mode != new.mode:
                d.allocate[jid] = new
        return d

    def changed(self) -> set[str]:
        """Jobs whose GPUs, co-tenants or packing the plan may have changed (a superset)."""
        out = {j for j in self.repacked if j in self.gpus}
        for g in self.touched:
            out.update(self.holders.get(g, ()))
        return out

    def shared_nodes(self) -> set[int]:
        return {self.node_of(g) for g, hold in self.holders.items() if len(hold) > 1}

    def _consistent_modes(self) -> None:
        """A shared GPU runs packed only if every job on it was packed; otherwise all slice."""
        changed = True
        while changed:
            changed = False
            for g in self.touched:
                hold = self.holders.get(g, ())
                if len(hold) > 1 and any(j in self.packed for j in hold) and \
                        not all(j in self.packed for j in hold):
                    self.set_packed(hold, False)
                    changed = True
