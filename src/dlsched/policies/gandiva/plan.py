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

Every question is asked thousands of times per call on a large cluster, so the
plan keeps per-node indexes (the jobs on a node with their GPU counts there,
the node's demand counts and summed holders) and a per-job sharing cache, all
updated by ``place`` and ``remove``: a question costs O(1) or O(a node's jobs),
never a scan of GPUs.  ``version`` counts changes to who holds what, so a
caller can tell that nothing moved since it last looked.

The plan also lives across calls (``begin``/``end_call``): after a call the
engine holds exactly what the plan says (the decision is the difference), so
the next call starts from it, less the jobs that finished meanwhile (``drop``),
instead of rebuilding the indexes from every running job.  ``matches`` says
whether the engine still agrees (same number of running jobs, same free
GPUs); where it does not (a fault sent a job back to the queue, a live
launch failed) the caller builds a fresh plan.  ``shared`` (GPUs with several
holders), ``elastic`` and ``multi`` (jobs on several GPUs) are kept so that
the introspective passes visit only the jobs they can act on.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from dlsched.cluster.freemap import nodes_of_type
from dlsched.cluster.placement import pick_gpus
from dlsched.cluster.topology import Tier
from dlsched.policies.gandiva.servers import fewest_servers
from dlsched.policies.base import Allocation, ClusterView, Decision, JobState

_TIER_CACHE = 1 << 16
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


def _nodes_by_type(cluster) -> dict:
    """Node ids per GPU type id (None: every node), built once per cluster."""
    def build():
        out = {None: tuple(range(cluster.num_nodes))}
        out.update((t, tuple(nodes.tolist())) for t, nodes in enumerate(nodes_of_type(cluster)))
        return out
    return cluster.derived("gandiva.nodes_by_type", build)


class Plan:
    racks = True  # tell racks apart across servers (off: Gandiva as Dally ran it, servers only; servers.py)

    def __init__(self, view: ClusterView):
        self.view = view
        self.c = view.cluster
        self.jobs: dict[str, JobState] = {}
        self.gpus: dict[str, tuple[int, ...]] = {}  # planned GPUs per job
        self.packed: set[str] = set()  # jobs whose shared group runs packed, not sliced
        self.holders: dict[int, list[str]] = {}
        self._gpu_node: list[int] = self.c.derived("gandiva.gpu_node", self.c.gpu_node.tolist)
        self._on_node: dict[int, dict[str, int]] = {}  # node -> {job: its GPUs on that node}
        self._demands: dict[int, dict[int, int]] = {}  # node -> {GPU demand: jobs on it asking that many}
        self._held: dict[int, int] = {}  # node -> holders summed over its GPUs (height's numerator)
        self._by_affinity: dict[int, set[int]] = {}  # demand -> nodes whose affinity it is
        self._share: dict[str, int] = {}  # cache of sharing(); dropped for every holder of a changed GPU
        self.version = 0
        # bumped whenever a GPU's holders change (``version`` also moves without that): what is
        # derived from the holders alone is kept while it stands still (``derived_from_holders``)
        self.hold_epoch = 0
        self._from_holders: dict = {}
        self.failed: dict[tuple, int] = {}  # placement question -> version at which it found nothing
        self.shared: set[int] = set()  # GPUs with more than one holder
        self.elastic: set[str] = set()  # planned jobs that may grow (JobSpec.elastic)
        self.multi: set[str] = set()  # planned jobs on more than one GPU
        # multi-GPU jobs whose placement a tighter one could improve (``loose``), and those placed
        # since anyone looked (``unsure``): introspect.improve_locality sorts them out
        self.loose: set[str] = set()
        self.unsure: set[str] = set()
        # bumped whenever a GPU becomes free or held: a search over free GPUs that found nothing
        # finds nothing again until it moves (``no_room``: what found nothing, at which epoch)
        self.free_epoch = 0
        self.no_room: dict = {}
        # called with the jobs whose sharing is about to change (before the change): the policy's
        # lazy round-robin accounting settles them at the sharing they had
        self.before_change = None
        self._refilled: dict[int, int] = {}  # GPU -> order of its (re)insertion into holders in this call
        self._refill_seq = 0
        self._changed: set[str] | None = None  # what decision() found changed
        self._left: set[str] = set()  # jobs that lost every GPU in this call
        self.scratch = view.free.copy()
        # one holder per held GPU in the scratch copy: the plan keeps its own holder lists, the scratch
        # only answers "which GPUs are free" (its free counts do not change: no GPU becomes free here)
        np.minimum(self.scratch.occupancy, 1, out=self.scratch.occupancy)
        holders, gpu_node, on_node, demands, held = self.holders, self._gpu_node, self._on_node, \
            self._demands, self._held
        jobs, planned, packed = self.jobs, self.gpus, self.packed
        # built at every call from every running job: the loop is written out for speed
        for j in view.running():
            alloc, spec = j.allocation, j.spec
            jid, gpus = spec.job_id, alloc.gpus
            jobs[jid] = j
            planned[jid] = gpus
            if alloc.mode == "packed":
                packed.add(jid)
            demand = spec.num_gpus
            if len(gpus) == 1:  # most jobs: one GPU, one node
                g = gpus[0]
                hold = holders.get(g)
                if hold is None:
                    holders[g] = [jid]
                else:
                    hold.append(jid)
                node = gpu_node[g]
                on = on_node.get(node)
                if on is None:
                    on_node[node] = {jid: 1}
                else:
                    on[jid] = 1
                held[node] = held.get(node, 0) + 1
                dem = demands.get(node)
                if dem is None:
                    demands[node] = {demand: 1}
                else:
                    dem[demand] = dem.get(demand, 0) + 1
                continue
            per_node = {}
            for g in gpus:
                holders.setdefault(g, []).append(jid)
                node = gpu_node[g]
                per_node[node] = per_node.get(node, 0) + 1
            for node, k in per_node.items():  # what _index does, one job-node at a time
                on_node.setdefault(node, {})[jid] = k
                held[node] = held.get(node, 0) + k
                dem = demands.setdefault(node, {})
                dem[demand] = dem.get(demand, 0) + 1
        for node, dem in demands.items():
            if len(dem) == 1:
                self._by_affinity.setdefault(next(iter(dem)), set()).add(node)
        self.shared = {g for g, hold in holders.items() if len(hold) > 1}
        self.elastic = {jid for jid, j in jobs.items() if j.spec.elastic}
        self.multi = {jid for jid, gpus in planned.items() if len(gpus) > 1}
        self.unsure = set(self.multi)
        # every job's sharing at once: 1 unless one of its GPUs has several holders
        share = self._share = dict.fromkeys(self.gpus, 1)
        for hold in holders.values():
            k = len(hold)
            if k > 1:
                for h in hold:
                    if share[h] < k:
                        share[h] = k
        self.touched: set[int] = set()  # GPUs whose holders changed: only their jobs can change mode
        self.repacked: set[str] = set()  # jobs whose packed flag the policy set or cleared
        for jid, job in jobs.items():  # left alone by a co-tenant that finished: back to exclusive
            if job.allocation.mode != "exclusive" and share[jid] == 1:
                self.repacked.add(jid)

    # ------------------------------------------------------------------ questions

    def node_of(self, g: int) -> int:
        return self._gpu_node[g]

    def node_jobs(self, node: int) -> set[str]:
        return set(self._on_node.get(node, ()))

    def node_jobs_view(self, node: int):
        """``node_jobs`` without the copy, in no fixed order: only for a reader that changes nothing
        and whose answer does not depend on the order."""
        return self._on_node.get(node, {}).keys()

    def affinity(self, node: int) -> int:
        demands = self._demands.get(node)
        if not demands:
            return 0
        return next(iter(demands)) if len(demands) == 1 else MIXED

    def height(self, node: int) -> float:
        return self._held.get(node, 0) / self.c.nodes[node].num_gpus

    def free_in_node(self, node: int) -> list[int]:
        return self.scratch.free_ids_of_node(node, self.c.nodes[node].num_gpus)

    def nodes_of_type(self, type_id: int | None) -> tuple[int, ...]:
        return _nodes_by_type(self.c)[type_id]

    def nodes_array(self, type_id: int | None) -> np.ndarray:
        """``nodes_of_type`` as an index array (for numpy reads of the free map)."""
        cache = self.c.derived("gandiva.nodes_array", dict)
        got = cache.get(type_id)
        if got is None:
            got = cache[type_id] = np.asarray(self.nodes_of_type(type_id), dtype=np.intp)
        return got

    def affine_nodes(self, n: int, among: tuple[int, ...]) -> list[int]:
        """The nodes of ``among`` whose affinity is ``n`` (> 0), in id order."""
        got = self._by_affinity.get(n)
        if not got:
            return []
        return sorted(got.intersection(self._as_set(among)))

    def first_empty(self, among: tuple[int, ...]) -> int | None:
        """The smallest node of ``among`` (ties: lowest id) that no job holds, or None."""
        cache = self.c.derived("gandiva.by_size", dict)
        order = cache.get(among)
        if order is None:
            order = cache[among] = sorted(among, key=lambda i: (int(self.c.node_gpus[i]), i))
        on = self._on_node
        return next((i for i in order if not on.get(i)), None)

    def _as_set(self, among: tuple[int, ...]) -> frozenset:
        cache = self.c.derived("gandiva.node_sets", dict)
        got = cache.get(among)
        if got is None:
            got = cache[among] = frozenset(among)
        return got

    def largest_node(self, type_id: int | None) -> int:
        """GPUs of the largest node of a type (0 when the cluster has none)."""
        cache = self.c.derived("gandiva.largest_node", dict)
        got = cache.get(type_id)
        if got is None:
            got = cache[type_id] = max((int(self.c.node_gpus[i]) for i in self.nodes_of_type(type_id)), default=0)
        return got

    def tightest_tier(self, type_id: int | None) -> Tier:
        """The tightest tier two GPUs of a type can share: NVLink where a node of it has NVLink, else one
        PCIe switch (a lower bound: a job on it cannot move anywhere tighter)."""
        cache = self.c.derived("gandiva.tightest_tier", dict)
        got = cache.get(type_id)
        if got is None:
            nvlink = any(self.c.nodes[i].intra_kind != "pcie" for i in self.nodes_of_type(type_id))
            got = cache[type_id] = Tier.NVLINK if nvlink else Tier.PCIE_SWITCH
        return got

    def tier(self, gpus: tuple[int, ...]):
        """``cluster.tier`` of a GPU tuple, remembered (placements recur every quantum)."""
        cache = self.c.derived("gandiva.tiers", dict)
        got = cache.get(gpus)
        if got is None:
            if len(cache) >= _TIER_CACHE:
                cache.clear()  # bounded: a long trace sees many distinct placements
            got = cache[gpus] = self.c.tier(gpus)
        return got

    def nodes_fitting(self, type_id: int | None, n: int) -> tuple[int, ...]:
        """Nodes of a type with at least ``n`` GPUs (free or not)."""
        cache = self.c.derived("gandiva.nodes_fitting", dict)
        got = cache.get((type_id, n))
        if got is None:
            sizes = self.c.node_gpus
            got = cache[(type_id, n)] = tuple(i for i in self.nodes_of_type(type_id) if int(sizes[i]) >= n)
        return got

    def sharing(self, jid: str) -> int:
        """How many jobs take turns on (or pack) the job's most shared GPU."""
        got = self._share.get(jid)
        if got is None:
            holders = self.holders
            got = self._share[jid] = max(len(holders.get(g, ())) for g in self.gpus[jid])
        return got

    def pick_free(self, n: int, type_id: int | None) -> tuple[int, ...] | None:
        """Any ``n`` free GPUs, one node first (then the best PCIe/socket tier inside it)."""
        if self.scratch.free_of_type(type_id) < n:
            return None
        got = pick_gpus(self.scratch, n, type_id, max_tier=Tier.NETWORK if self.racks else Tier.NVLINK)
        if got is None and not self.racks:  # network-agnostic: the fewest servers, wherever they sit
            got = fewest_servers(self.scratch, self.nodes_of_type(type_id), n)
        if got is None:
            return None
        nodes = {self.node_of(int(g)) for g in got}
        if len(nodes) == 1:
            inner = best_in_node(self.c, self.free_in_node(nodes.pop()), n)
            if inner is not None:
                return inner
        return tuple(sorted(int(g) for g in got))

    # ------------------------------------------------------------------ changes

    def _index(self, jid: str, g: int, sign: int) -> None:
        """Count (sign +1) or uncount (-1) one GPU of ``jid`` in its node's indexes."""
        node = self._gpu_node[g]
        self._held[node] = self._held.get(node, 0) + sign
        on = self._on_node.setdefault(node, {})
        k = on.get(jid, 0) + sign
        if k:
            on[jid] = k
        else:
            del on[jid]
        if k == (1 if sign > 0 else 0):  # its first GPU on the node arrived, or its last one left
            demand = self.jobs[jid].spec.num_gpus
            dem = self._demands.setdefault(node, {})
            before = self.affinity(node)
            left = dem.get(demand, 0) + sign
            if left:
                dem[demand] = left
            else:
                del dem[demand]
            after = self.affinity(node)
            if after != before:
                if before > 0:
                    self._by_affinity[before].discard(node)
                if after > 0:
                    self._by_affinity.setdefault(after, set()).add(node)

    def _drop_shares(self, hold: list[str]) -> None:
        share = self._share
        for h in hold:
            share.pop(h, None)

    def _unhold(self, jid: str, gpus: tuple[int, ...]) -> list[str]:
        """Take ``jid`` off its GPUs in every index; returns the co-holders it leaves behind."""
        before, shared, holders = self.before_change, self.shared, self.holders
        self.hold_epoch += 1
        left: list[str] = []
        for g in gpus:
            hold = holders[g]
            if before is not None:
                before(hold)
            self._drop_shares(hold)
            hold.remove(jid)
            self._index(jid, g, -1)
            if len(hold) < 2:
                shared.discard(g)
            if hold:
                left += hold
            else:
                del holders[g]
                self._refilled.pop(g, None)
                self.scratch.release([g])
                self.free_epoch += 1
        self.multi.discard(jid)
        self.elastic.discard(jid)
        self.loose.discard(jid)
        self.unsure.discard(jid)
        return left

    def remove(self, jid: str) -> None:
        gpus = self.gpus.pop(jid, ())
        if not gpus:
            return
        self.version += 1
        self.touched.update(gpus)
        self._unhold(jid, gpus)
        self._left.add(jid)

    def keep(self, jid: str) -> None:
        """What ``remove(jid)`` then ``place`` on the same GPUs and packing leaves behind, without the
        round trip, for a job alone on its GPUs: its GPUs count as emptied and held again (their
        place in ``holder_order``) and ``version`` moves.  (The round trip also listed the job among
        the changed ones; for a job alone on unchanged GPUs that changes no decision, window or
        mode, so it is not listed.)"""
        self.version += 2
        for g in self.gpus[jid]:
            self._refill_seq += 1
            self._refilled[g] = self._refill_seq

    def drop(self, jid: str) -> list[str]:
        """The engine took ``jid`` off its GPUs between calls (it finished or was dropped): out of the
        plan, as a fresh build would leave it.  Returns its former co-holders (their sharing changed)."""
        gpus = self.gpus.pop(jid, ())
        left = self._unhold(jid, gpus) if gpus else []
        self.jobs.pop(jid, None)
        self.packed.discard(jid)
        self._share.pop(jid, None)
        self.no_room.pop(("tighter", jid), None)
        return left

    def place(self, job: JobState, gpus, packed: bool = False) -> None:
        jid = job.job_id
        self.remove(jid)
        self.version += 1
        self.jobs[jid] = job
        self._left.discard(jid)
        gpus = tuple(sorted(int(g) for g in gpus))
        self.gpus[jid] = gpus
        self.repacked.add(jid)
        self.hold_epoch += 1
        before, shared, holders = self.before_change, self.shared, self.holders
        for g in gpus:
            self.touched.add(g)
            hold = holders.get(g)
            if hold is None:
                hold = holders[g] = []
                self._refill_seq += 1
                self._refilled[g] = self._refill_seq
                self.scratch.allocate([g])
                self.free_epoch += 1
            elif before is not None:
                before(hold)
            hold.append(jid)
            self._drop_shares(hold)
            self._index(jid, g, +1)
            if len(hold) > 1:
                shared.add(g)
        if len(gpus) > 1:
            self.multi.add(jid)
            self.unsure.add(jid)
        if job.spec.elastic:
            self.elastic.add(jid)
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
        self._changed = changed = self.changed()  # end_call reads it (nothing moves in between)
        for jid in sorted(changed, key=lambda j: (self.jobs[j].spec.submit_time, j)):
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

    def derived_from_holders(self, name: str, build):
        """``build(self)``, remembered until a GPU's holders change (a function of the holders, the
        planned GPUs and ``shared`` only)."""
        got = self._from_holders.get(name)
        if got is None or got[0] != self.hold_epoch:
            got = self._from_holders[name] = (self.hold_epoch, build(self))
        return got[1]

    def shared_nodes(self) -> set[int]:
        gpu_node = self._gpu_node
        return {gpu_node[g] for g in self.shared}

    # ------------------------------------------------------------------ across calls

    def matches(self, view: ClusterView, running: int) -> bool:
        """The engine holds what this plan holds: as many running jobs, the same free GPUs (a cheap
        check that catches what the plan was not told: a fault, a launch that failed)."""
        return (view.cluster is self.c and running == len(self.gpus) and len(self.jobs) == len(self.gpus)
                and view.free.total_free == self.scratch.total_free)

    def begin(self, view: ClusterView, alone: list[str] = ()) -> None:
        """Start a call from the plan the last call left (the engine carried it out).  ``alone``:
        jobs whose co-holders left since; one left by itself in a shared mode goes back to
        exclusive, as a fresh build would decide."""
        self.view = view
        self.failed = {}
        self.touched = set()
        self.repacked = set()
        self._refilled = {}
        self._left = set()
        gpus, jobs = self.gpus, self.jobs
        for jid in alone:
            if jid in gpus and jobs[jid].allocation.mode != "exclusive" and self.sharing(jid) == 1:
                self.repacked.add(jid)

    def end_call(self) -> set[str]:
        """After ``decision``: the engine now runs every planned job in the mode ``mode`` gives it, so
        the packed flag of a job left alone is dropped (as the engine's "exclusive" says).
        Returns the jobs the call changed."""
        changed = self._changed if self._changed is not None else self.changed()
        self._changed = None
        packed = self.packed
        for jid in changed:
            if jid in packed and self.sharing(jid) <= 1:
                packed.discard(jid)
        for jid in self._left:  # removed and never placed again: no longer running
            if jid not in self.gpus:
                self.jobs.pop(jid, None)
                packed.discard(jid)
        return changed

    def holder_order(self) -> dict[int, tuple]:
        """Where each held GPU stands in ``holders`` as a fresh build plus this call's changes orders it
        (the running jobs in the engine's order, each one's GPUs in turn; GPUs that became held in
        this call after them).  O(running jobs): asked only where that order decides something."""
        first: dict[int, tuple] = {}
        for i, j in enumerate(self.view.running()):
            for k, g in enumerate(j.allocation.gpus):
                if g not in first:
                    first[g] = (0, i, k)
        refilled = self._refilled
        return {g: ((1, refilled[g], 0) if g in refilled else first[g]) for g in self.holders}

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
