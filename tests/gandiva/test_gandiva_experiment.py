"""The Gandiva reproduction's scenarios on reduced inputs (the full ones run in benchmarks/ and reproduce)."""

from __future__ import annotations

from dlsched.experiments import gandiva as exp
from dlsched.experiments.registry import get_experiment


def test_registered_for_reproduce():
    assert get_experiment("gandiva").name == "gandiva"


def test_cluster_every_variant_finishes_every_job_and_gandiva_beats_fcfs():
    rows = exp.cluster(n_jobs=80, hours=0.4)
    assert set(rows) == set(exp.VARIANTS)
    assert all(r["finished"] == r["jobs"] == 80 for r in rows.values())
    assert rows["gandiva"]["avg_jct_h"] < rows["fcfs"]["avg_jct_h"]
    assert rows["timeslice-only"]["n_migrate"] == rows["timeslice-only"]["n_pack"] == 0
    assert rows["no-packing"]["n_pack"] == 0 and rows["no-migration"]["n_migrate"] == 0


def test_automl_early_feedback_comes_sooner_with_time_slicing():
    m = exp.automl(n_jobs=8, job_s=3600.0)
    # FCFS: four jobs see results after 10 min, four after 60 + 10; time-slicing: all after about 20
    assert abs(m["fcfs"] - 40.0) < 1.0 and abs(m["timeslice-only"] - 20.0) < 2.0
