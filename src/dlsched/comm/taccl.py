"""TACCL* (after Shah et al., "TACCL: Guiding Collective Algorithm Synthesis using Communication Sketches",
NSDI '23), the path-selection baseline CRUX compares against.

TACCL synthesises collective schedules for one job; CRUX's TACCL* extends it to
many jobs by routing each job's traffic over its least-congested links, placing
longer-distance traffic first.  Ours: jobs ordered by the longest path any of
their flows needs (network hops), then by bytes, each flow on the least-congested
candidate; no priorities (one level).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView
from dlsched.comm.paths import least_congested


def distance(view: CommView, job) -> int:
    return max((sum(1 for l in f.candidates[0] if l in view.network_links) for f in job.flows), default=0)


@dataclass
class Taccl:
    name: str = "taccl"

    def assign(self, view: CommView) -> dict[str, Assignment]:
        order = sorted(view.jobs.values(), key=lambda j: (-distance(view, j), -j.network_bytes, j.arrival, j.job_id))
        picks = least_congested(view, order)
        return {j: Assignment(0, picks.get(j)) for j in view.jobs}
