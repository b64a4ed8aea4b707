"""Live runs on a 3-node emulated Ray cluster: FCFS, timeslice, a resize, and fidelity."""

from __future__ import annotations

import json

import pytest

from dlsched.live.jobfile import load_jobs
from dlsched.policies.base import Allocation, Decision, JobPolicy
from dlsched.policies.registry import make_policy
from live_helpers import EXAMPLES, NAMESPACE, check_all_finished, final_checkpoint, run_service

pytestmark = pytest.mark.live

TRACE = {j.spec.job_id: j.spec.total_iterations for j in load_jobs(EXAMPLES / "trace6.yaml")}


@pytest.fixture(scope="module")
def fcfs_store(ray_cluster, tmp_path_factory):
    state = tmp_path_factory.mktemp("fcfs")
    svc = run_service(state, make_policy("fcfs"), [EXAMPLES / "trace6.yaml"], out_dir=str(state / "out"))
    return svc.store


def test_fcfs_runs_the_trace(fcfs_store, capsys):
    check_all_finished(fcfs_store, TRACE)
    assert all(final_checkpoint(fcfs_store, j) == n for j, n in TRACE.items())
    starts = {e["job_id"]: e["detail"]["gpus"] for e in fcfs_store.events("start")}
    assert len(starts) == 6 and not fcfs_store.events("suspend")
    # the results directory is the simulator's: `dlsched report` reads it
    from dlsched.cli import main

    out = fcfs_store.dir / "out"
    assert main(["report", str(out)]) == 0
    assert "fcfs" in capsys.readouterr().out
    doc = json.loads((out / "summary.json").read_text())
    assert doc["summary"]["finished"] == 6 and doc["params"]["engine"] == "live"
    # the measured iteration times, in the profile format `dlsched perf calibrate` reads
    from dlsched.workload.readers.profiles import read_profile

    measured = read_profile(out / "measured-iterations.csv")
    assert measured.kind == "iterations" and all(r.iter_time_s > 0 for r in measured.rows)


def test_fidelity_against_the_simulator(fcfs_store):
    from dlsched.live.sim_replay import compare

    fid, sim = compare(fcfs_store, make_policy("fcfs"))
    print("\nfidelity (fcfs, trace6):", fid.line())
    assert all(r.status == "finished" for r in sim.records)
    assert fid.rel_error <= 0.10


def test_the_replay_reruns_from_its_summary(fcfs_store, tmp_path):
    """The replay is a RunSpec: its results folder's summary.json reruns it to the same bytes."""
    from dlsched.cli import main
    from dlsched.live.sim_replay import compare

    compare(fcfs_store, "fcfs", out=tmp_path / "replay")
    assert main(["simulate", "--spec", str(tmp_path / "replay"), "--quiet", "--out", str(tmp_path / "again")]) == 0
    for name in ("jobs.csv", "series.csv", "summary.json"):
        assert (tmp_path / "replay" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


def test_timeslice_suspends_resumes_and_migrates(ray_cluster, state_dir):
    svc = run_service(state_dir, make_policy("timeslice", quantum_s=4.0), [EXAMPLES / "trace6.yaml"])
    st = svc.store
    check_all_finished(st, TRACE)
    kinds = [e["kind"] for e in st.events()]
    assert kinds.count("suspend") >= 1 and kinds.count("resume") >= 1 and kinds.count("migrate") >= 1
    rows = {r["job_id"]: r for r in st.jobs()}
    assert sum(r["restarts"] for r in rows.values()) >= 1
    assert sum(r["migrations"] for r in rows.values()) >= 1
    # a resumed or migrated segment starts where its predecessor's checkpoint left off
    for jid in TRACE:
        segs = [s for s in st.segments(jid) if s["launched_at"] is not None]
        for a, b in zip(segs, segs[1:]):
            assert b["iter_start"] == a["iter_end"], (jid, a, b)


class ShrinkOnce(JobPolicy):
    """Start jobs where they fit; shrink a 2-GPU job to one GPU after 40 iterations."""

    name = "shrink-once"

    def schedule(self, view, now):
        from dlsched.cluster.placement import pick_gpus

        d = Decision()
        for j in view.queued():
            gpus = pick_gpus(view.free, j.spec.num_gpus)
            if gpus is not None:
                d.allocate[j.job_id] = Allocation.of(gpus)
        for j in view.running():
            if len(j.allocation.gpus) == 2 and j.done_iterations >= 40 and not j.policy_data.get("shrunk"):
                j.policy_data["shrunk"] = True
                d.allocate[j.job_id] = Allocation.of(j.allocation.gpus[:1])
        d.wakeup = now + 0.2
        return d


def test_resize_restarts_with_fewer_workers(ray_cluster, state_dir, tmp_path):
    job = tmp_path / "elastic.yaml"
    job.write_text(f"name: e1\nscript: {EXAMPLES / 'cnn_job.py'}\nmodel: tiny-cnn\nnum_gpus: 2\n"
                   "iterations: 100\nelastic: true\nargs: {step_time_s: 0.05}\n")
    svc = run_service(state_dir, ShrinkOnce(), [job])
    st = svc.store
    check_all_finished(st, {"e1": 100})
    segs = st.segments("e1")
    assert [s["kind"] for s in segs] == ["start", "resize"]
    assert [len(json.loads(s["gpus"])) for s in segs] == [2, 1]
    assert segs[1]["iter_start"] == segs[0]["iter_end"] >= 40  # stopped at a boundary, nothing lost
    assert st.jobs()[0]["resizes"] == 1


def test_cancel_stops_a_running_job(ray_cluster, state_dir):
    from dlsched.live.store import Store

    cancelled = []

    def cancel_when_running(svc):
        j = svc.jobs.get("cnn-1")
        if not cancelled and j is not None and j.done_iterations >= 10:
            Store(state_dir).request_cancel("cnn-1")  # as `dlsched cancel` does, from another connection
            cancelled.append(j.done_iterations)

    svc = run_service(state_dir, make_policy("fcfs"), [EXAMPLES / "cnn.yaml"], on_tick=cancel_when_running)
    (row,) = svc.store.jobs()
    assert cancelled and row["status"] == "dropped" and row["reason"] == "cancelled by user"
    assert svc.store.segments("cnn-1")[0]["state"] == "stopped"
    assert not svc.ending and not svc.phys  # its workers stopped before the service left


def test_a_stop_left_on_a_slot_by_an_earlier_service_does_not_bar_a_new_launch(ray_cluster, state_dir, tmp_path):
    """Slots outlive services and a fresh state folder numbers segments afresh: a stop that
    found nothing on a slot (an orphan stop, a stop that overtook a start refused as too late, a
    slot restarted under it) must not refuse the same (job, segment) of a later service, or the
    rank that did start waits in the rendezvous until the segment is killed and counted failed."""
    import ray

    from dlsched.live.service import LiveService, ServiceConfig
    from dlsched.live.store import Store

    earlier = LiveService(Store(tmp_path / "earlier"), make_policy("fcfs"),
                          ServiceConfig(exit_when_done=True, namespace=NAMESPACE, stop_workers_on_exit=False))
    try:
        # on every slot but GPU 0: nothing runs there, so each slot keeps the stop
        ray.get([a.stop.remote("cnn-1", n) for g, a in earlier.slots.items() if g for n in (1, 2)])
    finally:
        earlier.close()
    test_cancel_stops_a_running_job(ray_cluster, state_dir)
    assert not Store(state_dir).events("launch-refused")
