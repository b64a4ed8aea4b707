"""No job stuck for good: a script that hangs mid-run is caught by the progress watchdog, and one that
kills its own process (``os._exit``) counts against the same restart limit as any crash."""

from __future__ import annotations

import pytest

from dlsched.policies.registry import make_policy
from live_helpers import run_service

pytestmark = pytest.mark.live

HANGS = """import time
from dlsched.live.agent import TrainingAgent

with TrainingAgent() as agent:
    for it in agent.iterations(pace_s=0.05):
        if it == 5:
            time.sleep(3600)  # stuck (a dead data loader, a deadlock): holds its GPU, counts nothing
"""

EXITS = """import os
from dlsched.live.agent import TrainingAgent

with TrainingAgent() as agent:
    for it in agent.iterations(pace_s=0.05):
        if it == 5:
            os._exit(3)  # the whole worker process goes, no exception, no clean-up
"""


def _jobs(tmp_path, name: str, script: str) -> object:
    (tmp_path / f"{name}.py").write_text(script)
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"jobs:\n  - {{name: {name}, script: {name}.py, model: tiny-cnn, num_gpus: 1, iterations: 40,"
                    " checkpoint_every: 0}\n"
                    f"  - {{name: fine, script: {tmp_path / 'fine.py'}, model: tiny-cnn, num_gpus: 1, iterations: 20}}\n")
    (tmp_path / "fine.py").write_text("from dlsched.live.agent import TrainingAgent\n"
                                      "with TrainingAgent() as agent:\n"
                                      "    for it in agent.iterations(pace_s=0.05):\n        pass\n")
    return path


# a vanished process shows as lost once Ray restarts it, or as stalled if its slot answers no poll before the
# watchdog's limit: either way a fault of the job's own, counted against the same limit
@pytest.mark.parametrize("name, script, why", [("hangs", HANGS, ("stalled: no iteration for",)),
                                               ("exits", EXITS, ("worker process or node lost", "stalled"))])
def test_a_stuck_or_vanishing_job_fails_within_the_restart_limit(ray_cluster, state_dir, tmp_path, name, script,
                                                                  why):
    svc = run_service(state_dir, make_policy("fcfs"), [_jobs(tmp_path, name, script)], max_restarts=2,
                      restart_backoff_s=0.2, stall_timeout_s=3.0, stop_timeout_s=3.0, max_time_s=200.0)
    st = svc.store
    rows = {r["job_id"]: r for r in st.jobs()}
    assert rows["fine"]["status"] == "finished"
    assert rows[name]["status"] == "failed", rows[name]
    faults = [e for e in st.events("fault") if e["job_id"] == name]
    assert len(faults) == 3 and all(e["detail"]["reason"].startswith(why) for e in faults), faults
    assert rows[name]["reason"].startswith("failed 3 times in a row")
