"""Tiresias: discretised 2D-LAS queues, preemption, skew-based consolidation."""

from __future__ import annotations

import pytest

from dlsched.errors import InputError
from dlsched.policies.base import JobState, JobStatus
from dlsched.policies.registry import make_policy
from dlsched.workload.job import JobSpec
from tests.dally.test_dally import H, _blocked_scene, _run


def test_queues_by_attained_gpu_seconds():
    p = make_policy("tiresias", queue_thresholds="100,1000")
    job = JobState(JobSpec("j", 0.0, "resnet50", 4, total_iterations=10), 10)
    assert p.queue_of(job, 0.0) == 0
    job.gpu_seconds = 400.0
    assert p.queue_of(job, 0.0) == 1
    job.status, job.updated_at = JobStatus.RUNNING, 0.0
    assert p.queue_of(job, 200.0) == 2  # 400 + 4 GPUs x 200 s
    assert make_policy("tiresias").thresholds == (3600.0,)


@pytest.mark.parametrize("bad", ["a,b", "100,50", "-1", "inf"])
def test_bad_thresholds_are_clear_errors(bad):
    with pytest.raises(InputError, match="queue_thresholds"):
        make_policy("tiresias", queue_thresholds=bad)


def test_skewed_models_wait_for_a_machine_others_take_the_rack():
    recs, _ = _run(make_policy("tiresias", round_s=1e9), _blocked_scene("resnet50"))  # skew 0.09
    assert recs["big"].first_start == pytest.approx(10.0, abs=1.0)
    recs, _ = _run(make_policy("tiresias", round_s=1e9), _blocked_scene("vgg11"))  # skew 0.77
    assert recs["big"].first_start == pytest.approx(48 * H, abs=1.0)


def test_lower_queue_preempts_higher_queue():
    jobs = [JobSpec(f"r{i}", 0.0, "resnet50", 8, duration_s=48 * H) for i in range(16)]
    jobs.append(JobSpec("new", 100.0, "resnet50", 8, duration_s=1 * H))
    recs, _ = _run(make_policy("tiresias", round_s=600.0), jobs)
    assert recs["new"].first_start == pytest.approx(600.0, abs=1.0)
    assert sum(recs[f"r{i}"].restarts for i in range(16)) == 1


def test_skew_class_comes_from_the_table_the_run_is_priced_with():
    # Dally's Table I labels MobileNet-V3 high skew (its computed largest-tensor share is 0.23, under 0.5);
    # the Table I-priced run must consolidate it as Dally's runs of Tiresias did
    recs, _ = _run(make_policy("tiresias", round_s=1e9), _blocked_scene("mobilenet_v3"))
    assert recs["big"].first_start == pytest.approx(48 * H, abs=1.0)
    recs, _ = _run(make_policy("tiresias", round_s=1e9, skew_source="computed"), _blocked_scene("mobilenet_v3"))
    assert recs["big"].first_start == pytest.approx(10.0, abs=1.0)


def test_skew_labels_are_found_through_wrapping_perf_models():
    from dlsched.cluster.topology import Cluster
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.tiresias import pricing_skew_labels
    from dlsched.workload.models import get_model

    c = Cluster.load("dally-2racks")
    assert pricing_skew_labels(default_perf_model(c, "placement", tier_profile="dally-table1"))[
        get_model("mobilenet_v3").name] \
        == "high"
    assert pricing_skew_labels(default_perf_model(c, "adaptive", tier_profile="dally-table1")) is not None
    assert pricing_skew_labels(default_perf_model(c, "placement")) is None


def test_bad_skew_source_is_a_clear_error():
    with pytest.raises(InputError, match="skew_source"):
        make_policy("tiresias", skew_source="guess")
