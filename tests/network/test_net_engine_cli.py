"""--network flow in the simulator, links.csv, and the `dlsched net` command."""

from __future__ import annotations

import csv

import pytest

from dlsched.cli import main
from dlsched.cluster.topology import Cluster
from dlsched.network import FlowContention
from dlsched.policies.registry import make_policy
from dlsched.sim.engine import Simulator
from dlsched.workload.job import JobSpec


def _jobs(gap: float):
    # 3-GPU jobs on crius-testbed's 2-GPU hosts: consecutive jobs share a host and its NIC
    return [JobSpec(f"j{i}", i * gap, "vgg16", 3, batch_size=96, total_iterations=2000, gpu_type="A40")
            for i in range(10)]


def _run(jobs, contention):
    cluster = Cluster.load("crius-testbed")
    sim = Simulator(cluster, make_policy("fcfs"), jobs,
                    contention=FlowContention.for_cluster(cluster) if contention else None)
    return sim.run()


def test_jobs_that_never_overlap_match_the_run_without_network():
    off = _run(_jobs(1e6), False)
    on = _run(_jobs(1e6), True)
    assert [r.row() for r in on.records] == [r.row() for r in off.records]
    assert on.links, "two-host jobs put traffic on links"


def test_concurrent_jobs_slow_down_and_utilisation_is_recorded():
    off = _run(_jobs(0.0), False)
    on = _run(_jobs(0.0), True)
    jct_off = sum(r.finish - r.submit for r in off.records)
    jct_on = sum(r.finish - r.submit for r in on.records)
    assert jct_on > jct_off
    assert all(0.0 <= u <= 1.0 + 1e-9 for _, _, u in on.links)
    assert on.params["network"]["model"] == "flow"


def test_simulate_network_flow_cli_is_deterministic(tmp_path):
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}"
        assert main(["simulate", "--cluster", "crux-testbed", "--jobs", "60", "--days", "0.2", "--network",
                     "flow", "--out", str(out), "--quiet"]) == 0
        outs.append(out)
    for name in ("jobs.csv", "summary.json"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()
    if (outs[0] / "links.csv").exists():
        assert (outs[0] / "links.csv").read_bytes() == (outs[1] / "links.csv").read_bytes()
        with open(outs[0] / "links.csv") as f:  # the per-link summary by default (--links full: over time)
            assert next(csv.reader(f))[0] == "link"


def test_net_example_prints_each_job(capsys):
    assert main(["net", "examples/net_contention.yaml"]) == 0
    out = capsys.readouterr().out
    for job in ("a", "b", "c", "d"):
        assert f"│ {job} " in out
    assert "tor0->agg0" in out


def test_net_pipeline_example_sends_plan_traffic(capsys):
    assert main(["net", "examples/net_pipeline.yaml"]) == 0
    out = capsys.readouterr().out
    for job in ("gpt-a", "gpt-b", "moe"):
        assert f"│ {job} " in out
    assert "1.000x" not in out.split("gpt-a")[1].split("\n")[0], "the pipelines share uplinks: they must slow"


@pytest.mark.parametrize("text, where", [
    ("topology: {kind: clos, hosts: 4}\njobs:\n  - {id: a, model: gpt-1.3b, hosts: [0, 1], stages: 2, tp: 3}\n",
     "line 3, field 'tp'"),
    ("topology: {kind: clos, hosts: 4}\njobs:\n  - {id: a, hosts: [0, 1], stages: 2, iteration_s: 1, comm_s: 0, "
     "gradient_mb: 1}\n", "field 'jobs.0'"),
    ("topology: {kind: clos, hosts: 4}\njobs:\n  - {id: a, model: resnet50, hosts: [0, 9]}\n", "line 3, field 'hosts'"),
    ("topology: {kind: clos, hosts: 4}\njobs:\n  - {id: a, hosts: [0, 1]}\n", "field 'jobs.0'"),
    ("topology: {kind: clos, hosts: 4}\njobs:\n  - {id: a, model: nosuch, hosts: [0, 1]}\n", "field 'model'"),
])
def test_net_errors_name_file_line_and_field(tmp_path, capsys, text, where):
    f = tmp_path / "jobs.yaml"
    f.write_text(text)
    assert main(["net", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and where in err


def test_net_csv_with_topology_flag(tmp_path, capsys):
    f = tmp_path / "jobs.csv"
    f.write_text("id,hosts,iteration_s,comm_s,gradient_mb\na,0;2,1.05,0.05,953.67431640625\n"
                 "b,1;3,1.05,0.05,953.67431640625\n")
    assert main(["net", str(f), "--topology", "clos:hosts=4,hosts_per_tor=2,aggs=1,nic_gbps=100,"
                 "oversubscription=2,gpus_per_host=1"]) == 0
    assert "1130.00" in capsys.readouterr().out  # 1.05 s + 1 GB at 12.5 GB/s, as max-min predicts
    bad = tmp_path / "bad.csv"
    bad.write_text("id,hosts,iteration_s,comm_s,gradient_mb\na,0;2,x,0.05,1\n")
    assert main(["net", str(bad), "--topology", "clos:hosts=4"]) == 2
    assert "line 2, field 'iteration_s'" in capsys.readouterr().err
