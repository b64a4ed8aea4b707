"""``AdaptivePerfModel``: jobs run at their adaptive-parallelism optimum (Crius section 8.1).

The model itself lives with the parallelism code (``dlsched.perf.parallel.perf_model``,
written alongside the Cell estimator): large-model jobs are priced at
``CellEstimator.optimum`` for their GPU type and count, x0.9 throughput per
halving of GPUs per node when the allocation spans more nodes than needed
(the Crius authors' simulator), and every other model is delegated to a
fallback ``PerfModel``.  This module is the name the scheduler side imports,
so policies, experiments and benchmarks share one priced world with the
estimator the policies use (``shared_adaptive_model`` reuses the estimator
cached on the cluster, so Cells and prices come from one warm cache).
"""

from __future__ import annotations

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import PerfModel
from dlsched.perf.parallel.estimator import CellEstimator
from dlsched.perf.parallel.perf_model import SPREAD_FACTOR, AdaptivePerfModel

__all__ = ["AdaptivePerfModel", "SPREAD_FACTOR", "shared_adaptive_model", "shared_estimator"]


def shared_estimator(cluster: Cluster) -> CellEstimator:
    """One CellEstimator per cluster object, shared by policies and perf model (its cache is pure)."""
    return cluster.derived("perf.cell_estimator", lambda: CellEstimator(cluster))


def shared_adaptive_model(cluster: Cluster, fallback: PerfModel | None = None) -> AdaptivePerfModel:
    """An AdaptivePerfModel over the cluster's shared CellEstimator (one cache for all runs)."""
    return AdaptivePerfModel(cluster, fallback=fallback, estimator=shared_estimator(cluster))
