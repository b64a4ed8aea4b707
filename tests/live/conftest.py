"""Fixtures for the live-runtime tests: one emulated Ray cluster for the whole session.

Starting Ray and the worker slots costs about 15 s on a small machine, so the
cluster (3 nodes x 2 fake A40s) and the slots (one shared namespace, kept up
between services) are started once; each test gets its own state directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def example_scripts_allowed():
    """Job files written to temporary folders name the example scripts: the operator allows their folder."""
    from dlsched.live.jobfile import SCRIPT_DIRS_ENV

    before = os.environ.get(SCRIPT_DIRS_ENV)
    os.environ[SCRIPT_DIRS_ENV] = str(Path(__file__).resolve().parents[2] / "examples")
    yield
    if before is None:
        os.environ.pop(SCRIPT_DIRS_ENV, None)
    else:
        os.environ[SCRIPT_DIRS_ENV] = before


@pytest.fixture(scope="session")
def ray_cluster():
    pytest.importorskip("ray")
    pytest.importorskip("torch")
    import ray

    from dlsched.live.raycluster import EmulatedCluster, NodeDef
    from dlsched.live.service import connect

    cluster = EmulatedCluster([NodeDef(2, "A40", 0) for _ in range(3)])
    connect(cluster.address)
    cluster.wait()
    yield cluster
    ray.shutdown()
    cluster.shutdown()


@pytest.fixture
def state_dir(tmp_path):
    d = tmp_path / "state"
    yield d
    shutil.rmtree(d, ignore_errors=True)
