"""Gandiva's grid: the measured co-location look-up, the utilisation probe and the skipped setting."""

from __future__ import annotations

import pytest

from dlsched.experiments import gandiva as gx
from dlsched.experiments import gandiva_grid as gg
from dlsched.experiments import gandiva_packing as gp
from dlsched.perf.default import default_perf_model
from dlsched.perf.sharing.interference import packed_job
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec

ISO = "job_type,scale_factor,v100_steps_per_s,p100_steps_per_s,k80_steps_per_s\n" \
      "ResNet-18 (batch size 32),1,10,8,2\nLM (batch size 20),1,20,10,4\n"
CO = "gpu,job_type,scale_factor,other_job_type,other_scale_factor,steps_per_s,other_steps_per_s\n" \
     "p100,ResNet-18 (batch size 32),1,LM (batch size 20),1,6,7\n" \
     "p100,LM (batch size 20),1,ResNet-18 (batch size 32),1,7,6\n" \
     "p100,LM (batch size 20),1,LM (batch size 20),1,0,0\n"


@pytest.fixture
def shared(tmp_path, monkeypatch):
    (tmp_path / "anchors" / "profiles").mkdir(parents=True)
    (tmp_path / "anchors" / "traces").mkdir(parents=True)
    (tmp_path / gp.ISOLATED).write_text(ISO)
    (tmp_path / gp.COLOCATED).write_text(CO)
    monkeypatch.setenv("DLSCHED_DATA", str(tmp_path))
    return tmp_path


def test_measured_pairs_run_at_colocated_over_isolated_speed(shared):
    table = gp.CoLocationTable.load()
    assert table.pair("P100", "ResNet-18 (batch size 32)", 1, "LM (batch size 20)", 1) == (0.75, 0.7)
    assert table.pair("P40", "ResNet-18 (batch size 32)", 1, "LM (batch size 20)", 1) == (0.75, 0.7)  # P100 rows
    assert table.paying_share() == pytest.approx(2 / 3)  # 1.45, 1.45 pay; the 0-row does not
    c, _ = gx.cluster_jobs(4, 0.1)
    perf = gp.MeasuredPackingPerfModel(default_perf_model(c), table)
    a = JobSpec("a", 0.0, "resnet18", 1, batch_size=32, duration_s=60, extra={"job_type": "ResNet-18 (batch size 32)"})
    b = JobSpec("b", 0.0, "lstm_lm", 1, batch_size=20, duration_s=60, extra={"job_type": "LM (batch size 20)"})
    assert perf.packing([a, b], "P100").factors == (0.75, 0.7)
    b2 = b.with_(job_id="b2")
    assert perf.packing([b, b2], "P100") == perf.base.packing([b, b2], "P100")  # Gavel's 0: the model decides
    plain = JobSpec("p", 0.0, "resnet50", 1, duration_s=60)
    assert perf.packing([a, plain], "P100") == perf.base.packing([a, plain], "P100")
    assert (perf.counts.measured, perf.counts.zero, perf.counts.modelled) == (1, 1, 1)
    jobs = gp.as_gavel_jobs([plain] * 6, table, seed=0)
    assert {j.extra["job_type"] for j in jobs} <= set(table.job_types)
    assert all(j.batch_size in (32, 20) for j in jobs)


def test_measured_setting_is_skipped_with_a_reason_when_the_tables_are_absent(tmp_path, monkeypatch):
    monkeypatch.setenv("DLSCHED_DATA", str(tmp_path))
    sets, why = gg.settings()
    assert sets == (gg.FITTED,) and "absent" in why


def test_probe_measures_compute_utilisation_not_gpus_held():
    # one 1-GPU job alone on a 4-GPU server for the whole window: the server is its kernel share / 4 busy
    c = gx.one_server("P100")
    job = JobSpec("j", 0.0, "resnet50", 1, duration_s=10 * 3600.0)
    perf = default_perf_model(c)
    pol = make_policy("fcfs")
    probe = gg.WindowProbe((600.0, 3000.0))
    probe.attach(pol)
    Simulator(c, pol, [job], perf=perf, config=SimConfig(seed=0)).run()
    u = packed_job(job, c.gpu_types[0]).utilisation
    assert 0.0 < u < 1.0
    assert probe.utilisation(c.num_gpus) == pytest.approx(u / 4, rel=0.02)


def test_point_values_compare_gandiva_with_the_baseline_and_without_packing():
    m = dict(avg_jct_h=1.0, makespan_h=10.0, sm_util=0.5, migrations_per_h=2.0)
    rows = {"gandiva": m, "fcfs": {**m, "avg_jct_h": 2.0, "sm_util": 0.4},
            "no-packing": {**m, "sm_util": 0.25}}
    v = gg.point_values(rows)
    assert v[gg.HEADLINES[0].name] == pytest.approx(50.0)
    assert v[gg.HEADLINES[2].name] == pytest.approx(25.0)
    assert v[gg.HEADLINES[4].name] == pytest.approx(100.0)
    assert all(h.ours_label == h.name.startswith("packing") for h in gg.HEADLINES)
