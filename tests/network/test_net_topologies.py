"""Which specs the bare link-graph builder accepts."""

from __future__ import annotations

import pytest

from dlsched.cluster import Cluster
from dlsched.errors import InputError
from dlsched.network.topologies import from_cluster


def test_crux_fabrics_are_not_read_as_tiered_graphs():
    # their hosts are numbered by the fabric, so only comm.fabric.contention_for can build them
    with pytest.raises(InputError, match="contention_for"):
        from_cluster(Cluster.load("crux-double-sided"))
    assert from_cluster(Cluster.load("crux-clos")).hosts  # a Clos spec still builds
