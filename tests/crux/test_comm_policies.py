"""Communication policies on small flow-model cases: contract, CRUX steps, baselines."""

import pytest

from dlsched.comm import ScheduledContention, make_comm_policy
from dlsched.comm.base import usable_levels
from dlsched.comm.correction import _factor
from dlsched.comm.registry import COMM_POLICIES
from dlsched.comm.scheduled import build_view
from dlsched.experiments import crux_micro
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos

import numpy as np


def two_jobs_one_uplink():
    """Two 2-host jobs whose rings cross ToR uplinks; one aggregation switch, so they must share."""
    g = clos(4, 2, 1, nic_gbps=200.0, oversubscription=2.0)
    fc = FlowContention(g, seed=0)
    # heavy: long compute, big traffic; light: short compute, smaller traffic
    fc.add_placed("a", [(0, 0), (2, 0)], 2e9, 0.5, 0.2)
    fc.add_placed("b", [(1, 0), (3, 0)], 1e9, 0.2, 0.05)
    return fc


def test_correction_factor_prefers_the_shorter_iteration():
    # the reference (4 s iteration, 2 s communication) against a 2 s job with 1 s communication:
    # served first, the short job moves more of its own data, so k > 1 (section 4.2, Fig. 11)
    assert _factor((4.0, 2.0, 2.0), (2.0, 1.0, 1.0)) > 1.0
    # the same job with its communication overlapped by computation (starting early in the iteration)
    # is less sensitive to delay, so its factor is lower (Fig. 12)
    assert _factor((2.0, 1.5, 0.5), (4.0, 2.0, 0.5)) < _factor((2.0, 1.5, 0.5), (4.0, 2.0, 2.0))


def test_every_policy_returns_valid_levels_and_paths():
    fc = two_jobs_one_uplink()
    view = build_view(fc, {"a": (8, 0.5, 0.2), "b": (8, 0.2, 0.05)}, {"a": 1, "b": 2})
    for name in COMM_POLICIES:
        plan = make_comm_policy(name, levels=4, reserved=1).assign(view)
        assert set(plan) == {"a", "b"}, name
        for j, a in plan.items():
            if name not in ("varys", "crux-ps-pa"):  # an order, not hardware queues (rates at hosts; uncompressed)
                assert 0 <= a.level < 4
            for i, c in (a.paths or {}).items():
                assert 0 <= c < len(view.jobs[j].flows[i].candidates)


def test_crux_separates_contending_jobs_and_the_ablations_do_less():
    fc = two_jobs_one_uplink()
    view = build_view(fc, {"a": (8, 0.5, 0.2), "b": (8, 0.2, 0.05)}, {"a": 1, "b": 2})
    full = make_comm_policy("crux", levels=8, reserved=2).assign(view)
    assert full["a"].level != full["b"].level and min(a.level for a in full.values()) >= 2
    ps = make_comm_policy("crux-ps", levels=8, reserved=2).assign(view)
    assert ps["a"].level == ps["b"].level
    assert make_comm_policy("ecmp").assign(view)["a"].paths is None


def test_levels_must_leave_room():
    with pytest.raises(ValueError, match="reserved"):
        usable_levels(2, 2)
    with pytest.raises(ValueError, match="unknown communication policy"):
        make_comm_policy("nope")


def test_scheduled_contention_applies_levels_and_reports_changes():
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.base import Allocation
    from dlsched.workload.job import JobSpec

    cluster = Cluster.load("crux-testbed")
    perf = default_perf_model(cluster)
    first = [n.first_gpu for n in cluster.nodes]
    sc = ScheduledContention(FlowContention.for_cluster(cluster), make_comm_policy("crux"))
    placed = {}
    for jid, hosts in [("x", (0, 3)), ("y", (0, 3))]:
        local = (0, 2, 4, 6) if jid == "x" else (1, 3, 5, 7)
        gpus = [first[h] + g for h in hosts for g in local]
        spec = JobSpec(jid, 0.0, "bert-large", len(gpus), total_iterations=10)
        placed[jid] = (spec, Allocation.of(gpus), perf.price(spec, gpus))
    sc.add("x", *placed["x"])
    alone = sc.iteration_time("x")
    touched = sc.add("y", *placed["y"])
    assert "x" in touched or "y" in touched
    lv = sc.levels()
    assert lv["x"] != lv["y"]  # they share every NIC: CRUX puts them on different levels
    assert set(sc.remove("y")) <= {"x"}
    assert sc.iteration_time("x") == alone


def test_micro_benchmark_case_is_deterministic_and_bounded():
    case = crux_micro.make_case(np.random.default_rng(0))
    assert len(case.jobs) == crux_micro.JOBS
    s = crux_micro.score(case)
    assert 0 < s <= 1.0 + 1e-9
    assert crux_micro.score(case) == s


def test_testbed_nic_case_crux_beats_ecmp_and_stays_under_alone():
    from dlsched.experiments.crux import TESTBED, testbed_case

    jobs = TESTBED["PCIe: BERT 8 + BERT 8 interleaved"]
    ecmp, _ = testbed_case(jobs, None)
    crux, each = testbed_case(jobs, "crux")
    alone = min(testbed_case([j], None)[0] for j in jobs)
    assert ecmp < crux <= alone + 1e-9
    assert set(each) == {"bert1", "bert2"}


def test_cassini_gives_a_clashing_job_its_earliest_neighbours_level_whatever_the_set_order():
    # a and b (light) interleave on one link, so they get distinct levels; every later heavy job clashes
    # with both and must share the earliest-placed one's level, not whichever a set yields first
    from dlsched.comm.base import CommFlow, CommJob, CommView
    from dlsched.comm.cassini import Cassini

    def job(name, arrival, duty):
        return CommJob(name, 8, 1.0, 1.0 - duty, duty, 1.0 - duty, (CommFlow(1e6, [(0,)], 0),), arrival)

    jobs = [job("a", 1, 0.1), job("b", 2, 0.1)] + [job(f"heavy{i}", 3 + i, 0.95) for i in range(12)]
    view = CommView({j.job_id: j for j in jobs}, (1e9,), frozenset({0}))
    got = Cassini().assign(view)
    assert got["a"].level != got["b"].level
    assert all(got[f"heavy{i}"].level == got["a"].level for i in range(12))


def _moved_oracle(jobs, first):
    """The Python replay the compiled one replaced (same steps, same float operations in the same order)."""
    dt = min(j[0] for j in jobs) / 200.0
    steps = int(round(20 * max(j[0] for j in jobs) / dt))
    phase, left, started, moved = [0.0, 0.0], [0.0, 0.0], [False, False], [0.0, 0.0]
    for _ in range(steps):
        free = dt
        for i in (first, 1 - first):
            it, comm, start = jobs[i]
            if not started[i] and phase[i] >= start - 1e-12:
                started[i], left[i] = True, comm
            if started[i] and left[i] > 0 and free > 0:
                send = min(left[i], free)
                left[i] -= send
                moved[i] += send
                free -= send
        for i in range(2):
            it, comm, start = jobs[i]
            phase[i] += dt
            if started[i] and left[i] <= 1e-12 and phase[i] >= it - 1e-12:
                phase[i], started[i] = 0.0, False
    return moved


def test_compiled_replay_equals_the_python_one_bit_for_bit():
    from dlsched.comm.correction import _moved

    rng = np.random.default_rng(0)
    cases = [((3.0, 1.0, 2.0), (2.0, 1.0, 1.0)), ((1.0, 0.5, 0.5), (1.0, 0.5, 0.0))]
    for _ in range(40):
        pair = []
        for _ in range(2):
            it = round(float(rng.uniform(0.05, 2.0)), 3)
            comm = round(float(rng.uniform(0.0, it)), 3)
            pair.append((it, comm, round(it - comm * float(rng.uniform(0.0, 1.0)), 3)))
        cases.append(tuple(pair))
    for jobs in cases:
        for first in (0, 1):
            assert _moved(jobs, first) == _moved_oracle(jobs, first)


def test_cassini_staggers_only_jobs_whose_arcs_interleave():
    # a 1 s job sending 0.3 s leaves 0.7 s gaps: a 0.6 s transfer fits in one, a 2 s transfer does not,
    # though the duty cycles (0.3 + 0.5) sum below one
    from dlsched.comm.base import CommFlow, CommJob, CommView
    from dlsched.comm.cassini import Cassini

    def job(name, arrival, period, comm):
        return CommJob(name, 8, period, period - comm, comm, period - comm, (CommFlow(1e6, [(0,)], 0),), arrival)

    def levels(*jobs):
        got = Cassini().assign(CommView({j.job_id: j for j in jobs}, (1e9,), frozenset({0})))
        return got[jobs[0].job_id].level, got[jobs[1].job_id].level

    short = job("short", 1, 1.0, 0.3)
    a, b = levels(short, job("fits", 2, 2.0, 0.6))  # 0.3 + 0.6 <= 1.0: the arcs interleave
    assert a != b
    a, b = levels(short, job("long", 2, 4.0, 2.0))  # duty 0.3 + 0.5 <= 1, but 2 s cannot fit in a 0.7 s gap
    assert a == b
