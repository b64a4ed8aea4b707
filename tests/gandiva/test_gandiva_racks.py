"""Gandiva above the server: rack-aware (our default) or network-agnostic (its paper; Dally's baseline)."""

from __future__ import annotations

from dlsched.cluster.spec import parse_spec
from dlsched.cluster.topology import Cluster, Tier
from dlsched.experiments import gandiva as exp
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec

TWO_RACKS = """name: two-racks
node_groups:
  - {name: s, gpu: A100-80G, nodes: 4, gpus_per_node: 4, nodes_per_rack: 2, intra: {kind: nvswitch}}
network: {topology: tiered}
"""


def _run(racks: bool):
    c = Cluster(parse_spec(TWO_RACKS))
    # "a" takes server 0 (rack 0); "b" needs two servers: 1+2 (two racks) or 2+3 (one rack) are free
    jobs = [JobSpec("a", 0.0, "resnet50", 4, duration_s=3600), JobSpec("b", 10.0, "vgg16", 8, duration_s=4 * 3600)]
    p = make_policy("gandiva", racks=racks)
    res = Simulator(c, p, jobs, config=SimConfig(debug=True, **exp.COSTS)).run()
    start = next(e.gpus for e in res.events if e.job_id == "b" and e.kind == "start")
    return c, res, start, p


def test_rack_aware_gandiva_keeps_a_two_server_job_in_one_rack():
    c, _, gpus, p = _run(racks=True)
    assert c.tier(gpus) == Tier.RACK
    assert "racks" not in p.describe()  # the default writes nothing new beside its results


def test_network_agnostic_gandiva_takes_the_fewest_servers_wherever_they_sit():
    c, res, gpus, p = _run(racks=False)
    assert c.tier(gpus) == Tier.NETWORK and len({int(c.gpu_node[g]) for g in gpus}) == 2
    # when rack 0 frees, the job already spans as few servers as it can: racks alone do not move it
    assert next(r for r in res.records if r.job_id == "b").migrations == 0
    assert p.describe()["racks"] is False
