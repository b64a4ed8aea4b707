"""Varys (Chowdhury et al., "Efficient Coflow Scheduling with Varys", SIGCOMM '14).

Varys's offline heuristic for coflow completion time has two halves, both here:

- **SEBF** (Smallest-Effective-Bottleneck-First): a coflow's effective bottleneck ``Gamma`` is the
  longest any link needs to carry the coflow's bytes on it alone (bytes / capacity); coflows are served
  in increasing ``Gamma``.  Each job is one coflow per iteration: its ring's bytes on its ECMP paths.
- **MADD** (Minimum-Allocation-for-Desired-Duration): in that order, each coflow's flows get just the
  rates that make them all finish together at its ``Gamma`` over the bandwidth the coflows before it
  left (``r = bytes / Gamma``); what is left goes to the next, so the allocation is work-conserving.

Varys enforces these rates at the end hosts (a central coordinator, not switch queues), so it is not
held to the fabric's few hardware levels.  On the flow model every job sends its flows at one rate (a
ring moves at its slowest hop's pace), and a ring's flows carry equal bytes, so MADD's rate for a
coflow is ``min over its links of residual / its flows there``: exactly what strict priority in SEBF
order gives, one level per coflow.  ``Varys.assign`` therefore gives every job its own level, a stable
integer ordered by (``Gamma``, arrival), so a new arrival does not renumber everyone below it;
``madd_rates`` is the paper's allocation written out, which tests compare with the flow model's rates.

What stays simplified: Varys's online deadline mode and admission control are left out (no deadlines
here); ``Gamma`` is taken on a whole iteration's bytes, not the bytes a coflow has left (the policy is
asked when jobs arrive, leave or move, not at every iteration); Varys's periodic all-coflows window
against starvation is not modelled.  ``balanced_levels`` is the equal-block mapping of the SEBF order
onto K hardware levels that CRUX's Figure 13 attributes to Varys; the section 4.4 micro-benchmark's
compression step uses it, the trace runs use MADD.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlsched.comm.base import Assignment, CommView, bucket_levels, link_demand, usable_levels

# a level is reserved + Gamma in microseconds * _SLOTS + arrival: orders by (Gamma, arrival) and stays the
# same for a job while its traffic does (arrivals past _SLOTS wrap, which only matters between equal Gammas)
_SLOTS = 1 << 20


def effective_bottleneck(view: CommView, job_id: str) -> float:
    return max(link_demand(view, job_id).values(), default=0.0)


def sebf_order(view: CommView) -> list[str]:
    return sorted(view.jobs, key=lambda j: (effective_bottleneck(view, j), view.jobs[j].arrival, j))


def madd_rates(view: CommView, order: list[str] | None = None) -> dict[str, list[float]]:
    """Per job, the rate (bytes/s) of each of its flows under MADD in SEBF order (Varys, Algorithm 1):
    ``Gamma`` of each coflow over the residual link bandwidth, each flow at bytes / ``Gamma``, the
    residual reduced; a coflow facing a full link waits (rate 0).  Links are every link of a flow's path."""
    residual = dict(enumerate(view.capacity))
    out: dict[str, list[float]] = {}
    for j in order or sebf_order(view):
        flows = view.jobs[j].flows
        need: dict[int, float] = {}
        for f in flows:
            for l in f.candidates[f.chosen]:
                need[l] = need.get(l, 0.0) + f.nbytes
        gamma = max((b / residual[l] if residual[l] > 0 else float("inf")) for l, b in need.items()) if need else 0.0
        rates = [f.nbytes / gamma if 0 < gamma < float("inf") else 0.0 for f in flows]
        for f, r in zip(flows, rates):
            for l in f.candidates[f.chosen]:
                residual[l] = max(residual[l] - r, 0.0)
        out[j] = rates
    return out


def balanced_levels(view: CommView, levels: int, reserved: int) -> dict[str, int]:
    """The SEBF order cut into equal blocks over the usable levels (CRUX Figure 13's Varys compression)."""
    usable = usable_levels(levels, reserved)
    ranked = sebf_order(view)
    per = -(-len(ranked) // usable) if ranked else 1
    return bucket_levels(ranked, [per] * usable, reserved)


@dataclass
class Varys:
    name: str = "varys"
    levels: int = 8  # hardware levels: Varys sets rates at the hosts, so only ``balanced_levels`` uses them
    reserved: int = 2

    def assign(self, view: CommView) -> dict[str, Assignment]:
        usable_levels(self.levels, self.reserved)
        out = {}
        for j, job in view.jobs.items():
            gamma_us = int(round(effective_bottleneck(view, j) * 1e6))
            out[j] = Assignment(self.reserved + gamma_us * _SLOTS + job.arrival % _SLOTS, None)
        return out
