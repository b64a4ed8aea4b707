"""RunSpec: plain data in and out, strict on the way in, and a summary.json's spec reruns its run."""

from __future__ import annotations

import json

import pytest

from dlsched.cli import main
from dlsched.errors import InputError
from dlsched.run import ClusterSpec, NetworkSpec, PolicySpec, RunSpec, WorkloadSpec
from dlsched.run.params import read_spec


def test_round_trip_through_json():
    spec = RunSpec(workload=WorkloadSpec(jobs=40, days=0.5), cluster=ClusterSpec("crius-testbed", "first-free"),
                   policy=PolicySpec("tiresias", {"round_s": 60.0}), network=NetworkSpec("flow"), seed=4)
    again = RunSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec and RunSpec.from_dict({}) == RunSpec()


@pytest.mark.parametrize("doc, field", [
    ({"workload": {"jobz": 3}}, "workload.jobz"),
    ({"seeed": 1}, "seeed"),
    ({"workload": {"jobs": "many"}}, "workload.jobs"),
    ({"workload": {"jobs": True}}, "workload.jobs"),
    ({"engine": {"restore_base": -1}}, "engine.restore_base"),
    ({"cluster": {"placement": "scatter"}}, "cluster.placement"),
    ({"network": []}, "network"),
    ({"seed": -1}, "seed"),
])
def test_unknown_keys_and_bad_values_name_their_path(doc, field):
    with pytest.raises(InputError) as e:
        RunSpec.from_dict(doc, where="spec.json")
    assert e.value.field == field and e.value.file == "spec.json"


def test_a_summary_reruns_byte_for_byte(tmp_path, capsys):
    first = tmp_path / "a"
    assert main(["simulate", "--jobs", "60", "--cluster", "crius-testbed", "--policy", "tiresias", "--seed", "2",
                 "--placement", "first-free", "--restore-base", "7", "--quiet", "--out", str(first)]) == 0
    spec = read_spec(first / "summary.json")
    assert spec.cluster.placement == "first-free" and spec.engine.restore_base == 7.0
    again = tmp_path / "b"
    assert main(["simulate", "--spec", str(first / "summary.json"), "--quiet", "--out", str(again)]) == 0
    for name in ("jobs.csv", "series.csv", "summary.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name


def test_spec_beside_run_flags_is_refused(tmp_path, capsys):
    (tmp_path / "s.json").write_text(json.dumps({"workload": {"jobs": 5}}))
    assert main(["simulate", "--spec", str(tmp_path / "s.json"), "--jobs", "9", "--out", str(tmp_path / "o")]) == 2
    assert "drop --jobs" in capsys.readouterr().err


def test_bad_spec_files_are_errors_not_tracebacks(tmp_path, capsys):
    (tmp_path / "bad.json").write_text('{"workload": {"jobs": 5,}}')
    (tmp_path / "typo.json").write_text('{"polcy": {"name": "fcfs"}}')
    (tmp_path / "deep.json").write_text('{\n  "workload": {\n    "jobs": 5,\n    "dayz": 2\n  }\n}\n')
    for name, said in (("bad.json", "line 1"), ("typo.json", "field 'polcy'"), ("none.json", "cannot read"),
                       ("deep.json", "line 4, field 'workload.dayz'")):
        assert main(["simulate", "--spec", str(tmp_path / name), "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert name in err and said in err and "Traceback" not in err


def test_the_placement_mode_changes_placements_not_the_workload():
    """A trace duration becomes iterations on the job's tightest placement (``ideal_gpus``) in every
    mode: the mode is the engine's, so packed and first-free runs simulate the same jobs."""
    import dlsched

    packed = dlsched.simulate(jobs=200, seed=3, policy="fcfs-backfill")
    oblivious = dlsched.simulate(jobs=200, seed=3, policy="fcfs-backfill", placement="first-free")
    assert packed.jobs.total_iterations.equals(oblivious.jobs.total_iterations)
    assert oblivious.spec.cluster.placement == "first-free" and oblivious.params["placement"] == "first-free"
