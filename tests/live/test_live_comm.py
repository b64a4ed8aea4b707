"""`serve --comm`: the communication policy is asked as jobs start and stop, and each assignment is
recorded (state events and comm.csv), not programmed."""

from __future__ import annotations

import csv

import pytest

from dlsched.policies.registry import make_policy
from live_helpers import EXAMPLES, check_all_finished, run_service

pytestmark = pytest.mark.live

# two 3-GPU jobs on 3 nodes x 2 GPUs: each spans two nodes and they meet on the middle node's NIC
JOBS = """jobs:
  - {name: a, script: %(ex)s/cnn_job.py, model: tiny-cnn, num_gpus: 3, iterations: 30, batch_size: 12,
     checkpoint_every: 50, args: {step_time_s: 0.05}}
  - {name: b, script: %(ex)s/transformer_job.py, model: tiny-transformer, num_gpus: 3, iterations: 30,
     batch_size: 12, checkpoint_every: 50, args: {step_time_s: 0.05}}
"""


def test_comm_assignments_are_recorded(ray_cluster, state_dir, tmp_path):
    jobs = tmp_path / "two.yaml"
    jobs.write_text(JOBS % {"ex": EXAMPLES})
    out = tmp_path / "out"
    svc = run_service(state_dir, make_policy("fcfs"), [jobs], out_dir=str(out), comm="crux")
    store = svc.store
    check_all_finished(store, {"a": 30, "b": 30})
    events = store.events("comm")
    assert {e["job_id"] for e in events} == {"a", "b"}
    for e in events:
        d = e["detail"]
        assert d["policy"] == "crux" and 2 <= d["level"] <= 7  # levels 0-1 are reserved (default)
        assert d["paths"] and all("tor" in p for p in d["paths"])  # across nodes: through the ToR
    # both jobs placed at once, on a shared NIC: CRUX gives them different levels
    first = {}
    for e in events:
        first.setdefault(e["job_id"], e["detail"]["level"])
    assert first["a"] != first["b"]
    with open(out / "comm.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(events) and {r["job_id"] for r in rows} == {"a", "b"}
