"""CRUX section 4.4 micro-benchmark: each step of CRUX against exhaustive enumeration on small cases.

A case (as the paper's): a two-layer Clos of up to 20 hosts x 8 GPUs under 2-4
ToRs and 2 aggregation switches, 5 jobs on distinct hosts with random computation,
traffic and overlap, 3 priority levels for compression.  The score of a choice is
the GPU utilisation it yields on the flow model (sum of GPUs x computation per
iteration / contended iteration time, over the jobs' GPUs), so 1.0 is "no job
slowed".  For each step the optimum is found by enumeration with the other steps
held fixed:

- path selection: every job's flows on aggregation switch a (a = 0, 1), all 2^5
  combinations, priorities off; CRUX-PS and TACCL* against it (CRUX picks per
  flow, so it can beat the per-job optimum: ratios above 1 are kept, not clipped);
- priority assignment: all 5! strict orders on ECMP paths; CRUX (P = kI),
  Sincronia's and Varys's orders against it;
- compression: all 3^5 maps onto 3 levels; CRUX's DAG cut of its own order,
  Sincronia's and Varys's compressions against it.

Scale, stated: the paper runs 1,500 cases; an evaluation here is a flow-model
solve (milliseconds), ~400 per case (~0.9-1.4 CPU s), so ``reproduce crux``
runs 3 cases (``--quick``) or 60, and ``experiments/crux/micro.py`` the
paper's 1,500 (~22 CPU minutes).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from dlsched.comm.base import Assignment, CommView
from dlsched.comm.crux import Crux
from dlsched.comm.scheduled import build_view
from dlsched.comm.sincronia import Sincronia, bssi_order
from dlsched.comm.taccl import Taccl
from dlsched.comm.varys import balanced_levels, effective_bottleneck
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos

JOBS, LEVELS = 5, 3
PAPER = {"path selection": 0.9769, "priority assignment": 0.9724, "priority compression": 0.9712}


@dataclass(frozen=True)
class Case:
    tors: int
    hosts_per_tor: int
    jobs: tuple  # (job id, [(host, local gpu)], nbytes, total, comm, gpus)


def make_case(rng: np.random.Generator) -> Case:
    tors = int(rng.integers(2, 5))
    hpt = 20 // tors
    hosts = rng.permutation(tors * hpt).tolist()
    jobs = []
    for i in range(JOBS):
        k = int(rng.integers(2, 5)) if len(hosts) >= 2 else 1
        mine, hosts = hosts[:k], hosts[k:]
        gpus = 8 * len(mine)
        compute = float(rng.uniform(0.05, 0.5))
        D = compute * float(rng.uniform(0.2, 1.5))  # solo network seconds wanted
        ov = float(rng.uniform(0, min(1.0, compute / D)))  # share of it hidden under computation
        exposed = D * (1 - ov)
        nbytes = D * 25e9 * len(mine) / (2 * (len(mine) - 1)) if len(mine) > 1 else 0.0  # 200 Gb/s NICs
        jobs.append((f"j{i}", [(h, g) for h in mine for g in range(8)], nbytes, compute + exposed, exposed, gpus))
    return Case(tors, hpt, tuple(jobs))


_LAST: list = [None, None]  # (case, its flow model)


def _model(case: Case) -> FlowContention:
    """One flow model per case, reset before every evaluation: its graph, paths and solve cache are
    built once, and the many group shapes the enumeration repeats are solved once."""
    if _LAST[0] is not case:
        # port_gbps=0: one link per ToR-aggregation pair, so a path is the choice of aggregation switch
        # the paper enumerates (2^5 combinations); ports would multiply the candidates, not the question
        g = clos(case.tors * case.hosts_per_tor, case.hosts_per_tor, 2, nic_gbps=200.0, oversubscription=2.0,
                 port_gbps=0)
        _LAST[:] = [case, FlowContention(g, seed=0)]
    return _LAST[1]


def score(case: Case, pins: dict[str, dict[int, int]] | None = None, levels: dict[str, int] | None = None,
          ) -> float:
    fc = _model(case)
    for jid, *_ in case.jobs:
        fc.remove(jid)
    for jid, placement, nbytes, total, comm, gpus in case.jobs:
        fc.set_priority(jid, (levels or {}).get(jid, 0))
        fc.pin(jid, (pins or {}).get(jid, {}))
        fc.add_placed(jid, placement, nbytes, total, comm)
    work = sum(gpus * (total - comm) / fc.iteration_time(jid)[0] for jid, _, _, total, comm, gpus in case.jobs)
    alone = sum(gpus * (total - comm) / total for jid, _, _, total, comm, gpus in case.jobs)
    return work / alone


def view_of(case: Case) -> CommView:
    score(case)  # the jobs on ECMP paths at one level, as a policy first sees them
    fc = _model(case)
    placed = {jid: (gpus, total, comm) for jid, _, _, total, comm, gpus in case.jobs}
    return build_view(fc, placed, {jid: i for i, (jid, *_) in enumerate(case.jobs)})


def _agg_pins(view: CommView, choice: dict[str, int]) -> dict[str, dict[int, int]]:
    return {j: {i: choice[j] % len(f.candidates) for i, f in enumerate(view.jobs[j].flows)} for j in view.jobs}


def _pins(plan: dict[str, Assignment]) -> dict[str, dict[int, int]]:
    return {j: dict(a.paths) for j, a in plan.items() if a.paths}


def _order_levels(order: list[str]) -> dict[str, int]:
    return {j: r for r, j in enumerate(order)}


def run_case(case: Case, seed: int) -> dict[str, dict[str, float]]:
    """Ratio to the enumerated optimum of every method, per step."""
    view = view_of(case)
    ids = sorted(view.jobs)
    out: dict[str, dict[str, float]] = {}
    # path selection
    best = max(score(case, _agg_pins(view, dict(zip(ids, c))))
               for c in itertools.product(range(2), repeat=len(ids)))
    crux_ps = Crux(name="crux-ps", assign_priorities=False, dag_compression=False, levels=1, reserved=0)
    out["path selection"] = {"crux": score(case, _pins(crux_ps.assign(view))) / best,
                             "taccl": score(case, _pins(Taccl().assign(view))) / best,
                             "ecmp": score(case) / best}
    # priority assignment: strict orders, ECMP paths
    best = max(score(case, None, _order_levels(list(p))) for p in itertools.permutations(ids))
    crux = Crux(levels=LEVELS, reserved=0, seed=seed)
    P = crux.priorities(view)
    orders = {"crux": sorted(ids, key=lambda j: (-P[j], view.jobs[j].arrival)),
              "sincronia": bssi_order(view),
              "varys": sorted(ids, key=lambda j: (effective_bottleneck(view, j), view.jobs[j].arrival))}
    out["priority assignment"] = {m: score(case, None, _order_levels(o)) / best for m, o in orders.items()}
    # compression to LEVELS levels
    best = max(score(case, None, dict(zip(ids, c))) for c in itertools.product(range(LEVELS), repeat=len(ids)))
    no_ps = Crux(select_paths=False, levels=LEVELS, reserved=0, seed=seed)
    plans = {"crux": no_ps.assign(view), "sincronia": Sincronia(levels=LEVELS, reserved=0).assign(view),
             "varys": {j: Assignment(lv) for j, lv in balanced_levels(view, LEVELS, 0).items()}}
    out["priority compression"] = {m: score(case, None, {j: a.level for j, a in p.items()}) / best
                                   for m, p in plans.items()}
    return out


def run(cases: int, seed: int = 0, progress=None) -> dict[str, dict[str, list[float]]]:
    rng = np.random.default_rng(seed)
    ratios: dict[str, dict[str, list[float]]] = {}
    for c in range(cases):
        for step, methods in run_case(make_case(rng), seed + c).items():
            for m, r in methods.items():
                ratios.setdefault(step, {}).setdefault(m, []).append(r)
        if progress:
            progress(c + 1, cases, "micro-benchmark")
    return ratios
