"""The reproduction's workloads on the authors' trace (skipped without ../shared)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "crius"))

import scenarios  # noqa: E402

from dlsched.perf.parallel.adaptive import shared_adaptive_model  # noqa: E402
from dlsched.policies.registry import make_policy  # noqa: E402
from dlsched.sim import SimConfig, Simulator  # noqa: E402

pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def testbed_jobs():
    if not scenarios.arena_available():
        pytest.skip(f"arena trace not found at {scenarios.ARENA} (shared data beside the repository)")
    return scenarios.testbed(n_jobs=80, hours=2.0)


def test_arena_testbed_crius_beats_fcfs(testbed_jobs):
    cluster, jobs, _ = testbed_jobs
    perf = shared_adaptive_model(cluster)
    out = {}
    for name in ("crius", "fcfs"):
        res = Simulator(cluster, make_policy(name), jobs, perf=perf, config=SimConfig(seed=0, debug=True)).run()
        assert res.summary["unfinished"] == 0
        out[name] = res.summary
    assert out["crius"]["avg_jct"] < out["fcfs"]["avg_jct"]
