"""Strict FCFS's own loop (sim/fcfs_loop.py), in Python and compiled (sim/fcfs_kernel.py), against the
general one: same records, series, summary, bytes."""

import numpy as np
import pytest

from dlsched.cluster import Cluster
from dlsched.perf.default import default_perf_model
from dlsched.policies.registry import make_policy
from dlsched.report.io import write_results
from dlsched.sim import SimConfig, Simulator
from dlsched.sim import fcfs_compiled, fcfs_loop
from dlsched.workload.job import JobSpec
from dlsched.workload.synthetic import philly_at_load


def _run(monkeypatch, cluster, jobs, fast, policy="fcfs", progress=None, **cfg):
    """``fast``: False (the general loop), True or "python" (strict FCFS's Python loop), "compiled"."""
    monkeypatch.setenv("DLSCHED_FCFS_LOOP", "1" if fast else "0")
    monkeypatch.setenv("DLSCHED_FCFS_KERNEL", "1" if fast == "compiled" else "0")
    if fast == "compiled":  # forced at any size, its growing arrays started tiny: every growth path runs
        pytest.importorskip("numba")
        monkeypatch.setattr(fcfs_compiled, "SIZES", {"series": 4, "prices": 2, "heap": 4, "progress_steps": 7})
    sim = Simulator(cluster, make_policy(policy), jobs, perf=default_perf_model(cluster),
                    config=SimConfig(record_events=False, **cfg))
    used = fcfs_loop.applies(sim)
    result = sim.run(progress=progress)
    if fast and used:
        assert result.stats["loop"] == ("fcfs-compiled" if fast == "compiled" else "fcfs")
    return result, used, sim


def _same(a, b, tmp_path):
    assert a.records == b.records
    assert a.series == b.series
    assert a.summary == b.summary
    assert a.stats["events"] == b.stats["events"] and a.stats["schedule_calls"] == b.stats["schedule_calls"]
    for name, r in (("a", a), ("b", b)):
        write_results(tmp_path / name, r.records, r.series, r.summary, {})
    for f in ("jobs.csv", "series.csv", "summary.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


@pytest.mark.parametrize("loop", ["python", "compiled"])
@pytest.mark.parametrize("cluster_name,n,days,pin", [("crius-sim", 1500, 0.02, False),
                                                     ("crius-testbed", 600, 0.5, True)])
def test_fcfs_loop_matches_the_general_loop(monkeypatch, tmp_path, cluster_name, n, days, pin, loop):
    c = Cluster.load(cluster_name)
    jobs = philly_at_load(c, n, seed=3, load=None, days=days, pin_gpu_types=pin)  # a queue builds up
    seen = []
    fast, used, _ = _run(monkeypatch, c, jobs, loop, progress=lambda *a: seen.append(a))
    ref, ref_used, _ = _run(monkeypatch, c, jobs, False)
    assert used and not ref_used
    assert fast.summary["finished"] == n and fast.summary["avg_queue"] > 0  # jobs queued: decisions mattered
    assert seen[-1][1:] == (n, n)
    _same(fast, ref, tmp_path)


@pytest.mark.parametrize("loop", ["python", "compiled"])
def test_fcfs_loop_edge_cases_match(monkeypatch, tmp_path, loop):
    # no start overhead (progress from the start, no ready event), simultaneous arrivals and ends,
    # pinned types, and a request no node set can hold: left queued, recorded unfinished
    c = Cluster.load("crius-testbed")
    jobs = [JobSpec("a", 0.0, "resnet50", 40, 32, total_iterations=100),
            JobSpec("b", 0.0, "resnet50", 8, 32, total_iterations=100, gpu_type="A10"),
            JobSpec("c", 5.0, "vgg16", 2, 64, total_iterations=50, gpu_type="A40"),
            JobSpec("d", 5.0, "resnet50", 1, 32, total_iterations=10),
            JobSpec("e", 7.0, "resnet50", 33, 32, total_iterations=10, gpu_type="A40"),
            JobSpec("f", 8.0, "resnet50", 1, 32, total_iterations=10)]
    for overhead in (0.0, 30.0):
        fast, used, _ = _run(monkeypatch, c, jobs, loop, start_overhead_s=overhead)
        ref, _, _ = _run(monkeypatch, c, jobs, False, start_overhead_s=overhead)
        assert used
        by = {r.job_id: r for r in fast.records}
        assert by["e"].status == "unfinished" and by["f"].status == "unfinished"  # strict: f waits behind e
        _same(fast, ref, tmp_path / str(overhead))


def test_compiled_placement_matches_pick_gpu_ids():
    # the kernel's placement against ``pick_gpu_ids`` on one free map after random starts and ends:
    # best-fit node, one rack, across racks, across types (unpinned jobs bigger than a type's free)
    pytest.importorskip("numba")
    from dlsched.cluster.freemap import FreeMap
    from dlsched.cluster.placement import pick_gpu_ids
    from dlsched.sim import fcfs_kernel as K

    c = Cluster.load("crius-sim")
    fm = FreeMap(c)
    topo = fcfs_compiled._topology(c)
    parts = [topo[topo[i]:topo[i + 1]] for i in range(len(K.TOPO))]  # gpu_node first: pick needs the rest
    scr = np.zeros((4, max(c.num_gpus, c.num_nodes)), np.int64)
    rng = np.random.default_rng(7)
    held, kinds = [], set()
    for step in range(3000):
        if held and (rng.random() < 0.45 or fm.total_free < 64):
            fm.release(held.pop(int(rng.integers(len(held)))))
            continue
        n = int(rng.choice([1, 2, 3, 4, 8, 12, 16, 24, 32, 48, 64, 100, 200]))
        ty = None if rng.random() < 0.5 else int(rng.integers(len(c.gpu_types)))
        want = pick_gpu_ids(fm, n, ty)
        occ = (fm.occupancy > 0).astype(np.int8)
        got = K.pick(n, -1 if ty is None else ty, len(c.gpu_types), fm.type_free.astype(np.int64), fm.total_free,
                     occ, fm.node_free.astype(np.int64), fm.rack_type_free.astype(np.int64), *parts[1:],
                     scr[0], scr[1], scr[2], scr[3])
        assert (scr[0, :got].tolist() if got else None) == want, (step, n, ty)
        if want is not None:
            nodes = {int(c.gpu_node[g]) for g in want}
            racks = {int(c.node_rack[nd]) for nd in nodes}
            kinds.add("node" if len(nodes) == 1 else "rack" if len(racks) == 1 else "racks")
            kinds.add("types" if len({int(c.node_type[nd]) for nd in nodes}) > 1 else "type")
            gl = tuple(sorted(want))
            fm.allocate(gl)
            held.append(gl)
    assert kinds == {"node", "rack", "racks", "type", "types"}


def test_fcfs_loop_only_where_it_gives_the_same_results(monkeypatch):
    c = Cluster.load("crius-testbed")
    jobs = philly_at_load(c, 20, seed=1, load=1.0)
    assert _run(monkeypatch, c, jobs, True)[1]
    assert not _run(monkeypatch, c, jobs, True, policy="fcfs-backfill")[1]
    assert not _run(monkeypatch, c, jobs, True, debug=True)[1]
    assert not _run(monkeypatch, c, jobs, True, max_time=100.0)[1]
    monkeypatch.setenv("DLSCHED_FCFS_LOOP", "1")
    sim = Simulator(c, make_policy("fcfs"), jobs, perf=default_perf_model(c))  # keeps the event log
    assert not fcfs_loop.applies(sim)
