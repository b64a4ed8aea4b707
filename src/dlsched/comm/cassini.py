"""CASSINI (Rajasekaran et al., "CASSINI: Network-Aware Job Scheduling in Machine Learning Clusters", NSDI '24).

CASSINI shifts jobs' iteration start times so that the communication phases of
jobs sharing a link interleave instead of overlapping; it is possible where the
jobs' communication duty cycles on that link fit in one period.  Our fabric has
no knob for a time shift, so we obtain the same steady state another way: jobs
that meet on links whose duty cycles fit (sum of comm_s / iteration_s <= 1) get
distinct strict levels, so the later one's communication waits for the earlier
one's to end and the two settle into interleaved phases; jobs on a link that
cannot fit share one level (max-min), as CASSINI leaves incompatible jobs
unshifted.  Simplification: compatibility is judged per pair of jobs, the
levels reused round-robin; paths stay ECMP.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView, shares_links, usable_levels


@dataclass
class Cassini:
    name: str = "cassini"
    levels: int = 8
    reserved: int = 2

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        meets = shares_links(view)
        duty = {j: (v.comm_s / v.iteration_s if v.iteration_s > 0 else 0.0) for j, v in view.jobs.items()}
        level: dict[str, int] = {}
        def placed_order(jobs):
            return sorted(jobs, key=lambda j: (view.jobs[j].arrival, j))

        for j in placed_order(view.jobs):
            # neighbours in placement order: a set's order changes with the process's string hashing
            near = [o for o in placed_order(meets[j]) if o in level]
            taken = {level[o] for o in near if duty[o] + duty[j] <= 1.0}
            clash = [level[o] for o in near if duty[o] + duty[j] > 1.0]
            free = [lv for lv in range(usable) if lv not in taken]
            # incompatible neighbours share a level (no shift helps them); else the first level no
            # compatible neighbour holds, so their phases are staggered
            level[j] = clash[0] if clash and clash[0] not in taken else (free[0] if free else len(level) % usable)
        return {j: Assignment(self.reserved + level[j], None) for j in view.jobs}
