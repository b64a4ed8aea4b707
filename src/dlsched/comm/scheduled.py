"""The hook between the execution core and a communication policy.

``ScheduledContention`` wraps the flow-level contention model and is what the
core's contention hook (``core.contention.Contention``) sees: every ``add``
(a job started, moved or was re-planned) and ``remove`` (it stopped) is passed
on, then the communication policy is asked again over all placed jobs and its
paths (``FlowContention.pin`` + re-add) and levels (``set_priority``) applied.
The jobs whose iteration time changed, by either step, go back to the core.
So the core needs no knowledge of communication policies, and any job policy
combines with any communication policy.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from dlsched.comm.base import Assignment, CommFlow, CommJob, CommPolicy, CommView


class ScheduledContention:
    def __init__(self, flow, policy: CommPolicy):
        self.flow = flow
        self.policy = policy
        self._placed: dict[str, tuple] = {}  # job -> (spec, allocation, cost) of its last add
        self._arrival: dict[str, int] = {}
        self._pins: dict[str, dict[int, int]] = {}
        self._levels: dict[str, int] = {}
        self._count = 0
        self._views: dict[str, tuple] = {}  # job -> (its traffic, its inputs, its CommJob), for build_view
        net = frozenset(i for i in range(flow.graph.num_links) if flow._network_link[i])
        self._network_links = net
        self._capacity = tuple(float(c) for c in np.asarray(flow.graph.capacity))
        self.stats = flow.stats
        self.stats.setdefault("comm_assignments", 0)
        self.stats.setdefault("comm_path_changes", 0)
        self.stats.setdefault("comm_level_changes", 0)
        # contention left once the policy has answered (the flow model's ``largest_group`` also counts a
        # job's first placement on ECMP paths, before the policy re-pins it): whether priorities have
        # anything to order in a run
        self.stats.setdefault("largest_group_after_policy", 0)
        self.stats.setdefault("contended_after_policy", 0)

    # ------------------------------------------------------------------ engine protocol

    def add(self, job_id, spec, allocation, cost) -> Iterable[str]:
        old = self._placed.get(job_id)
        if old is not None and tuple(old[1].gpus) != tuple(allocation.gpus) and self._pins.pop(job_id, None):
            self.flow.pin(job_id, {})  # a moved or resized job has other flows: its old pins mean nothing
        self._placed[job_id] = (spec, allocation, cost)
        if job_id not in self._arrival:
            self._count += 1
            self._arrival[job_id] = self._count
        touched = set(self.flow.add(job_id, spec, allocation, cost))
        touched |= self._reassign()
        size = self.flow.group_size(job_id)
        self.stats["largest_group_after_policy"] = max(self.stats["largest_group_after_policy"], size)
        self.stats["contended_after_policy"] += size > 1
        return sorted(touched)

    def remove(self, job_id) -> Iterable[str]:
        self._placed.pop(job_id, None)
        self._arrival.pop(job_id, None)
        if self._pins.pop(job_id, None):
            self.flow.pin(job_id, {})  # it may come back elsewhere (resume, migration): not on these paths
        self._levels.pop(job_id, None)
        self._views.pop(job_id, None)
        touched = set(self.flow.remove(job_id))
        return sorted((touched | self._reassign()) - {job_id})

    def iteration_time(self, job_id):
        return self.flow.iteration_time(job_id)

    def describe(self) -> dict:
        return {**self.flow.describe(), "comm": self.policy.name}

    def drain_utilisation(self):
        return self.flow.drain_utilisation()

    def advance(self, now: float) -> None:
        self.flow.advance(now)

    def link_summary(self, end: float):
        return self.flow.link_summary(end)

    def utilisation(self):
        return self.flow.utilisation()

    def levels(self) -> dict[str, int]:
        return dict(self._levels)

    # ------------------------------------------------------------------ policy

    def view(self) -> CommView:
        placed = {j: (len(alloc.gpus), float(cost.total), float(cost.comm))
                  for j, (spec, alloc, cost) in self._placed.items()}
        return build_view(self.flow, placed, self._arrival, self._network_links, self._capacity, self._views)

    def _reassign(self) -> set[str]:
        if not self._placed:
            return set()
        self.stats["comm_assignments"] += 1
        plan: dict[str, Assignment] = self.policy.assign(self.view())
        touched: set[str] = set()
        for j in sorted(self._placed):
            a = plan.get(j, Assignment())
            want = dict(a.paths) if a.paths else {}
            if want != self._pins.get(j, {}):
                self._pins[j] = want
                self.flow.pin(j, want)
                touched |= set(self.flow.add(j, *self._placed[j]))
                self.stats["comm_path_changes"] += 1
        for j in sorted(self._placed):
            a = plan.get(j, Assignment())
            if self._levels.get(j, 0) != a.level:
                self._levels[j] = a.level
                touched |= set(self.flow.set_priority(j, a.level))
                self.stats["comm_level_changes"] += 1
        return {j for j in touched if j in self._placed}


def build_view(flow, placed: dict[str, tuple[int, float, float]], arrival: dict[str, int],
               network_links: frozenset[int] | None = None, capacity: tuple[float, ...] | None = None,
               cache: dict | None = None) -> CommView:
    """What a policy sees of the jobs on ``flow`` (``placed``: job -> (GPUs, seconds per iteration alone,
    exposed communication seconds alone)): their flows, candidate paths and solo timings.

    ``cache`` (job -> entry, kept by the caller over one flow model and one link set): a job whose
    traffic (the flow model's object, replaced at every placement) and inputs are unchanged since the
    last view gets the same ``CommJob`` back instead of one rebuilt from its flows."""
    if capacity is None:
        capacity = tuple(float(c) for c in np.asarray(flow.graph.capacity))
    if network_links is None:
        network_links = frozenset(i for i in range(flow.graph.num_links) if flow._network_link[i])
    jobs = {}
    for j, (gpus, total, comm) in placed.items():
        traffic = flow.traffic(j)
        if cache is not None:
            got = cache.get(j)
            if got is not None and got[0] is traffic and got[1] == (gpus, total, comm, arrival[j]):
                jobs[j] = got[2]
                continue
        flows = []
        for f in traffic.flows:
            cands = flow.paths.paths(f.src_nic, f.dst_nic)  # a PathSet: indexed lazily, never listed
            flows.append(CommFlow(f.nbytes, cands, cands.index(tuple(f.links[1:-1]))))
        # solo network seconds as the flow model computes them: bytes per flow over its narrowest share
        D = 0.0
        if traffic.flows:
            solo = min(capacity[l] / n for l, n in traffic.link_counts().items())
            D = min(traffic.flows[0].nbytes / solo, total)
        jobs[j] = CommJob(j, gpus, total, total - comm, D, total - D, tuple(flows), arrival[j])
        if cache is not None:
            cache[j] = (traffic, (gpus, total, comm, arrival[j]), jobs[j])
    return CommView(jobs, capacity, network_links)
