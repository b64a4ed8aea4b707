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


def test_a_stuck_or_vanishing_job_fails_within_the_restart_limit(ray_cluster, state_dir, tmp_path):
    (tmp_path / "hangs.py").write_text(HANGS)
    (tmp_path / "exits.py").write_text(EXITS)
    (tmp_path / "fine.py").write_text("from dlsched.live.agent import TrainingAgent\n"
                                      "with TrainingAgent() as agent:\n"
                                      "    for it in agent.iterations(pace_s=0.05):\n        pass\n")
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("jobs:\n"
                    "  - {name: hangs, script: hangs.py, model: tiny-cnn, num_gpus: 1, iterations: 40}\n"
                    "  - {name: exits, script: exits.py, model: tiny-cnn, num_gpus: 1, iterations: 40}\n"
                    "  - {name: fine, script: fine.py, model: tiny-cnn, num_gpus: 1, iterations: 20}\n")
    svc = run_service(state_dir, make_policy("fcfs"), [jobs], max_restarts=1, restart_backoff_s=0.2,
                      stall_timeout_s=3.0, stop_timeout_s=3.0, max_time_s=200.0)
    st = svc.store
    rows = {r["job_id"]: r for r in st.jobs()}
    assert rows["fine"]["status"] == "finished"
    # a vanished process shows as lost once Ray restarts it, or as stalled if its slot answers no poll
    # before the watchdog's limit: either way a fault of the job's own, counted against the same limit
    for name, why in (("hangs", ("stalled: no iteration for",)), ("exits", ("worker process or node lost", "stalled"))):
        assert rows[name]["status"] == "failed", rows[name]
        faults = [e for e in st.events("fault") if e["job_id"] == name]
        assert len(faults) == 2 and all(e["detail"]["reason"].startswith(why) for e in faults), faults
        assert rows[name]["reason"].startswith("failed 2 times in a row")
