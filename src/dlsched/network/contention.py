"""Contention between jobs on shared links: groups, their micro-simulation, and its cache.

``FlowContention`` keeps the flows of every placed job.  Jobs whose flows
share a link form a contention group (connected components over shared
links); a group's iteration times come from ``microsim.simulate_group``, run
only when the group changes and cached by the group's shape (each job's
compute, overlap, solo communication and cap, and the shared links with their
flow counts), so a cluster run meets the same shapes again and again.

Solo exactness.  A job alone on its links gets exactly the perf model's
price.  Its network communication takes ``D = bytes per flow / solo rate``
seconds, capped at the iteration (the perf model may hide communication the
flow model would expose, and at most the iteration less its forward pass,
``FORWARD_SHARE`` of the computation, when no gradient is ready to send); it
starts ``s = total - D`` into the iteration, so that alone it ends exactly when
the perf model's iteration does.  Contention
stretches only that communication.

The engine protocol (``add``, ``remove``, ``iteration_time``) is what the
simulator calls; ``set_priority`` and ``pin`` are for communication
policies (CRUX assigns levels and paths).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from dlsched.network.graph import LinkGraph
from dlsched.network.microsim import MAX_SIMULATED_JOBS, all_communicating, simulate_flat
from dlsched.network.paths import PathTable
from dlsched.network.plan_traffic import Demand, alltoall_demands, plan_demands
from dlsched.network.traffic import JobTraffic, demand_flows, gradient_bytes, rail_ring_demands, ring_flows


LINK_REPORTS = ("full", "summary")  # links.csv: every change over time, or one row per link


@dataclass
class _Job:
    traffic: JobTraffic
    links: np.ndarray  # link ids the job's flows cross
    counts: np.ndarray  # flows on each
    total: float  # solo seconds per iteration (perf model)
    comm: float  # solo exposed communication seconds
    D: float  # solo network communication seconds
    start: float  # communication starts this far into the iteration
    level: int
    flow_bytes: float
    solo_rate: float  # bytes/s per flow alone: its narrowest link's share
    lc: dict  # link id -> the job's flows on it
    link_list: list  # ``links`` as ints, iterated at every group search


# share of a job's computation before its communication can start: the forward pass (backward costs
# about twice the forward); 0 gives the rule before, communication capped at the whole iteration
FORWARD_SHARE = 1.0 / 3.0


class FlowContention:
    """Flow-level contention between placed jobs on a link graph (see the module docstring)."""

    def __init__(self, graph: LinkGraph, seed: int = 0, gpu_host=None, plan_of=None,
                 charge_self_collisions: bool = False, links: str = "full"):
        self.graph = graph
        if links not in LINK_REPORTS:
            raise ValueError(f"links must be one of {', '.join(LINK_REPORTS)}, not {links!r}")
        # full: every change of a link's utilisation (``drain_utilisation``); summary: per-link totals
        # only (``link_summary``), kept per job rather than per link, so a re-timed job costs O(1)
        self.links_report = links
        self._full = links == "full"
        # opt-in: a job whose own flows share a switch port runs slower than its price alone (see
        # ``_spread_rate``); off by default, so a job alone keeps the perf model's price exactly
        self.charge_self = charge_self_collisions
        # (spec, model, GPU ids) -> the job's parallelism plan or None (data parallel), for ``add``
        self._plan_of = plan_of
        self.seed = seed
        self.paths = PathTable(graph)
        self._capacity = graph.capacity
        self._network_link = np.array([not (graph.link_src[i].split("/")[-1].startswith("gpu")
                                             or graph.link_dst[i].split("/")[-1].startswith("gpu"))
                                       for i in range(graph.num_links)])
        self._gpu_host = gpu_host  # cluster GPU id -> (host index, local GPU), for the engine protocol
        self._jobs: dict[str, _Job] = {}
        self._link_jobs: dict[int, set[str]] = {}
        self._demand: dict[int, float] = {}  # link -> sum of its flows' solo rates
        self._time: dict[str, tuple[float, float]] = {}
        self._levels: dict[str, int] = {}
        self._pins: dict[str, dict[int, int]] = {}
        self._cache: dict = {}
        self._util: dict[int, float] = {}
        self._util_dirty: set[int] = set()
        self._util_pending: set[int] = set()  # links marked since the utilisation was last read
        # links whose flows at solo rates overfill them (``_contended``), kept as jobs come and go: the
        # group search and the solve read it for every link of every job in a group
        self._hot: set[int] = set()
        self._names: dict[int, str] = {}  # link id -> its name, for the utilisation rows
        # summary report: the simulator's clock (``advance``), each placed job's iterations done on its
        # present placement before its present iteration time began, and when that time began
        self._now = 0.0
        self._iters: dict[str, float] = {}
        self._since: dict[str, float] = {}
        self._bytes: dict[int, float] = {}  # network link -> bytes carried by jobs that left it
        self._busy: dict[int, float] = {}  # network link -> seconds it carried a job, closed spans
        self._busy_from: dict[int, float] = {}  # network link -> when its present span of jobs began
        self.stats = {"solves": 0, "cache_hits": 0, "microsim_events": 0, "bounded_groups": 0,
                      "largest_group": 0, "jobs_sharing_links": 0}
        self._sharers: set[str] = set()  # jobs ever solved in a group of two or more
        if self.charge_self:
            self._bundle_of = self.paths.bundle_of  # a port's bundle, by its first link
            self._bundle_width = [len(graph.graph[u][v]["ports"]) for u, v in zip(graph.link_src, graph.link_dst)]
            self.stats["self_collided"] = 0

    @classmethod
    def for_cluster(cls, cluster, seed: int = 0, graph: LinkGraph | None = None,
                    plans: str = "adaptive", charge_self_collisions: bool = False,
                    links: str = "full") -> "FlowContention":
        """Contention on the link graph a cluster spec describes (hosts are the cluster's nodes).

        ``plans="adaptive"``: a large model (one the parallelism model knows) sends the traffic of
        the plan the default perf model prices it at (``CellEstimator.optimum``); ``"none"``: every
        job without a plan in its allocation is data-parallel.
        """
        from dlsched.network.topologies import from_cluster

        graph = graph or from_cluster(cluster)
        first = np.array([n.first_gpu for n in cluster.nodes])

        def gpu_host(g: int) -> tuple[int, int]:
            h = int(cluster.gpu_node[g])
            return h, int(g - first[h])

        if plans not in ("adaptive", "none"):
            raise ValueError(f"plans must be 'adaptive' or 'none', not {plans!r}")
        return cls(graph, seed, gpu_host, optimum_plans(cluster) if plans == "adaptive" else None,
                   charge_self_collisions, links)

    # ------------------------------------------------------------------ engine protocol

    def add(self, job_id: str, spec, allocation, cost) -> Iterable[str]:
        """A job was placed, moved or re-planned; returns the jobs whose iteration time changed."""
        if self._gpu_host is None:
            raise TypeError("this FlowContention was built without a cluster; use add_placed")
        placement = [self._gpu_host(int(g)) for g in allocation.gpus]
        demands = self._parallel_demands(spec, allocation, placement)
        if demands is None:
            return self.add_placed(job_id, placement, gradient_bytes(spec), cost.total, cost.comm)
        return self.add_demands(job_id, demands, cost.total, cost.comm)

    def _parallel_demands(self, spec, allocation, placement) -> list[Demand] | None:
        """The job's demands when it is not a plain data-parallel ring: a plan's, or a MoE job's
        ring plus its expert all-to-alls (every GPU an expert rank, as ``PlacementPerfModel``)."""
        from dlsched.perf.parallel.plan import Plan
        from dlsched.workload.models import get_model

        model = get_model(spec.model, spec.params)
        plan = allocation.plan if isinstance(allocation.plan, Plan) else None
        if plan is None and self._plan_of is not None:
            plan = self._plan_of(spec, model, allocation.gpus)
        if plan is not None and plan.n_gpus == len(placement):
            return plan_demands(placement, model, spec.batch_size, plan)
        if model.family != "moe" or len(placement) < 2:
            return None
        from dlsched.perf.placement.model import _alltoall_traffic

        per_rank = sum(nb for nb, _ in _alltoall_traffic(model)) * spec.batch_size / len(placement)
        return rail_ring_demands(self.graph, placement, gradient_bytes(spec)) + alltoall_demands(placement, per_rank)

    def remove(self, job_id: str) -> Iterable[str]:
        """The job left its GPUs; returns the jobs whose iteration time changed."""
        if job_id not in self._jobs:
            return []
        before = self._snapshot_neighbours(job_id)
        neighbours = self._unregister(job_id)
        self._time.pop(job_id, None)
        self._solve_around(neighbours)
        return sorted(j for j in neighbours if self._time.get(j) != before.get(j))

    def iteration_time(self, job_id: str) -> tuple[float, float]:
        """(seconds per iteration, exposed communication seconds) under the present contention."""
        return self._time[job_id]

    # ------------------------------------------------------------------ placed jobs (no cluster)

    def add_placed(self, job_id: str, placement: Sequence[tuple[int, int]], nbytes: float, total: float,
                   comm: float) -> list[str]:
        """Place a job on (host, local GPU) pairs with ``nbytes`` all-reduced per iteration, priced
        ``total`` seconds per iteration alone, ``comm`` of them exposed communication."""
        return self._place(job_id, lambda: ring_flows(self.graph, self.paths, job_id, placement, nbytes,
                                                       self.seed, self._pins.get(job_id)), total, comm)

    def add_demands(self, job_id: str, demands: Sequence[Demand], total: float, comm: float) -> list[str]:
        """Place a job by its per-iteration network demands (``plan_traffic``) between (host, local
        GPU) pairs, priced ``total`` seconds per iteration alone, ``comm`` of them exposed."""
        return self._place(job_id, lambda: demand_flows(self.graph, self.paths, job_id, demands, self.seed,
                                                         self._pins.get(job_id)), total, comm)

    def _place(self, job_id: str, make_traffic, total: float, comm: float) -> list[str]:
        before = {}
        old_neighbours: set[str] = set()
        if job_id in self._jobs:
            before = self._snapshot_neighbours(job_id)
            old_neighbours = self._unregister(job_id)
        traffic = make_traffic()
        lc = traffic.link_counts()
        links = np.fromiter(lc.keys(), dtype=np.int64, count=len(lc))
        counts = np.fromiter(lc.values(), dtype=np.float64, count=len(lc))
        flow_bytes = traffic.flows[0].nbytes if traffic.flows else 0.0
        solo_rate = float(np.min(self._capacity[links] / counts)) if traffic.flows else 0.0
        D = min(flow_bytes / solo_rate, total) if traffic.flows else 0.0
        if self.charge_self and traffic.flows:
            spread = self._spread_rate(lc)
            if spread > solo_rate:
                # the perf model's price assumes the flows spread over the ports: its communication
                # (D at the spread rate) now runs at the collided rate, and the iteration grows by it
                D_spread = min(flow_bytes / spread, total)
                D = D_spread * spread / solo_rate
                total, comm = total + D - D_spread, comm + D - D_spread
                self.stats["self_collided"] += 1
        if traffic.flows:
            # gradients are all-reduced once the backward pass has begun, never during the forward pass
            # (FORWARD_SHARE of the computation), so a job whose flows need more than its iteration
            # alone (its price hides communication the flow model would expose) still leaves its links
            # idle that long each iteration.  Capped at the whole iteration instead, it would send
            # without a gap, and under strict priority starve every lower level on its links for good
            D = min(D, total - FORWARD_SHARE * (total - comm))
        job = _Job(traffic, links, counts, float(total), float(comm), D, float(total) - D,
                   self._levels.get(job_id, 0), flow_bytes, solo_rate, lc, links.tolist())
        self._jobs[job_id] = job
        full, link_jobs = self._full, self._link_jobs
        for l, n in zip(job.link_list, counts.tolist()):
            on = link_jobs.get(l)
            if on is None:
                on = link_jobs[l] = set()
                if not full:
                    self._busy_from[l] = self._now
            on.add(job_id)
            self._demand[l] = self._demand.get(l, 0.0) + n * solo_rate
            self._heat(l)
        self._time[job_id] = (job.total, job.comm)
        if full:
            self._mark_links(job.link_list)  # its share of every link it crosses (its time may not change in the solve)
        else:
            self._iters[job_id], self._since[job_id] = 0.0, self._now
        touched = old_neighbours | {job_id} | self._neighbours(job_id)
        before.update({j: self._time.get(j) for j in touched if j not in before})
        before[job_id] = None
        self._solve_around(touched)
        return sorted(j for j in touched if j in self._time and self._time[j] != before.get(j))

    def _spread_rate(self, lc: dict[int, float]) -> float:
        """A job's solo rate had its flows been spread evenly over the ports of every switch bundle
        they cross (as a path-choosing policy can, and as the perf model's price assumes): per bundle,
        its flows' weight over its ports, rounded up to whole flows for a ring's equal flows (a plan's
        unequal flows: the even split, a bound); single links keep their count."""
        per: dict[int, list[float]] = {}
        for l, n in lc.items():
            per.setdefault(self._bundle_of[l], []).append(n)
        rate = float("inf")
        for first, weights in per.items():
            w = self._bundle_width[first]
            total = sum(weights)
            count = total if w == 1 else (-(-total // w) if float(total).is_integer() else total / w)
            rate = min(rate, float(self._capacity[first]) / count)
        return rate

    def set_priority(self, job_id: str, level: int) -> list[str]:
        """Strict-priority level of a job's flows (0 is served first); returns jobs whose time changed."""
        self._levels[job_id] = int(level)
        job = self._jobs.get(job_id)
        if job is None or job.level == level:
            return []
        if not self._reorders(job_id, job.level, int(level)):
            job.level = int(level)
            return []
        before = self._snapshot_neighbours(job_id)
        job.level = int(level)
        group = self._neighbours(job_id) | {job_id}
        self._solve_around(group)
        return sorted(j for j in group if self._time.get(j) != before.get(j))

    def _reorders(self, job_id: str, old: int, new: int) -> bool:
        """Whether moving a job from level ``old`` to ``new`` can change its group's solve.

        A group is solved by its levels' ranks (``_solve``), and every change to a group solves it, so
        its jobs' times are its cached solve under their present ranks.  Where no other job of the group
        sits at a level from ``old`` to ``new`` (ends included), every job keeps its rank: the solve
        would be a cache hit giving every job the time it has, so it is not run (with a level per job,
        as CRUX-PS-PA gives, a job placed above shifts every job below it by one level)."""
        lo, hi = (old, new) if old <= new else (new, old)
        jobs = self._jobs
        for o in self._component(job_id):
            if o != job_id and lo <= jobs[o].level <= hi:
                return True
        return False

    def pin(self, job_id: str, paths: dict[int, int]) -> None:
        """Pin flows of a job (flow index -> index into ``PathTable.paths``); applies at its next ``add``."""
        self._pins[job_id] = dict(paths)

    def describe(self) -> dict:
        out = {"model": "flow", "topology": self.graph.name, "links": self.graph.num_links, "seed": self.seed}
        if self.charge_self:
            out["self_collisions"] = "charged"
        return out

    def group_size(self, job_id: str) -> int:
        """How many jobs (the job included) share its contention group now: 1 when nothing can slow it."""
        return len(self._component(job_id)) if job_id in self._jobs else 0

    def traffic(self, job_id: str) -> JobTraffic:
        return self._jobs[job_id].traffic

    # ------------------------------------------------------------------ links

    def utilisation(self) -> dict[int, float]:
        """Mean utilisation of every network link carrying traffic now (bytes sent / capacity)."""
        if not self._full:  # nothing kept per link: summed now
            now = {l: self._util_of(l) for l in sorted(self._link_jobs) if self._network_link[l]}
            return {l: u for l, u in now.items() if u > 0}
        self._flush_util()
        return dict(self._util)

    def advance(self, now: float) -> None:
        """The simulator's clock, before it handles the events at ``now`` (the summary report's spans)."""
        self._now = now

    def link_summary(self, end: float) -> list[tuple[str, float, float, float, float, float]]:
        """Per network link that carried traffic up to ``end`` (the run's end): (name, capacity Gb/s,
        seconds it carried a job, bytes carried, mean utilisation over [0, end], mean utilisation while
        carrying).  The bytes are each job's bytes per iteration on the link times the iterations it
        ran there, so the mean over the run equals the time integral of ``drain_utilisation``'s rows
        over ``end`` (tested).  Only with ``links="summary"``."""
        if self._full:
            raise ValueError("link_summary needs FlowContention(..., links='summary')")
        carried = dict(self._bytes)
        busy = dict(self._busy)
        for j in sorted(self._jobs):  # still placed (a run stopped at max_time): up to ``end``
            iters = self._iters[j] + (end - self._since[j]) / self._time[j][0]
            self._add_bytes(self._jobs[j], iters, carried)
        for l, t0 in self._busy_from.items():
            busy[l] = busy.get(l, 0.0) + (end - t0)
        out = []
        for l in sorted(set(carried) | {l for l in busy if self._network_link[l]}):
            cap = float(self._capacity[l])
            b, s = carried.get(l, 0.0), busy.get(l, 0.0)
            out.append((self._name(l), cap * 8e-9, s, b, b / (cap * end) if end > 0 else 0.0,
                        b / (cap * s) if s > 0 else 0.0))
        return out

    def _name(self, l: int) -> str:
        name = self._names.get(l)
        if name is None:
            name = self._names[l] = self.graph.link_name(l)
        return name

    def drain_utilisation(self) -> list[tuple[str, float]]:
        """(link name, utilisation) of network links whose utilisation changed since the last call
        (nothing with ``links="summary"``: see ``link_summary``)."""
        if not self._full:
            return []
        self._flush_util()
        names = self._names
        out = []
        for l in sorted(self._util_dirty):
            name = names.get(l)
            if name is None:
                name = names[l] = self.graph.link_name(l)
            out.append((name, float(self._util.get(l, 0.0))))
        self._util_dirty.clear()
        return out

    def bottleneck(self, job_id: str) -> tuple[str, float]:
        """The job's most loaded network link and its offered load (flows at solo rate / capacity)."""
        job = self._jobs[job_id]
        if not job.traffic.flows:
            return "", 0.0
        best, load_best = -1, -1.0
        for l in job.links.tolist():
            if not self._network_link[l]:
                continue
            load = 0.0
            for other in self._link_jobs[l]:
                o = self._jobs[other]
                rate = float(np.min(self._capacity[o.links] / o.counts))
                load += o.lc[l] * rate
            load /= self._capacity[l]
            if load > load_best:
                best, load_best = l, load
        return self.graph.link_name(best), float(load_best)

    # ------------------------------------------------------------------ groups

    def _neighbours(self, job_id: str) -> set[str]:
        out: set[str] = set()
        for l in self._jobs[job_id].link_list:
            out |= self._link_jobs[l]
        out.discard(job_id)
        return out

    def _snapshot_neighbours(self, job_id: str) -> dict[str, tuple[float, float] | None]:
        return {j: self._time.get(j) for j in self._neighbours(job_id) | {job_id}}

    def _unregister(self, job_id: str) -> set[str]:
        neighbours = self._neighbours(job_id)
        job = self._jobs.pop(job_id)
        full = self._full
        if not full:
            self._settle(job_id, job)
        for l, n in zip(job.link_list, job.counts.tolist()):
            s = self._link_jobs[l]
            s.discard(job_id)
            self._demand[l] -= n * job.solo_rate
            if not s:
                del self._link_jobs[l]
                del self._demand[l]
                self._hot.discard(l)
                if not full:
                    self._busy[l] = self._busy.get(l, 0.0) + (self._now - self._busy_from.pop(l))
            else:
                self._heat(l)
            if full:
                self._mark_util(l)
        return neighbours

    def _settle(self, job_id: str, job: _Job) -> None:
        """Add the bytes a leaving job carried on its present placement to each network link's total."""
        iters = self._iters.pop(job_id) + (self._now - self._since.pop(job_id)) / self._time[job_id][0]
        self._add_bytes(job, iters)

    def _add_bytes(self, job: _Job, iters: float, into: dict | None = None) -> None:
        into = self._bytes if into is None else into
        net, lc, per = self._network_link, job.lc, job.flow_bytes * iters
        for l in job.link_list:
            if net[l]:
                into[l] = into.get(l, 0.0) + lc[l] * per

    def _contended(self, l: int) -> bool:
        """Whether link ``l`` can slow anyone: its flows at their solo rates would overfill it.

        A link whose flows' solo rates fit within its capacity never binds (max-min keeps every
        job at or under its solo rate), so it joins no group: this keeps groups small and exact.
        """
        return len(self._link_jobs[l]) > 1 and self._demand[l] > self._capacity[l] * (1.0 + 1e-9)

    def _heat(self, l: int) -> None:
        """Keep ``_hot`` (the contended links) right for link ``l`` after its jobs or demand changed."""
        if self._contended(l):
            self._hot.add(l)
        else:
            self._hot.discard(l)

    def _component(self, start: str) -> list[str]:
        seen = {start}
        stack = [start]
        hot = self._hot
        while stack:
            j = stack.pop()
            for l in self._jobs[j].link_list:
                if l in hot:
                    for o in self._link_jobs[l]:
                        if o not in seen:
                            seen.add(o)
                            stack.append(o)
        return sorted(seen)

    def _solve_around(self, ids: Iterable[str]) -> None:
        done: set[str] = set()
        for j in sorted(ids):
            if j in done or j not in self._jobs:
                continue
            group = self._component(j)
            done.update(group)
            self._solve(group)

    def _solve(self, group: list[str]) -> None:
        self.stats["largest_group"] = max(self.stats["largest_group"], len(group))
        if len(group) > 1:
            self._sharers.update(group)
            self.stats["jobs_sharing_links"] = len(self._sharers)
        if len(group) == 1:
            job = self._jobs[group[0]]
            self._set_time(group[0], (job.total, job.comm))
            return
        jobs = [self._jobs[j] for j in group]
        # links that never bind stay out; each job's own narrowest link caps it (its solo rate)
        hot = self._hot
        shared = sorted({l for j in jobs for l in j.link_list if l in hot})
        # a level enters the micro-simulation only through the order of the group's levels (strict priority
        # by ascending level; equal levels share max-min), so the group is keyed and simulated by each
        # level's rank among them: the same floats, and a group whose levels all moved in step (a job
        # ranked above them elsewhere, with a level per job) is the cached shape it was
        rank = {v: r for r, v in enumerate(sorted({job.level for job in jobs}))}
        desc = [(job.total - job.comm, job.start, job.D, job.solo_rate, rank[job.level]) for job in jobs]
        order = sorted(range(len(group)), key=lambda i: (desc[i], group[i]))
        pos = {group[i]: k for k, i in enumerate(order)}
        rows = []
        for l in shared:
            row = [0.0] * len(group)
            for j in self._link_jobs[l]:
                job = self._jobs[j]
                row[pos[j]] = float(job.lc[l])
            rows.append((float(self._capacity[l]), tuple(row)))
        rows.sort()
        key = (tuple(desc[i] for i in order), tuple(rows))
        hit = self._cache.get(key)
        self.stats["solves"] += 1
        if hit is None:
            d = [desc[i] for i in order]
            capacity = [c for c, _ in rows]
            if len(group) <= MAX_SIMULATED_JOBS:
                hit = simulate_flat([v[0] for v in d], [v[1] for v in d], [v[2] for v in d],
                                    *incidence(rows, len(d)), capacity, [v[3] for v in d], [v[4] for v in d])
                self.stats["microsim_events"] += hit.events
            else:
                job_links = [[(r, row[k]) for r, (_, row) in enumerate(rows) if row[k] > 0] for k in range(len(d))]
                hit = all_communicating([v[0] for v in d], [v[1] for v in d], [v[2] for v in d], job_links,
                                        capacity, [v[3] for v in d], [v[4] for v in d])
                self.stats["bounded_groups"] += 1
            self._cache[key] = hit
        else:
            self.stats["cache_hits"] += 1
        for j, job in zip(group, jobs):
            k = pos[j]
            if hit.slowed[k]:
                compute = job.total - job.comm
                t = max(hit.iteration_s[k], job.total)
                self._set_time(j, (t, t - compute))
            else:
                self._set_time(j, (job.total, job.comm))

    def _set_time(self, job_id: str, value: tuple[float, float]) -> None:
        # a link's utilisation is recomputed when a job on it changes time, joins or leaves (``_place``,
        # ``_unregister``): with this job's time unchanged, it would come out as it last did
        if self._time.get(job_id) == value:
            return
        old = self._time.get(job_id)
        self._time[job_id] = value
        if not self._full:
            if old is not None and old[0] != value[0]:  # iterations at the old time, up to now
                self._iters[job_id] += (self._now - self._since[job_id]) / old[0]
                self._since[job_id] = self._now
            return
        job = self._jobs[job_id]
        if old is None:
            self._mark_links(job.link_list)
        elif old[0] != value[0]:  # its share of a link is its bytes over its iteration time
            self._retimed(job, old[0], value[0])

    def _retimed(self, job: _Job, before: float, after: float) -> None:
        """Mark the links whose utilisation a job's new iteration time changes, as computing each one
        now would find: a link alone with the job changes where its share, rounded, does; a shared
        link is summed now (few: uncontended jobs keep to their own ports); a marked one stays marked."""
        pending, link_jobs, cap, util = self._util_pending, self._link_jobs, self._capacity, self._util
        same: dict[tuple[float, float], bool] = {}
        for l in job.link_list:
            if l in pending or not self._network_link[l]:
                continue
            if len(link_jobs[l]) == 1:
                n, c = job.lc[l], float(cap[l])
                key = (n, c)
                eq = same.get(key)
                if eq is None:
                    eq = same[key] = (0.0 + n * job.flow_bytes / before) / c == (0.0 + n * job.flow_bytes / after) / c
                if not eq:
                    pending.add(l)
            elif self._util_of(l) != util.get(l, 0.0):
                pending.add(l)

    def _mark_links(self, links: list) -> None:
        self._util_pending.update(links)

    def _mark_util(self, l: int) -> None:
        # computed when read (``_flush_util``): a link is marked every time a job joins or leaves it or a
        # job on it changes time, several times in one event, and each mark changes its value
        self._util_pending.add(l)

    def _flush_util(self) -> None:
        """The utilisation of every link marked since the last read, each reported changed: every mark
        follows a change of its sum (a job's share joined, left or re-timed), even where the sum
        comes back to the value last read; the value is the sum over the link's jobs as they stand."""
        pending, self._util_pending = self._util_pending, set()
        for l in sorted(pending):
            self._compute_util(l)

    def _util_of(self, l: int) -> float:
        # summed in job order: a set of job ids iterates in an order that changes with the process's
        # string hashing, and so would the float sum's last bit (and whether a row is reported)
        total = 0.0
        jobs = self._link_jobs.get(l, ())
        for j in (jobs if len(jobs) < 2 else sorted(jobs)):
            job = self._jobs[j]
            t = self._time.get(j, (job.total, 0.0))[0]
            total += job.lc[l] * job.flow_bytes / t
        return total / self._capacity[l]

    def _compute_util(self, l: int) -> None:
        if not self._network_link[l]:
            return
        u = self._util_of(l)
        if u > 0:
            self._util[l] = u
        else:
            self._util.pop(l, None)
        self._util_dirty.add(l)


def incidence(rows: list[tuple[float, tuple[float, ...]]], jobs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A group's job x link incidence (``rows``: per shared link, (capacity, flows of each job)) as the
    CSR arrays ``maxmin.flat_links`` makes of per-job (link, flows) lists, job by job, links ascending,
    without building the lists (a Python loop over links x jobs at every solve)."""
    m = np.array([row for _, row in rows], dtype=np.float64).reshape(len(rows), jobs).T
    on = m > 0
    ptr = np.zeros(jobs + 1, dtype=np.int64)
    np.cumsum(on.sum(axis=1), out=ptr[1:])
    return ptr, np.nonzero(on)[1].astype(np.int64), m[on]


def optimum_plans(cluster):
    """(spec, model, GPU ids) -> the plan ``AdaptivePerfModel`` prices a large model at, else None."""
    from dlsched.perf.parallel.adaptive import shared_estimator
    from dlsched.workload.zoo_large import layer_traits

    estimator = shared_estimator(cluster)

    def plan_of(spec, model, gpus):
        if layer_traits(model) is None or len(gpus) < 2:
            return None
        # a mixed allocation is priced at its slowest type; its plan is taken on the first GPU's type
        gpu_type = cluster.gpu_types[int(cluster.gpu_type_idx[int(gpus[0])])].name
        cell = estimator.optimum(model, spec.batch_size, gpu_type, len(gpus))
        return None if cell is None else cell.plan

    return plan_of
