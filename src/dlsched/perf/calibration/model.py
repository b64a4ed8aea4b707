"""The calibrated perf model: ``adaptive`` with the fitted parameters (``--perf calibrated``).

Large-model jobs are priced at the optimal plan under the fitted cost
parameters; placement spread costs the fitted ``spread_keep`` per halving of
GPUs per node; other jobs go to the placement model with the fitted packing
figures.  Its Cell estimator is the cluster's one for these parameters, and
becomes the one the policies share when this is the first model built on the
cluster, so the policies' Cell estimates and the prices come from the same
parameters.
"""

from __future__ import annotations

from typing import Callable

from dlsched.cluster.topology import Cluster
from dlsched.perf.base import PerfModel
from dlsched.perf.calibration.params import CalibratedParams, resolve
from dlsched.perf.parallel.adaptive import claim_shared_estimator, estimator_for
from dlsched.perf.parallel.estimator import CellEstimator
from dlsched.perf.parallel.perf_model import SPREAD_FACTOR, AdaptivePerfModel


class CalibratedPerfModel(AdaptivePerfModel):
    """``AdaptivePerfModel`` under fitted parameters; ``describe()`` names the fit."""

    def __init__(self, cluster: Cluster, calibration: CalibratedParams, fallback: PerfModel,
                 estimator: CellEstimator):
        super().__init__(cluster, fallback=fallback, estimator=estimator,
                         spread_keep=calibration.spread_keep or SPREAD_FACTOR)
        self.calibration = calibration

    def describe(self) -> dict:
        prov = self.calibration.provenance
        return {**super().describe(), "perf_model": type(self).__name__,
                "calibration": {"sources": prov.get("sources", []), "fitted_on": prov.get("fitted_on"),
                                "spread_keep": self.spread_keep}}


def calibrated_model(cluster: Cluster, perf_params=None,
                     wrap: Callable[[PerfModel], PerfModel] = lambda m: m) -> CalibratedPerfModel:
    from dlsched.perf.placement.model import PlacementPerfModel

    cal = resolve(perf_params)
    cost = cal.cost_params()
    est = estimator_for(cluster, cost)
    claim_shared_estimator(cluster, est)
    fallback = wrap(PlacementPerfModel(cluster, contention=cal.contention or None,
                                       utilisation=cal.utilisation or None))
    return CalibratedPerfModel(cluster, cal, fallback, est)
