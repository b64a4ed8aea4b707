"""CRUX's priority assignment and its DAG compression change iteration times where jobs still contend."""

from dlsched.comm import make_comm_policy
from dlsched.comm.scheduled import build_view
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos


def three_on_one_uplink():
    """Three 2-host rings from ToR 0 to ToR 1 over one aggregation switch at 3:1: every ring crosses the
    same single-port uplink, so no path choice parts them; their traffic and overlap differ."""
    fc = FlowContention(clos(6, 3, 1, nic_gbps=200.0, oversubscription=3.0), seed=0)
    placed = {"a": (8, 0.5, 0.2), "b": (8, 0.2, 0.05), "c": (8, 0.3, 0.1)}
    fc.add_placed("a", [(0, 0), (3, 0)], 2e9, 0.5, 0.2)
    fc.add_placed("b", [(1, 0), (4, 0)], 1e9, 0.2, 0.05)
    fc.add_placed("c", [(2, 0), (5, 0)], 1.5e9, 0.3, 0.1)
    return fc, placed


def run(name: str, levels: int = 4):
    fc, placed = three_on_one_uplink()
    view = build_view(fc, placed, {"a": 1, "b": 2, "c": 3})
    plan = make_comm_policy(name, levels=levels, reserved=2).assign(view)
    for j, a in plan.items():
        fc.set_priority(j, a.level)
    return {j: a.level for j, a in plan.items()}, {j: fc.iteration_time(j) for j in placed}


def test_priorities_change_iteration_times_over_path_selection_alone():
    (lv_ps, t_ps), (lv_pa, t_pa) = run("crux-ps"), run("crux-ps-pa")
    assert len(set(lv_ps.values())) == 1 and len(set(lv_pa.values())) == 3  # one level; one per job
    assert t_pa != t_ps
    top = min(lv_pa, key=lv_pa.get)
    assert t_pa[top][0] < t_ps[top][0]  # the job served first gains


def test_compression_to_two_levels_merges_two_contending_jobs_and_costs_time():
    # three jobs on one link form a chain of three in the contention DAG: two levels cannot cut every edge
    (lv_pa, t_pa), (lv_full, t_full) = run("crux-ps-pa"), run("crux", levels=4)
    assert len(set(lv_full.values())) == 2
    assert t_full != t_pa
    # with six usable levels the DAG cut is the uncompressed order itself: compression costs nothing
    lv6, t6 = run("crux", levels=8)
    assert t6 == t_pa and sorted(lv6, key=lv6.get) == sorted(lv_pa, key=lv_pa.get)


def test_crux_pa_orders_jobs_on_their_ecmp_paths():
    # the paper's CRUX-PA: the same priorities as full CRUX, no path pinned
    fc, placed = three_on_one_uplink()
    view = build_view(fc, placed, {"a": 1, "b": 2, "c": 3})
    pa = make_comm_policy("crux-pa", levels=8, reserved=2).assign(view)
    full = make_comm_policy("crux", levels=8, reserved=2).assign(view)
    assert all(a.paths is None for a in pa.values())
    assert {j: a.level for j, a in pa.items()} == {j: a.level for j, a in full.items()}
