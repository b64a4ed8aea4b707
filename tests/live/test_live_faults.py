"""Faults on a live run: the scheduler killed and restarted, a worker process killed, a node killed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dlsched.live.jobfile import load_jobs
from dlsched.live.raycluster import NodeDef
from dlsched.live.store import Store
from dlsched.policies.registry import make_policy
from live_helpers import EXAMPLES, NAMESPACE, check_all_finished, run_service

pytestmark = pytest.mark.live

TRACE = {j.spec.job_id: j.spec.total_iterations for j in load_jobs(EXAMPLES / "trace6.yaml")}


def _serve(ray_cluster, state, *extra):
    cmd = [sys.executable, "-m", "dlsched.cli", "serve", "--address", ray_cluster.address, "--namespace",
           NAMESPACE, "--keep-workers", "--state", str(state), "--policy", "timeslice", "--option",
           "quantum_s=4", "--exit-when-done", "--max-time", "240", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait_for(cond, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_scheduler_killed_mid_run_and_restarted(ray_cluster, state_dir):
    first = _serve(ray_cluster, state_dir, "--submit", str(EXAMPLES / "trace6.yaml"))
    try:
        store = None

        def running_with_progress():
            nonlocal store
            if not (state_dir / "state.sqlite").exists():
                return False
            store = store or Store(state_dir)
            return len(store.events("ready")) >= 4 and any(r["done_iterations"] >= 20 for r in store.jobs())
        _wait_for(running_with_progress, 90, "jobs to run under the first scheduler")
    finally:
        first.send_signal(signal.SIGKILL)  # no clean-up of any kind
        first.wait(30)
    killed_at = store.now()
    # status says the service is down (from its heartbeat) and shows the jobs' last known states
    from dlsched.cli import main

    with contextlib.redirect_stdout(io.StringIO()) as shown:
        assert main(["status", "--state", str(state_dir), "--json"]) == 0
    shown = json.loads(shown.getvalue())
    assert shown["service"]["state"] == "down" and "killed or crashed" in shown["service"]["detail"]
    assert "running" in {j["status"] for j in shown["jobs"]}
    time.sleep(1.0)  # the jobs keep training while no scheduler runs
    second = _serve(ray_cluster, state_dir)
    out, _ = second.communicate(timeout=240)
    assert second.returncode == 0, out
    assert "adopted" in out and "finished" in out  # serve reports what happens as it happens
    check_all_finished(store, TRACE)
    start = [e for e in store.events("service-start")]
    assert len(start) == 2 and start[1]["detail"]["adopted"] >= 1  # running segments were adopted
    assert not store.events("fault")  # nothing was lost: the workers never stopped training
    for e in store.events("adopt"):  # an adopted segment ran on, from before the kill to a clean end
        seg = next(s for s in store.segments(e["job_id"]) if s["segment"] == e["detail"]["segment"])
        assert seg["launched_at"] < killed_at and seg["state"] in ("finished", "stopped"), seg


def test_worker_process_killed_job_resumes_from_checkpoint(ray_cluster, state_dir, tmp_path):
    job = tmp_path / "job.yaml"
    job.write_text(f"name: w1\nscript: {EXAMPLES / 'transformer_job.py'}\nmodel: tiny-transformer\n"
                   "num_gpus: 2\niterations: 150\ncheckpoint_every: 25\nargs: {step_time_s: 0.05}\n")
    killed = {}

    def kill_rank1(svc):
        j = svc.jobs.get("w1")
        if killed or j is None or j.done_iterations < 60:
            return
        g = j.allocation.gpus[1]
        import ray

        pid = ray.get(svc.slots[g].status.remote())["pid"]
        os.kill(pid, signal.SIGKILL)
        killed.update(pid=pid, at=j.done_iterations)

    svc = run_service(state_dir, make_policy("fcfs"), [job], on_tick=kill_rank1)
    st = svc.store
    assert killed
    check_all_finished(st, {"w1": 150})
    (fault,) = st.events("fault")
    assert fault["detail"]["resume_from"] in (50, 75, 100)  # the last periodic checkpoint
    segs = [s for s in st.segments("w1") if s["launched_at"] is not None]
    assert len(segs) == 2 and segs[1]["iter_start"] == fault["detail"]["resume_from"]
    assert st.jobs()[0]["restarts"] == 1


def test_node_killed_its_job_resumes_elsewhere(ray_cluster, state_dir, tmp_path):
    extra = ray_cluster.add_node(NodeDef(2, "A40", rack=1))
    ray_cluster.wait()
    jobs = "jobs:\n" + "".join(
        f"  - {{name: n{i}, script: {EXAMPLES / 'cnn_job.py'}, model: tiny-cnn, num_gpus: 2, "
        f"iterations: {90 if i < 3 else 120}, checkpoint_every: 20, args: {{step_time_s: 0.05}}}}\n"
        for i in range(4))
    (tmp_path / "jobs.yaml").write_text(jobs)
    victim = {}

    def kill_node(svc):
        if victim:
            return
        node_gpus = {g for g, (node, _) in enumerate(svc.layout.slots) if node == extra.node_id}
        for j in svc.jobs.values():
            if j.allocation is not None and set(j.allocation.gpus) & node_gpus and j.done_iterations >= 30:
                victim.update(job=j.job_id, gpus=sorted(node_gpus))
                ray_cluster.remove_node(extra)
                return

    svc = run_service(state_dir, make_policy("fcfs"), [tmp_path / "jobs.yaml"], on_tick=kill_node)
    st = svc.store
    assert victim, "no job ran on the extra node"
    check_all_finished(st, {"n0": 90, "n1": 90, "n2": 90, "n3": 120})
    assert st.events("node-lost")
    segs = [s for s in st.segments(victim["job"]) if s["launched_at"] is not None]
    assert len(segs) >= 2
    assert not set(json.loads(segs[-1]["gpus"])) & set(victim["gpus"])  # resumed on other GPUs
    assert segs[-1]["iter_start"] >= 20  # from its checkpoint, not from scratch
