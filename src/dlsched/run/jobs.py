"""A run's jobs: read or generated, sliced, checked against the cluster and perf model.

Every problem a job could cause mid-run is found here, before the run: a request the cluster
cannot hold (``workload.validate``) and a request whose model does not fit in GPU memory on
the GPUs it asks for (``workload.fitting``, priced with the run's own perf model).  Each bad
job is an error naming file, line and field, or with ``--skip-bad-rows`` a counted, listed
skip; ``--fit-requests`` grows requests instead, each change listed in summary.json.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from dlsched.errors import InfeasibleJobError, InputError

from dlsched.run.spec import WorkloadSpec

if TYPE_CHECKING:  # loads on use: start-up stays cheap
    from dlsched.cluster.topology import Cluster

SHOW_SKIPPED = 20  # skipped rows listed on the terminal; the results keep all of them
SHOW_CHANGES = 10


def runs_predicate(cluster: Cluster, perf):
    """``runs(spec, n)``: the perf model prices ``spec`` on n GPUs at a finite iteration time.

    A pinned job is checked on its type; an unpinned one on every type with n GPUs, since a
    policy may place it on any of them.  Answers are cached by what pricing depends on.
    """
    from dlsched.cluster.placement import ideal_gpus

    cache: dict[tuple, bool] = {}
    large_fits = _large_model_fits(cluster, perf)

    def on_type(spec, n: int, t: int) -> bool:
        key = (spec.model, spec.params, spec.batch_size, n, t)
        hit = cache.get(key)
        if hit is None:
            hit = large_fits(spec, n, t) if large_fits else None
            if hit is None:
                sized = spec.with_(num_gpus=n, gpu_type=cluster.gpu_types[t].name)
                hit = 0.0 < perf.price(sized, ideal_gpus(cluster, n, t)).total < math.inf
            cache[key] = hit
        return hit

    def check(spec, n: int) -> bool:
        if spec.gpu_type:
            t = cluster.type_id(spec.gpu_type)
            return int(cluster.type_gpus[t]) >= n and on_type(spec, n, t)
        types = [t for t in range(len(cluster.gpu_types)) if int(cluster.type_gpus[t]) >= n]
        return bool(types) and all(on_type(spec, n, t) for t in types)

    answers: dict[tuple, bool] = {}  # one lookup per job: a million jobs share a few hundred keys

    def runs(spec, n: int) -> bool:
        key = (spec.model, spec.params, spec.batch_size, spec.gpu_type, n)
        hit = answers.get(key)
        if hit is None:
            hit = answers[key] = check(spec, n)
        return hit
    return runs


def _large_model_fits(cluster: Cluster, perf):
    """``fits(spec, n, t)``: what pricing a large model on n GPUs of type t would answer, without
    searching for its optimal plan (True, False; None for a model ``perf`` prices otherwise), or
    None where ``perf`` is not one of the two models this is known to hold for.

    ``AdaptivePerfModel`` prices a large model at a finite time exactly when its estimator finds
    a plan (``CellEstimator.fits``, checked equal to ``optimum is not None`` by
    tests/parallel/test_search.py); ``TruthPerfModel`` too, except that a measured time, where
    it has one, decides instead.  A preflight that searched every request's optimum spends most
    of its time on GPU types and counts a job never runs on.  Any other perf model
    (a subclass, a wrapper) is priced as before.
    """
    from dlsched.perf.parallel.perf_model import AdaptivePerfModel

    # not imported for the check (about 0.01 CPU s): where it is not loaded, perf is no TruthPerfModel
    truth = sys.modules.get("dlsched.perf.measured.truth")
    TruthPerfModel = truth.TruthPerfModel if truth is not None else None
    kind = type(perf)
    if kind is not AdaptivePerfModel and kind is not TruthPerfModel:
        return None
    from dlsched.workload.models import get_model
    from dlsched.workload.zoo_large import layer_traits

    def fits(spec, n: int, t: int) -> bool | None:
        model = get_model(spec.model, spec.params)
        if layer_traits(model) is None:  # priced by the fallback model: ask it
            return None
        gpu = cluster.gpu_types[t].name
        if kind is TruthPerfModel:
            measured = perf.measured.get(model, spec.batch_size, gpu, n)
            if measured is not None:
                return 0.0 < measured < math.inf
        return perf.estimator.fits(model, spec.batch_size, gpu, n)
    return fits


def _checked_on(cluster: Cluster):
    def where(spec) -> str:
        kind = spec.gpu_type or "/".join(g.name for g in cluster.gpu_types)
        return f"{spec.num_gpus} {kind} GPU{'s' if spec.num_gpus != 1 else ''}"
    return where


def load_jobs(workload: WorkloadSpec, seed: int, cluster: Cluster, perf) -> tuple[list, dict]:
    """Jobs from a trace or the generator, checked against the cluster; returns (jobs, info)."""
    from dlsched.memory import check_memory
    from dlsched.workload.fitting import fit_requests
    from dlsched.workload.readers._common import SkippedRow
    from dlsched.workload.validate import check_jobs

    wl = workload
    if wl.prepared:
        return _prepared_jobs(wl, cluster, perf)
    if wl.trace:
        from dlsched.workload.readers import read_trace

        if wl.days is not None:  # never silently ignored
            raise InputError("--days spreads a synthetic workload's arrivals; a trace keeps its own "
                             "(move them with --load or --time-scale)", field="--days")

        load = read_trace(wl.trace, fmt=wl.format, skip_bad_rows=wl.skip_bad_rows)
        jobs, skipped, source = load.jobs, list(load.skipped), load.source
        info = {"trace": wl.trace, "format": wl.format, "trace_jobs": len(jobs)}
        if wl.jobs is not None:
            jobs = jobs[:wl.jobs]  # the first N by submission time
        check_memory(len(jobs))
    else:
        from dlsched.workload.named import Request, build, default_jobs, default_workload
        from dlsched.workload.load import DEFAULT_LOAD

        n = wl.jobs or default_jobs(cluster)
        check_memory(n)  # before generating: a billion jobs must fail here, not in the kernel
        name = wl.name or default_workload(cluster)
        if wl.name is None and name != "philly" and wl.load is None and wl.days is None:
            wl = replace(wl, load=DEFAULT_LOAD)  # a cluster's own default workload runs at the default load
        built = build(name, cluster, Request(wl.jobs, seed, wl.load, wl.days))
        jobs, info, skipped, source = built.jobs, dict(built.info), [], "synthetic"
    jobs, bad = check_jobs(jobs, cluster, skip_bad_rows=wl.skip_bad_rows, source=source)
    skipped.extend(bad)
    fit = fit_requests(jobs, runs_predicate(cluster, perf), grow=wl.fit_requests, where=_checked_on(cluster),
                       why=getattr(perf, "refusal", None))
    # --fit-requests: a job that fits on no request up to the cap cannot run at all; like the Crius
    # authors' simulator, it is left out, counted and listed, not a stop (docs/workloads.md)
    if fit.bad and not (wl.skip_bad_rows or wl.fit_requests):
        first = fit.bad[0]
        more = f" ({len(fit.bad) - 1} more such job(s))" if len(fit.bad) > 1 else ""
        raise InfeasibleJobError(f"job {first.job.job_id}: {first.reason}{more}",
                                 file=first.job.extra.get("source", source), line=first.line, field="num_gpus")
    jobs = fit.jobs
    from dlsched.workload.load import apply  # offered load and arrivals scaled to it (docs/workloads.md)

    synthetic_set = not wl.trace and built.arrivals_set
    time_scale = wl.time_scale
    if time_scale is None and wl.arrival_rate != 1.0:  # the API's older knob: arrivals this many times as fast
        time_scale = 1.0 / wl.arrival_rate
    jobs, offered = apply(jobs, cluster, perf, load=None if synthetic_set else wl.load, time_scale=time_scale)
    info.update(offered.as_dict())
    if hasattr(perf, "forget_counts"):  # a replayed table reports what the run priced, not this check
        perf.forget_counts()
    if hasattr(perf, "prepare_jobs"):  # a replay of a round-based simulator moves arrivals to its rounds
        jobs = perf.prepare_jobs(jobs)
    skipped.extend(SkippedRow(b.line, "num_gpus", b.reason) for b in fit.bad)
    info["fit_requests"] = bool(wl.fit_requests)
    if fit.changes:
        info["fitted_requests"] = [c.as_dict() for c in fit.changes]
        _print_changes(fit.changes, source)
    if skipped:
        info.update(_report_skipped(sorted(skipped, key=lambda r: r.line), source))
    if not jobs:
        raise InputError("no jobs to simulate", file=source)
    return jobs, info


def _prepared_jobs(wl: WorkloadSpec, cluster: Cluster, perf) -> tuple[list, dict]:
    """A prepared list, as given: checked against the cluster (GPU counts, types, models) but not
    fitted, sized or moved; a job its perf model cannot run stays in and ends unfinished, as the
    reproduction that built the list meant (the Cells ablation's data-parallel-only jobs)."""
    from dlsched.memory import check_memory
    from dlsched.run.records import from_records, read_jobs_file
    from dlsched.workload.validate import check_jobs

    source = wl.jobs_file or "the run specification's workload.records"
    records = wl.records if wl.records is not None else read_jobs_file(wl.jobs_file)
    if wl.jobs is not None:
        records = records[:wl.jobs]
    check_memory(len(records))
    jobs, bad = check_jobs(from_records(records), cluster, skip_bad_rows=wl.skip_bad_rows, source=source)
    info = {"trace": wl.label or ("jobs file" if wl.jobs_file else "job records"), "prepared_jobs": len(jobs)}
    if wl.jobs_file:
        info["jobs_file"] = wl.jobs_file
    if hasattr(perf, "prepare_jobs"):  # as for any other workload: the perf model's own arrival rule
        jobs = perf.prepare_jobs(jobs)
    if bad:
        info.update(_report_skipped(sorted(bad, key=lambda r: r.line), source))
    if not jobs:
        raise InputError("no jobs to simulate", file=source)
    return jobs, info


def _print_changes(changes, source: str) -> None:
    print(f"dlsched: --fit-requests grew {len(changes)} request{'s' if len(changes) != 1 else ''} of "
          f"{source} so the model fits in GPU memory:", file=sys.stderr)
    for ch in changes[:SHOW_CHANGES]:
        print(f"  line {ch.line}, field 'num_gpus': {ch.model} {ch.old_gpus} -> {ch.new_gpus} GPUs", file=sys.stderr)
    if len(changes) > SHOW_CHANGES:
        print(f"  ... and {len(changes) - SHOW_CHANGES} more (all listed in summary.json under "
              "params.fitted_requests)", file=sys.stderr)


def _report_skipped(skipped, source: str) -> dict:
    by_field: dict[str, int] = {}
    for s in skipped:
        by_field[s.field] = by_field.get(s.field, 0) + 1
    counts = ", ".join(f"{n} on field '{f}'" if f else f"{n} malformed"
                       for f, n in sorted(by_field.items(), key=lambda kv: (-kv[1], kv[0])))
    print(f"dlsched: skipped {len(skipped)} row{'s' if len(skipped) != 1 else ''} of {source} "
          f"({counts}):", file=sys.stderr)
    for s in skipped[:SHOW_SKIPPED]:
        where = f"line {s.line}, field '{s.field}'" if s.field else f"line {s.line}"
        print(f"  {where}: {s.reason}", file=sys.stderr)
    if len(skipped) > SHOW_SKIPPED:
        print(f"  ... and {len(skipped) - SHOW_SKIPPED} more (all listed in summary.json under "
              "params.skipped)", file=sys.stderr)
    return {"skipped_rows": len(skipped), "skipped_by_field": by_field,
            "skipped": [{"line": s.line, "field": s.field, "reason": s.reason} for s in skipped]}
