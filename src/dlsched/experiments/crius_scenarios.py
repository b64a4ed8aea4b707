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

The traces live in the reference data folder (``dlsched.shared_data``: ``--data DIR``, or
../shared from the working directory), looked up when first used so ``--data`` applies;
callers skip when they are absent.  The authors' measured iteration times are a small table
shipped in the package (``dlsched/experiments/data``).
"""

from __future__ import annotations

import csv
from importlib import resources
from pathlib import Path

from dlsched.cluster.topology import Cluster
from dlsched.perf.parallel.adaptive import shared_estimator
from dlsched.policies.crius.common import fit_requests
from dlsched.workload.job import JobSpec

# paths under the data folder: ARENA, HELIOS (held out: the authors' Helios-derived trace) and
# PHILLY_VALIDATION (held out) are module attributes resolved on each use (``__getattr__``)
_SHARED = {"ARENA": ("anchors", "traces", "arena-philly.csv"),
           "HELIOS": ("anchors", "traces", "arena-helios.csv"),
           "PHILLY_VALIDATION": ("traces", "philly", "philly_jobs_subset_validation.json")}
MEASURED = resources.files("dlsched.experiments") / "data" / "arena_revision_iter_times.csv"


def shared_path(name: str) -> Path:
    """``ARENA``, ``HELIOS`` or ``PHILLY_VALIDATION`` in the data folder as it is set now."""
    from dlsched.shared_data import shared_dir

    return shared_dir().joinpath(*_SHARED[name])


def __getattr__(name: str) -> Path:
    if name in _SHARED:
        return shared_path(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
    return shared_path("ARENA").exists()


def read_arena(path: Path | None = None) -> list[JobSpec]:
    """The arena trace (default ``ARENA``) as JobSpecs (the project's trace reader, when present, is preferred)."""
    path = shared_path("ARENA") if path is None else path
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
    jobs = _rescale(read_arena(shared_path("HELIOS")), factor=1.0 / compress, ddl_scale=ddl_scale)
    kept, removed = fit_requests(jobs, cluster, shared_estimator(cluster))
    return cluster, kept, removed


def philly_validation(compress: float = 8.0):
    """Held-out check: the Philly validation subset on the simulated cluster, arrivals / ``compress``.

    Philly names no models or GPU types: the project's reader picks a model by GPU count
    (``model_for_gpus``) and turns each job's duration into iterations on its request, as
    ``dlsched simulate`` does; requests that cannot hold their model are grown the same way.
    """
    from dlsched.perf.parallel.adaptive import shared_adaptive_model
    from dlsched.run.jobs import load_jobs
    from dlsched.run.spec import WorkloadSpec

    validation = shared_path("PHILLY_VALIDATION")
    cluster = Cluster.load("crius-sim")
    perf = shared_adaptive_model(cluster)
    jobs, _ = load_jobs(WorkloadSpec(trace=str(validation), skip_bad_rows=True, fit_requests=True), 0, cluster, perf)
    # durations become iterations once, on the analytic model, so every setting runs the same work
    jobs = [j if j.total_iterations else j.with_(total_iterations=max(1, round(j.duration_s / perf.reference_time(j))),
                                                 duration_s=None) for j in jobs]
    jobs = _rescale(sorted(jobs, key=lambda j: (j.submit_time, j.job_id)), factor=1.0 / compress)
    import json

    rows = len(json.loads(validation.read_text()))
    return cluster, jobs, [None] * (rows - len(jobs))  # rows the reader skipped or that fit nowhere


def measured_rows(path=MEASURED) -> list[tuple]:
    """The Crius authors' measured Alpa iteration times (model, params, batch, gpu, n_gpus, iter_s)."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
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
