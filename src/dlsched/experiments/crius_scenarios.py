"""The Crius reproduction's workloads: the authors' Philly-derived trace on two clusters.

* ``testbed``: Crius section 8.3, 64 GPUs (32 A40 + 32 A10), "a 6-hour trace
  of 244 jobs".  We take 244 consecutive jobs of the arena trace, compress
  their arrivals into 6 hours, map requested types onto the testbed's two
  (A100/A40 -> A40, V100/A10 -> A10) and divide iterations by ``iter_div``
  so that the work fits a 6-hour window on 64 GPUs, as the paper's testbed
  trace must have (the simulator trace's jobs run for days on their
  requested GPUs).
* ``sim``: Crius section 8.4, the 1,280-GPU cluster and the arena trace
  (1,938 jobs, ``iterations_sim`` iterations as the authors' simulator runs),
  arrivals compressed by ``compress`` for heavy load (the paper's Figure 16
  uses "one-week Philly trace with heavy workloads").
* ``tiled``: the 13,000-job two-week workload of section 8.1, built by
  repeating the arena trace with shifted arrivals (speed benchmark).

``ddl_scale`` stretches every deadline's slack: the arena deadlines are
about 7x tighter than our perf model's iteration times allow (median slack
0.14x the job's run time at the optimum on its request), so unscaled nearly every job is
infeasible and Crius-DDL drops them all.

The trace lives in shared data (``shared_dir()``); callers skip when it is absent.
"""

from __future__ import annotations

import csv
from pathlib import Path

from dlsched.cluster.topology import Cluster
from dlsched.experiments.shared import shared_dir
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.workload.job import JobSpec

ARENA = shared_dir() / "anchors" / "traces" / "arena-philly.csv"
HELIOS = shared_dir() / "anchors" / "traces" / "arena-helios.csv"  # held out: the authors' Helios-derived trace
PHILLY_VALIDATION = shared_dir() / "traces" / "philly" / "philly_jobs_subset_validation.json"  # held out
MEASURED = Path(__file__).resolve().parents[3] / "experiments" / "crius" / "data" / "arena_revision_iter_times.csv"

_TESTBED_TYPE = {"a100": "A40", "a40": "A40", "v100": "A10", "a10": "A10"}


def _testbed_type(name: str | None) -> str | None:
    """Map any spelling ("a100", "A100-40G", ...) onto the testbed's two types."""
    if not name:
        return name
    low = name.lower()
    for prefix, target in _TESTBED_TYPE.items():
        if low.startswith(prefix):
            return target
    return name


def arena_available() -> bool:
    return ARENA.exists()


def read_arena(path: Path = ARENA) -> list[JobSpec]:
    """The arena trace as JobSpecs (the project's trace reader, when present, is preferred)."""
    try:  # the project's reader (dlsched.workload.readers.arena)
        from dlsched.workload.readers.arena import read_arena as _reader
    except ImportError:
        _reader = None
    if _reader is not None:
        jobs = list(_reader(path).jobs)
        jobs.sort(key=lambda j: (j.submit_time, j.job_id))
        return jobs
    rows = list(csv.DictReader(open(path)))
    t0 = min(int(r["submit_time_s"]) for r in rows)
    out = []
    for r in rows:
        submit = float(int(r["submit_time_s"]) - t0)
        ddl = r.get("deadline_s")
        out.append(JobSpec(r["job_id"], submit, r["model"], int(r["num_gpus"]),
                           batch_size=int(r["batch_size"]), total_iterations=int(r["iterations_sim"]),
                           gpu_type=r["gpu_type"], params=r["param_num"],
                           deadline=float(int(ddl) - t0) if ddl else None))
    out.sort(key=lambda j: (j.submit_time, j.job_id))
    return out


def _rescale(jobs: list[JobSpec], span_s: float | None = None, factor: float | None = None,
             iter_div: int = 1, type_map=None, ddl_scale: float = 1.0) -> list[JobSpec]:
    t0 = jobs[0].submit_time
    width = max(1.0, jobs[-1].submit_time - t0)
    f = factor if factor is not None else (span_s / width if span_s else 1.0)
    out = []
    for j in jobs:
        sub = (j.submit_time - t0) * f
        # the slack scales with the work (iterations), not with the arrival compression
        ddl = None if j.deadline is None else sub + (j.deadline - j.submit_time) * ddl_scale / iter_div
        out.append(j.with_(submit_time=round(sub, 3), deadline=ddl,
                           total_iterations=max(1, j.total_iterations // iter_div),
                           gpu_type=type_map(j.gpu_type) if type_map else j.gpu_type))
    return out


def testbed(n_jobs: int = 244, hours: float = 6.0, iter_div: int = 100, start: int = 0,
            ddl_scale: float = 1.0):
    cluster = Cluster.load("crius-testbed")
    jobs = read_arena()[start:start + n_jobs]
    jobs = _rescale(jobs, span_s=hours * 3600, iter_div=iter_div, type_map=_testbed_type,
                    ddl_scale=ddl_scale)
    kept, removed = fit_requests(jobs, cluster, shared_estimator(cluster))
    return cluster, kept, removed


def sim(compress: float = 4.0, ddl_scale: float = 1.0):
    cluster = Cluster.load("crius-sim")
    jobs = _rescale(read_arena(), factor=1.0 / compress, ddl_scale=ddl_scale)
    kept, removed = fit_requests(jobs, cluster, shared_estimator(cluster))
    return cluster, kept, removed


def helios(compress: float = 1.0, ddl_scale: float = 1.0):
    """Held-out check: the authors' Helios-derived trace on the simulated cluster, arrivals / ``compress``."""
    cluster = Cluster.load("crius-sim")
    jobs = _rescale(read_arena(HELIOS), factor=1.0 / compress, ddl_scale=ddl_scale)
    kept, removed = fit_requests(jobs, cluster, shared_estimator(cluster))
    return cluster, kept, removed


def philly_validation(compress: float = 8.0):
    """Held-out check: the Philly validation subset on the simulated cluster, arrivals / ``compress``.

    Philly names no models or GPU types: the project's reader picks a model by GPU count
    (``model_for_gpus``) and turns each job's duration into iterations on its request, as
    ``dlsched simulate`` does; requests that cannot hold their model are grown the same way.
    """
    from types import SimpleNamespace

    from dlsched.commands._jobs import load_jobs
    from dlsched.perf.parallel.adaptive import shared_adaptive_model

    cluster = Cluster.load("crius-sim")
    ns = SimpleNamespace(trace=str(PHILLY_VALIDATION), format=None, skip_bad_rows=True, jobs=None, days=None,
                         seed=0, fit_requests=True)
    perf = shared_adaptive_model(cluster)
    jobs, _ = load_jobs(ns, cluster, perf)
    # durations become iterations once, on the analytic model, so every setting runs the same work
    jobs = [j if j.total_iterations else j.with_(total_iterations=max(1, round(j.duration_s / perf.reference_time(j))),
                                                 duration_s=None) for j in jobs]
    jobs = _rescale(sorted(jobs, key=lambda j: (j.submit_time, j.job_id)), factor=1.0 / compress)
    import json

    rows = len(json.loads(PHILLY_VALIDATION.read_text()))
    return cluster, jobs, [None] * (rows - len(jobs))  # rows the reader skipped or that fit nowhere


def measured_rows(path: Path = MEASURED) -> list[tuple]:
    """The Crius authors' measured Alpa iteration times (model, params, batch, gpu, n_gpus, iter_s)."""
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(ln for ln in f if not ln.startswith("#")))
    return [(r["model"], r["params"], int(r["batch"]), r["gpu"], int(r["hosts"]) * int(r["gpus_per_host"]),
             float(r["iter_s"])) for r in rows]


def tiled(n_jobs: int = 13000, days: float = 14.0):
    """``n_jobs`` arena jobs spread over ``days`` (copies of the trace, arrivals interleaved)."""
    cluster = Cluster.load("crius-sim")
    base, _ = fit_requests(read_arena(), cluster, shared_estimator(cluster))
    base = _rescale(base, span_s=days * 86400)
    out = []
    copy = 0
    while len(out) < n_jobs:
        shift = (copy * 7919.0) % 3600.0  # copies interleave instead of arriving together
        for j in base:
            if len(out) >= n_jobs:
                break
            out.append(j.with_(job_id=f"{j.job_id}#{copy}", submit_time=min(days * 86400, j.submit_time + shift),
                               deadline=None if j.deadline is None else j.deadline + shift))
        copy += 1
    out.sort(key=lambda j: (j.submit_time, j.job_id))
    return cluster, out
