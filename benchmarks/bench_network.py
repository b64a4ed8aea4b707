"""Network layer speed: the contention solve of a 50-job group, and a two-week FCFS run with it on.

Targets (issue 17): a group of 50 jobs solved in under 10 ms; a 13,000-job,
two-week FCFS run on ``crius-sim`` with ``--network flow`` in under 2 minutes.
Prints the figures with the parameters that produced them.  Run:

    python benchmarks/bench_network.py [--group 50] [--scaling 200,400] [--jobs 13000] [--days 14] [--skip-run]

The jobs are ``philly_like``'s benchmark trace, unchanged when the CLI's default workload moved
to an offered load (docs/workloads.md): its figures stay comparable with earlier passes.  From
the command line the same jobs are ``dlsched simulate --workload benchmark [--jobs N --days D]``.

The group: jobs of 2-4 hosts each on a two-layer Clos (8 hosts per ToR, 2
aggregation switches, 4:1 oversubscribed, 100 Gb/s NICs), placed at random
(seed 0) until 50 of them form one contention group; iteration times from the
perf model's range (0.1-1 s, 5-40% exposed communication).  Figures: the
strict-priority max-min rate solve with all 50 communicating, the whole
periodic micro-simulation of the group, the contention solve the engine runs
for it (the micro-simulation up to ``MAX_SIMULATED_JOBS`` jobs, the
all-communicating bound above), a cached re-solve, and the bound itself; the
same for a group of 100 jobs; the micro-simulation alone on the larger groups
of ``--scaling`` (on 64 hosts per 100 jobs).  Times are the best of ``--repeat`` runs, as
CPU seconds of this process (``time.process_time``: the machine is shared) and
wall seconds, after one untimed call: the micro-simulation is compiled with
numba on a process's first use (or loaded from numba's cache), which
``kernel_first_call`` times apart in fresh interpreters (compile into an empty
cache, then load from it).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

from dlsched.network import FlowContention, clos
from dlsched.network.maxmin import maxmin_rates
from dlsched.network.microsim import MAX_SIMULATED_JOBS, all_communicating, simulate_group


def build_group(n_jobs: int, seed: int = 0) -> tuple[FlowContention, list[str]]:
    hosts = max(64, n_jobs * 64 // 100)  # 64 hosts up to 100 jobs; room for larger groups beyond
    rng = np.random.default_rng(seed)
    g = clos(hosts, 8, 2, nic_gbps=100, nics_per_host=1, gpus_per_host=8, oversubscription=4)
    fc = FlowContention(g, seed)
    free = {h: list(range(8)) for h in range(hosts)}
    ids: list[str] = []
    while True:
        k = int(rng.integers(2, 5))
        hosts = [int(h) for h in rng.choice([h for h in free if free[h]], size=k, replace=False)]
        place = [(h, free[h].pop()) for h in hosts]
        for h in hosts:
            if not free[h]:
                del free[h]
        total = float(rng.uniform(0.1, 1.0))
        jid = f"j{len(ids)}"
        fc.add_placed(jid, place, float(rng.uniform(50, 500)) * 2**20, total, total * float(rng.uniform(0.05, 0.4)))
        ids.append(jid)
        group = fc._component(jid)
        if len(group) >= n_jobs or len(free) < 4:
            return fc, group


def time_scaling(sizes: list[int]) -> list[dict]:
    """The micro-simulation alone on larger groups (one timed call each, after a warm-up)."""
    rows = []
    for n in sizes:
        _, group, args = group_args(n)
        simulate_group(*args)
        cpu, wall, res = _best(lambda: simulate_group(*args), 1)
        rows.append({"group_jobs": len(group), "shared_links": len(args[4]), "events": res.events,
                     "microsim_ms": {"cpu": cpu, "wall": wall}})
    return rows


def _best(fn, repeat: int) -> tuple[float, float, object]:
    """(best CPU ms, best wall ms, last result) of ``repeat`` calls of ``fn``."""
    cpu, wall, out = [], [], None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return round(1e3 * min(cpu), 3), round(1e3 * min(wall), 3), out


def group_args(n_jobs: int) -> tuple[FlowContention, list[str], tuple]:
    """The benchmark group of ``n_jobs`` and ``simulate_group``'s arguments for it (all at level 0)."""
    fc, group = build_group(n_jobs)
    jobs = [fc._jobs[j] for j in group]
    shared = sorted(l for l in set().union(*(set(j.links.tolist()) for j in jobs)) if fc._contended(l))
    index = {l: i for i, l in enumerate(shared)}
    job_links = [[(index[l], float(c)) for l, c in zip(j.links.tolist(), j.counts.tolist()) if l in index]
                 for j in jobs]
    capacity = [float(fc._capacity[l]) for l in shared]
    caps = [j.solo_rate for j in jobs]
    args = ([j.total - j.comm for j in jobs], [j.start for j in jobs], [j.D for j in jobs], job_links, capacity,
            caps, [0] * len(jobs))
    return fc, group, args


def time_group(n_jobs: int, repeat: int) -> dict:
    fc, group, args = group_args(n_jobs)
    jobs = [fc._jobs[j] for j in group]
    job_links, capacity, caps = args[3], args[4], args[5]

    def engine():
        fc._cache.clear()
        fc._solve(group)

    simulate_group(*args)  # compiles or loads the kernel: timed apart, by ``time_compile``
    rate_cpu, rate_wall, _ = _best(lambda: maxmin_rates(job_links, capacity, caps), repeat)
    sim_cpu, sim_wall, res = _best(lambda: simulate_group(*args), repeat)
    bound_cpu, bound_wall, bound = _best(lambda: all_communicating(*args), repeat)
    eng_cpu, eng_wall, _ = _best(engine, repeat)
    hit_cpu, hit_wall, _ = _best(lambda: fc._solve(group), repeat)
    slow = [fc.iteration_time(j)[0] / fc._jobs[j].total for j in group]
    sim_slow = [t / j.total for t, j in zip(res.iteration_s, jobs)]
    bound_slow = [t / j.total for t, j in zip(bound.iteration_s, jobs)]
    return {"group_jobs": len(group), "shared_links": len(capacity),
            "maxmin_solve_ms": {"cpu": rate_cpu, "wall": rate_wall},
            "microsim_ms": {"cpu": sim_cpu, "wall": sim_wall}, "microsim_events": res.events,
            "engine_method": "microsim" if len(group) <= MAX_SIMULATED_JOBS else "all-communicating bound",
            "engine_solve_ms": {"cpu": eng_cpu, "wall": eng_wall},
            "cached_resolve_ms": {"cpu": hit_cpu, "wall": hit_wall},
            "bound_ms": {"cpu": bound_cpu, "wall": bound_wall},
            "slowdown_median_microsim": round(float(np.median(sim_slow)), 4),
            "slowdown_max_microsim": round(max(sim_slow), 4),
            "slowdown_median_bound": round(float(np.median(bound_slow)), 4),
            "slowdown_median_engine": round(float(np.median(slow)), 4)}


_FIRST_CALL = """
import json, time
from dlsched.network.microsim import simulate_group
c0 = time.process_time()
import numba
c1 = time.process_time()
simulate_group([1.0, 1.0], [0.5, 0.5], [0.5, 0.5], [[(0, 1.0)], [(0, 1.0)]], [1.0], [1.0, 1.0], [0, 0])
c2 = time.process_time()
print(json.dumps({"import_numba_cpu_s": round(c1 - c0, 3), "first_call_cpu_s": round(c2 - c1, 3)}))
"""


def time_compile() -> dict:
    """Seconds of a fresh process's first group simulation: compiling the kernel, then loading it cached.

    Each runs in its own interpreter, first with an empty numba cache directory (the first call
    compiles and writes the cache), then with that directory filled (it loads); importing
    numba, which either pays once, is timed apart.  CPU seconds of the child.
    """
    import os
    import subprocess
    import sys
    import tempfile

    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench-numba-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
        for label in ("compile_s", "cached_load_s"):
            run = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, capture_output=True, text=True,
                                 check=True)
            out[label] = json.loads(run.stdout.strip().splitlines()[-1])
    return out


def time_run(n_jobs: int, days: float, seed: int) -> dict:
    from dlsched.cluster import Cluster
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.registry import make_policy
    from dlsched.sim import SimConfig, Simulator
    from dlsched.workload.synthetic import philly_like

    cluster = Cluster.load("crius-sim")
    jobs = philly_like(cluster, n_jobs=n_jobs, days=days, seed=seed)
    out = {}
    for mode in ("off", "flow"):
        fc = FlowContention.for_cluster(cluster, seed) if mode == "flow" else None
        sim = Simulator(cluster, make_policy("fcfs"), jobs, perf=default_perf_model(cluster),
                        config=SimConfig(seed=seed), contention=fc)
        w0, c0 = time.perf_counter(), time.process_time()
        res = sim.run()
        out[mode] = {"wall_s": round(time.perf_counter() - w0, 2), "cpu_s": round(time.process_time() - c0, 2),
                     "finished": res.summary["finished"],
                     "avg_jct_h": round(res.summary["avg_jct"] / 3600, 3),
                     "comm_h": round(sum(r.comm_time for r in res.records) / 3600, 1)}
        if fc is not None:
            out[mode].update(fc.stats, link_rows=len(res.links))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--group", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=13000)
    ap.add_argument("--days", type=float, default=14.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scaling", default="200,400", help="larger group sizes to time the micro-simulation on")
    ap.add_argument("--skip-run", action="store_true", help="only the group solve")
    args = ap.parse_args()
    out = {"params": {"group": args.group, "jobs": args.jobs, "days": args.days, "seed": args.seed,
                      "python": platform.python_version(), "machine": platform.machine()},
           "max_simulated_jobs": MAX_SIMULATED_JOBS,
           "kernel_first_call": time_compile(),
           "group_solve": time_group(args.group, args.repeat),
           "group_of_100": time_group(100, args.repeat),
           "larger_groups": time_scaling([int(n) for n in args.scaling.split(",") if n])}
    print(json.dumps(out, indent=2), flush=True)
    if not args.skip_run:
        out["fcfs_crius_sim"] = time_run(args.jobs, args.days, args.seed)
        print(json.dumps(out["fcfs_crius_sim"], indent=2))


if __name__ == "__main__":
    main()
