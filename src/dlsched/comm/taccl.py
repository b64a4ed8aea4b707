"""TACCL* (after Shah et al., "TACCL: Guiding Collective Algorithm Synthesis using Communication Sketches",
NSDI '23), the baseline CRUX builds from TACCL's insight for inter-job scheduling.

CRUX (section 4.4, footnote 3) defines it in one sentence: "TACCL* selects the least congested link for
each job and prioritizes the traffic with longer transmission distances".  Both halves here:

- paths: jobs ordered by the longest path any of their flows needs (network hops), then by bytes, each
  job on its least-congested path (footnote 3: "the least congested link for each job": one path per
  job, ``path="job"``, CRUX's granularity, in TACCL's order); ``path="flow"`` is ours, a port per flow;
- priorities: one strict level per distance class, the longest distance on the top usable level, the
  next one below, and so on (classes beyond the usable levels share the lowest).  A job's distance is
  that of its longest flow: its ring moves at the pace of its slowest hop, and the policy sets one level
  per job, as the flow model does.

What stays simplified: TACCL synthesises a collective's schedule inside one job (its sketches, routing
and contiguity ILP); none of that intra-job synthesis is modelled, as CRUX's TACCL* also leaves it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlsched.comm.base import Assignment, CommView, usable_levels
from dlsched.comm.job_paths import check_mode, least_congested_per_job
from dlsched.comm.paths import least_congested


def distance(view: CommView, job) -> int:
    """Network hops of the job's longest flow (equal-cost candidates all have the same length)."""
    return max((sum(1 for l in f.candidates[0] if l in view.network_links) for f in job.flows), default=0)


# id(CommJob) -> (the job, its distance, its network bytes), while views share one link set:
# ``build_view`` reuses a job's ``CommJob`` while its traffic and price are unchanged, and decoding every
# flow's first candidate and summing its flows at every call was most of ``assign`` outside path choice
_TRAITS: dict = {"links": None, "jobs": {}}


def _traits(view: CommView, job) -> tuple:
    """(the job, ``distance``, ``network_bytes``), kept per ``CommJob`` while the views share one link set."""
    if _TRAITS["links"] is not view.network_links:
        _TRAITS["links"], _TRAITS["jobs"] = view.network_links, {}
    cache = _TRAITS["jobs"]
    got = cache.get(id(job))
    if got is not None and got[0] is job:
        return got
    if len(cache) > 4 * len(view.jobs) + 256:  # jobs gone from the views: forget them
        keep = {id(j) for j in view.jobs.values()}
        for k in [k for k in cache if k not in keep]:
            del cache[k]
    got = cache[id(job)] = (job, distance(view, job), job.network_bytes)
    return got


def distance_levels(dist: dict[str, int], usable: int, offset: int) -> dict[str, int]:
    """Longer transmission distance first: the longest class on ``offset``, each shorter one a level below."""
    classes = sorted(set(dist.values()), reverse=True)
    rank = {d: min(i, usable - 1) for i, d in enumerate(classes)}
    return {j: offset + rank[d] for j, d in dist.items()}


@dataclass
class Taccl:
    name: str = "taccl"
    levels: int = 8
    reserved: int = 2
    path: str = "job"  # CRUX's footnote 3: per job; "flow": ours
    _paths_memo: dict = field(default_factory=dict, repr=False, compare=False)  # least_congested's, between calls

    def __post_init__(self):
        check_mode(self.path)

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        traits = [_traits(view, j) for j in view.jobs.values()]
        dist = {j.job_id: d for j, d, _ in traits}
        order = [t[0] for t in sorted(traits, key=lambda t: (-t[1], -t[2], t[0].arrival, t[0].job_id))]
        picks = (least_congested_per_job if self.path == "job" else least_congested)(view, order, self._paths_memo)
        levels = distance_levels(dist, usable, self.reserved)
        return {j: Assignment(levels[j], picks.get(j)) for j in view.jobs}


def taccl_flow(**kw) -> Taccl:
    """Ours: TACCL* with a path per flow (the runs before per-job choice)."""
    return Taccl(name="taccl-flow", path="flow", **kw)
