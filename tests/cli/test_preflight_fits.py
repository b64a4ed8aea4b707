"""The CLI's preflight answers as pricing would, without searching the large models' optimum."""

from __future__ import annotations

import math

import pytest

from dlsched.cluster import Cluster
from dlsched.cluster.placement import ideal_gpus
from dlsched.run.jobs import _large_model_fits, runs_predicate
from dlsched.perf.placement.model import PlacementPerfModel
from dlsched.perf.parallel.perf_model import AdaptivePerfModel
from dlsched.perf.measured.truth import MeasuredTimes, TruthPerfModel
from dlsched.workload.job import JobSpec

CLUSTER = Cluster.load("crius-sim")
SHAPES = [("moe", "27B", 512), ("moe", "2.4B", 256), ("bert", "6.7B", 128), ("bert", "760M", 64),
          ("wide_resnet", "6.8B", 256), ("wide_resnet", "500M", 32), ("resnet50", None, 64), ("gpt2-xl", None, 8)]
# a measured time decides for the truth model even where the estimate finds no plan
MEASURED = MeasuredTimes.of([("moe", "27B", 512, "V100", 1, 12.5), ("bert", "6.7B", 128, "A100", 2, 3.0)])


def _models():
    return [("adaptive", lambda: AdaptivePerfModel(CLUSTER, fallback=PlacementPerfModel(CLUSTER))),
            ("truth", lambda: TruthPerfModel(CLUSTER, measured=MEASURED, fallback=PlacementPerfModel(CLUSTER)))]


@pytest.mark.parametrize("name,make", _models(), ids=[m[0] for m in _models()])
def test_the_fast_answer_equals_pricing(name, make):
    fast, priced = runs_predicate(CLUSTER, make()), make()
    answers = set()
    for model, params, batch in SHAPES:
        for t, gpu in enumerate(CLUSTER.gpu_types):
            for n in (1, 2, 4, 8, 16):
                spec = JobSpec("j", 0.0, model, n, batch_size=batch, gpu_type=gpu.name, params=params,
                               total_iterations=1)
                want = 0.0 < priced.price(spec, ideal_gpus(CLUSTER, n, t)).total < math.inf
                assert fast(spec, n) == want, (model, params, batch, gpu.name, n)
                answers.add(want)
    assert answers == {True, False}  # both occur, so the comparison can fail


def test_the_fast_answer_searches_no_optimum_and_other_models_are_priced():
    perf = AdaptivePerfModel(CLUSTER)
    fits = _large_model_fits(CLUSTER, perf)
    spec = JobSpec("j", 0.0, "bert", 4, batch_size=128, params="1.3B", total_iterations=1)
    assert fits(spec, 4, 0) is True
    assert not any(k[0] == "optimum" for k in perf.estimator._cache)
    assert fits(JobSpec("j", 0.0, "resnet50", 1, total_iterations=1), 1, 0) is None  # the fallback's
    assert _large_model_fits(CLUSTER, PlacementPerfModel(CLUSTER)) is None
