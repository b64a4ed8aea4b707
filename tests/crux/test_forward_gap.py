"""A job whose flows need longer than its iteration alone still leaves its links idle during its forward
pass, so strict priority slows the levels below it instead of starving them for good."""

import dlsched.network.contention as contention
from dlsched.network.contention import FlowContention
from dlsched.network.topologies import clos


def two_rings(monkeypatch, forward_share: float):
    """"hi" needs 0.32 s of network time a 0.2 s iteration (its price hides communication the single-port
    3:1 uplink exposes); "lo" crosses the same uplink one level below."""
    monkeypatch.setattr(contention, "FORWARD_SHARE", forward_share)
    fc = FlowContention(clos(6, 3, 1, nic_gbps=200.0, oversubscription=3.0), seed=0)
    fc.add_placed("hi", [(0, 0), (3, 0)], 8e9, 0.2, 0.05)
    fc.add_placed("lo", [(1, 0), (4, 0)], 1e9, 0.3, 0.02)
    fc.set_priority("hi", 0)
    fc.set_priority("lo", 1)
    return fc.iteration_time("hi")[0], fc.iteration_time("lo")[0]


def test_the_forward_pass_leaves_a_gap_for_lower_levels(monkeypatch):
    hi, lo = two_rings(monkeypatch, 1.0 / 3.0)
    assert hi == 0.2  # served first, it keeps its price alone
    assert 0.3 < lo < 3 * 0.3  # slowed by the higher level, served in its forward passes


def test_without_the_gap_the_lower_level_is_starved(monkeypatch):
    # the rule before: communication capped at the whole iteration, sent without a pause
    hi, lo = two_rings(monkeypatch, 0.0)
    assert hi == 0.2
    assert lo > 100 * 0.3  # never finishes an iteration in the micro-simulation: its elapsed time
