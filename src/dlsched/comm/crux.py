"""CRUX (Cao et al., "Crux: GPU-Efficient Communication Scheduling for Deep Learning Training", SIGCOMM '24).

Three steps, re-run on every job arrival, completion or reschedule:

1. path selection (section 4.1): jobs from the most to the least GPU-intensive
   (I_j = W_j / t_j, from the job's first iterations: here its price alone, which
   is what a profiled first iteration measures) each put their flows on the
   least-congested equal-cost path: ONE path per job (``path="job"``, the paper's "for each job,
   CRUX selects the least congested path", ``job_paths``), or ours, a port per flow (``path="flow"``,
   which on a 1:1 Clos leaves nothing contended: docs/crux.md, "Mechanisms");
2. priority assignment (section 4.2): P_j = k_j I_j, k_j from ``correction``;
3. priority compression (section 4.3): the contention DAG cut into the usable
   hardware levels by ``compression.compress`` (Algorithm 1, m random orders).

Ablations as the paper names them (section 6.3): ``crux-pa`` (priority assignment and compression
only, the flows on their ECMP paths: the paper's CRUX-PA, which it compares with Sincronia, TACCL*
and CASSINI), ``crux-ps`` (path selection only, every job on
one level; ours, the paper has no such row), ``crux-ps-pa`` (plus priorities, uncompressed: every job its own level in
P order, as the paper's CRUX-PS-PA has no compression step), ``crux`` (all three).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dlsched.comm.base import Assignment, CommView, usable_levels
from dlsched.comm.compression import compress
from dlsched.comm.correction import correction_factors
from dlsched.comm.job_paths import check_mode, least_congested_per_job
from dlsched.comm.meets import Meetings
from dlsched.comm.paths import least_congested


def by_intensity(view: CommView):
    return sorted(view.jobs.values(), key=lambda j: (-j.intensity, j.arrival, j.job_id))


@dataclass
class Crux:
    name: str = "crux"
    select_paths: bool = True
    assign_priorities: bool = True
    dag_compression: bool = True
    levels: int = 8
    reserved: int = 2
    orders: int = 10  # m, the random topological orders of Algorithm 1
    seed: int = 0
    path: str = "job"  # the paper's granularity (section 4.1); "flow": ours, a path per flow
    _paths_memo: dict = field(default_factory=dict, repr=False, compare=False)  # least_congested's, between calls
    _meets: Meetings = field(default_factory=Meetings, repr=False, compare=False)  # who meets whom, between calls

    def __post_init__(self):
        check_mode(self.path)

    def select(self, view: CommView) -> dict[str, dict[int, int]]:
        choose = least_congested_per_job if self.path == "job" else least_congested
        return choose(view, by_intensity(view), self._paths_memo)

    def priorities(self, view: CommView) -> dict[str, float]:
        k = correction_factors(list(view.jobs.values()))
        return {j.job_id: k[j.job_id] * j.intensity for j in view.jobs.values()}

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable = usable_levels(self.levels, self.reserved)
        picks = self.select(view) if self.select_paths else {}
        if not self.assign_priorities:
            return {j: Assignment(self.reserved, picks.get(j)) for j in view.jobs}
        P = self.priorities(view)
        ranked = sorted(view.jobs, key=lambda j: (-P[j], view.jobs[j].arrival, j))
        if self.dag_compression:
            rank = {j: r for r, j in enumerate(ranked)}
            meets = self._meets(view, picks)
            edges = {}
            for j, others in meets.items():
                for o in others:
                    if rank[j] < rank[o]:
                        I = view.jobs[j].intensity
                        edges[(rank[j], rank[o])] = I if I != float("inf") else 1e12
            cut = compress(len(ranked), edges, usable, self.orders, self.seed)
            levels = {j: self.reserved + cut[rank[j]] for j in ranked}
        else:
            # the paper's CRUX-PS-PA: the priorities uncompressed, one level per job in P order (its
            # ablation of compression; a fabric with that many levels is hypothetical, as the paper's is)
            levels = {j: self.reserved + r for r, j in enumerate(ranked)}
        return {j: Assignment(levels[j], picks.get(j)) for j in view.jobs}


def crux_ps(**kw) -> Crux:
    return Crux(name="crux-ps", assign_priorities=False, dag_compression=False, **kw)


def crux_pa(**kw) -> Crux:
    """The paper's CRUX-PA: priorities (P = kI) compressed to the usable levels, paths left to ECMP, so the
    priorities act on the same contended links as Sincronia's and CASSINI's levels."""
    return Crux(name="crux-pa", select_paths=False, **kw)


def crux_ps_pa(**kw) -> Crux:
    return Crux(name="crux-ps-pa", dag_compression=False, **kw)


def crux_full(**kw) -> Crux:
    return Crux(**kw)


# Ours, kept beside the paper's: a path per flow (``paths.least_congested``), every flow its own port on
# a 1:1 Clos.  The names the runs had before per-job choice became the default.
def crux_flow(**kw) -> Crux:
    return Crux(name="crux-flow", path="flow", **kw)


def crux_ps_flow(**kw) -> Crux:
    return Crux(name="crux-ps-flow", assign_priorities=False, dag_compression=False, path="flow", **kw)


def crux_ps_pa_flow(**kw) -> Crux:
    return Crux(name="crux-ps-pa-flow", dag_compression=False, path="flow", **kw)
