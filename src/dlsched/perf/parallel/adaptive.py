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
from dlsched.perf.parallel.cost import DEFAULT_PARAMS, CostParams
from dlsched.perf.parallel.estimator import CellEstimator
from dlsched.perf.parallel.perf_model import SPREAD_FACTOR, AdaptivePerfModel

__all__ = ["AdaptivePerfModel", "SPREAD_FACTOR", "claim_shared_estimator", "estimator_for", "shared_adaptive_model",
           "shared_estimator"]


def estimator_for(cluster: Cluster, params: CostParams = DEFAULT_PARAMS) -> CellEstimator:
    """One CellEstimator per (cluster object, cost parameters): models under different parameters
    (``adaptive``'s analytic defaults, ``calibrated``'s fit) never share a cache."""
    by_params = cluster.derived("perf.cell_estimators", dict)
    est = by_params.get(params)
    if est is None:
        est = by_params[params] = CellEstimator(cluster, params)
    return est


def claim_shared_estimator(cluster: Cluster, est: CellEstimator) -> None:
    """The first perf model built on a cluster makes its estimator the one the policies share,
    so their Cell estimates and the prices come from the same parameters."""
    cluster.derived("perf.cell_estimator", lambda: est)


def shared_estimator(cluster: Cluster) -> CellEstimator:
    """The estimator policies share on this cluster: the first perf model's (its cache is pure);
    the analytic defaults when no model claimed one."""
    return cluster.derived("perf.cell_estimator", lambda: estimator_for(cluster))


def shared_adaptive_model(cluster: Cluster, fallback: PerfModel | None = None) -> AdaptivePerfModel:
    """An AdaptivePerfModel over the cluster's analytic CellEstimator (one cache for all runs)."""
    est = estimator_for(cluster)
    claim_shared_estimator(cluster, est)
    return AdaptivePerfModel(cluster, fallback=fallback, estimator=est)
