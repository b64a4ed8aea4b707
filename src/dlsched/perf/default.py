"""Which perf model an engine uses when the caller names none."""

from __future__ import annotations

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import PerfModel, SimplePerfModel


def default_perf_model(cluster: Cluster, name: str = "auto") -> PerfModel:
    """``placement`` (the placement-aware model) when available, else ``simple``."""
    if name in ("auto", "placement"):
        try:
            from dlsched.perf.model import PlacementPerfModel
        except ImportError:
            if name == "placement":
                raise
        else:
            return PlacementPerfModel(cluster)
    return SimplePerfModel(cluster)
