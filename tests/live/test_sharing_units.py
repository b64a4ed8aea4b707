"""GPU sharing live, without Ray: the time-slice turn keeper and a slot's acceptance rule."""

from __future__ import annotations

import time

import pytest

from dlsched.live.occupancy import PhysicalMap
from dlsched.live.slicing import TurnKeeper


def test_turns_alternate_by_the_quantum_least_served_first():
    k = TurnKeeper(quantum_s=2.0)
    sliced = {"a": (0,), "b": (0,)}
    order = {"a": (0.0,), "b": (1.0,)}
    seen = [(t, k.update(sliced, order, float(t))) for t in range(0, 9)]
    holders = [next(iter(on)) for _, on in seen]
    assert all(len(on) == 1 for _, on in seen)  # never both on one GPU
    assert holders == ["a", "a", "b", "b", "a", "a", "b", "b", "a"]
    assert k.served == {"a": 4.0, "b": 4.0}


def test_a_job_alone_keeps_its_turn_and_a_newcomer_starts_level():
    k = TurnKeeper(quantum_s=1.0)
    assert k.update({"a": (0,)}, {}, 0.0) == {"a"}
    assert k.update({"a": (0,)}, {}, 5.0) == {"a"}  # nobody else wants GPU 0: no switch
    # b joins level with a (5 s served), not at zero, so it does not take every turn from now on
    assert k.update({"a": (0,), "b": (0,)}, {"a": (0,), "b": (1,)}, 5.5) == {"a"}
    assert k.served["b"] == k.served["a"]
    assert k.update({"a": (0,), "b": (0,)}, {}, 6.0) == {"b"}


def test_overlapping_gpu_sets_never_run_at_once():
    k = TurnKeeper(quantum_s=1.0)
    sliced = {"big": (0, 1), "x": (0,), "y": (1,)}
    for t in range(12):
        on = k.update(sliced, {}, float(t))
        gpus = [g for j in on for g in sliced[j]]
        assert len(gpus) == len(set(gpus)), (t, on)
    assert all(s > 0 for s in k.served.values())  # everyone got turns


class _Seg:
    def __init__(self, mode):
        self.mode = mode


def test_physical_map_admits_packed_only_beside_current_packed():
    m = PhysicalMap()
    p1, p2, ex, sl = _Seg("packed"), _Seg("packed"), _Seg("exclusive"), _Seg("sliced")
    assert m.can_join(0, ex, lambda s: True)
    m.add(0, p1)
    assert m.can_join(0, p2, lambda s: True)
    assert not m.can_join(0, p2, lambda s: False)  # the packed one is stopping: wait for it
    assert not m.can_join(0, ex, lambda s: True) and not m.can_join(0, sl, lambda s: True)
    m.add(0, p2)
    m.remove(0, p1)
    assert m.on(0) == [p2] and 0 in m and len(m) == 1
    m.clear(0)
    assert 0 not in m and not m


AGENT_SCRIPT = """
from dlsched.live.agent import TrainingAgent
with TrainingAgent() as agent:
    for it in agent.iterations(pace_s=0.02):
        pass
"""


@pytest.fixture(scope="module")
def slot():
    pytest.importorskip("torch")
    pytest.importorskip("ray")
    from dlsched.live.worker import GpuSlot

    return GpuSlot(0)


def _seg(tmp_path, job, mode, iterations=100000):
    script = tmp_path / "loop.py"
    if not script.exists():  # rewriting it under a running segment would cut that one's script short
        script.write_text(AGENT_SCRIPT)
    return {"job_id": job, "segment": 1, "rank": 0, "world_size": 1, "total_iterations": iterations,
            "batch_size": 8, "checkpoint_dir": str(tmp_path / job), "checkpoint_every": 0,
            "master_addr": "127.0.0.1", "master_port": 0, "script": str(script), "mode": mode}


def _stop_all(slot, jobs):
    for j in jobs:
        slot.stop(j, 1)
    deadline = time.time() + 10
    while slot.status()["state"] == "running" and time.time() < deadline:
        time.sleep(0.05)
    assert slot.status()["state"] != "running"


def test_slot_runs_two_packed_segments_at_once_and_nothing_beside_an_exclusive_one(slot, tmp_path):
    assert slot.start(_seg(tmp_path, "x", "exclusive"))["ok"]
    refused = slot.start(_seg(tmp_path, "p", "packed"))
    assert not refused["ok"] and refused["running"] == ["x", 1]
    assert not slot.start(_seg(tmp_path, "s", "sliced"))["ok"]
    _stop_all(slot, ["x"])
    assert slot.start(_seg(tmp_path, "p1", "packed"))["ok"]
    assert slot.start(_seg(tmp_path, "p2", "packed"))["ok"]
    assert not slot.start(_seg(tmp_path, "x2", "exclusive"))["ok"]
    time.sleep(0.3)
    recs = {r["job_id"]: r for r in slot.status()["segments"]}
    assert recs["p1"]["state"] == recs["p2"]["state"] == "running"
    assert recs["p1"]["iterations"] > 0 and recs["p2"]["iterations"] > 0  # both progress at once
    # an unpack: once the slot hears the new mode, nothing joins the remaining segment
    assert slot.set_mode("p1", 1, "sliced")
    assert not slot.start(_seg(tmp_path, "p3", "packed"))["ok"]
    _stop_all(slot, ["p1", "p2"])
    assert {r["job_id"]: r["state"] for r in slot.status()["segments"]}["p1"] == "stopped"
