"""Varys (Chowdhury et al., "Efficient Coflow Scheduling with Varys", SIGCOMM '14).

Smallest-Effective-Bottleneck-First: a job's bottleneck is the longest any of its
links needs to carry its bytes alone (bytes / capacity); jobs are served in
increasing bottleneck.  Varys sets rates, not levels; on a fabric of K strict
levels we map its order onto equal-size blocks (the balanced compression CRUX's
Figure 13 attributes to it).  Paths stay ECMP.  Simplification: no admission
control or deadline mode; each job is one coflow of its bytes per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView, bucket_levels, link_demand, usable_levels


def effective_bottleneck(view: CommView, job_id: str) -> float:
    return max(link_demand(view, job_id).values(), default=0.0)


@dataclass
class Varys:
    name: str = "varys"
    levels: int = 8
    reserved: int = 2

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        ranked = sorted(view.jobs, key=lambda j: (effective_bottleneck(view, j), view.jobs[j].arrival, j))
        per = -(-len(ranked) // usable) if ranked else 1
        levels = bucket_levels(ranked, [per] * usable, self.reserved)
        return {j: Assignment(levels[j], None) for j in view.jobs}
