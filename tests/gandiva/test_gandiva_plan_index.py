"""Gandiva's plan keeps per-node indexes and a sharing cache (issue 18's speed work): they must
answer exactly what a scan of the GPU holders answers, after every change a real run makes."""

from __future__ import annotations

from dlsched.cluster.spec import parse_spec
from dlsched.cluster.topology import Cluster, Tier
from dlsched.experiments import gandiva as exp
from dlsched.policies.gandiva import plan as gandiva_plan
from dlsched.policies.gandiva.plan import MIXED, Plan
from dlsched.policies.registry import make_policy
from dlsched.sim import SimConfig, Simulator
from dlsched.workload.job import JobSpec
from dlsched.workload.synthetic import generate

MIXED_NODES = """name: mixed
node_groups:
  - {name: nv, gpu: A100-40G, nodes: 1, gpus_per_node: 2, nic_gbps: 100, intra: {kind: nvlink}}
  - {name: pc, gpu: A40, nodes: 1, gpus_per_node: 2, nic_gbps: 100,
     intra: {kind: pcie, sockets: 1, gpus_per_switch: 2}}
network: {topology: tiered}
"""


def _scanned(plan: Plan) -> None:
    """Every indexed answer equals the one a scan of the holders gives."""
    c = plan.c
    for node in range(c.num_nodes):
        n = c.nodes[node]
        gpus = range(n.first_gpu, n.first_gpu + n.num_gpus)
        jobs = {j for g in gpus for j in plan.holders.get(g, ())}
        assert plan.node_jobs(node) == jobs
        assert plan.height(node) == sum(len(plan.holders.get(g, ())) for g in gpus) / n.num_gpus
        demands = {plan.jobs[j].spec.num_gpus for j in jobs}
        aff = 0 if not demands else (demands.pop() if len(demands) == 1 else MIXED)
        assert plan.affinity(node) == aff
        for d in range(1, 9):
            assert (node in plan.affine_nodes(d, plan.nodes_of_type(None))) == (aff == d)
    empty = [i for i in range(c.num_nodes) if not plan.node_jobs(i)]
    want = min(empty, key=lambda i: (int(c.node_gpus[i]), i)) if empty else None
    assert plan.first_empty(plan.nodes_of_type(None)) == want
    for jid, gpus in plan.gpus.items():
        assert plan.sharing(jid) == max(len(plan.holders[g]) for g in gpus)


def test_indexes_match_a_scan_through_a_busy_run(monkeypatch):
    """A loaded two-type cluster with every mechanism on: slicing, packing, migration, grow-shrink."""
    checked = []
    real = Plan.decision

    def decision(self):
        _scanned(self)
        checked.append(1)
        return real(self)

    monkeypatch.setattr(gandiva_plan.Plan, "decision", decision)
    c, _ = exp.cluster_jobs(60, 0.3)
    jobs = [j.with_(elastic=True) if i % 3 == 0 else j for i, j in enumerate(generate(60, 0.3 * 3600, cluster=c,
                                                                                        seed=3, max_gpus=4,
                                                                                        max_duration_s=3 * 3600))]
    res = Simulator(c, make_policy("gandiva"), jobs, config=SimConfig(debug=True, **exp.COSTS)).run()
    assert res.summary["finished"] == len(jobs)
    assert len(checked) > 50


def test_untyped_pcie_pair_moves_to_nvlink_when_it_frees():
    """A job at the tightest PCIe tier is not yet at its tightest tier when it asks for no GPU type:
    the locality search must still see it (the speed-up skips only jobs that cannot improve)."""
    c = Cluster(parse_spec(MIXED_NODES))
    jobs = [JobSpec("blocker", 0.0, "resnet50", 2, duration_s=600, gpu_type="A100-40G"),
            JobSpec("x", 10.0, "resnet50", 2, duration_s=4 * 3600)]
    res = Simulator(c, make_policy("gandiva"), jobs, config=SimConfig(debug=True, **exp.COSTS)).run()
    start = next(e.gpus for e in res.events if e.job_id == "x" and e.kind == "start")
    assert c.tier(start) == Tier.PCIE_SWITCH
    moved = [e.gpus for e in res.events if e.job_id == "x" and e.kind == "migrate"]
    assert moved and c.tier(moved[0]) == Tier.NVLINK
