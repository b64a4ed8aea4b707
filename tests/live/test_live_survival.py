"""The service survives its own death: ``serve`` on an emulated cluster killed with SIGKILL mid-run and
started again on the same state loses nothing and double-counts nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from dlsched.live.store import Store

pytestmark = pytest.mark.live

TRAIN = """import time
from dlsched.live.agent import TrainingAgent

with TrainingAgent() as agent:
    for it in agent.iterations(pace_s=agent.args.get("pace", 0.1)):
        pass
    time.sleep(agent.args.get("linger", 0))  # its work is done and checkpointed; the process stays a while
"""

JOBS = """jobs:
  - {name: quick, script: train.py, model: tiny-cnn, num_gpus: 1, iterations: 10, args: {pace: 0.05}}
  - {name: lingers, script: train.py, model: tiny-cnn, num_gpus: 1, iterations: 20, args: {pace: 0.05, linger: 600}}
  - {name: long1, script: train.py, model: tiny-cnn, num_gpus: 2, iterations: 300, checkpoint_every: 20}
  - {name: long2, script: train.py, model: tiny-cnn, num_gpus: 1, iterations: 300, checkpoint_every: 20}
"""


def _serve(tmp_path, state, *extra):
    cmd = [sys.executable, "-m", "dlsched.cli", "serve", "--state", str(state), "--emulate", "3x2:A40", "--quiet",
           "--no-status-page", "--max-time", "400", *extra]
    return subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _session(sid: int) -> list[str]:
    """Command lines of the live processes in session ``sid`` (zombies are gone already)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    found.append(f.read().replace(b"\0", b" ").decode(errors="replace")[:120])
        except (OSError, ValueError, IndexError):
            continue
    return found


def test_serve_killed_with_sigkill_loses_and_double_counts_nothing(tmp_path):
    pytest.importorskip("ray")
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "jobs.yaml").write_text(JOBS)
    state = tmp_path / "state"
    first = _serve(tmp_path, state, "--submit", "jobs.yaml")
    store = None
    try:
        end = time.monotonic() + 240
        while True:
            assert time.monotonic() < end, "jobs never got going under the first service"
            assert first.poll() is None, first.stdout.read()
            time.sleep(0.5)
            if not (state / "state.sqlite").exists():
                continue
            store = store or Store(state)
            rows = {r["job_id"]: r for r in store.jobs()}
            ckpt = {e["job_id"] for e in store.events("ready")}
            if rows.get("quick", {}).get("status") == "finished" and {"lingers", "long1", "long2"} <= ckpt \
                    and all(rows[j]["done_iterations"] >= 40 for j in ("long1", "long2")) \
                    and rows["lingers"]["done_iterations"] >= 20:
                break
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the service and the emulated cluster it started: no clean-up
        first.wait(30)
    killed_at = store.now()
    before = {r["job_id"]: r for r in store.jobs()}
    time.sleep(5.0)  # downtime: nobody trains, nobody should be charged for it
    second = _serve(tmp_path, state, "--exit-when-done")
    try:
        out, _ = second.communicate(timeout=400)
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
    assert second.returncode == 0, out
    # a clean exit leaves no process of its own behind: the emulated cluster's Ray processes went with it
    end = time.monotonic() + 30
    while _session(second.pid) and time.monotonic() < end:
        time.sleep(1.0)
    assert not _session(second.pid), _session(second.pid)
    rows = {r["job_id"]: r for r in store.jobs()}
    assert {j: r["status"] for j, r in rows.items()} == dict.fromkeys(("quick", "lingers", "long1", "long2"),
                                                                        "finished")
    finishes = [e["job_id"] for e in store.events("finish")]
    assert sorted(finishes) == ["lingers", "long1", "long2", "quick"]  # each finished exactly once
    # the job whose last iteration came before the kill is finished then, not faulted and re-run
    assert rows["lingers"]["finish_time"] <= killed_at and rows["lingers"]["restarts"] == 0
    assert not [e for e in store.events("segment-start") if e["job_id"] == "lingers"]
    assert [e for e in store.events("fault") if e["job_id"] == "lingers"] == []
    for j in ("long1", "long2"):
        r = rows[j]
        # run time counts the time on GPUs before the kill (up to the last heartbeat) and after, not the gap
        downtime = next(e["time"] for e in store.events("service-start")[1:]) - killed_at
        assert downtime > 4.0
        assert r["run_time"] <= r["finish_time"] - r["first_start"] - downtime + 2.0, (j, r, downtime)
        assert r["done_iterations"] == 300
        assert r["run_time"] >= before[j]["done_iterations"] * 0.1 * 0.5
    store.close()
