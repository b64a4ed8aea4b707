"""Which perf model an engine uses when the caller names none."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from dlsched.registry import Registry

if TYPE_CHECKING:  # kept out of the import: the CLI reads PERF_MODELS at start-up
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.base import PerfModel

PERF_MODELS = ("adaptive", "calibrated", "truth", "placement", "simple")  # built in; plugins: the PERF registry
# what runs when the caller names no model: the fit to measured GPU runs (docs/perf-model.md)
DEFAULT_PERF = "calibrated"


def _check(obj) -> str | None:
    return None if callable(obj) else f"{obj!r} cannot be called as factory(cluster) -> PerfModel"


# a plugin perf model (entry-point group ``dlsched.perf_models``, or ``--perf file.py:factory``) is a
# callable ``factory(cluster) -> PerfModel``; ``--tier-profile`` wraps what it returns
PERF: Registry = Registry("perf model", "dlsched.perf_models", "--perf", check=_check)


def default_perf_model(cluster: Cluster, name: str = DEFAULT_PERF, tier_profile=None, perf_params=None) -> PerfModel:
    """Build a perf model by name.

    ``calibrated`` (the default, ``DEFAULT_PERF``) is ``adaptive`` under the
    parameters fitted to measured GPU runs (the shipped fit, or
    ``perf_params``): the large models at their best plan under fitted
    efficiency, links, small-batch overhead and memory; every other model by
    ``placement`` (analytic compute and links, public measured figures where
    they exist) with the packing interference fitted to Gavel's co-located
    table.  ``adaptive`` prices the large models of the Crius zoo at
    their best data/tensor/pipeline plan for the GPU type and count (Crius
    section 8.1: every scheduler's jobs run at their adaptive optimum) under
    the analytic defaults, and every other model with ``placement``, the
    topology-aware data-parallel model.  ``truth`` is ``adaptive`` with each plan's time off by a seeded
    deviation calibrated to Crius's reported estimation error, so that Cell
    estimates are not exact by construction (``perf/measured/truth.py``).  ``simple``
    is the coarse FLOPs + one ring all-reduce model, kept
    as a fast reference.

    ``tier_profile`` (a built-in name such as ``dally-table1``, a CSV path or a
    ``TierProfile``) replaces the communication of the models it lists with
    its per-tier overheads (``dlsched.perf.comm.tier_profile``).  Under
    ``adaptive`` it wraps the data-parallel fallback only: a large model that
    the adaptive model prices at its 3D-parallel plan cannot take a data-
    parallel overhead table, and listing one is an error, not ignored.
    """
    plugin = None if name in PERF_MODELS else PERF.get(name)  # an unknown name raises, listing the known
    if perf_params is not None and name != "calibrated":
        from dlsched.errors import InputError

        raise InputError(f"--perf-params applies to the calibrated model, not {name!r}", field="--perf-params")
    profile = None
    if tier_profile is not None:
        from dlsched.perf.comm.tier_profile import TierProfile

        profile = TierProfile.resolve(tier_profile)

    def with_profile(model: PerfModel) -> PerfModel:
        if profile is None:
            return model
        from dlsched.perf.comm.tier_profile import TierProfiledPerfModel

        return TierProfiledPerfModel(model, profile)

    if plugin is not None:
        return with_profile(plugin(cluster))
    if name == "simple":
        from dlsched.perf.base import SimplePerfModel

        return with_profile(SimplePerfModel(cluster))
    from dlsched.perf.placement.model import PlacementPerfModel

    if name == "placement":
        return with_profile(PlacementPerfModel(cluster))
    from dlsched.perf.parallel.adaptive import shared_adaptive_model

    if profile is not None:
        _refuse_large_models(profile)
    if name == "truth":  # adaptive, plus what no scheduler's estimate sees (perf/measured/truth.py, docs/crius.md)
        from dlsched.perf.measured.truth import TruthPerfModel
        from dlsched.perf.parallel.adaptive import claim_shared_estimator, estimator_for

        est = estimator_for(cluster)
        claim_shared_estimator(cluster, est)
        return TruthPerfModel(cluster, fallback=with_profile(PlacementPerfModel(cluster)), estimator=est)
    if name == "calibrated":
        from dlsched.perf.calibration.model import calibrated_model

        return calibrated_model(cluster, perf_params, with_profile)
    return shared_adaptive_model(cluster, fallback=with_profile(PlacementPerfModel(cluster)))


def _refuse_large_models(profile) -> None:
    from dlsched.errors import InputError
    from dlsched.workload.models import get_model
    from dlsched.workload.zoo_large import layer_traits

    large = [m for m in profile.models() if layer_traits(get_model(m)) is not None]
    if large:
        one = len(large) == 1
        raise InputError(f"{', '.join(large)} {'is' if one else 'are'} priced at the adaptive 3D-parallel "
                         "optimum, which a per-tier data-parallel overhead cannot replace; use --perf "
                         f"placement to price {'it' if one else 'them'} data-parallel with this profile",
                         file=profile.name)


for _name in PERF_MODELS:
    PERF.add(_name, partial(default_perf_model, name=_name))
