"""Sincronia (Agarwal et al., "Sincronia: Near-Optimal Network Design for Coflows", SIGCOMM '18).

Ordering by Bottleneck-Select-Scale-Iterate: find the most loaded link, put last
the job with the most bytes on it (all weights 1, so no scaling), repeat on the
rest.  Compression as Sincronia maps its order onto few levels (and as CRUX's
Figure 13 shows it): exponentially growing classes, 1 job on the top level, 2 on
the next, 4 on the next, the rest on the lowest.  Paths stay ECMP.
Simplification: each job is one coflow whose demand is its bytes per iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView, bucket_levels, link_demand, usable_levels


def bssi_order(view: CommView) -> list[str]:
    demand = {j: link_demand(view, j) for j in view.jobs}
    left = set(view.jobs)
    last_first: list[str] = []
    while left:
        load: dict[int, float] = {}
        for j in sorted(left):  # a fixed order, so the float sums do not follow the process's string hashing
            for l, b in demand[j].items():
                load[l] = load.get(l, 0.0) + b
        if not load:
            last_first.extend(sorted(left, key=lambda j: (-view.jobs[j].arrival, j)))
            break
        neck = max(load, key=lambda l: (load[l], -l))
        worst = max((j for j in left if neck in demand[j]), key=lambda j: (demand[j][neck], j))
        last_first.append(worst)
        left.discard(worst)
    return last_first[::-1]


@dataclass
class Sincronia:
    name: str = "sincronia"
    levels: int = 8
    reserved: int = 2

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        sizes = [2 ** i for i in range(usable)]
        levels = bucket_levels(bssi_order(view), sizes, self.reserved)
        return {j: Assignment(levels[j], None) for j in view.jobs}
