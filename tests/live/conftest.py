"""Fixtures for the live-runtime tests: one emulated Ray cluster for the whole session.

Starting Ray and the worker slots costs about 15 s on a small machine, so the
cluster (3 nodes x 2 fake A40s) and the slots (one shared namespace, kept up
between services) are started once; each test gets its own state directory.
"""

from __future__ import annotations

import shutil

import pytest


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
