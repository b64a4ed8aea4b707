import pytest

from dlsched.cluster import Cluster, load_spec, parse_spec, shipped_specs
from dlsched.errors import InputError, UnknownNameError


def test_every_shipped_spec_builds():
    sizes = {name: Cluster.load(name).num_gpus for name in shipped_specs()}
    assert sizes["crius-sim"] == 1280
    assert sizes["crius-testbed"] == 64
    assert sizes["gandiva-100"] == 100
    assert [sizes[f"dally-{r}racks"] for r in (2, 4, 8, 16)] == [128, 256, 512, 1024]
    assert sizes["crux-testbed"] == 96


def test_clos_spec_loads_with_its_spines():
    net = Cluster.load("crux-testbed").network
    assert (net.topology, net.spines) == ("clos", 2)


def test_crius_sim_matches_table1():
    c = Cluster.load("crius-sim")
    per_type = {c.gpu_types[t].name: int(n) for t, n in enumerate(c.type_gpus)}
    assert per_type == {"A100-40G": 320, "V100": 320, "A40": 320, "A10": 320}
    assert {(n.gpu.name, n.num_gpus) for n in c.nodes} == {("A100-40G", 4), ("V100", 16), ("A40", 2), ("A10", 2)}


def test_dally_racks_hold_eight_machines():
    c = Cluster.load("dally-4racks")
    assert c.num_racks == 4
    assert all(len(nodes) == 8 for nodes in c.rack_nodes)


GOOD = """\
name: tiny
node_groups:
  - name: g
    gpu: V100
    nodes: 2
    gpus_per_node: 4
"""


def test_minimal_spec_defaults():
    spec = parse_spec(GOOD)
    c = Cluster(spec)
    assert c.num_gpus == 8 and c.num_racks == 1


@pytest.mark.parametrize("text, line, field, words", [
    (GOOD.replace("V100", "V999"), 4, "node_groups.0.gpu", "unknown GPU type 'V999'"),
    (GOOD.replace("nodes: 2", "nodes: -1"), 5, "node_groups.0.nodes", "greater than or equal to 1"),
    (GOOD.replace("nodes: 2", "nodes: two"), 5, "node_groups.0.nodes", "integer"),
    (GOOD + "bogus: 1\n", 7, "bogus", "Extra inputs"),
    (GOOD.replace("gpus_per_node: 4", "gpus_per_node: 4\n    intra: {kind: pcie, sockets: 3}"), 3,
     "node_groups.0", "not divisible"),
])
def test_bad_spec_names_line_and_field(text, line, field, words):
    with pytest.raises(InputError) as e:
        parse_spec(text, "my.yaml")
    err = e.value
    assert err.file == "my.yaml" and err.line == line and err.field == field
    assert words in str(err)


def test_malformed_yaml_names_line():
    with pytest.raises(InputError) as e:
        parse_spec("name: x\nnode_groups: [\n  - a: b\n", "broken.yaml")
    assert e.value.file == "broken.yaml" and e.value.line is not None
    assert "malformed YAML" in str(e.value)


def test_unknown_spec_name_lists_known():
    with pytest.raises(UnknownNameError) as e:
        load_spec("no-such-cluster")
    assert "crius-sim" in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_spec(tmp_path / "nope.yaml")
