"""The communication-policy contract: what a policy sees and what it returns.

A communication policy sits beside the job policy: the job policy decides which
GPUs a job gets, the communication policy decides, for the jobs placed, which
equal-cost path each of their flows takes and at which strict-priority level
(0 is served first) they are sent.  ``CommPolicy.assign(view)`` is called every
time a job starts, stops, moves or is re-planned (see ``scheduled.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Protocol, Sequence, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class CommFlow:
    """One flow of a job's all-reduce ring: its bytes per iteration and candidate paths (link ids;
    a ``network.paths.PathSet`` from the flow model, any sequence of paths in hand-made views)."""

    nbytes: float
    candidates: Sequence[tuple[int, ...]]
    chosen: int  # index of the candidate it takes now (ECMP's pick unless pinned)


@dataclass(frozen=True)
class CommJob:
    """What a policy knows of one placed job, from its first iterations (its price alone)."""

    job_id: str
    gpus: int
    iteration_s: float  # seconds per iteration alone
    compute_s: float  # of which computation (not exposed communication)
    comm_s: float  # solo network communication seconds per iteration (t_j)
    start_s: float  # communication starts this far into the iteration (compute-communication overlap)
    flows: tuple[CommFlow, ...]
    arrival: int  # order in which the job was placed (stable tie-break)

    @property
    def network_bytes(self) -> float:
        return sum(f.nbytes for f in self.flows)

    @property
    def intensity(self) -> float:
        """GPU intensity I_j = W_j / t_j: computation per iteration (GPU-seconds) over communication time."""
        return self.gpus * self.compute_s / self.comm_s if self.comm_s > 0 else float("inf")


@dataclass(frozen=True)
class CommView:
    jobs: dict[str, CommJob]
    capacity: tuple[float, ...]  # bytes/s of every link id
    network_links: frozenset[int]  # links between switches and NICs (contention happens there)


@dataclass(frozen=True)
class Assignment:
    level: int = 0
    paths: dict[int, int] | None = field(default=None)  # flow index -> candidate index; None: ECMP


@runtime_checkable
class CommPolicy(Protocol):
    name: str

    def assign(self, view: CommView) -> dict[str, Assignment]:
        """Paths and priority levels for the placed jobs (jobs left out: ECMP, level 0)."""


# (candidates, index) -> that path's network links, while views share one link set: a ``PathSet`` builds
# a path from its index at every access, and the contention DAG reads every flow's path at every call
_ON_NET: dict = {"links": None, "paths": {}}


def network_links_of(view: CommView, candidates, index: int) -> tuple[int, ...]:
    """The network links of candidate ``index`` of a flow (cached for the fabric's ``PathSet``s)."""
    if _ON_NET["links"] is not view.network_links:
        _ON_NET["links"], _ON_NET["paths"] = view.network_links, {}
    if isinstance(candidates, list):  # hand-made views: no stable identity to cache by
        return tuple(l for l in candidates[index] if l in view.network_links)
    key = (candidates, index)
    got = _ON_NET["paths"].get(key)
    if got is None:
        got = _ON_NET["paths"][key] = tuple(l for l in candidates[index] if l in view.network_links)
    return got


def shares_links(view: CommView, picks: dict[str, dict[int, int]] | None = None) -> dict[str, set[str]]:
    """For every job, the other jobs its flows meet on a network link, under ``picks`` (flow index ->
    candidate) where given, else under the flows' present paths."""
    picks = picks or {}
    ids = list(view.jobs)
    out: dict[str, set[str]] = {j: set() for j in ids}
    per_job = [_job_network_links(view, j, picks.get(j.job_id)) for j in view.jobs.values()]
    if not per_job:
        return out
    # every (link, job) crossing as arrays, sorted by link (a job lists a link once): the links two or
    # more jobs cross are the runs of equal links; in Python this loop was the policy's cost per event
    links = np.concatenate(per_job)
    who = np.repeat(np.arange(len(ids), dtype=np.int64), [len(a) for a in per_job])
    order = np.argsort(links, kind="stable")
    links, who = links[order], who[order]
    cut = np.flatnonzero(links[1:] != links[:-1]) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [len(links)]))
    shared = ends - starts > 1
    # links of a fragmented fabric often carry the very same jobs: each distinct set is joined once
    groups = {tuple(who[a:b].tolist()) for a, b in zip(starts[shared].tolist(), ends[shared].tolist())}
    for members in groups:
        names = [ids[k] for k in members]
        for j in names:
            out[j].update(names)
    for j, others in out.items():
        others.discard(j)
    return out


# job -> its network links under its picks, while views share one link set (``shares_links`` reads every
# placed job's at every call, and a job's picks rarely change between calls)
_MEETS: dict = {"links": None, "jobs": {}}


def _job_network_links(view: CommView, job: CommJob, mine: dict[int, int] | None) -> np.ndarray:
    """The network links a job's flows cross, each once, under ``mine`` (flow index -> candidate; flows
    left out, or ``None``: the flows' present paths)."""
    if _MEETS["links"] is not view.network_links:
        _MEETS["links"], _MEETS["jobs"] = view.network_links, {}
    mine = mine or None
    cache = _MEETS["jobs"]
    got = cache.get(id(job))
    if got is not None and got[0] is job and got[1] == mine:
        return got[2]
    seen: dict[int, None] = {}
    for i, f in enumerate(job.flows):
        for l in network_links_of(view, f.candidates, f.chosen if mine is None else mine.get(i, f.chosen)):
            seen[l] = None
    links = np.fromiter(seen, dtype=np.int64, count=len(seen))
    if len(cache) > 4 * len(view.jobs) + 256:  # jobs gone from the views: forget them
        keep = {id(j) for j in view.jobs.values()}
        for k in [k for k in cache if k not in keep]:
            del cache[k]
    cache[id(job)] = (job, None if mine is None else dict(mine), links)
    return links


# job -> its link demand, while views share one link set and capacity tuple (``ScheduledContention`` keeps
# both, and reuses a job's ``CommJob`` while its traffic and price are unchanged): Sincronia and Varys
# read every placed job's demand at every call
_DEMAND: dict = {"links": None, "capacity": None, "jobs": {}}


def link_demand(view: CommView, job_id: str) -> dict[int, float]:
    """Seconds each network link needs to carry the job's bytes of one iteration alone (bytes / capacity).
    The dict is shared (cached per ``CommJob``): read it, do not change it."""
    return cached_demand(_DEMAND, view, job_id, _route_links)


def _route_links(view: CommView, route) -> Iterable[int]:
    return (l for l in route if l in view.network_links)


def cached_demand(store: dict, view: CommView, job_id: str, links_of) -> dict[int, float]:
    """Seconds each link ``links_of(view, route)`` names needs for the job's bytes of one iteration, summed
    over its flows on their chosen routes; kept in ``store`` per ``CommJob`` while the views share one link
    set and capacity tuple, and forgotten for jobs no longer in the views."""
    if store["links"] is not view.network_links or store["capacity"] is not view.capacity:
        store.update(links=view.network_links, capacity=view.capacity, jobs={})
    job = view.jobs[job_id]
    cache = store["jobs"]
    got = cache.get(id(job))
    if got is not None and got[0] is job:
        return got[1]
    out: dict[int, float] = {}
    for f in job.flows:
        for l in links_of(view, f.candidates[f.chosen]):
            out[l] = out.get(l, 0.0) + f.nbytes / view.capacity[l]
    if len(cache) > 4 * len(view.jobs) + 256:  # jobs gone from the views: forget them
        keep = {id(j) for j in view.jobs.values()}
        for k in [k for k in cache if k not in keep]:
            del cache[k]
    cache[id(job)] = (job, out)
    return out


def usable_levels(levels: int, reserved: int) -> int:
    """Hardware priority levels left for training traffic (some are reserved, e.g. for TCP or control)."""
    if levels < 1 or reserved < 0 or reserved >= levels:
        raise ValueError(f"comm levels={levels}, reserved={reserved}: need levels >= 1 and 0 <= reserved < levels")
    return levels - reserved


def bucket_levels(ranked: list[str], sizes: list[int], offset: int) -> dict[str, int]:
    """Levels by rank: the first ``sizes[0]`` jobs on level ``offset``, the next ``sizes[1]`` one below, ..."""
    out, i = {}, 0
    for lv, size in enumerate(sizes):
        for j in ranked[i:i + size]:
            out[j] = offset + lv
        i += size
    for j in ranked[i:]:
        out[j] = offset + len(sizes) - 1
    return out
