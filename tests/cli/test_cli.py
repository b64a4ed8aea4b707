import json

import pytest


from dlsched.cli import main


def write_trace(path, rows):
    path.write_text("job_id,submit_time,model,num_gpus,batch_size,iterations\n" +
                    "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("policy", ["fcfs", "crius", "gavel"])
def test_simulate_writes_results_and_is_byte_identical(policy, tmp_path, capsys):
    out1, out2 = tmp_path / "a", tmp_path / "b"
    args = ["simulate", "--cluster", "crius-testbed", "--synthetic", "--jobs", "60", "--days", "0.2",
            "--seed", "3", "--quiet", "--policy", policy]
    assert main(args + ["--out", str(out1)]) == 0
    assert main(args + ["--out", str(out2)]) == 0
    for name in ("jobs.csv", "series.csv", "summary.json"):
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes()
    doc = json.loads((out1 / "summary.json").read_text())
    assert doc["params"]["cluster"] == "crius-testbed" and doc["params"]["sim"]["seed"] == 3
    assert doc["summary"]["jobs"] == 60
    assert "avg JCT" in capsys.readouterr().out
    timing = json.loads((out1 / "timing.json").read_text())  # wall-clock figures live apart
    assert timing["events"] > 0 and "policy" in timing


def test_compare_and_report(tmp_path, capsys):
    out = tmp_path / "cmp"
    assert main(["compare", "--cluster", "crius-testbed", "--jobs", "40", "--days", "0.1", "--quiet",
                 "--policies", "fcfs,fcfs-backfill", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "fcfs-backfill" in text
    assert main(["report", str(out / "fcfs"), str(out / "fcfs-backfill")]) == 0
    assert "fcfs-backfill" in capsys.readouterr().out


def test_unknown_policy_is_a_clean_error(capsys):
    assert main(["simulate", "--policy", "nope", "--quiet"]) == 2
    assert "unknown policy 'nope'" in capsys.readouterr().err


def test_unknown_cluster_is_a_clean_error(capsys):
    assert main(["simulate", "--cluster", "nowhere", "--quiet"]) == 2
    assert "unknown cluster spec" in capsys.readouterr().err


def test_trace_with_too_big_job(tmp_path, capsys):
    trace = write_trace(tmp_path / "t.csv", [("a", 0, "resnet50", 2, 32, 100), ("b", 5, "resnet50", 999, 32, 100)])
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "t.csv" in err and "line 3" in err and "num_gpus" in err
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--skip-bad-rows", "--out", str(tmp_path / "o")]) == 0
    cap = capsys.readouterr()
    assert "skipped 1 row of" in cap.err and "line 3, field 'num_gpus'" in cap.err
    params = json.loads((tmp_path / "o" / "summary.json").read_text())["params"]
    assert params["skipped_rows"] == 1 and params["skipped"][0]["line"] == 3
    assert params["jobs"] == 1


def test_bad_row_in_trace(tmp_path, capsys):
    trace = write_trace(tmp_path / "t.csv", [("a", 0, "resnet50", 2, 32, 100), ("b", -5, "resnet50", 1, 32, 100)])
    assert main(["simulate", "--cluster", "crius-testbed", "--trace", str(trace), "--quiet",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "submit_time" in err


def test_default_command_runs_embedded_default(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["--quiet", "--jobs", "50"]) == 0
    assert (tmp_path / "runs" / "latest" / "summary.json").exists()
    params = json.loads((tmp_path / "runs" / "latest" / "summary.json").read_text())["params"]
    # fewer jobs keep the default offered load: their window follows their GPU-hours
    assert params["synthetic_jobs"] == 50 and params["offered_load"] == pytest.approx(1.0)
    assert params["arrival_window_h"] == pytest.approx(params["offered_gpu_hours"] / 1280, rel=1e-3)
    assert "synthetic_days" not in params
    assert params["perf_model"] == "CalibratedPerfModel"  # the default perf model: the shipped fit


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "0"], "--jobs: must be at least 1"),
    (["--jobs", "many"], "--jobs: not a whole number"),
])
def test_bad_command_line_values(argv, message, capsys):
    with pytest.raises(SystemExit) as err:
        main(["simulate", "--quiet", *argv])
    assert err.value.code == 2 and message in capsys.readouterr().err


def test_days_must_be_positive(tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        main(["simulate", "--quiet", "--jobs", "5", "--days", "0", "--out", str(tmp_path)])
    assert err.value.code == 2 and "--days: must be positive" in capsys.readouterr().err


def test_live_command_without_the_live_extra_says_what_to_install(monkeypatch, capsys, tmp_path):
    import builtins

    monkeypatch.chdir(tmp_path)  # the default state directory, .dlsched, is relative to here

    real = builtins.__import__

    def no_ray(name, *args, **kwargs):
        if name.split(".")[0] == "ray":
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    assert main(["serve", "--policy", "fcfs"]) == 2
    err = capsys.readouterr().err
    assert "needs the live runtime's packages" in err and '.[live]' in err
    assert not (tmp_path / ".dlsched").exists()  # it failed before writing any state
