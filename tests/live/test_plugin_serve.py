"""A policy from a file outside the package drives the live service through ``dlsched serve``,
with the submitted jobs' arrivals moved to an offered load (``--load``), in one live run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dlsched.live.jobfile import load_jobs
from dlsched.live.store import Store
from live_helpers import EXAMPLES, NAMESPACE, check_all_finished

pytestmark = pytest.mark.live

SJF = EXAMPLES / "plugins" / "sjf.py"


def test_serve_runs_a_file_plugin_policy_at_a_load(ray_cluster, state_dir, tmp_path):
    trace = {j.spec.job_id: j.spec.total_iterations for j in load_jobs(EXAMPLES / "trace6.yaml")}
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dlsched.cli", "serve", "--address", ray_cluster.address, "--namespace", NAMESPACE,
           "--keep-workers", "--state", str(state_dir), "--policy", f"{SJF}:SJF", "--option", "max_starts=2",
           "--submit", str(EXAMPLES / "trace6.yaml"), "--load", "0.002", "--exit-when-done", "--max-time", "240", "--quiet",
           "--no-status-page", "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # the toy models are priced at microseconds an iteration (their scripts sleep 0.1 s a step):
    # at 0.002 of the cluster the one delayed job (1 s in the file) arrives seconds later
    assert "offered load 0.002 " in done.stdout and "real speed may differ" in done.stdout
    arrivals = sorted(r["arrival"] for r in Store(state_dir).jobs())
    assert arrivals[-1] - arrivals[0] > 2.0
    check_all_finished(Store(state_dir), trace)
    assert Store(state_dir).get_meta("policy") == "sjf"
    prov = json.loads((out / "provenance.json").read_text())
    assert [p["source"] for p in prov["plugins"] if p["kind"] == "policy"] == [f"{SJF}:SJF"]
