"""A spec that names a prepared job list (inline records or a jobs file) reruns its run, and a
summary's file paths rerun from any working directory."""

from __future__ import annotations

import json

import pytest

from dlsched.cli import main
from dlsched.errors import InputError
from dlsched.run import ClusterSpec, PerfSpec, PolicySpec, RunSpec, WorkloadSpec
from dlsched.run.params import read_spec
from dlsched.run.records import from_records, to_records, write_jobs_file
from dlsched.workload.job import JobSpec

JOBS = [JobSpec("a", 0, "resnet50", 2, duration_s=1800.0),
        JobSpec("b", 10.5, "resnet18", 1, total_iterations=4000, elastic=True, extra={"user": "u1"}),
        JobSpec("c", 20.0, "vgg16", 4, duration_s=900, deadline=7200.0, priority=2)]


def _same(a, b):
    for name in ("jobs.csv", "series.csv", "summary.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_records_keep_every_field_and_number_type():
    back = from_records(json.loads(json.dumps(to_records(JOBS))))
    assert back == JOBS and [j.extra for j in back] == [j.extra for j in JOBS]
    assert type(back[0].submit_time) is int and type(back[2].duration_s) is int  # not made floats


@pytest.mark.parametrize("records, field", [
    ([{"job_id": "a", "submit_time": 0, "model": "resnet50", "num_gpus": 1, "duration_s": 5, "gpus": 2}],
     "workload.records[0].gpus"),
    ([{"job_id": "a", "submit_time": 0, "model": "resnet50", "num_gpus": "1", "duration_s": 5}],
     "workload.records[0].num_gpus"),
    ([{"job_id": "a", "submit_time": 0, "model": "resnet50", "duration_s": 5}], "workload.records[0].num_gpus"),
    ([{"job_id": "a", "submit_time": 0, "model": "resnet50", "num_gpus": 1}], "workload.records[0].duration_s"),
    ("jobs", "workload.records"),
])
def test_bad_records_name_their_path(records, field):
    with pytest.raises(InputError) as e:
        RunSpec.from_dict({"workload": {"records": records}}, where="s.json")
    assert e.value.field == field and e.value.file == "s.json"


@pytest.mark.parametrize("extra, field", [({"load": 2.0}, "workload.load"), ({"trace": "t.csv"}, "workload.trace"),
                                          ({"jobs_file": "j.json"}, "workload.jobs_file")])
def test_what_would_reshape_a_prepared_list_is_refused(extra, field):
    with pytest.raises(InputError) as e:
        RunSpec(workload=WorkloadSpec(records=to_records(JOBS), **extra))
    assert e.value.field == field


def test_perf_options_belong_to_a_plugin_factory():
    with pytest.raises(InputError) as e:
        RunSpec(perf=PerfSpec("adaptive", options={"seed": 1}))
    assert e.value.field == "perf.options"


def test_a_run_from_records_reruns_from_its_summary(tmp_path):
    import dlsched

    spec = RunSpec(workload=WorkloadSpec(records=to_records(JOBS), label="three jobs"),
                   cluster=ClusterSpec("crius-testbed"), policy=PolicySpec("tiresias"))
    first = dlsched.simulate(spec=spec, out=str(tmp_path / "a"))
    assert len(first.jobs) == 3 and first.params["trace"] == "three jobs"
    assert main(["simulate", "--spec", str(tmp_path / "a"), "--quiet", "--out", str(tmp_path / "b")]) == 0
    _same(tmp_path / "a", tmp_path / "b")


def test_a_jobs_file_and_a_trace_rerun_from_another_directory(tmp_path, monkeypatch):
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(here)
    write_jobs_file("jobs.json", JOBS)
    (here / "t.csv").write_text("job_id,submit_time,model,num_gpus,duration_s\nx,0,resnet50,2,600\n"
                                "y,30,resnet18,1,1200\n")
    for name, flags in (("file", None), ("trace", ["--trace", "t.csv"])):
        out = here / name
        if flags is None:
            import dlsched

            dlsched.simulate(spec=RunSpec(workload=WorkloadSpec(jobs_file="jobs.json"),
                                          cluster=ClusterSpec("crius-testbed")), out=str(out))
        else:
            assert main(["simulate", "--cluster", "crius-testbed", *flags, "--quiet", "--out", str(out)]) == 0
        spec = json.loads((out / "summary.json").read_text())["params"]["spec"]["workload"]
        stored = spec["jobs_file"] if flags is None else spec["trace"]
        assert stored == str(here / ("jobs.json" if flags is None else "t.csv"))  # absolute in the summary
        monkeypatch.chdir(elsewhere)
        assert main(["simulate", "--spec", str(out / "summary.json"), "--quiet", "--out", str(elsewhere / name)]) == 0
        for table in ("jobs.csv", "series.csv"):
            assert (out / table).read_bytes() == (elsewhere / name / table).read_bytes()
        monkeypatch.chdir(here)


def test_a_hand_written_spec_reads_relative_paths_from_its_own_folder(tmp_path, monkeypatch):
    folder = tmp_path / "exp"
    folder.mkdir()
    write_jobs_file(folder / "jobs.json", JOBS)
    (folder / "spec.json").write_text(json.dumps({"workload": {"jobs_file": "jobs.json"},
                                                  "cluster": {"name": "crius-testbed"}}))
    monkeypatch.chdir(tmp_path)
    assert read_spec(folder / "spec.json").workload.jobs_file == str(folder / "jobs.json")
    assert main(["simulate", "--spec", str(folder / "spec.json"), "--quiet", "--out", str(tmp_path / "o")]) == 0
