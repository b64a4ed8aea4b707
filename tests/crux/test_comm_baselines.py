"""Baselines as their papers define them: TACCL*'s distance priorities, Varys's MADD rates."""

import pytest

from dlsched.comm import make_comm_policy
from dlsched.comm.base import CommFlow, CommJob, CommView
from dlsched.comm.scheduled import build_view
from dlsched.comm.varys import Varys, madd_rates
from dlsched.network.contention import FlowContention
from dlsched.network.maxmin import maxmin_rates
from dlsched.network.topologies import clos


def near_and_far():
    """A ring inside one ToR (hosts 0, 1) and one across ToRs (hosts 0, 2): they meet on host 0's NIC.
    The near job moves few bytes (high GPU intensity), the far one many."""
    fc = FlowContention(clos(4, 2, 1, nic_gbps=200.0), seed=0)
    fc.add_placed("near", [(0, 1), (1, 1)], 2e8, 0.5, 0.05)
    fc.add_placed("far", [(0, 0), (2, 0)], 4e9, 0.4, 0.2)
    return build_view(fc, {"near": (2, 0.5, 0.05), "far": (2, 0.4, 0.2)}, {"near": 1, "far": 2})


def test_taccl_puts_the_longer_distance_first_where_crux_puts_intensity_first():
    view = near_and_far()
    assert view.jobs["near"].intensity > view.jobs["far"].intensity
    taccl = make_comm_policy("taccl", levels=8, reserved=2).assign(view)
    crux = make_comm_policy("crux", levels=8, reserved=2).assign(view)
    assert taccl["far"].level < taccl["near"].level and min(a.level for a in taccl.values()) == 2
    assert crux["near"].level < crux["far"].level
    # both choose paths (TACCL*'s other half): every flow pinned
    assert all(a.paths is not None for a in taccl.values())


def test_taccl_distance_classes_share_a_level_and_clamp_to_the_usable_ones():
    from dlsched.comm.taccl import distance_levels

    got = distance_levels({"a": 6, "b": 4, "c": 4, "d": 2, "e": 0}, usable=2, offset=1)
    assert got == {"a": 1, "b": 2, "c": 2, "d": 2, "e": 2}


def one_link(sizes: dict[str, float], capacity: float = 10.0) -> CommView:
    """Coflows of one flow each over link 0 (capacity bytes/s), bytes per iteration as given."""
    jobs = {j: CommJob(j, 8, 1.0, 0.5, b / capacity, 0.5, (CommFlow(b, [(0,)], 0),), i + 1)
            for i, (j, b) in enumerate(sizes.items())}
    return CommView(jobs, (capacity,), frozenset({0}))


def test_madd_by_hand_on_two_coflows():
    # link 0: 10 B/s, link 1: 5 B/s.  A: one flow of 20 B over links 0 and 1: Gamma_A = max(20/10, 20/5)
    # = 4 s.  B: one flow of 30 B over link 0: Gamma_B = 3 s.  SEBF serves B first at 30/3 = 10 B/s,
    # which fills link 0, so A waits (rate 0).
    jobs = {"A": CommJob("A", 8, 1.0, 0.5, 4.0, 0.5, (CommFlow(20.0, [(0, 1)], 0),), 1),
            "B": CommJob("B", 8, 1.0, 0.5, 3.0, 0.5, (CommFlow(30.0, [(0,)], 0),), 2)}
    view = CommView(jobs, (10.0, 5.0), frozenset({0, 1}))
    assert madd_rates(view) == {"B": [10.0], "A": [0.0]}
    # with B gone part-way, A alone: 20/4 = 5 B/s on its bottleneck (link 1)
    assert madd_rates(CommView({"A": jobs["A"]}, (10.0, 5.0), frozenset({0, 1}))) == {"A": [5.0]}


def test_varys_levels_give_the_flow_model_madd_rates():
    # three coflows on one 10 B/s link with one usable hardware level: Varys still orders them (rates are
    # set at the hosts), smallest bottleneck first takes the link; MADD gives 10, 0, 0 where max-min is 10/3
    view = one_link({"x": 30.0, "y": 10.0, "z": 20.0})
    plan = Varys(levels=3, reserved=2).assign(view)
    assert plan["y"].level < plan["z"].level < plan["x"].level
    ids = sorted(view.jobs)
    rates = maxmin_rates([[(0, 1.0)] for _ in ids], [10.0], [10.0] * 3, [plan[j].level for j in ids])
    want = madd_rates(view)
    assert rates == pytest.approx([want[j][0] for j in ids])
    assert want == {"y": [10.0], "z": [0.0], "x": [0.0]}


def test_varys_level_of_a_job_does_not_move_when_another_arrives():
    a = Varys().assign(one_link({"x": 30.0, "y": 10.0}))
    b = Varys().assign(one_link({"x": 30.0, "y": 10.0, "w": 20.0}))
    assert a["x"].level == b["x"].level and a["y"].level == b["y"].level


def test_sincronia_scales_weights_as_bssi_does():
    # link 0 and link 1 at 1 B/s.  A: 3 s on link 0.  B: 2 s on each.  C: 3 s on link 1.  Both links carry
    # 5 s; the lower id is the bottleneck.  On link 0, A has the smallest weight per demand (1/3): last.
    # Scaling: B's weight 1 - 1 * 2/3 = 1/3.  Then link 1 (5 s against link 0's 2): B's 1/3 / 2 = 1/6
    # beats C's 1/3, so B goes next to last; unscaled, C (more bytes there) would.  First to last: C, B, A.
    from dlsched.comm.sincronia import bssi_order

    jobs = {"A": CommJob("A", 8, 1.0, 0.5, 3.0, 0.5, (CommFlow(3.0, [(0,)], 0),), 1),
            "B": CommJob("B", 8, 1.0, 0.5, 2.0, 0.5, (CommFlow(2.0, [(0, 1)], 0),), 2),
            "C": CommJob("C", 8, 1.0, 0.5, 3.0, 0.5, (CommFlow(3.0, [(1,)], 0),), 3)}
    assert bssi_order(CommView(jobs, (1.0, 1.0), frozenset({0, 1}))) == ["C", "B", "A"]


def test_sincronia_bottlenecks_are_host_ports_not_fabric_links():
    # A sends 3 s between ports 0 and 3 over fabric link 5; B and C send 2 s each between their own ports
    # over fabric link 1, where ECMP hashed both.  Sincronia's big switch never sees link 1: the busiest
    # port is A's, so A goes last.  Weighing every link, link 1 (4 s) is the bottleneck and B goes last.
    from dlsched.comm.sincronia import bssi_order, port_demand

    jobs = {"A": CommJob("A", 8, 1.0, 0.5, 3.0, 0.5, (CommFlow(3.0, [(0, 5, 3)], 0),), 1),
            "B": CommJob("B", 8, 1.0, 0.5, 2.0, 0.5, (CommFlow(2.0, [(2, 1, 4)], 0),), 2),
            "C": CommJob("C", 8, 1.0, 0.5, 2.0, 0.5, (CommFlow(2.0, [(6, 1, 7)], 0),), 3)}
    view = CommView(jobs, (1.0,) * 8, frozenset(range(8)))
    assert port_demand(view, "A") == {0: 3.0, 3: 3.0}
    assert bssi_order(view)[-1] == "A"
    assert bssi_order(view, bottlenecks="links")[-1] == "B"


def test_path_choice_order_is_intensity_for_crux_and_distance_for_taccl(monkeypatch):
    # CRUX section 4.1: "from the most GPU-intensive jobs to the least"; TACCL* (footnote 3) puts the
    # traffic with the longer transmission distance first, so its greedy takes the far job first
    import dlsched.comm.crux as crux_mod
    import dlsched.comm.taccl as taccl_mod

    seen = {}

    def record(name):
        def choose(view, order, memo=None):
            seen[name] = [j.job_id for j in order]
            return {}
        return choose

    monkeypatch.setattr(crux_mod, "least_congested_per_job", record("crux"))
    monkeypatch.setattr(taccl_mod, "least_congested_per_job", record("taccl"))
    view = near_and_far()
    make_comm_policy("crux", levels=8, reserved=2).assign(view)
    make_comm_policy("taccl", levels=8, reserved=2).assign(view)
    assert seen == {"crux": ["near", "far"], "taccl": ["far", "near"]}
