"""``dlsched serve --submit FILE --load L``: the submitted jobs' delays moved to the offered load
the service's perf model prices, said on the terminal, and the jobs run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from dlsched.live.jobfile import load_jobs
from dlsched.live.store import Store
from live_helpers import EXAMPLES, NAMESPACE, check_all_finished

pytestmark = pytest.mark.live


def test_serve_moves_arrivals_to_a_load(ray_cluster, state_dir):
    trace = {j.spec.job_id: j.spec.total_iterations for j in load_jobs(EXAMPLES / "trace6.yaml")}
    cmd = [sys.executable, "-m", "dlsched.cli", "serve", "--address", ray_cluster.address, "--namespace", NAMESPACE,
           "--keep-workers", "--state", str(state_dir), "--submit", str(EXAMPLES / "trace6.yaml"),
           "--load", "0.002", "--exit-when-done", "--max-time", "240", "--quiet", "--no-status-page"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    # the toy models are priced at microseconds an iteration (their scripts sleep 0.1 s a step):
    # at 0.002 of the cluster the one delayed job (1 s in the file) arrives seconds later
    assert "offered load 0.002 " in done.stdout and "real speed may differ" in done.stdout
    store = Store(state_dir)
    check_all_finished(store, trace)
    arrivals = sorted(r["arrival"] for r in store.jobs())
    assert arrivals[-1] - arrivals[0] > 2.0
