"""Running an experiment file's runs: in local worker processes, or as tasks on a Ray cluster.

``simulate_run`` is the unit of work, a plain function of a run's resolved
experiment document returning its results as data; the caller writes the
files, so Ray workers on other machines need no shared disk.  The results
come back in the runs' order whatever order they finish in, so the table is
the same through processes, Ray or a single process.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable

from dlsched.experiments.expfile import ExperimentFile, Run


def run_spec(doc: dict):
    """The ``RunSpec`` of one run's resolved experiment document (one policy, one seed)."""
    from dlsched.run.spec import ClusterSpec, EngineSpec, PerfSpec, PolicySpec, RunSpec, WorkloadSpec

    exp = ExperimentFile.model_validate(doc)
    entry = exp.policy_entries()[0]
    wl = exp.workload
    return RunSpec(
        workload=WorkloadSpec(trace=wl.trace, format=wl.format, skip_bad_rows=wl.skip_bad_rows,
                              fit_requests=wl.fit_requests, jobs=wl.jobs if wl.trace else wl.synthetic.jobs,
                              days=None if wl.trace else wl.synthetic.days, load=wl.load,
                              time_scale=wl.time_scale, name=wl.name),
        cluster=ClusterSpec(exp.cluster),
        policy=PolicySpec(entry.name, dict(entry.options)),
        perf=PerfSpec(exp.perf, exp.tier_profile),
        engine=EngineSpec(start_overhead=exp.sim.start_overhead, restore_base=exp.sim.restore_base,
                          restore_per_gb=exp.sim.restore_per_gb, checkpoint_interval=exp.sim.checkpoint_interval,
                          max_time=exp.sim.max_time, debug=exp.sim.debug),
        seed=exp.seeds[0])


def simulate_run(doc: dict) -> dict:
    """Simulate one run (one policy, one seed): records, series, summary and parameters as data."""
    from dlsched.run.build import build_simulator
    from dlsched.run.params import run_params

    spec = run_spec(doc)
    sim, info = build_simulator(spec)
    res = sim.run()
    res.summary["offered_load"] = info.get("offered_load")  # beside utilisation and queueing
    return {"records": res.records, "series": res.series, "summary": res.summary,
            "params": run_params(res.params, info, spec, spec.policy.options), "stats": res.stats}


Progress = Callable[[int, int, str], None]


def run_local(runs: list[Run], workers: int, progress: Progress | None = None) -> list[dict]:
    """Each run in a worker process (spawned: a clean interpreter, no state copied from this one)."""
    if workers <= 1 or len(runs) == 1:
        out = []
        for i, r in enumerate(runs):
            out.append(simulate_run(r.doc))
            if progress:
                progress(i + 1, len(runs), r.label)
        return out
    import multiprocessing

    results: list[dict | None] = [None] * len(runs)
    with ProcessPoolExecutor(max_workers=min(workers, len(runs)),
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(simulate_run, r.doc): i for i, r in enumerate(runs)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                results[futures[f]] = f.result()
                if progress:
                    progress(len(runs) - len(pending), len(runs), runs[futures[f]].label)
    return results  # type: ignore[return-value]


def run_ray(runs: list[Run], address: str | None, progress: Progress | None = None) -> list[dict]:
    """Each run as a Ray task (one CPU each) on the cluster at ``address``; None: a new one on this machine.

    The nodes need dlsched importable (installed, or on PYTHONPATH), as the live runtime's workers do.
    """
    import os

    import ray

    from dlsched.live.service import connect

    local = None
    if address is None and not ray.is_initialized():
        # a private single-node cluster on free ports (a plain ray.init() would try the default
        # ports, which another Ray on this machine may hold)
        from ray.cluster_utils import Cluster

        local = Cluster(initialize_head=True, head_node_args={"num_cpus": os.cpu_count() or 1})
        address = local.address
    joined = not ray.is_initialized()
    if joined:
        connect(address)
    try:
        task = ray.remote(num_cpus=1)(simulate_run)
        refs = [task.remote(r.doc) for r in runs]
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            if progress:
                progress(len(runs) - len(pending), len(runs), runs[index[done[0]]].label)
        return ray.get(refs)
    finally:
        if joined:
            ray.shutdown()  # disconnects; a cluster given by address keeps running
        if local is not None:
            local.shutdown()
