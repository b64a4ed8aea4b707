"""Fixtures for the Crius policy tests."""

from __future__ import annotations

import pytest

from dlsched.cluster.topology import Cluster
from dlsched.perf.parallel.adaptive import shared_adaptive_model


@pytest.fixture(scope="session")
def testbed() -> Cluster:
    return Cluster.load("crius-testbed")


@pytest.fixture(scope="session")
def perf(testbed):
    return shared_adaptive_model(testbed)
