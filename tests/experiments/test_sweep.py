"""A two-point sweep gives the same table through local worker processes and through an emulated Ray
cluster; every output directory records its provenance, and re-running it gives the same bytes."""

from __future__ import annotations

import json

import pytest

from dlsched.cli import main

EXP = """\
name: two-point
cluster: crius-testbed
workload:
  synthetic: {jobs: 30}
policies:
  - fcfs
  - name: crius
    options: {depth: 2}
sweep:
  workload.load: [1.0, 3.0]
"""
FILES = ("jobs.csv", "series.csv", "summary.json")


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("sweep")
    (root / "exp.yaml").write_text(EXP)
    assert main(["run", str(root / "exp.yaml"), "--out", str(root / "local"), "--workers", "2", "--quiet"]) == 0
    return root


def test_local_sweep_writes_one_table_and_one_report(local_run):
    out = local_run / "local"
    lines = (out / "results.csv").read_text().splitlines()
    assert lines[0].startswith("load,seed,policy,finished,")
    assert [ln.split(",")[:3] for ln in lines[1:]] == [["1.0", "0", "fcfs"], ["1.0", "0", "crius"],
                                                       ["3.0", "0", "fcfs"], ["3.0", "0", "crius"]]
    page = (out / "report.html").read_text()
    assert "load=3.0_seed=0/crius" in page
    # three times the offered load: the same jobs arrive three times closer together (each time
    # is rounded to the millisecond, so t/3 of a rounded t is within 0.5 + 0.5/3 ms of it)
    sub = {p: [float(r.split(",")[4]) for r in (out / p / "fcfs" / "jobs.csv").read_text().splitlines()[1:]]
           for p in ("load=1.0_seed=0", "load=3.0_seed=0")}
    assert sub["load=3.0_seed=0"] == pytest.approx([t / 3 for t in sub["load=1.0_seed=0"]], abs=0.5e-3 + 0.5e-3 / 3)


@pytest.mark.live
def test_emulated_ray_cluster_gives_the_same_table(local_run):
    pytest.importorskip("ray")
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        assert main(["run", str(local_run / "exp.yaml"), "--out", str(local_run / "ray"), "--address",
                     cluster.address, "--no-report", "--quiet"]) == 0
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert (local_run / "ray" / "results.csv").read_bytes() == (local_run / "local" / "results.csv").read_bytes()
    for f in FILES:
        assert (local_run / "ray/load=3.0_seed=0/crius" / f).read_bytes() == \
            (local_run / "local/load=3.0_seed=0/crius" / f).read_bytes()


def test_a_run_directory_reruns_from_its_recorded_config(local_run):
    run = local_run / "local" / "load=3.0_seed=0" / "crius"
    prov = json.loads((run / "provenance.json").read_text())
    assert prov["seed"] == 0 and prov["config"]["workload"]["load"] == 3.0 and prov["dlsched_version"]
    assert prov["argv"] == ["run", str(run / "experiment.yaml")]
    again = local_run / "again"
    assert main([*prov["argv"], "--out", str(again), "--workers", "1", "--no-report", "--quiet"]) == 0
    for f in FILES:
        assert (again / "seed=0" / "crius" / f).read_bytes() == (run / f).read_bytes()


def test_simulate_records_provenance_and_reruns_byte_for_byte(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    assert main(["simulate", "--jobs", "40", "--days", "0.05", "--cluster", "crius-testbed", "--policy", "gavel",
                 "--seed", "7", "--out", "res", "--quiet"]) == 0
    prov = json.loads((first / "res" / "provenance.json").read_text())
    assert prov["seed"] == 7 and prov["config"]["policy"] == "gavel" and prov["argv"][0] == "simulate"
    assert prov["git"] is None or len(prov["git"]["commit"]) == 40
    summary = (first / "res" / "summary.json").read_text()
    assert "git" not in json.loads(summary) and "created_utc" not in summary  # summary stays byte-identical
    monkeypatch.chdir(second)
    assert main(prov["argv"]) == 0
    for f in FILES:
        assert (second / "res" / f).read_bytes() == (first / "res" / f).read_bytes()
