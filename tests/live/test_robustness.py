"""Regression tests for the live runtime's review fixes (atomic state, late starts, CLI errors, cluster swap)."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from dlsched.cli import main
from dlsched.live.jobfile import load_jobs
from dlsched.live.store import Store
from live_helpers import EXAMPLES, check_all_finished, run_service


def test_nested_transactions_commit_or_roll_back_together(tmp_path):
    st = Store(tmp_path / "st")
    st.submit(load_jobs(EXAMPLES / "cnn.yaml"))
    with pytest.raises(RuntimeError):
        with st.tx():
            st.update_job("cnn-1", status="suspended")
            with st.tx():  # joins the outer transaction instead of failing to BEGIN
                st.event(1.0, "cnn-1", "suspend")
            raise RuntimeError("crash between two writes")
    assert st.jobs()[0]["status"] == "submitted" and not st.events("suspend")  # neither landed
    with st.tx():
        st.update_job("cnn-1", status="pending")
        with st.tx():
            st.event(1.0, "cnn-1", "submit")
    other = sqlite3.connect(st.path)  # visible to another connection once the outer one commits
    assert other.execute("SELECT status FROM jobs").fetchone()[0] == "pending"
    assert other.execute("SELECT COUNT(*) FROM events WHERE kind='submit'").fetchone()[0] == 1


def test_a_start_that_arrives_after_the_scheduler_gave_up_is_refused(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("ray")
    from dlsched.live.worker import GpuSlot

    slot = GpuSlot(0)  # the plain class, no Ray needed
    seg = {"job_id": "x", "segment": 1, "rank": 0, "world_size": 1, "total_iterations": 1, "batch_size": 1,
           "checkpoint_dir": str(tmp_path / "ck"), "checkpoint_every": 0, "master_addr": "127.0.0.1",
           "master_port": 0, "args": {}, "script": str(EXAMPLES / "cnn_job.py"), "start_by": time.time() - 1}
    r = slot.start(seg)
    assert not r["ok"] and "too late" in r["why"]
    assert slot.status()["state"] == "idle"  # nothing runs that the scheduler does not know of


def test_a_stop_that_overtakes_its_start_keeps_the_segment_from_running(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("ray")
    from dlsched.live.worker import GpuSlot

    slot = GpuSlot(0)
    seg = {"job_id": "x", "segment": 2, "rank": 0, "world_size": 1, "total_iterations": 1, "batch_size": 1,
           "checkpoint_dir": str(tmp_path / "ck"), "checkpoint_every": 0, "master_addr": "127.0.0.1",
           "master_port": 0, "args": {}, "script": str(EXAMPLES / "cnn_job.py"), "start_by": None}
    assert slot.stop("x", 2) is False  # not running here (yet)
    r = slot.start(seg)
    assert not r["ok"] and "stopped before it started" in r["why"]
    assert slot.status()["state"] == "idle"
    # only that segment is barred, and only once
    assert slot.stop("x", 1) is False and slot.request_checkpoint("x", 3) is False
    assert ("x", 3) not in slot._stopped_early


def _one_iteration(tmp_path, job, segment, launch):
    return {"job_id": job, "segment": segment, "rank": 0, "world_size": 1, "total_iterations": 1,
            "batch_size": 1, "checkpoint_dir": str(tmp_path / "ck" / str(launch)), "checkpoint_every": 0,
            "master_addr": "127.0.0.1", "master_port": 0, "args": {},
            "script": str(EXAMPLES / "cnn_job.py"), "start_by": None, "launch": launch}


def _wait_ended(slot, timeout=60.0):
    t = time.time() + timeout
    while slot.status()["state"] == "running" and time.time() < t:
        time.sleep(0.05)
    return slot.status()


def test_a_stale_stop_from_an_earlier_service_does_not_bar_a_later_launch(tmp_path):
    """Slots outlive services and (job, segment) recurs across them: an earlier service's stop
    that found nothing here (this process had restarted) must not refuse a later launch, whose
    other ranks would then wait in the rendezvous until the segment is failed."""
    pytest.importorskip("torch")
    pytest.importorskip("ray")
    from dlsched.live.worker import GpuSlot

    slot = GpuSlot(0)
    assert slot.stop("cnn-1", 0) is False  # an orphan-style stop, no launch named
    assert slot.stop("cnn-1", 0, "earlier") is False  # the earlier service's stop for its own launch
    r = slot.start(_one_iteration(tmp_path, "cnn-1", 0, "later"))
    assert r["ok"], r
    (rec,) = _wait_ended(slot)["segments"]
    assert rec["state"] == "finished" and rec["launch"] == "later"


def test_a_stop_that_overtakes_its_start_is_not_spent_on_an_earlier_services_record(tmp_path):
    """An ended run of an earlier service with the same (job, segment) is still listed; the stop
    meant for the new launch must bar that launch, not land on the old record."""
    pytest.importorskip("torch")
    pytest.importorskip("ray")
    from dlsched.live.worker import GpuSlot

    slot = GpuSlot(0)
    assert slot.start(_one_iteration(tmp_path, "cnn-1", 0, "earlier"))["ok"]
    assert _wait_ended(slot)["segments"][0]["state"] == "finished"
    assert slot.stop("cnn-1", 0, "later") is False  # overtook the later launch's start
    r = slot.start(_one_iteration(tmp_path, "cnn-1", 0, "later"))
    assert not r["ok"] and "stopped before it started" in r["why"]


def test_the_service_reads_only_its_own_launchs_record():
    from dlsched.live.service import Segment, _record

    seg = Segment("cnn-1", 0, (0, 1), "start", 0.0, launch="later")
    old = {"job_id": "cnn-1", "segment": 0, "launch": "earlier", "state": "stopped"}
    assert _record({"segments": [old]}, seg) is None  # an earlier service's run: not this segment
    mine = {**old, "launch": "later", "state": "running"}
    assert _record({"segments": [old, mine]}, seg) is mine


def test_serve_errors_are_clear_before_ray_starts(tmp_path, capsys):
    state = str(tmp_path / "st")
    assert main(["serve", "--policy", "nosuch", "--state", state]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert main(["serve", "--policy", "timeslice", "--option", "quantum_s=0", "--state", state]) == 2
    assert "bad option for policy 'timeslice'" in capsys.readouterr().err
    assert main(["serve", "--submit", str(tmp_path / "missing.yaml"), "--state", state]) == 2
    err = capsys.readouterr().err
    assert "missing.yaml" in err and "no such file" in err
    assert main(["submit", str(EXAMPLES / "cnn.yaml"), "--state", state]) == 0
    capsys.readouterr()
    # the same job submitted to the same state again: refused up front, before any Ray cluster starts
    assert main(["serve", "--submit", str(EXAMPLES / "cnn.yaml"), "--state", state]) == 2
    assert "cnn-1 already submitted" in capsys.readouterr().err


@pytest.mark.live
def test_state_from_a_replaced_cluster_is_requeued_on_the_new_one(ray_cluster, state_dir, tmp_path):
    """A state directory whose nodes are all gone (a new emulated cluster): jobs resume on the new one."""
    from dlsched.live.raycluster import layout_from_ray
    from dlsched.policies.registry import make_policy
    import ray

    job = tmp_path / "job.yaml"
    job.write_text(f"name: r1\nscript: {EXAMPLES / 'cnn_job.py'}\nmodel: tiny-cnn\nnum_gpus: 2\n"
                   "iterations: 40\ncheckpoint_every: 10\nargs: {step_time_s: 0.02}\n")
    st = Store(state_dir)
    st.submit(load_jobs(job))
    real = json.loads(layout_from_ray(ray.nodes()).to_json())
    gone = {n["node_id"]: f"{i:02d}" + "dead" * 14 for i, n in enumerate(real["nodes"])}
    for n in real["nodes"]:
        n["node_id"] = gone[n["node_id"]]
    real["slots"] = [[gone[s[0]], s[1]] for s in real["slots"]]
    st.set_meta("layout", json.dumps(real))
    # as the old service left it: r1 running segment 1 on GPUs 0-1 of the old cluster
    st.update_job("r1", status="running", arrival=0.0, queued_since=0.0, allocation=[0, 1], segment=1,
                  held_since=0.0, first_start=0.0)
    st.put_segment("r1", 1, kind="start", gpus=[0, 1], placed_at=0.0, launched_at=0.0, state="running")
    svc = run_service(state_dir, make_policy("fcfs"))
    check_all_finished(svc.store, {"r1": 40})
    (fault,) = svc.store.events("fault")
    assert fault["detail"]["reason"] == "cluster replaced"
    assert svc.store.events("layout-change")
    assert svc.store.segments("r1")[0]["state"] == "lost"
    assert svc.store.jobs()[0]["restarts"] == 1
