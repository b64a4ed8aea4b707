"""CRUX's priority assignment and DAG compression change iteration times where jobs still contend."""

from dlsched.comm import make_comm_policy
from dlsched.comm.scheduled import build_view
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos

PLACED = {"a": (8, 0.5, 0.2), "b": (8, 0.2, 0.05), "c": (8, 0.3, 0.25)}


def three_jobs() -> FlowContention:
    """a and b share a 2:1 ToR uplink (one port: path selection cannot part them); c talks inside its own
    ToR, meets nobody, and has the lowest GPU intensity, so it ranks last."""
    fc = FlowContention(clos(6, 2, 1, nic_gbps=200.0, oversubscription=2.0), seed=0)
    fc.add_placed("a", [(0, 0), (2, 0)], 2e9, 0.5, 0.2)
    fc.add_placed("b", [(1, 0), (3, 0)], 1e9, 0.2, 0.05)
    fc.add_placed("c", [(4, 0), (5, 0)], 4e9, 0.3, 0.25)
    return fc


def times_under(name: str) -> dict[str, tuple[float, float]]:
    fc = three_jobs()
    view = build_view(fc, PLACED, {"a": 1, "b": 2, "c": 3})
    for j, a in make_comm_policy(name, levels=4, reserved=2).assign(view).items():
        fc.set_priority(j, a.level)
    return {j: fc.iteration_time(j) for j in PLACED}


def test_dag_compression_separates_contending_jobs_the_block_cut_puts_together():
    fc = three_jobs()
    view = build_view(fc, PLACED, {"a": 1, "b": 2, "c": 3})
    pa = make_comm_policy("crux-ps-pa", levels=4, reserved=2).assign(view)  # 2 usable levels
    full = make_comm_policy("crux", levels=4, reserved=2).assign(view)
    assert pa["a"].level == pa["b"].level  # equal blocks of the P order: {a, b}, {c}
    assert full["a"].level != full["b"].level  # the contention DAG's one edge a-b is cut


def test_priorities_and_compression_change_iteration_times():
    ps, pa, full = times_under("crux-ps"), times_under("crux-ps-pa"), times_under("crux")
    assert ps == pa  # one level for a and b in both: max-min on the shared uplink
    assert full != pa
    # the higher-priority job (b, the more GPU-intensive after correction) runs at its price alone
    assert full["b"] == (0.2, 0.05) and pa["b"][0] > 0.2 and full["a"][0] >= pa["a"][0]
    assert full["c"] == pa["c"] == (0.3, 0.25)
