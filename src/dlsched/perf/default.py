"""Which perf model an engine uses when the caller names none."""

from __future__ import annotations

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import PerfModel, SimplePerfModel

PERF_MODELS = ("adaptive", "placement", "simple")


def default_perf_model(cluster: Cluster, name: str = "adaptive") -> PerfModel:
    """Build a perf model by name.

    ``adaptive`` (the default) prices the large models of the Crius zoo at
    their best data/tensor/pipeline plan for the GPU type and count (Crius
    section 8.1: every scheduler's jobs run at their adaptive optimum) and
    every other model with ``placement``, the topology-aware data-parallel
    model.  ``simple`` is the coarse FLOPs + one ring all-reduce model, kept
    as a fast reference.
    """
    if name == "simple":
        return SimplePerfModel(cluster)
    from dlsched.perf.model import PlacementPerfModel

    if name == "placement":
        return PlacementPerfModel(cluster)
    if name == "adaptive":
        from dlsched.perf.adaptive import shared_adaptive_model

        return shared_adaptive_model(cluster, fallback=PlacementPerfModel(cluster))
    raise ValueError(f"unknown perf model {name!r}; choose one of {', '.join(PERF_MODELS)}")
