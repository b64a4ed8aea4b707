"""Workloads by name (``--workload NAME``): the default Philly-shaped stream, and each paper's
experimental mix as this project's reproductions build it (docs/workloads.md says where each
figure comes from).

The papers' builders live with their reproductions in ``dlsched.experiments``; this module only
names them, so a mix is defined once and ``dlsched simulate --workload dally-poisson`` runs the
jobs ``dlsched reproduce dally`` runs.  They are imported on use: a plain run loads none of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from dlsched.errors import InputError, did_you_mean

if TYPE_CHECKING:
    from dlsched.cluster.topology import Cluster
    from dlsched.workload.job import JobSpec

# jobs per GPU of the default workload: 13,000 on the 1,280-GPU crius-sim (the benchmark
# trace's count), and the same arrival window in hours at a given load on every cluster
JOBS_PER_GPU = 13000 / 1280
MIN_DEFAULT_JOBS = 100


@dataclass(frozen=True, slots=True)
class Request:
    """What the user asked for; None means "the workload's own default"."""

    n_jobs: int | None
    seed: int
    load: float | None
    days: float | None


@dataclass(frozen=True, slots=True)
class Built:
    jobs: list
    info: dict  # goes to summary.json's params
    # the workload already set its arrivals (to a load or a span): --load is not applied again
    arrivals_set: bool = False


@dataclass(frozen=True, slots=True)
class NamedWorkload:
    name: str
    summary: str
    cluster: str | None  # the cluster the paper ran it on (a hint printed when another is used)
    needs_shared: bool
    build: Callable[[Cluster, Request], Built]
    # clusters this is the default workload of (without --trace or --workload), at the default load
    default_on: tuple[str, ...] = ()


# Philly's job sizes (85% one GPU) fill a fabric of thousands of GPUs only with tens of thousands
# of jobs (68,819 on crux-lingjun at load 1); fewer arrive in a window too short for anything to
# wait.  These clusters' own papers ran jobs of 8-512 GPUs: their default is that mix, 1,000 jobs
# (docs/workloads.md, "The default workload").
CRUX_FABRICS = ("crux-clos", "crux-double-sided", "crux-lingjun")


def default_workload(cluster: Cluster) -> str:
    """The workload a run gets without --trace or --workload: "philly" unless a named workload is
    this cluster's own (``default_on``)."""
    for w in WORKLOADS.values():
        if cluster.name in w.default_on:
            return w.name
    return "philly"


def default_jobs(cluster: Cluster) -> int:
    return max(MIN_DEFAULT_JOBS, round(JOBS_PER_GPU * cluster.num_gpus))


def _philly(cluster: Cluster, req: Request) -> Built:
    from dlsched.workload.synthetic import DEFAULT_LOAD, DEFAULT_MAX_DURATION_S, philly_at_load

    n = req.n_jobs or default_jobs(cluster)
    load = None if req.days is not None else (req.load if req.load is not None else DEFAULT_LOAD)
    jobs = philly_at_load(cluster, n, req.seed, load=load, days=req.days)
    info = {"trace": "synthetic:philly", "synthetic_jobs": n, "max_duration_s": DEFAULT_MAX_DURATION_S}
    if req.days is not None:
        info["synthetic_days"] = req.days
    return Built(jobs, info, arrivals_set=True)


def _benchmark(cluster: Cluster, req: Request) -> Built:
    from dlsched.workload.synthetic import philly_like

    if req.load is not None:
        raise InputError("the benchmark workload sets its own durations for a load of 1.0 over --days; "
                         "use --time-scale to move its arrivals", field="--load")
    n = req.n_jobs or 13000
    days = req.days if req.days is not None else 14.0 * n / 13000
    jobs = philly_like(cluster, n_jobs=n, days=days, seed=req.seed)
    return Built(jobs, {"trace": "synthetic:philly_like", "synthetic_jobs": n, "synthetic_days": days},
                 arrivals_set=True)


def _dally(arrival: str) -> Callable[[Cluster, Request], Built]:
    def build(cluster: Cluster, req: Request) -> Built:
        from dlsched.experiments import dally

        jobs = dally.workload(arrival, cluster, req.seed)
        return Built(_first(jobs, req.n_jobs), {"trace": f"workload:dally-{arrival}"})
    return build


def _gandiva(cluster: Cluster, req: Request) -> Built:
    from dlsched.experiments import gandiva

    n = req.n_jobs or gandiva.CLUSTER_JOBS
    hours = req.days * 24 if req.days is not None else gandiva.CLUSTER_HOURS * n / gandiva.CLUSTER_JOBS
    _, jobs = gandiva.cluster_jobs(n, hours, req.seed)
    return Built(jobs, {"trace": "workload:gandiva", "synthetic_jobs": n, "synthetic_days": hours / 24},
                 arrivals_set=req.days is not None)


def _crux(cluster: Cluster, req: Request) -> Built:
    import tempfile
    from pathlib import Path

    from dlsched.experiments import crux
    from dlsched.workload.readers import read_trace

    n = req.n_jobs or 1000
    days = req.days if req.days is not None else 14.0 * n / 5000
    largest = crux.TOPOLOGIES.get(cluster.name, (None, None))[1]
    if largest is None:  # a cluster smaller than the paper's largest job: leave the larger sizes out
        largest = None if cluster.num_gpus >= max(crux.TRACE_GPUS[0]) else cluster.num_gpus
    cap = largest
    with tempfile.TemporaryDirectory() as d:
        path = crux.write_trace(Path(d) / "crux.csv", n, days, gpus_total=cluster.num_gpus, seed=req.seed,
                                max_gpus=cap)
        jobs = list(read_trace(str(path)).jobs)
    for j in jobs:
        j.extra.pop("source", None)  # a temporary file: errors name the workload instead
    return Built(jobs, {"trace": "workload:crux", "synthetic_jobs": n, "synthetic_days": days},
                 arrivals_set=req.days is not None)


def _crius(scenario: str) -> Callable[[Cluster, Request], Built]:
    def build(cluster: Cluster, req: Request) -> Built:
        from dlsched.experiments import crius_scenarios as cs

        _, jobs, removed = getattr(cs, scenario)()
        info = {"trace": f"workload:crius-{scenario}", "infeasible_removed": len(removed)}
        return Built(_first(jobs, req.n_jobs), info)
    return build


def _first(jobs: list, n: int | None) -> list:
    return list(jobs) if n is None else list(jobs)[:n]


WORKLOADS: dict[str, NamedWorkload] = {w.name: w for w in (
    NamedWorkload("philly", "Philly-shaped jobs (durations capped at a day) at --load (default "
                  "workload)", None, False, _philly),
    NamedWorkload("benchmark", "the benchmark trace, the default before --load: 13,000 jobs in 14 days, "
                  "durations scaled to fill crius-sim (benchmarks/bench_sim.py)", "crius-sim", False, _benchmark),
    NamedWorkload("dally-batch", "Dally section V: 500 jobs of the six Table I models at t = 0", "dally-8racks",
                  False, _dally("batch")),
    NamedWorkload("dally-poisson", "Dally section V: 400 Table I jobs, Poisson arrivals at the paper's peak "
                  "usage", "dally-8racks", False, _dally("poisson")),
    NamedWorkload("gandiva", "Gandiva section 6.4: Philly-like jobs oversubscribing gandiva-100, every fifth "
                  "elastic; 1-GPU jobs packable", "gandiva-100", False, _gandiva),
    NamedWorkload("crux", "CRUX section 6.3: production-like job sizes (8-512 GPUs); run it with "
                  "--placement first-free (the default workload of the CRUX fabrics)", "crux-clos", False, _crux,
                  default_on=CRUX_FABRICS),
    NamedWorkload("crius-sim", "Crius section 7: the authors' arena-philly trace, arrivals 4x denser, "
                  "infeasible rows removed", "crius-sim", True, _crius("sim")),
    NamedWorkload("crius-helios", "Crius held-out check: the authors' arena-helios trace at its own rate, "
                  "infeasible rows removed", "crius-sim", True, _crius("helios")),
    NamedWorkload("crius-testbed", "Crius section 7: 244 arena-philly jobs in 6 h, iterations / 100", "crius-testbed",
                  True, _crius("testbed")),
)}


def get_workload(name: str) -> NamedWorkload:
    w = WORKLOADS.get(name)
    if w is None:
        hint = did_you_mean(name, WORKLOADS)
        raise InputError(f"unknown workload '{name}'{hint}; known: {', '.join(WORKLOADS)}", field="--workload")
    return w


def build(name: str, cluster: Cluster, req: Request) -> Built:
    w = get_workload(name)
    if req.load is not None and req.days is not None:
        raise InputError("give --load or --days, not both: --load sets the arrival window from the jobs' "
                         "GPU-hours, --days sets it directly", field="--load")
    if req.days is not None and not (req.days > 0 and math.isfinite(req.days)):
        raise InputError(f"--days must be positive (and finite), got {req.days}", field="--days")
    if w.needs_shared:
        from dlsched.experiments.crius_scenarios import arena_available

        if not arena_available():
            raise InputError(f"workload '{name}' reads the Crius authors' arena trace from ../shared/anchors/"
                             "traces, which is not here", field="--workload")
    if w.cluster is not None and cluster.name != w.cluster and cluster.name not in w.default_on:
        import sys

        print(f"dlsched: note: workload '{name}' is the paper's mix for {w.cluster}; running it on "
              f"{cluster.name}", file=sys.stderr)
    return w.build(cluster, req)
