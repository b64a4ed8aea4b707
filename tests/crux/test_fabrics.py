"""CRUX's fabrics as cluster specs (crux-clos, crux-double-sided, crux-lingjun), the trace workload,
and the live recorder's bookkeeping (without Ray)."""

from __future__ import annotations

import csv

import pytest

from dlsched.cluster.spec import shipped_specs
from dlsched.cluster.topology import Cluster
from dlsched.comm.fabric import contention_for
from dlsched.errors import InputError


def test_crux_specs_are_shipped():
    assert {"crux-clos", "crux-prod", "crux-double-sided", "crux-lingjun"} <= set(shipped_specs())


def test_clos_has_the_paper_switch_counts():
    f = contention_for(Cluster.load("crux-clos"))
    assert len(f.graph.switches("tor")) == 173 and len(f.graph.switches("agg")) == 16


def test_production_clos_has_many_hosts_per_tor_at_one_to_one():
    # the grid's second fabric: 16 hosts under each ToR (the last 10), the paper's 16 aggregation switches,
    # and every ToR's uplinks carry what its hosts' NICs send (1:1), as 4-port bundles per switch
    c = Cluster.load("crux-prod")
    g = contention_for(c).graph
    tors, aggs = g.switches("tor"), g.switches("agg")
    assert (len(tors), len(aggs), c.num_gpus) == (22, 16, 2768)
    under = {t: sum(1 for h in g.hosts if any(g.layers.get(s) == "tor" and s == t for n in h.nics
                                              for s in g.graph.successors(n))) for t in tors}
    assert sorted(set(under.values())) == [10, 16]
    cap = g.capacity
    t = tors[0]
    down = sum(cap[g.link_id(n, t)] for h in g.hosts for n in h.nics if t in g.graph.successors(n))
    up = [i for i in range(g.num_links) if g.link_src[i] == t and g.layers.get(g.link_dst[i]) == "agg"]
    assert len(up) == 16 * 4 and abs(sum(cap[i] for i in up) - down) < 1e-6 * down


def test_double_sided_racks_are_tor_pairs():
    c = Cluster.load("crux-double-sided")
    f = contention_for(c)
    g = f.graph
    assert (len(g.switches("tor")), len(g.switches("agg")), len(g.switches("core"))) == (6, 12, 32)
    # every node of one rack is a host on the same two ToRs, and every host has two ToRs
    for r, nodes in enumerate(c.rack_nodes):
        tors = set()
        for node in nodes.tolist():
            host, _ = f._gpu_host(c.nodes[node].first_gpu)
            h = g.hosts[host]
            mine = {g.link_dst[g.link_id(n, s)] for n in h.nics for s in g.graph.successors(n)
                    if g.layers.get(s) == "tor"}
            assert len(mine) == 2
            tors |= mine
        assert len(tors) == 2, (r, tors)


BAD_SPECS = {  # (group line, network line, error match, needs the Lingjun file)
    "double-sided, racks": ("nodes: 8, gpus_per_node: 8, nic_gbps: 1600, nics: 8, nodes_per_rack: 4",
                            "topology: double-sided", "3 ToR pairs", False),
    "double-sided, spines": ("nodes: 6, gpus_per_node: 8, nodes_per_rack: 2",
                             "topology: double-sided, spines: 4", "spines 4", False),
    "lingjun, group": ("nodes: 5, gpus_per_node: 8", "topology: lingjun", "node group S1", True),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_a_spec_not_matching_its_fabric_is_a_clear_error(case, tmp_path, request):
    group, network, match, lingjun = BAD_SPECS[case]
    if lingjun:
        request.getfixturevalue("shared_dir")  # skips with the reason when ../shared is absent
    spec = tmp_path / "bad.yaml"
    spec.write_text(f"name: bad\nnode_groups:\n  - {{name: S1, gpu: A100-80G, {group}}}\nnetwork: {{{network}}}\n")
    with pytest.raises(Exception, match=match):
        contention_for(Cluster.load(str(spec)))


@pytest.mark.shared
def test_lingjun_nodes_sit_under_their_tor(shared_dir):
    c = Cluster.load("crux-lingjun")
    f = contention_for(c)
    g = f.graph
    with open(shared_dir / "traces/alibaba-lingjun-2023/topo.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert c.num_nodes == len(rows) == 847
    seen = set()
    for node in c.nodes:
        host, _ = f._gpu_host(node.first_gpu)
        seen.add(host)
        assert rows[host]["ASW"] == node.group  # the node's group is its ToR
        nic = g.hosts[host].nics[0]
        assert f"ASW:{node.group}" in set(g.graph.successors(nic))
    assert len(seen) == 847


def test_trace_is_shaped_as_the_papers(tmp_path):
    from dlsched.experiments.crux import LARGE_GPUS, LARGE_MODELS, write_trace

    path = write_trace(tmp_path / "t.csv", 2000, 14.0)
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    n = [int(r["num_gpus"]) for r in rows]
    assert len(rows) == 2000 and max(n) == 512
    assert sum(x >= LARGE_GPUS for x in n) / len(n) > 0.10  # Fig. 4: over 10% of jobs on 128+ GPUs
    assert all(r["model"] in LARGE_MODELS for r in rows if int(r["num_gpus"]) >= LARGE_GPUS)
    assert write_trace(tmp_path / "u.csv", 2000, 14.0).read_bytes() == path.read_bytes()


class _Store:
    def __init__(self):
        self.rows = []

    def event(self, t, job_id, kind, **detail):
        self.rows.append({"time": t, "job_id": job_id, "kind": kind, "detail": detail})

    def events(self, kind=None):
        return [r for r in self.rows if kind is None or r["kind"] == kind]


def test_recorder_records_changes_only(tmp_path):
    from dlsched.live.comm_record import CommRecorder, write_comm_csv
    from dlsched.workload.job import JobSpec

    c = Cluster.load("crux-testbed")
    rec = CommRecorder(c, "crux")
    store = _Store()
    a = JobSpec("a", 0.0, "bert-large", 16, total_iterations=10)
    b = JobSpec("b", 0.0, "bert-large", 16, total_iterations=10)
    # a on hosts 0 and 3, b on hosts 1 and 4: both cross from ToR 0 to ToR 1
    rec.placed(store, 1.0, a, [g for h in (0, 3) for g in range(h * 8, h * 8 + 8)])
    rec.placed(store, 2.0, b, [g for h in (1, 4) for g in range(h * 8, h * 8 + 8)])
    ev = store.events("comm")
    assert [e["job_id"] for e in ev[:1]] == ["a"] and {e["job_id"] for e in ev} == {"a", "b"}
    assert all(e["detail"]["paths"] and all("agg" in p for p in e["detail"]["paths"]) for e in ev)
    n = len(ev)
    rec.placed(store, 3.0, b, [g for h in (1, 4) for g in range(h * 8, h * 8 + 8)])  # same place: no change
    assert len(store.events("comm")) == n
    rec.removed(store, 4.0, "a")
    rec.removed(store, 4.0, "a")  # twice is harmless
    assert "a" not in rec.model._placed
    write_comm_csv(store, tmp_path)
    with open(tmp_path / "comm.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(store.events("comm"))


def test_a_moved_job_drops_its_old_path_pins():
    """A job pinned across ToRs, then moved under one ToR (one path): its pins must not follow it."""
    from dlsched.comm import ScheduledContention, make_comm_policy
    from dlsched.perf.default import default_perf_model
    from dlsched.policies.base import Allocation
    from dlsched.workload.job import JobSpec

    c = Cluster.load("crux-testbed")  # 3 hosts per ToR, 2 aggregation switches
    perf = default_perf_model(c)
    model = ScheduledContention(contention_for(c), make_comm_policy("crux", 8, 2))

    def place(job, hosts):
        gpus = [g for h in hosts for g in range(h * 8, h * 8 + 8)]
        spec = JobSpec(job, 0.0, "bert-large", len(gpus), total_iterations=10)
        model.add(job, spec, Allocation.of(gpus), perf.price(spec, gpus))

    for job, hosts in (("a", (0, 3)), ("b", (1, 4))):
        place(job, hosts)
    assert model._pins.get("a")  # CRUX pinned a's flows across the two aggregation switches
    place("a", (0, 2))  # moved under ToR 0 (hosts 0-2): a single path between its hosts
    assert model.iteration_time("a")[0] > 0
    place("b", (1, 5))
    assert model._pins.get("b")
    model.remove("b")  # as the core moves a job: remove, then add at the new place
    place("b", (4, 5))  # under ToR 1: a single path
    assert model.iteration_time("b")[0] > 0
