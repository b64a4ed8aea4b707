"""The reproductions build their runs through ``dlsched.run``: each results folder's summary.json
holds the run's spec, and ``dlsched simulate --spec`` reruns it to the same bytes."""

from __future__ import annotations

import pytest

from dlsched.cli import main


def _reruns(folder, tmp_path, name, monkeypatch=None):
    again = tmp_path / f"again-{name}"
    if monkeypatch is not None:  # from a directory with no reference data beside it
        monkeypatch.delenv("DLSCHED_DATA", raising=False)
        monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--spec", str(folder / "summary.json"), "--quiet", "--out", str(again)]) == 0
    for table in ("jobs.csv", "series.csv", "summary.json"):
        assert (folder / table).read_bytes() == (again / table).read_bytes(), (name, table)


@pytest.mark.shared
def test_crius_runs_rerun_from_their_summaries(tmp_path, shared_dir, monkeypatch):
    from dlsched.experiments import crius, crius_scenarios

    if not crius_scenarios.arena_available():
        pytest.skip(f"arena trace not found at {crius_scenarios.ARENA}")
    cluster, jobs, _ = crius_scenarios.testbed(n_jobs=24, iter_div=100, ddl_scale=10.0)
    rows = crius.run_scenario("testbed", cluster, jobs, ["fcfs", "crius-dp"], out=tmp_path / "t",
                              progress=lambda *a: None, seed=1)
    assert rows["fcfs"]["finished"] == len(jobs)
    # crius-dp: the perf factory with keywords (data-parallel runs); both from another directory:
    # the truth merges measured rows from the data folder, which the summary names
    from dlsched.run.params import read_spec

    assert read_spec(tmp_path / "t" / "fcfs").data == str(shared_dir.resolve())
    for pol in ("fcfs", "crius-dp"):
        _reruns(tmp_path / "t" / pol, tmp_path, pol, monkeypatch)


def test_dally_runs_rerun_from_their_summaries(tmp_path):
    from dlsched.cluster.topology import Cluster
    from dlsched.experiments import dally

    jobs = dally.workload("poisson", Cluster.load("dally-2racks"), seed=3, n_jobs=30)
    dally.run_one("poisson", 2, "dally", out=tmp_path / "d", jobs=jobs)
    _reruns(tmp_path / "d", tmp_path, "dally")


def test_gandiva_runs_on_a_server_built_in_code_rerun(tmp_path):
    from dlsched.experiments import gandiva

    gandiva.timeslice(long_s=1800.0, short_s=600.0, arrive_s=300.0, out=tmp_path / "g")
    _reruns(tmp_path / "g" / "timeslice-only", tmp_path, "timeslice")


def test_a_probed_run_reruns_with_its_wake_ups(tmp_path):
    """The AutoML probe's calls each quantum / 4 change time-slicing: they are the spec's
    (``policy.wake_every``), so the rerun without the probe is the same run."""
    from dlsched.experiments import gandiva

    gandiva.automl(n_jobs=5, job_s=1200.0, out=tmp_path / "a")
    _reruns(tmp_path / "a" / "timeslice-only", tmp_path, "automl")
