"""CASSINI (Rajasekaran et al., "CASSINI: Network-Aware Job Scheduling in Machine Learning Clusters", NSDI '24).

CASSINI shifts jobs' iteration start times so that the communication phases of
jobs sharing a link interleave instead of overlapping; it is possible where the
jobs' communication duty cycles on that link fit in one period.  Our fabric has
no knob for a time shift, so we obtain the same steady state another way: jobs
that meet on links whose duty cycles fit (sum of comm_s / iteration_s <= 1) get
distinct strict levels, so the later one's communication waits for the earlier
one's to end and the two settle into interleaved phases; jobs on a link that
cannot fit share one level (max-min), as CASSINI leaves incompatible jobs
unshifted.

Compatibility is CASSINI's geometric test for two jobs: unrolled on a circle as
long as their iterations' least common multiple, every communication arc of one
must fit between two of the other's.  The shorter-period job's arcs come once per
its period, so the longer job's arc must fit in the gap between two of them:
``D_a + D_b <= min(period_a, period_b)`` (network seconds ``D``).  The duty-cycle
sum alone (``D_a/p_a + D_b/p_b <= 1``, the rule before) passes pairs whose arcs
cannot interleave; under strict levels the lower one is then cut off by every
arc of the higher one, which no time shift would do.
Simplification: compatibility is judged per pair of jobs, the levels reused
round-robin; paths stay ECMP.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlsched.comm.base import Assignment, CommView, usable_levels
from dlsched.comm.meets import Meetings


@dataclass
class Cassini:
    name: str = "cassini"
    levels: int = 8
    reserved: int = 2
    _meets: Meetings = field(default_factory=Meetings, repr=False, compare=False)  # who meets whom, between calls

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        meets = self._meets(view)
        jobs = view.jobs

        def fits(a: str, b: str) -> bool:  # both jobs' arcs interleave on the unified circle
            return jobs[a].comm_s + jobs[b].comm_s <= min(jobs[a].iteration_s, jobs[b].iteration_s)

        level: dict[str, int] = {}
        def placed_order(jobs):
            return sorted(jobs, key=lambda j: (view.jobs[j].arrival, j))

        for j in placed_order(view.jobs):
            # neighbours in placement order: a set's order changes with the process's string hashing
            near = [o for o in placed_order(meets[j]) if o in level]
            taken = {level[o] for o in near if fits(o, j)}
            clash = [level[o] for o in near if not fits(o, j)]
            free = [lv for lv in range(usable) if lv not in taken]
            # incompatible neighbours share a level (no shift helps them); else the first level no
            # compatible neighbour holds, so their phases are staggered
            level[j] = clash[0] if clash and clash[0] not in taken else (free[0] if free else len(level) % usable)
        return {j: Assignment(self.reserved + level[j], None) for j in view.jobs}
