"""The Gavel policies' speed-ups change no decision: skipped rounds and LP shortcuts give the
same schedule as solving every round and every LP, and ``gavel-admit``'s admission classes,
kept across calls, the same as its search over every admitted job rebuilt at each admission.

Run on a slice of Gavel's own trace on a small V100/P100/K80 cluster, so that the LP's
capacities bind (the shortcuts must step aside) and are slack at other times (they apply).
"""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.perf.default import default_perf_model
from dlsched.policies.gavel.policy import solve_max_throughput, unique_best
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.readers import read_trace

SPEC = """name: gavel-36
description: Gavel's physical-cluster shape, 12 V100 + 12 P100 + 12 K80
node_groups:
  - {name: v100, gpu: V100, nodes: 3, gpus_per_node: 4, intra: {kind: pcie}, nic_gbps: 25, nodes_per_rack: 3}
  - {name: p100, gpu: P100, nodes: 3, gpus_per_node: 4, intra: {kind: pcie}, nic_gbps: 25, nodes_per_rack: 3}
  - {name: k80, gpu: K80, nodes: 3, gpus_per_node: 4, intra: {kind: pcie}, nic_gbps: 25, nodes_per_rack: 3}
network:
  topology: tiered
"""


def test_unique_best_matches_the_lp_where_it_answers():
    w = [{0: 1.0, 1: 0.5}, {0: 1.0, 2: 0.3}, {1: 1.0, 0: 0.9}]
    assert unique_best(w, [2, 2, 4], [4, 4, 4]) == solve_max_throughput(w, [2, 2, 4], [4, 4, 4])
    assert unique_best(w, [4, 2, 4], [4, 4, 4]) is None  # type 0 over capacity: the LP decides
    assert unique_best([{0: 1.0, 1: 1.0}], [1], [4, 4]) is None  # a tie: the LP decides


def _gavel_slice(shared_dir, tmp_path):
    """A 36-GPU cluster and the first 60 jobs of Gavel's trace (skips when the trace is absent)."""
    trace = shared_dir / "anchors" / "traces" / "gavel-msr-seed_0_6214e9.csv"
    if not trace.is_file():
        pytest.skip(f"Gavel's trace is missing: {trace}")
    spec = tmp_path / "gavel-36.yaml"
    spec.write_text(SPEC)
    return Cluster.load(str(spec)), read_trace(trace).jobs[:60]


@pytest.mark.shared
@pytest.mark.parametrize("policy,options", [("gavel", {"lp": "flow"}), ("gavel", {"lp": "highs"}),
                                            ("gavel-admit", {})])
def test_fast_and_reference_schedules_are_identical(shared_dir, tmp_path, policy, options):
    cluster, jobs = _gavel_slice(shared_dir, tmp_path)
    runs = {}
    for fast in (True, False):
        # long rounds: fewer to simulate; HiGHS cold (warm starts may pick other optima: test_highs_lp.py)
        p = make_policy(policy, round_s=1800.0, **options)
        p.fast = fast
        res = Simulator(cluster, p, jobs, perf=default_perf_model(cluster), config=SimConfig(seed=0)).run()
        runs[fast] = ([r.row() for r in res.records], p.timings(), res.stats["schedule_calls"])
    assert runs[True][0] == runs[False][0]
    fast, ref = runs[True][1], runs[False][1]
    assert fast["lp_solves"] > 0
    if policy == "gavel":
        if options["lp"] == "highs":  # (lp=flow takes no shortcut: it starts from the last solution)
            assert fast["lp_shortcuts"] > 0  # both paths were exercised
            assert fast["lp_solves"] < ref["lp_solves"]
        assert fast["rounds_skipped"] > 0
        # the simulator skipped stable rounds itself (rounds_idle) instead of calling the policy
        assert runs[True][2] < runs[False][2]


@pytest.mark.parametrize("seed", range(30))
def test_unique_best_agrees_with_the_lp_on_random_jobs(seed):
    """Wherever the shortcut answers, HiGHS returns the same X (the shortcut claims a unique optimum)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    nj, nt = int(rng.integers(1, 40)), int(rng.integers(1, 4))
    w = [{t: float(v) for t, v in enumerate(rng.choice([0.0, 0.3, 0.6, 0.9, 1.0], size=nt))} for _ in range(nj)]
    sizes = [int(s) for s in rng.choice([1, 2, 4], size=nj)]
    cap = [int(c) for c in rng.integers(nj // 2, 3 * nj, size=nt)]
    short = unique_best(w, sizes, cap)
    if short is not None:
        assert short == solve_max_throughput(w, sizes, cap)


@pytest.mark.shared
def test_warm_started_gavel_runs_every_job_and_repeats_itself(shared_dir, tmp_path):
    """``--option lp=highs --option warm_start=true`` (off by default) solves warm and its runs are
    deterministic."""
    cluster, jobs = _gavel_slice(shared_dir, tmp_path)
    rows = []
    for _ in range(2):
        p = make_policy("gavel", round_s=1800.0, lp="highs", warm_start=True)
        res = Simulator(cluster, p, jobs, perf=default_perf_model(cluster), config=SimConfig(seed=0)).run()
        assert p.timings()["lp_warm_starts"] > 0
        assert {r.status for r in res.records} == {"finished"} and len(res.records) == len(jobs)
        rows.append([r.row() for r in res.records])
    assert rows[0] == rows[1]
    assert make_policy("gavel", lp="highs").warm_start is False  # HiGHS cold by default: the reference
