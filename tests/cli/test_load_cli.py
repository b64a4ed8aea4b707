"""--load, --time-scale, --days and --workload from the command line; clear errors for typos."""

from __future__ import annotations

import csv
import json

import pytest

from dlsched.cli import main

SMALL = ["--cluster", "crius-testbed", "--jobs", "40", "--quiet"]


def params(out):
    return json.loads((out / "summary.json").read_text())["params"]


def submits(out):
    with open(out / "jobs.csv", newline="") as f:
        return sorted(float(r["submit"]) for r in csv.DictReader(f))


def test_load_sets_the_offered_load(tmp_path, capsys):
    assert main(["simulate", *SMALL, "--load", "2.5", "--out", str(tmp_path / "o")]) == 0
    assert "offered load 2.50" in capsys.readouterr().out
    p = params(tmp_path / "o")
    assert p["offered_load"] == pytest.approx(2.5) and p["arrival_window_h"] > 0


def test_load_and_days_together_are_refused(tmp_path, capsys):
    assert main(["simulate", *SMALL, "--load", "2", "--days", "1", "--out", str(tmp_path / "o")]) == 2
    assert "give --load or --days, not both" in capsys.readouterr().err


def test_a_trace_keeps_its_arrivals_unless_asked(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration\n"
                     "a,0,resnet50,4,3600\nb,1000,resnet50,2,3600\nc,3000,resnet50,1,600\n")
    base = ["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet"]
    assert main([*base, "--out", str(tmp_path / "as-is")]) == 0
    assert main([*base, "--time-scale", "0.5", "--out", str(tmp_path / "half")]) == 0
    assert submits(tmp_path / "half") == [t / 2 for t in submits(tmp_path / "as-is")]
    assert main([*base, "--load", "1.0", "--out", str(tmp_path / "l1")]) == 0
    p = params(tmp_path / "l1")
    # 4 + 2 + 1/6 GPU-hours over 64 GPUs: the window is 0.0964 h
    assert p["offered_load"] == pytest.approx(1.0, rel=1e-3)
    assert p["arrival_window_h"] == pytest.approx((4 + 2 + 1 / 6) / 64, rel=1e-3)


def test_misspelt_trace_column_is_an_error(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration,gpu_tpye\na,0,resnet50,1,100,A40\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 1, field 'gpu_tpye'" in err and "did you mean 'gpu_type'?" in err


def test_unrelated_extra_column_is_named_in_a_warning(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration,team\na,0,resnet50,1,100,vision\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 0
    assert "column 'team' is not a dlsched column and is not read" in capsys.readouterr().err


@pytest.mark.parametrize("argv, hint", [
    (["--cluster", "crius-testbd"], "did you mean 'crius-testbed'?"),
    (["--policy", "tiresia"], "did you mean 'tiresias'?"),
    (["--workload", "gandva"], "did you mean 'gandiva'?"),
])
def test_did_you_mean(argv, hint, tmp_path, capsys):
    assert main(["simulate", "--jobs", "5", "--quiet", *argv, "--out", str(tmp_path / "o")]) == 2
    assert hint in capsys.readouterr().err


def test_fit_requests_skips_a_job_that_fits_nowhere(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    # MoE-27B fits on no 16-GPU A10 request under the adaptive model (as 9 arena-philly rows on
    # crius-sim): left out, counted (the calibrated model's memory margin lets it fit)
    trace.write_text("job_id,submit_time,model,num_gpus,batch_size,iterations,gpu_type,params\n"
                     "ok,0,resnet50,1,32,100,A10,\nbig,10,moe,16,512,100,A10,27B\n")
    out = tmp_path / "o"
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet", "--fit-requests",
                 "--perf", "adaptive", "--out", str(out)]) == 0
    assert "skipped 1 row" in capsys.readouterr().err
    p = params(out)
    assert p["skipped_rows"] == 1 and p["skipped"][0]["line"] == 3


def test_named_workload_runs(tmp_path, capsys):
    assert main(["simulate", "--cluster", "dally-4racks", "--workload", "dally-poisson", "--jobs", "20", "--quiet",
                 "--out", str(tmp_path / "o")]) == 0
    assert "workload:dally-poisson" in capsys.readouterr().out
    assert params(tmp_path / "o")["trace"] == "workload:dally-poisson"


def test_serve_time_scale_moves_live_arrivals_only():
    from dlsched.commands.serve import scaled_arrivals
    from dlsched.live.jobfile import LiveJob
    from dlsched.workload.job import JobSpec

    jobs = [LiveJob(JobSpec("a", 0.0, "resnet50", 1, total_iterations=10), "/x.py", delay_s=4.0)]
    (half,) = scaled_arrivals(jobs, 0.5)
    assert half.delay_s == 2.0 and half.spec == jobs[0].spec
    assert scaled_arrivals(jobs, None) is jobs


def test_experiment_file_takes_a_load_and_a_named_workload(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncluster: crius-testbed\nworkload:\n  synthetic: {jobs: 10, days: 1}\n  load: 2\n"
                   "policies: [fcfs]\n")
    assert main(["run", str(bad), "--quiet"]) == 2
    assert "bad.yaml, line 4, field 'workload': give either 'load' or 'synthetic.days'" in capsys.readouterr().err
    ok = tmp_path / "ok.yaml"
    ok.write_text("name: x\ncluster: dally-2racks\nworkload:\n  synthetic: {jobs: 10}\n  name: dally-poisson\n"
                  "  load: 2\npolicies: [fcfs]\n")
    assert main(["run", str(ok), "--quiet", "--workers", "1", "--no-report", "--out", str(tmp_path / "o")]) == 0
    p = params(tmp_path / "o" / "seed=0" / "fcfs")
    assert p["trace"] == "workload:dally-poisson" and p["offered_load"] == pytest.approx(2.0, rel=1e-3)


def test_days_on_a_trace_is_refused(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_text("job_id,submit_time,model,num_gpus,duration\na,0,resnet50,1,100\n")
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--days", "2", "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    assert "field '--days'" in capsys.readouterr().err


def test_the_crux_fabrics_default_to_cruxs_mix_at_the_default_load(tmp_path):
    """Philly's mostly 1-GPU jobs would need 68,819 jobs to keep crux-lingjun queueing; its own
    paper's 8-512 GPU jobs do it with 1,000 (docs/workloads.md)."""
    assert main(["simulate", "--cluster", "crux-double-sided", "--jobs", "150", "--quiet",
                 "--out", str(tmp_path / "o")]) == 0
    p = params(tmp_path / "o")
    assert p["trace"] == "workload:crux" and p["offered_load"] == pytest.approx(1.0, rel=1e-3)
    assert p["spec"]["workload"]["name"] is None  # the default, as the rerun will pick it again
    assert main(["simulate", "--cluster", "crius-testbed", "--jobs", "50", "--quiet", "--out", str(tmp_path / "p")]) == 0
    assert params(tmp_path / "p")["trace"] == "synthetic:philly"
